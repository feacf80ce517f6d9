package certify

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"

	"unlearn/bound"
	"unlearn/noise"
	"unlearn/stream"
)

// Version is the toolkit version recorded in certificates by default.
const Version = "0.1.0-dev"

// MemoryPolicy says what happens to the curvature memory Z of a certified
// state (SPEC §7).
//
// The zero value is [Reset], the default.
type MemoryPolicy int

const (
	// Reset empties the memory after the noise: Z = ∅. The released state
	// (w + noise, ∅) is a function of the noised parameters alone, so the
	// whole state is covered (post-processing; docs/theory.md §9).
	Reset MemoryPolicy = iota
	// Rebuild rebuilds the memory from the noised parameters by replaying
	// retained data (events that exclude every deleted id) through o-LBFGS
	// from (w + noise, ∅), and keeps the noised w: the memory is then a
	// function of the noised parameters and of data common to the unlearned
	// and the counterfactual worlds, so the whole state is covered
	// (post-processing).
	Rebuild
	// Keep leaves the memory as it is: only the parameters are covered, and
	// the certificate says so. The kept memory may carry information about
	// the deleted samples (the paper's direct and indirect memory).
	Keep
)

// String returns "reset", "rebuild" or "keep".
func (p MemoryPolicy) String() string {
	switch p {
	case Reset:
		return "reset"
	case Rebuild:
		return "rebuild"
	case Keep:
		return "keep"
	}
	return fmt.Sprintf("MemoryPolicy(%d)", int(p))
}

// ParseMemoryPolicy is the inverse of String.
func ParseMemoryPolicy(s string) (MemoryPolicy, error) {
	for _, p := range []MemoryPolicy{Reset, Rebuild, Keep} {
		if p.String() == s {
			return p, nil
		}
	}
	return 0, specErr("MemoryPolicy", s, fmt.Errorf("%w: want reset, rebuild or keep", ErrSpec))
}

// MarshalText implements encoding.TextMarshaler.
func (p MemoryPolicy) MarshalText() ([]byte, error) {
	if !p.valid() {
		return nil, specErr("MemoryPolicy", int(p), ErrSpec)
	}
	return []byte(p.String()), nil
}

// UnmarshalText implements encoding.TextUnmarshaler.
func (p *MemoryPolicy) UnmarshalText(b []byte) error {
	v, err := ParseMemoryPolicy(string(b))
	if err != nil {
		return err
	}
	*p = v
	return nil
}

func (p MemoryPolicy) valid() bool { return p >= Reset && p <= Keep }

// Coverage says which part of the state a certificate covers.
type Coverage string

const (
	// CoversState: the whole optimizer state θ = (w, Z).
	CoversState Coverage = "state"
	// CoversParameters: the parameters w only.
	CoversParameters Coverage = "parameters"
)

// coverage returns what the policy covers.
func (p MemoryPolicy) coverage() Coverage {
	if p == Keep {
		return CoversParameters
	}
	return CoversState
}

// Given is a sensitivity α supplied directly, with where it came from.
type Given struct {
	// Alpha bounds ‖w̃ − w⁻‖₂, the distance of the unlearned parameters from
	// the counterfactual ones, finite and ≥ 0. Required. α = 0 claims exact
	// unlearning and adds no noise.
	Alpha float64 `json:"alpha"`
	// Provenance says whether Alpha is proved, estimated or assumed.
	// Required.
	Provenance bound.Provenance `json:"provenance"`
	// Method says how Alpha was obtained, for the certificate. Defaults to
	// "given".
	Method string `json:"method"`
}

// Spec specifies a certification: the privacy target, the sensitivity α
// (given, or computed from a bound), the calibration and sampler of the
// Gaussian noise, and what happens to the memory. The caller's Spec is
// never modified; defaults are resolved into a private copy.
type Spec struct {
	// Epsilon is ε > 0. Required. The classic calibration requires ε < 1.
	Epsilon float64
	// Delta is δ ∈ (0, 1). Required.
	Delta float64
	// Beta is the probability β ∈ [0, 1) that the bound α fails. Defaults
	// to 0 (a bound that holds under its assumptions, as every bound of
	// package bound does). The release is then (ε, δ + β)-certified
	// (docs/theory.md §9), and δ + β < 1 is required.
	Beta float64

	// Alpha gives α directly. Exactly one of Alpha and Scenario is
	// required.
	Alpha *Given
	// Scenario computes α = Scenario.Bound().Alpha[Horizon] + Shift: the
	// bound of Theorem "Bounded counterfactual state deviation" at the step
	// t0 + Horizon, which must be the time of the state being certified
	// (usually Horizon = 0, with the deletions' Ages counted up to the
	// present). Exactly one of Alpha and Scenario is required.
	Scenario *bound.Scenario
	// Shift is the distance ‖w̃ − w‖₂ by which an intervention moved the
	// parameters of the state the Scenario describes (the untouched
	// learner, Start = bound.StartUntouched), ≥ 0 and finite. By the
	// triangle inequality ‖w̃ − w⁻‖ ≤ ‖w − w⁻‖ + ‖w̃ − w‖ ≤ α_t + Shift, so
	// every intervention is covered at the time it is applied; compute it
	// with [ShiftOf] ([Wrap] does). Only with Scenario. Defaults to 0.
	Shift float64

	// Calibration selects how σ is computed from (α, ε, δ). Defaults to
	// noise.Analytic (Balle & Wang 2018); noise.Classic is the paper's
	// formula, valid for ε < 1 only.
	Calibration noise.Calibration
	// Sampler draws the noise. Defaults to the secure sampler,
	// noise.NewSecureSampler(noise.SamplerOptions{}). Only a
	// *noise.SecureSampler or a *noise.SeededSampler is accepted; the
	// seeded one must be asked for explicitly, and every certificate that
	// used it says "seeded" and that it is NOT for deployment.
	Sampler noise.Sampler

	// Memory says what happens to the curvature memory. Defaults to Reset.
	Memory MemoryPolicy
	// Retained is the data a Rebuild replays: insert events whose ids are
	// not deleted (e.g. the last τ retained inserts). Required (non-nil,
	// possibly empty) with Rebuild, refused otherwise. ([Wrap] defaults it
	// to the retained ones among the last τ inserts of each request's
	// prefix.)
	Retained []stream.Event

	// Header is the stream header recorded with the state in its snapshot,
	// used for the SHA-256 hashes of the states. Defaults to the header
	// [HeaderOf] derives from the state's loss; set it to the header of the
	// snapshot the state was read from (it may carry metadata) so that the
	// hashes match that file.
	Header *stream.Header
	// Intervention names the intervention that produced the state, for the
	// certificate. Defaults to "unspecified" ([Wrap]: the operator's Name).
	Intervention string
	// Deletions is the number of deleted samples the certificate is for.
	// With Scenario it defaults to len(Scenario.Ages) and must equal it if
	// set; with Alpha it defaults to 0.
	Deletions int
	// Toolkit is the toolkit version recorded. Defaults to
	// "unlearn " + Version.
	Toolkit string
}

// Sensitivity is the α of a certificate with everything it was computed
// from, so that [Verify] can recompute it.
type Sensitivity struct {
	// Alpha is α, the L2 sensitivity the noise is calibrated to: a bound on
	// ‖w̃ − w⁻‖₂.
	Alpha float64 `json:"value"`
	// Source is "given" (Spec.Alpha) or "bound" (Spec.Scenario).
	Source string `json:"source"`
	// Provenance is the weakest provenance of α's inputs.
	Provenance bound.Provenance `json:"provenance"`
	// Method says how a given α was obtained ("given" source only).
	Method string `json:"method,omitempty"`
	// Bound holds the inputs of the bound ("bound" source only).
	Bound *BoundInputs `json:"bound,omitempty"`
	// BoundAlpha is the scenario's α at t0 + Horizon, before the shift
	// ("bound" source only).
	BoundAlpha float64 `json:"bound_alpha"`
	// Shift is the intervention's parameter shift added to BoundAlpha.
	Shift float64 `json:"shift"`
	// Metric names the distance α bounds.
	Metric string `json:"metric"`
	// Terms lists every quantity α rests on with its provenance and the
	// paper's name for it.
	Terms []bound.Term `json:"terms"`
}

// BoundInputs are the inputs of a bound.Scenario, in JSON form.
type BoundInputs struct {
	// G, HMin, HMax, Eta, Tau and ConstantsSource are bound.Constants.
	G               float64          `json:"G"`
	HMin            float64          `json:"hmin"`
	HMax            float64          `json:"hmax"`
	Eta             float64          `json:"eta"`
	Tau             int              `json:"tau"`
	ConstantsSource bound.Provenance `json:"constants_source"`
	// Contraction is ρ with its provenance and method.
	Contraction bound.Contraction `json:"contraction"`
	// Memory is the perturbation model.
	Memory bound.MemoryModel `json:"memory_model"`
	// LambdaZ is λ_Z (nil: the default 1).
	LambdaZ *float64 `json:"lambda_z,omitempty"`
	// Ages are the deletions' ages in update steps (their number is the
	// deletion count).
	Ages []int `json:"ages"`
	// Horizon is the number of steps after t0 the state is at.
	Horizon int `json:"horizon"`
	// Start is "untouched" or "given".
	Start string `json:"start"`
	// Delta0 and Delta0Source are the given Δ_{t0} and its provenance
	// (Start "given" only).
	Delta0       float64 `json:"delta0,omitempty"`
	Delta0Source string  `json:"delta0_source,omitempty"`
}

// inputsOf records the scenario's inputs.
func inputsOf(s bound.Scenario) *BoundInputs {
	c := s.Constants
	b := &BoundInputs{
		G: c.G, HMin: c.HMin, HMax: c.HMax, Eta: c.Eta, Tau: c.Tau, ConstantsSource: c.Source,
		Contraction: s.Contraction, Memory: s.Memory, Ages: slices.Clone(s.Ages), Horizon: s.Horizon,
		Start: s.Start.String(),
	}
	if b.Ages == nil {
		b.Ages = []int{}
	}
	if s.LambdaZ != nil {
		b.LambdaZ = new(*s.LambdaZ)
	}
	if s.Start == bound.StartGiven {
		b.Delta0, b.Delta0Source = s.Delta0, s.Delta0Source.String()
	}
	return b
}

// Scenario rebuilds the bound.Scenario the inputs describe. Errors:
// an unknown Start or Delta0Source (ErrSpec).
func (b *BoundInputs) Scenario() (bound.Scenario, error) {
	s := bound.Scenario{
		Constants:   bound.Constants{G: b.G, HMin: b.HMin, HMax: b.HMax, Eta: b.Eta, Tau: b.Tau, Source: b.ConstantsSource},
		Contraction: b.Contraction, Memory: b.Memory, Ages: slices.Clone(b.Ages), Horizon: b.Horizon,
	}
	if b.LambdaZ != nil {
		s.LambdaZ = new(*b.LambdaZ)
	}
	switch b.Start {
	case bound.StartUntouched.String():
		s.Start = bound.StartUntouched
	case bound.StartGiven.String():
		p, err := bound.ParseProvenance(b.Delta0Source)
		if err != nil {
			return bound.Scenario{}, specErr("Scenario.Delta0Source", b.Delta0Source, ErrSpec)
		}
		s.Start, s.Delta0, s.Delta0Source = bound.StartGiven, b.Delta0, p
	default:
		return bound.Scenario{}, specErr("Scenario.Start", b.Start, ErrSpec)
	}
	return s, nil
}

func validProvenance(p bound.Provenance) bool {
	return p == bound.Proved || p == bound.Estimated || p == bound.Assumed
}

func finiteNonNeg(v float64) bool { return !math.IsNaN(v) && !math.IsInf(v, 0) && v >= 0 }

// roundUp returns the next float64 above a ≥ 0 (0 stays 0).
func roundUp(a float64) float64 {
	if a == 0 {
		return 0
	}
	return math.Nextafter(a, math.Inf(1))
}

// boundField maps an *ArgError of package bound to the Spec field it
// concerns.
func boundField(err error) string {
	var ae *bound.ArgError
	if !errors.As(err, &ae) {
		return "Scenario"
	}
	switch ae.Func {
	case "Constants.Validate":
		return "Scenario.Constants." + ae.Arg
	case "Contraction.Validate":
		if ae.Arg == "rho" {
			return "Scenario.Contraction.Rho"
		}
		return "Scenario.Contraction." + ae.Arg
	}
	return "Scenario." + ae.Arg
}

// noiseField maps an *ArgError of package noise to the field it concerns.
func noiseField(err error, alphaField string) string {
	var ae *noise.ArgError
	if !errors.As(err, &ae) {
		return "Calibration"
	}
	switch ae.Arg {
	case "epsilon":
		return "Epsilon"
	case "delta":
		return "Delta"
	case "alpha":
		return alphaField
	case "calibration":
		return "Calibration"
	}
	return ae.Arg
}

// checkPrivacy validates ε, δ and β.
func checkPrivacy(eps, delta, beta float64) error {
	if math.IsNaN(eps) || math.IsInf(eps, 0) || eps <= 0 {
		return specErr("Epsilon", eps, ErrEpsilon)
	}
	if math.IsNaN(delta) || delta <= 0 || delta >= 1 {
		return specErr("Delta", delta, ErrDelta)
	}
	if math.IsNaN(beta) || beta < 0 || beta >= 1 {
		return specErr("Beta", beta, ErrBeta)
	}
	if delta+beta >= 1 {
		return specErr("Beta", beta, fmt.Errorf("%w: δ + β = %v", ErrBeta, delta+beta))
	}
	return nil
}

// guarantee returns (ε, δ + β), δ + β rounded up.
func guarantee(eps, delta, beta float64) Guarantee {
	d := delta
	if beta > 0 {
		d = roundUp(delta + beta)
	}
	return Guarantee{Epsilon: eps, Delta: d}
}

// Sensitivity computes α from the spec without touching any state: the
// given α, or Scenario.Bound().Alpha[Horizon] + Shift rounded up, with its
// inputs and provenance. Errors: a *SpecError naming the field — no
// sensitivity or both (ErrSpec), a bad given α or shift (ErrValue), a
// provenance that is not set (ErrSpec), or the *bound.ArgError of the
// scenario (ErrRho, ErrValue, …).
func (s Spec) Sensitivity() (Sensitivity, error) {
	switch {
	case s.Alpha == nil && s.Scenario == nil:
		return Sensitivity{}, specErr("Alpha", nil, fmt.Errorf("%w: give Alpha or Scenario", ErrSpec))
	case s.Alpha != nil && s.Scenario != nil:
		return Sensitivity{}, specErr("Alpha", nil, fmt.Errorf("%w: give Alpha or Scenario, not both", ErrSpec))
	case s.Alpha != nil:
		g := *s.Alpha
		if !finiteNonNeg(g.Alpha) {
			return Sensitivity{}, specErr("Alpha.Alpha", g.Alpha, ErrValue)
		}
		if !validProvenance(g.Provenance) {
			return Sensitivity{}, specErr("Alpha.Provenance", g.Provenance, fmt.Errorf("%w: say whether α is proved, estimated or assumed", ErrSpec))
		}
		if s.Shift != 0 {
			return Sensitivity{}, specErr("Shift", s.Shift, fmt.Errorf("%w: a shift applies to a Scenario only", ErrSpec))
		}
		m := g.Method
		if m == "" {
			m = "given"
		}
		return Sensitivity{
			Alpha: g.Alpha, Source: "given", Provenance: g.Provenance, Method: m,
			Metric: "parameter error ‖w̃ − w⁻‖₂",
			Terms:  []bound.Term{{Name: "alpha (" + m + ")", Value: g.Alpha, Provenance: g.Provenance, Paper: "α_t(m, τ) of Theorem \"o-LBFGS Unlearning Certificate\""}},
		}, nil
	}
	if !finiteNonNeg(s.Shift) {
		return Sensitivity{}, specErr("Shift", s.Shift, ErrValue)
	}
	sc := *s.Scenario
	sc.Ages = slices.Clone(sc.Ages)
	res, err := sc.Bound()
	if err != nil {
		return Sensitivity{}, specErr(boundField(err), nil, err)
	}
	a := res.Alpha[sc.Horizon]
	alpha := a
	terms := res.Terms
	if s.Shift > 0 {
		alpha = roundUp(a + s.Shift)
		if math.IsInf(alpha, 0) {
			return Sensitivity{}, specErr("Shift", s.Shift, ErrValue)
		}
		terms = append(terms, bound.Term{Name: "shift ‖w̃ − w‖₂ of the intervention", Value: s.Shift, Provenance: bound.Proved,
			Paper: "Δ_{t0} of Theorem \"Bounded counterfactual state deviation\" after an intervention: ‖w̃ − w⁻‖ ≤ ‖w − w⁻‖ + ‖w̃ − w‖ (triangle inequality)"})
	}
	return Sensitivity{
		Alpha: alpha, Source: "bound", Provenance: res.Provenance, Bound: inputsOf(sc),
		BoundAlpha: a, Shift: s.Shift, Metric: res.Metric, Terms: terms,
	}, nil
}

// resolved is a validated Spec with its defaults filled in.
type resolved struct {
	Spec
	sens    Sensitivity
	gauss   *noise.Gaussian // the mechanism, σ computed once for (α, ε, δ)
	sampler string
}

// resolve validates everything in the spec that does not depend on the
// state and computes α and σ.
func (s Spec) resolve() (*resolved, error) {
	if err := checkPrivacy(s.Epsilon, s.Delta, s.Beta); err != nil {
		return nil, err
	}
	sens, err := s.Sensitivity()
	if err != nil {
		return nil, err
	}
	alphaField := "Alpha.Alpha"
	if s.Scenario != nil {
		alphaField = "Scenario"
	}
	// NewGaussian computes σ with noise.Sigma (same errors) and defaults a
	// nil Sampler to the secure one.
	g, err := noise.NewGaussian(noise.GaussianOptions{
		Alpha: sens.Alpha, Epsilon: s.Epsilon, Delta: s.Delta, Calibration: s.Calibration, Sampler: s.Sampler,
	})
	if err != nil {
		return nil, specErr(noiseField(err, alphaField), nil, err)
	}
	r := &resolved{Spec: s, sens: sens, gauss: g}
	r.Sampler = g.Options().Sampler
	switch r.Sampler.(type) {
	case *noise.SecureSampler:
		r.sampler = noise.NameSecure
	case *noise.SeededSampler:
		r.sampler = noise.NameSeeded
	default:
		return nil, specErr("Sampler", fmt.Sprintf("%T", r.Sampler), fmt.Errorf("%w: use noise.NewSecureSampler (deployment) or noise.NewSeededSampler (experiments only)", ErrSampler))
	}
	if !r.Memory.valid() {
		return nil, specErr("Memory", int(r.Memory), ErrSpec)
	}
	switch {
	case r.Memory == Rebuild && r.Retained == nil:
		return nil, specErr("Retained", nil, fmt.Errorf("%w: required with the Rebuild policy (it may be empty)", ErrSpec))
	case r.Memory != Rebuild && r.Retained != nil:
		return nil, specErr("Retained", nil, fmt.Errorf("%w: retained data is used by the Rebuild policy only", ErrSpec))
	}
	if s.Scenario != nil {
		if r.Deletions == 0 {
			r.Deletions = len(s.Scenario.Ages)
		} else if r.Deletions != len(s.Scenario.Ages) {
			return nil, specErr("Deletions", r.Deletions, fmt.Errorf("%w: the scenario has %d ages", ErrSpec, len(s.Scenario.Ages)))
		}
	}
	if r.Deletions < 0 {
		return nil, specErr("Deletions", r.Deletions, ErrSpec)
	}
	if r.Intervention == "" {
		r.Intervention = "unspecified"
	}
	if r.Toolkit == "" {
		r.Toolkit = "unlearn " + Version
	}
	r.Retained = slices.Clone(r.Retained)
	return r, nil
}

// HeaderOf returns a stream header describing loss (format, kind, d, and
// H0, H1 or λ), without metadata. Errors: a loss of neither SPEC kind
// (ErrSpec): such a state cannot be saved as a snapshot, hence not hashed.
func HeaderOf(loss stream.Loss) (stream.Header, error) {
	switch l := loss.(type) {
	case *stream.Quadratic:
		return stream.Header{Format: stream.FormatV1, Kind: stream.KindQuadratic, D: l.Dim(), H0: l.H0(), H1: l.H1()}, nil
	case *stream.Logistic:
		return stream.Header{Format: stream.FormatV1, Kind: stream.KindLogistic, D: l.Dim(), Lambda: l.Lambda()}, nil
	}
	return stream.Header{}, specErr("Header", fmt.Sprintf("%T", loss), fmt.Errorf("%w: no snapshot header for a loss of kind %q", ErrSpec, loss.Kind()))
}

// statement returns the plain-language statement of what a certificate
// says, and its warnings, from its fields. It is deterministic, so Verify
// can recompute it.
func statement(c *Certificate) (string, []string) {
	var b strings.Builder
	warnings := []string{}
	g := c.Guarantee
	fmt.Fprintf(&b, "(ε, δ) = (%v, %v)-certified unlearning", g.Epsilon, g.Delta)
	if c.Beta > 0 {
		fmt.Fprintf(&b, " (δ = %v plus the bound's failure probability β = %v)", c.Delta, c.Beta)
	}
	fmt.Fprintf(&b, " of %s after %d deletion(s) by intervention %q. ", c.Covers, c.Deletions, c.Intervention)
	switch c.Memory {
	case Reset:
		b.WriteString("The parameters w carry Gaussian noise N(0, σ²I) calibrated to the L2 sensitivity α; the memory Z was reset to ∅, so the whole state (w, Z) is covered. ")
	case Rebuild:
		n := 0
		if c.Retained != nil {
			n = len(c.Retained.IDs)
		}
		fmt.Fprintf(&b, "The parameters w carry Gaussian noise N(0, σ²I) calibrated to the L2 sensitivity α; the memory Z was rebuilt from the noised w by replaying %d retained insert(s) that exclude every deleted sample (post-processing), so the whole state (w, Z) is covered. ", n)
	case Keep:
		b.WriteString("Only the parameters w are covered: they carry Gaussian noise calibrated to α, but the memory Z was KEPT as it was and is NOT covered; it may still carry information about the deleted samples. ")
		warnings = append(warnings, "memory kept: only the parameters are covered, not the curvature memory")
	}
	if c.Exact {
		b.WriteString("α = 0 (exact unlearning, Theorem \"o-LBFGS Unlearning Certificate\"): no noise was added. ")
	}
	switch c.Sensitivity.Provenance {
	case bound.Proved:
		b.WriteString("α is proved from the assumptions its terms list (docs/theory.md). ")
	case bound.Estimated, bound.Assumed:
		p := c.Sensitivity.Provenance
		var names []string
		for _, t := range c.Sensitivity.Terms {
			if t.Provenance == p {
				names = append(names, t.Name)
			}
		}
		what := map[bound.Provenance]string{bound.Estimated: "ESTIMATED (measured from data, no guarantee beyond the data)",
			bound.Assumed: "ASSUMED (taken without proof or measurement)"}[p]
		fmt.Fprintf(&b, "α rests on %s quantities: %s; the certificate is only as good as them. ", what, strings.Join(names, "; "))
		warnings = append(warnings, fmt.Sprintf("α is %s, not proved: %s", p, strings.Join(names, "; ")))
	}
	if c.Sampler == noise.NameSeeded {
		b.WriteString("The noise came from the SEEDED sampler: it is reproducible from its seed, and this release is NOT for deployment (experiments and tests only). ")
		warnings = append(warnings, "seeded sampler: NOT for deployment")
	}
	b.WriteString("Not covered: the snapshot's bookkeeping (event and skip counters, deleted ids, configuration, stream header).")
	if c.Redacted {
		warnings = append(warnings, "redacted: the hash of the state before the noise was removed, so it cannot be checked")
	}
	return b.String(), warnings
}
