package bound

import (
	"fmt"
	"slices"
)

// Start says what the state at the certification time t0 is.
type Start int

const (
	// StartUntouched (the default): the state at t0 is the learner's actual
	// state (the no-op intervention); Δ_{t0} is bounded from the deleted
	// inserts' ages, starting from Δ = 0 before the first of them, when
	// both trajectories were identical.
	StartUntouched Start = iota
	// StartGiven: an intervention at t0 left a deviation Δ_{t0} ≤ Delta0,
	// known from elsewhere (e.g. 0 for an exact replay); the future steps
	// still carry the memory terms of the deleted inserts.
	StartGiven
)

// String returns "untouched" or "given".
func (s Start) String() string {
	switch s {
	case StartUntouched:
		return "untouched"
	case StartGiven:
		return "given"
	}
	return fmt.Sprintf("Start(%d)", int(s))
}

// MaxHorizon is the largest Scenario.Horizon: the result holds two series
// of Horizon+1 floats (1 GiB at the limit).
const MaxHorizon = 1 << 26

// Scenario describes a deletion request for the bound α_t of Theorem
// "Bounded counterfactual state deviation" with the per-step perturbation
// ε_s(deletions, τ) of docs/theory.md, "Perturbation models".
//
// Time counts update steps (insert events); delete events change neither
// the actual nor the counterfactual state and are not steps. t0 is the
// certification time (e.g. t_del), and step s of the model turns the state
// s−1 into the state s.
type Scenario struct {
	// Constants are G, hMin, hMax, η and τ. Required.
	Constants Constants
	// Contraction is ρ and its provenance. Required. With MemoryWorstCase
	// and MemoryDirect it must contract the parameter map for any fixed
	// memory ([AnalyticContraction] proves one); with MemoryCoupled it is
	// the paper's ρ for the coupled map.
	Contraction Contraction
	// Memory selects the perturbation model. Defaults to MemoryWorstCase.
	Memory MemoryModel
	// LambdaZ is the weight λ_Z ≥ 0 of the memory in the coupled state
	// metric; used only by MemoryCoupled. If nil, it defaults to 1 (spec §3);
	// new(0.0) sets λ_Z = 0 (as align.Options.LambdaZ). The pointed-to value
	// is read, never written.
	LambdaZ *float64
	// Ages holds, for each deleted insert, the number of update steps
	// processed after it up to t0: 0 if it was the last step before t0.
	// Distinct (one insert per step); len(Ages) is the number of
	// deletions. Required (it may be empty: no deletion).
	Ages []int
	// Horizon is the number of steps after t0 to cover, at most MaxHorizon.
	// Defaults to 0.
	Horizon int
	// Start says what the state at t0 is. Defaults to StartUntouched.
	Start Start
	// Delta0 bounds Δ_{t0} after an intervention. Required with
	// StartGiven (≥ 0), ignored otherwise.
	Delta0 float64
	// Delta0Provenance is the provenance of Delta0. Required with StartGiven,
	// ignored otherwise.
	Delta0Provenance Provenance
	// RoundOff is a bound ≥ 0 on the floating-point divergence one step
	// adds between two float trajectories that run the same step on
	// different states (twice the per-step forward error of one
	// trajectory; docs/theory.md, "Floating point"). It is added to the
	// perturbation of every step from the first deleted insert on (before
	// it, both trajectories are bit-identical), so that α bounds the
	// deviation of the float states the code computes, not only of the
	// exact-arithmetic ones. Defaults to 0 (exact arithmetic).
	RoundOff float64
}

// Term is one quantity a bound rests on, for a certificate.
type Term struct {
	// Name of the quantity, e.g. "rho", "G", "step term η·hMax·G".
	Name string `json:"name"`
	// Value of the quantity (0 for an assumption with no value).
	Value float64 `json:"value"`
	// Provenance of the quantity.
	Provenance Provenance `json:"provenance"`
	// Paper names the quantity or statement of the paper it corresponds
	// to.
	Paper string `json:"paper"`
}

// Result is the bound of a [Scenario].
type Result struct {
	// Alpha[k] bounds the deviation Δ_{t0+k} from the counterfactual,
	// k = 0, …, Horizon: the α_t of Theorem "Bounded counterfactual state
	// deviation" and the sensitivity of Theorem "o-LBFGS Unlearning
	// Certificate".
	Alpha []float64 `json:"alpha"`
	// Perturbations[k] = η·ε of the step into state t0+k+1 (the paper's
	// η_s·ε_s, s = t0+k), k = 0, …, Horizon−1.
	Perturbations []float64 `json:"perturbations"`
	// Deletions is the number of deleted inserts.
	Deletions int `json:"deletions"`
	// Metric names the distance Alpha bounds.
	Metric string `json:"metric"`
	// Provenance is the weakest provenance among Terms.
	Provenance Provenance `json:"provenance"`
	// Terms lists the quantities the bound rests on.
	Terms []Term `json:"terms"`
}

const (
	metricParams = "parameter error ‖w̃ − w⁻‖₂"
	metricState  = "state error ‖w̃ − w⁻‖₂ + λ_Z·‖H_Z̃ − H_Z⁻‖₂ (≥ E_w + λ_Z·E_Z of spec §3)"
)

// Bound computes α_{t0}, …, α_{t0+Horizon} for the scenario. Cost
// O((deletions + Horizon)·log(deletions)), independent of the ages (runs of
// equal perturbation up to t0 use the closed form of [Constant]; each of the
// Horizon later steps looks its perturbation up by binary search).
//
// Errors (*ArgError): any invalid field (ErrValue, ErrInvalid, ErrRho),
// named by its field; overflow (ErrRange).
func (s Scenario) Bound() (Result, error) {
	const fn = "Scenario.Bound"
	if err := s.Constants.Validate(); err != nil {
		return Result{}, err
	}
	if err := s.Contraction.Validate(); err != nil {
		return Result{}, err
	}
	if !s.Memory.valid() {
		return Result{}, argErr(fn, "Memory", float64(s.Memory), ErrInvalid)
	}
	lambdaZ, err := checkLambdaZ(fn, s.LambdaZ)
	if err != nil {
		return Result{}, err
	}
	pos, err := checkAges(fn, s.Ages)
	if err != nil {
		return Result{}, err
	}
	if s.Horizon < 0 || s.Horizon > MaxHorizon {
		return Result{}, argErr(fn, "Horizon", float64(s.Horizon), fmt.Errorf("%w: must be in [0, %d]", ErrInvalid, MaxHorizon))
	}
	switch s.Start {
	case StartUntouched:
	case StartGiven:
		if err := checkNonNeg(fn, "Delta0", s.Delta0); err != nil {
			return Result{}, err
		}
		if !s.Delta0Provenance.valid() {
			return Result{}, argErr(fn, "Delta0Provenance", float64(s.Delta0Provenance), ErrInvalid)
		}
	default:
		return Result{}, argErr(fn, "Start", float64(s.Start), ErrInvalid)
	}

	if err := checkNonNeg(fn, "RoundOff", s.RoundOff); err != nil {
		return Result{}, err
	}
	m := newModel(s.Constants, s.Contraction.Rho, s.Memory, lambdaZ, pos)
	m.roundOff = s.RoundOff
	var a0 float64
	if s.Start == StartGiven {
		a0 = s.Delta0
	} else if len(pos) > 0 {
		a0 = m.fold(0, pos[0], 0)
	}
	res := Result{
		Alpha:         make([]float64, s.Horizon+1),
		Perturbations: make([]float64, s.Horizon),
		Deletions:     len(pos),
		Metric:        metricParams,
		Terms:         s.terms(m, lambdaZ),
	}
	if s.Memory == MemoryCoupled {
		res.Metric = metricState
	}
	res.Alpha[0] = a0
	for k := 1; k <= s.Horizon; k++ {
		c := m.pi(k)
		res.Perturbations[k-1] = c
		res.Alpha[k] = up(m.rho, res.Alpha[k-1], c)
	}
	if isInf(res.Alpha[s.Horizon]) || isInf(a0) {
		return Result{}, argErr(fn, "Constants.G", s.Constants.G, ErrRange)
	}
	ps := make([]Provenance, len(res.Terms))
	for i, t := range res.Terms {
		ps[i] = t.Provenance
	}
	res.Provenance = Combine(ps...)
	return res, nil
}

// terms lists the quantities of the scenario with their provenance.
func (s Scenario) terms(m *model, lambdaZ float64) []Term {
	c := s.Constants
	ts := []Term{
		{"rho (" + s.Contraction.Method + ")", s.Contraction.Rho, s.Contraction.Provenance,
			"ρ of Lemma \"One-step state-error recursion\" / Assumption \"Contractive update map\""},
		{"G", c.G, c.Provenance, "G of Assumption \"Bounded stochastic gradients\""},
		{"hMin", c.HMin, c.Provenance, "m of Assumption \"Bounded inverse-Hessian approximations\""},
		{"hMax", c.HMax, c.Provenance, "M of Assumption \"Bounded inverse-Hessian approximations\""},
		{"eta", c.Eta, Proved, "η_t, the learner's step size (exact)"},
		{"tau", float64(c.Tau), Proved, "τ, the memory size (exact)"},
		{"deletions", float64(len(s.Ages)), Proved, "m = |U|, the number of deleted samples (exact)"},
		{"step term η·hMax·G", c.StepTerm(), Proved,
			"η_s·ε_s at the step s of a deleted insert (the parameter part of d(Φ_s(θ⁻), Φ_s^{−U}(θ⁻)) in the Lemma's proof)"},
	}
	switch s.Memory {
	case MemoryWorstCase:
		ts = append(ts, Term{"memory term η·(hMax−hMin)·G, every step after the first deleted insert", m.memory, Proved,
			"η_s·ε_s(m, τ) at the other steps: the memory part of the deletion-induced perturbation"})
	case MemoryDirect:
		ts = append(ts,
			Term{"memory term η·(hMax−hMin)·G, the τ steps after each deleted insert", m.memory, Proved,
				"η_s·ε_s(m, τ) inside the direct-memory window (Proposition \"Direct memory is bounded for finite curvature pairs\")"},
			Term{"no indirect memory: the two memories agree outside the direct windows", 0, Assumed,
				"not in the paper; contradicted in general by its Experiment 1 (indirect memory)"})
	case MemoryCoupled:
		ts = append(ts,
			Term{"lambdaZ", lambdaZ, Proved, "λ_Z, the weight of the memory error in E_Θ (exact)"},
			Term{"memory jump λ_Z·(hMax−hMin) at a deleted insert's step", mulUp(lambdaZ, c.spread()), Proved,
				"the memory part of d(Φ_s(θ⁻), Φ_s^{−U}(θ⁻)) in the Lemma's proof"},
			Term{"ρ contracts the coupled map (w, Z) in the state metric", 0, Assumed,
				"Assumption \"Contractive update map\", taken as stated"})
	}
	if s.Start == StartGiven {
		ts = append(ts, Term{"delta0", s.Delta0, s.Delta0Provenance, "Δ_{t0} of Theorem \"Bounded counterfactual state deviation\""})
	}
	if s.RoundOff > 0 {
		ts = append(ts, Term{"round-off per step (two float trajectories)", s.RoundOff, Proved,
			"not in the paper (exact arithmetic): added to η_s·ε_s at every step from the first deleted insert on (docs/theory.md, \"Floating point\")"})
	}
	return ts
}

// TrackerOptions configures a [Tracker].
type TrackerOptions struct {
	// Memory selects the perturbation model. Defaults to MemoryWorstCase.
	Memory MemoryModel
	// LambdaZ is λ_Z ≥ 0 for MemoryCoupled. If nil, it defaults to 1;
	// new(0.0) sets λ_Z = 0.
	LambdaZ *float64
}

// Tracker maintains α_t online while a learner runs: call
// [Tracker.Step] once per update step (every insert the learner processes,
// whether or not it will be deleted later) and [Tracker.Delete] when a
// deletion request arrives for an insert processed some steps ago. α is
// the bound of the equivalent [Scenario] with StartUntouched at the current
// time. Step costs O(log deletions); Delete recomputes the past in
// O(deletions·log deletions). A Tracker is not safe for concurrent use.
type Tracker struct {
	c       Constants
	k       Contraction
	mem     MemoryModel
	lambdaZ float64
	now     int
	pos     []int  // absolute step indices of deleted inserts, sorted
	m       *model // the perturbation model for pos
	alpha   float64
}

// NewTracker validates its inputs (errors as for [Scenario.Bound]) and
// returns a tracker at step 0 with no deletion (α = 0).
func NewTracker(c Constants, k Contraction, opts TrackerOptions) (*Tracker, error) {
	const fn = "NewTracker"
	if err := c.Validate(); err != nil {
		return nil, err
	}
	if err := k.Validate(); err != nil {
		return nil, err
	}
	if !opts.Memory.valid() {
		return nil, argErr(fn, "Memory", float64(opts.Memory), ErrInvalid)
	}
	l, err := checkLambdaZ(fn, opts.LambdaZ)
	if err != nil {
		return nil, err
	}
	return &Tracker{c: c, k: k, mem: opts.Memory, lambdaZ: l, m: newModel(c, k.Rho, opts.Memory, l, nil)}, nil
}

// Step advances by one update step shared by both trajectories and returns
// the new α. On overflow (ErrRange) the state is unchanged.
func (t *Tracker) Step() (float64, error) {
	a := up(t.k.Rho, t.alpha, t.m.pi(t.now+1))
	if isInf(a) {
		return t.alpha, argErr("Tracker.Step", "alpha", a, ErrRange)
	}
	t.alpha = a
	t.now++
	return a, nil
}

// Delete records that the insert processed age steps ago (0: the last
// step) is deleted, and returns the new α. Errors (*ArgError): age < 0 or
// already deleted (ErrInvalid); overflow (ErrRange). On an error the state
// is unchanged.
func (t *Tracker) Delete(age int) (float64, error) {
	const fn = "Tracker.Delete"
	if age < 0 {
		return t.alpha, argErr(fn, "age", float64(age), ErrInvalid)
	}
	p := t.now - age
	i, found := slices.BinarySearch(t.pos, p)
	if found {
		return t.alpha, argErr(fn, "age", float64(age), fmt.Errorf("%w: already deleted", ErrInvalid))
	}
	pos := slices.Insert(slices.Clone(t.pos), i, p)
	m := newModel(t.c, t.k.Rho, t.mem, t.lambdaZ, pos)
	a := m.fold(0, pos[0], t.now)
	if isInf(a) {
		return t.alpha, argErr(fn, "age", float64(age), ErrRange)
	}
	t.pos, t.m, t.alpha = pos, m, a
	return a, nil
}

// Alpha returns the current bound α_t.
func (t *Tracker) Alpha() float64 { return t.alpha }

// Steps returns the number of steps taken.
func (t *Tracker) Steps() int { return t.now }

// Deletions returns the number of deletions recorded.
func (t *Tracker) Deletions() int { return len(t.pos) }

// Scenario returns the equivalent scenario at the current time with the
// given horizon: its Bound().Alpha[0] equals Alpha(), and its later values
// forecast α if no further deletion arrives.
func (t *Tracker) Scenario(horizon int) Scenario {
	ages := make([]int, len(t.pos))
	for i, p := range t.pos {
		ages[len(t.pos)-1-i] = t.now - p
	}
	return Scenario{Constants: t.c, Contraction: t.k, Memory: t.mem, LambdaZ: new(t.lambdaZ), Ages: ages, Horizon: horizon}
}
