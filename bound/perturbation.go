package bound

import (
	"fmt"
	"math"
	"slices"
)

// Constants are the problem constants of the paper's appendix "Convexity
// Assumptions" that the perturbation model needs.
type Constants struct {
	// G bounds the gradient norms ‖∇ℓ_t(w)‖ (paper: Assumption "Bounded
	// stochastic gradients"). Required, ≥ 0. The proof needs it only at
	// the points the two trajectories visit (docs/theory.md), which matters
	// for quadratic losses, whose gradients are unbounded on R^d.
	G float64
	// HMin and HMax bound the spectrum of every inverse-Hessian
	// approximation the learner uses, hMin·I ⪯ H_t ⪯ hMax·I (paper:
	// Assumption "Bounded inverse-Hessian approximations", its m and M;
	// an empty memory uses γ₀·I, so γ₀ must lie in the range too).
	// Required, 0 ≤ HMin ≤ HMax.
	HMin, HMax float64
	// Eta is the (constant) step size η > 0. Required.
	Eta float64
	// Tau is the memory size τ ≥ 1 (number of curvature pairs). Required.
	Tau int
	// Provenance says how G, HMin and HMax were obtained: Proved (derived for
	// the loss and domain), Estimated (measured) or Assumed. Required.
	Provenance Provenance
}

// Validate reports the first invalid field as an *ArgError (ErrValue or
// ErrInvalid).
func (c Constants) Validate() error {
	const fn = "Constants.Validate"
	for _, a := range []struct {
		name string
		v    float64
	}{{"G", c.G}, {"HMin", c.HMin}, {"HMax", c.HMax}, {"Eta", c.Eta}} {
		if err := checkNonNeg(fn, a.name, a.v); err != nil {
			return err
		}
	}
	if c.Eta == 0 {
		return argErr(fn, "Eta", c.Eta, fmt.Errorf("%w: η must be > 0", ErrValue))
	}
	if c.HMin > c.HMax {
		return argErr(fn, "HMin", c.HMin, fmt.Errorf("%w: h_min > h_max = %v", ErrInvalid, c.HMax))
	}
	if c.Tau < 1 {
		return argErr(fn, "Tau", float64(c.Tau), ErrInvalid)
	}
	if !c.Provenance.valid() {
		return argErr(fn, "Provenance", float64(c.Provenance), ErrInvalid)
	}
	return nil
}

// mulUp returns an upper bound on the exact product of non-negative
// factors (each multiplication rounds by at most u).
func mulUp(xs ...float64) float64 {
	p := 1.0
	zero := false
	for _, x := range xs {
		p *= x
		zero = zero || x == 0
	}
	return nextUp(p*(1+float64(2*len(xs))*u), zero)
}

// StepTerm returns η·hMax·G: the bound on the perturbation of the step of a
// deleted insert, ‖η·H·∇ℓ_z(w)‖ ≤ η·‖H‖·‖∇ℓ_z(w)‖ — the step the actual
// learner takes and the counterfactual does not. Rounded up.
func (c Constants) StepTerm() float64 { return mulUp(c.Eta, c.HMax, c.G) }

// MemoryTerm returns η·(hMax − hMin)·G: the bound on
// ‖η·(H̃ − H⁻)·∇ℓ(w)‖ when the two memories differ, since
// ‖H̃ − H⁻‖₂ ≤ hMax − hMin for two symmetric matrices with spectra in
// [hMin, hMax]. Rounded up.
func (c Constants) MemoryTerm() float64 { return mulUp(c.Eta, c.HMax-c.HMin, c.G) }

// spread returns an upper bound on hMax − hMin.
func (c Constants) spread() float64 { return nextUp(c.HMax-c.HMin, c.HMax == c.HMin) }

// MemoryModel selects how the perturbation model treats the curvature
// memory. See docs/theory.md, "Perturbation models".
type MemoryModel int

const (
	// MemoryWorstCase (the default) bounds the parameter error ‖w̃ − w⁻‖₂
	// with the memory difference charged as a perturbation η·(hMax−hMin)·G
	// at EVERY step after the first deleted insert (η·hMax·G at a deleted
	// insert's own step). Proved from the assumptions, with ρ the
	// contraction of the parameter map for a fixed memory (e.g.
	// [AnalyticContraction]). The price: a floor η·(hMax−hMin)·G/(1−ρ) that
	// does not decay, because the memories of the two trajectories need
	// never agree again (the paper's "indirect memory").
	MemoryWorstCase MemoryModel = iota
	// MemoryDirect is MemoryWorstCase with the memory term charged only in
	// the τ steps after each deleted insert, while its curvature pair can
	// be in the memory (the paper's Proposition "Direct memory is bounded
	// for finite curvature pairs"). It ASSUMES that the memories agree
	// outside those windows ("no indirect memory"), which holds for scalar
	// quadratic losses (the memory is then the newest pair's curvature)
	// but is false in general — the paper's own experiments show indirect
	// memory. Assumed.
	MemoryDirect
	// MemoryCoupled is the paper's Lemma "One-step state-error recursion"
	// taken literally in the state metric
	// d_Θ = ‖w̃ − w⁻‖₂ + λ_Z·‖H_Z̃ − H_Z⁻‖₂ (which bounds E_w + λ_Z·E_Z of
	// spec §3): perturbation η·hMax·G + λ_Z·(hMax−hMin) at each deleted
	// insert's step and none elsewhere; ρ is the paper's Assumption
	// "Contractive update map" for the coupled map in d_Θ, which nothing
	// here proves. Assumed.
	MemoryCoupled
)

// String returns "worst-case", "direct" or "coupled".
func (m MemoryModel) String() string {
	switch m {
	case MemoryWorstCase:
		return "worst-case"
	case MemoryDirect:
		return "direct"
	case MemoryCoupled:
		return "coupled"
	}
	return fmt.Sprintf("MemoryModel(%d)", int(m))
}

// ParseMemoryModel is the inverse of String.
func ParseMemoryModel(s string) (MemoryModel, error) {
	for _, m := range []MemoryModel{MemoryWorstCase, MemoryDirect, MemoryCoupled} {
		if m.String() == s {
			return m, nil
		}
	}
	return 0, fmt.Errorf("bound: ParseMemoryModel: %q: %w", s, ErrInvalid)
}

// MarshalText implements encoding.TextMarshaler.
func (m MemoryModel) MarshalText() ([]byte, error) {
	if !m.valid() {
		return nil, fmt.Errorf("bound: MemoryModel.MarshalText: %d: %w", int(m), ErrInvalid)
	}
	return []byte(m.String()), nil
}

// UnmarshalText implements encoding.TextUnmarshaler.
func (m *MemoryModel) UnmarshalText(b []byte) error {
	v, err := ParseMemoryModel(string(b))
	if err != nil {
		return err
	}
	*m = v
	return nil
}

func (m MemoryModel) valid() bool { return m >= MemoryWorstCase && m <= MemoryCoupled }

// model is the per-step perturbation π(u) = η_u·ε_u of the recursion, for
// deleted inserts at the (sorted, distinct) step indices pos: step u maps
// the state u−1 to the state u.
type model struct {
	rho              float64
	mem              MemoryModel
	tau              int
	stepTerm, memory float64 // η·hMax·G (+ λ_Z·(hMax−hMin) if coupled), η·(hMax−hMin)·G
	roundOff         float64 // added at every step from the first deleted insert on
	pos              []int
}

func newModel(c Constants, rho float64, mem MemoryModel, lambdaZ float64, pos []int) *model {
	m := &model{rho: rho, mem: mem, tau: c.Tau, stepTerm: c.StepTerm(), memory: c.MemoryTerm(), pos: pos}
	if mem == MemoryCoupled {
		m.stepTerm = nextUp((m.stepTerm+mulUp(lambdaZ, c.spread()))*(1+2*u), false)
		m.memory = 0
	}
	return m
}

// pi returns the perturbation bound of step u: the model's term plus the
// round-off term from the first deleted insert on.
func (m *model) pi(step int) float64 {
	i, found := slices.BinarySearch(m.pos, step)
	if i == 0 && !found { // no deleted insert before the step: the trajectories agree
		return 0
	}
	p := m.piExact(i, found, step)
	if m.roundOff > 0 {
		p = nextUp((p+m.roundOff)*(1+2*u), false)
	}
	return p
}

// piExact is the exact-arithmetic perturbation of step u, given the
// search result of u in pos.
func (m *model) piExact(i int, found bool, u int) float64 {
	if found {
		return m.stepTerm
	}
	switch m.mem {
	case MemoryWorstCase:
		return m.memory
	case MemoryDirect:
		if u-m.pos[i-1] <= m.tau {
			return m.memory
		}
	}
	return 0
}

// fold applies the steps u = from, …, to to a, in O(#breakpoints) by the
// geometric closed form on runs of constant π.
func (m *model) fold(a float64, from, to int) float64 {
	if from > to {
		return a
	}
	bps := []int{from, to + 1}
	for _, p := range m.pos {
		for _, b := range []int{p, p + 1, p + m.tau + 1} {
			if b > from && b <= to && (b != p+m.tau+1 || m.mem == MemoryDirect) {
				bps = append(bps, b)
			}
		}
	}
	slices.Sort(bps)
	bps = slices.Compact(bps)
	for i := 0; i+1 < len(bps); i++ {
		a = constant(m.rho, a, m.pi(bps[i]), bps[i+1]-bps[i])
	}
	return a
}

// checkAges validates deletion ages and returns the step indices −age,
// sorted.
func checkAges(fn string, ages []int) ([]int, error) {
	pos := make([]int, len(ages))
	for i, a := range ages {
		if a < 0 {
			return nil, argErr(fn, fmt.Sprintf("Ages[%d]", i), float64(a), ErrInvalid)
		}
		pos[i] = -a
	}
	slices.Sort(pos)
	for i := 1; i < len(pos); i++ {
		if pos[i] == pos[i-1] {
			return nil, argErr(fn, "Ages", float64(-pos[i]),
				fmt.Errorf("%w: two deleted inserts at the same step", ErrInvalid))
		}
	}
	return pos, nil
}

// checkLambdaZ resolves λ_Z: nil is the default 1; any finite value ≥ 0,
// including 0, is used as given.
func checkLambdaZ(fn string, l *float64) (float64, error) {
	if l == nil {
		return 1, nil
	}
	if err := checkNonNeg(fn, "LambdaZ", *l); err != nil {
		return 0, err
	}
	return *l, nil
}

func isInf(a float64) bool { return math.IsInf(a, 0) }
