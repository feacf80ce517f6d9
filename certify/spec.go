package certify

import (
	"errors"
	"fmt"
	"math"
	"reflect"
	"slices"
	"strings"

	"unlearn/bound"
	"unlearn/internal/established"
	"unlearn/model"
	"unlearn/noise"
	"unlearn/olbfgs"
	"unlearn/stream"
	"unlearn/unlearn"
)

// Version is the toolkit version recorded in certificates by default.
const Version = "0.1.0-dev"

// MemoryPolicy says what is released of the curvature memory Z (spec §7:
// the un-noised memory is never released).
//
// The zero value is [Reset], the default.
type MemoryPolicy int

const (
	// Reset releases an empty memory: the released state (w + noise, ∅) is
	// a function of the noised parameters alone (post-processing).
	Reset MemoryPolicy = iota
	// Rebuild releases the memory o-LBFGS builds when it replays retained
	// data (inserts of ids that are not deleted) from the noised w: a
	// function of the noised parameters and of data common to both worlds
	// (post-processing). The released w stays the noised one.
	Rebuild
	// Exact releases the state as it is, memory included, without noise. It
	// is never requested: the toolkit selects it when it has itself
	// established that the state equals the counterfactual (oracle replay,
	// a window replay whose window holds every deleted insert: [Wrap], the
	// model store).
	Exact
)

// String returns "reset", "rebuild" or "exact".
func (p MemoryPolicy) String() string {
	switch p {
	case Reset:
		return "reset"
	case Rebuild:
		return "rebuild"
	case Exact:
		return "exact"
	}
	return fmt.Sprintf("MemoryPolicy(%d)", int(p))
}

// ParseMemoryPolicy is the inverse of String for "reset" and "rebuild",
// the policies a caller may ask for. "keep" — releasing the un-noised
// memory beside a noised w — is refused: with retained samples an adversary
// may know, the kept pairs give back the un-noised w, and they carry the
// deleted samples' own pairs (spec §7).
func ParseMemoryPolicy(s string) (MemoryPolicy, error) {
	switch s {
	case "reset":
		return Reset, nil
	case "rebuild":
		return Rebuild, nil
	case "exact":
		return Exact, nil
	case "keep":
		return 0, specErr("MemoryPolicy", s, fmt.Errorf("%w: the un-noised memory is never released (it undoes the noise); use reset or rebuild", ErrSpec))
	}
	return 0, specErr("MemoryPolicy", s, fmt.Errorf("%w: want reset or rebuild", ErrSpec))
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

func (p MemoryPolicy) valid() bool { return p >= Reset && p <= Exact }

// Given is a sensitivity α a user supplies. The toolkit cannot check it,
// so its provenance is always "assumed" and every certificate built on it
// says in words that the guarantee is conditional on it.
type Given struct {
	// Alpha is the claimed bound on ‖w̃ − w⁻‖₂, finite and > 0. Required.
	Alpha float64 `json:"alpha"`
	// Method says how Alpha was obtained, for the certificate. Defaults to
	// "given".
	Method string `json:"method"`
}

// Deletion describes a deletion request in public terms for a sensitivity
// the toolkit derives: when the deleted inserts were processed, which of
// the toolkit's interventions produced the state, and how many steps it
// replayed. Nothing in it depends on the deleted payloads.
type Deletion struct {
	// Ages are the deleted inserts' ages at t0, in update steps (0: the
	// last step before t0; [AgesOf]). Distinct, ≥ 0. Their number is the
	// deletion count.
	Ages []int `json:"ages"`
	// Horizon is the number of update steps after t0 that both the state
	// and the counterfactual took on the same (retained) events: 0 for an
	// intervention at t_del; the retained inserts of the window for a
	// window replay that restored a checkpoint older than a deleted insert.
	Horizon int `json:"horizon"`
	// Intervention is the built-in operator that produced the state
	// (unlearn.BuiltinOf). Its a-priori allowance is added to α.
	Intervention unlearn.Builtin `json:"intervention"`
	// Steps is T₀, the learner's count of applied inserts when the
	// intervention acted (olbfgs.Learner.Inserts; deleted inserts
	// included): public, a count, not data. The scheduled bound of a
	// learner without curvature memory (Profile.Dynamics) needs it — its α
	// shrinks with T₀ + Horizon — and ignores the deletion without it (the
	// diameter). 0 (omitted) for the other learners.
	Steps int `json:"steps,omitempty"`
	// Earlier lists the approximate requests still pending that were
	// served before this one, oldest first (each with its own ages, step
	// count and intervention): the counterfactual excludes their deleted
	// inserts too. Only the scheduled bound covers them (Profile.Dynamics:
	// one recursion over every request, docs/theory.md §16.6); every other
	// path gives the diameter when Earlier is not empty. Empty for one
	// request.
	Earlier []Request `json:"earlier,omitempty"`
	// Disclosed says how Ages disclose the true ages when they are not
	// the true ones: "pow2" (each listed age stands for its bucket [2^k,
	// 2^(k+1)), 0 and 1 alone, and the ages of a bucket holding c deleted
	// inserts are listed as 2^k, …, 2^k + c − 1) or "none" (only their
	// number m, listed as 0, …, m − 1). The scheduled bound then takes the
	// largest α over every true-age configuration consistent with the
	// disclosure (bound.Dynamics.WorstBound, docs/theory.md §16.12); it is
	// not combined with Earlier. The guarded-memory recursion uses the
	// listed ages as they are (lower bounds of the true ones: sound where
	// its α is non-increasing in every age, which the model store checks).
	// Empty: the ages are the true ones.
	Disclosed string `json:"disclosed,omitempty"`
	// Replayed is the number of inserts retain fine-tuning re-applied.
	Replayed int `json:"replayed,omitempty"`
	// InWindow is, for a window replay whose checkpoint is older than some
	// deleted insert, the number of deleted inserts inside the window (they
	// are in neither trajectory after the checkpoint, so they have no age);
	// the deletion count is len(Ages) + InWindow.
	InWindow int `json:"in_window,omitempty"`
	// Established says how the toolkit established this description (it
	// ran the intervention itself, replayed the history and compared it with
	// the state, or served the request in the model store). It is set from
	// Spec.Established, never from the caller's Deletion: empty means the
	// description is the caller's word, and α is then "assumed".
	Established string `json:"established,omitempty"`
}

// Request is the public description of one earlier pending request of a
// [Deletion] (Deletion.Earlier): the ages of its deleted inserts at its
// intervention, in update steps, distinct, ≥ 0, below Steps; Steps, the
// learner's count of applied inserts when its intervention acted
// (1 ≤ Steps ≤ the later requests' Steps); and its intervention.
type Request struct {
	Ages         []int           `json:"ages"`
	Steps        int             `json:"steps"`
	Intervention unlearn.Builtin `json:"intervention"`
}

// count returns the number of deleted inserts d describes: its ages, those
// inside a window, and the earlier requests' ages.
func (d *Deletion) count() int {
	n := len(d.Ages) + d.InWindow
	for _, r := range d.Earlier {
		n += len(r.Ages)
	}
	return n
}

// clone returns a copy of d that shares no slice with it.
func (d *Deletion) clone() *Deletion {
	c := *d
	c.Ages = slices.Clone(d.Ages)
	if c.Ages == nil {
		c.Ages = []int{}
	}
	if d.Earlier != nil {
		c.Earlier = make([]Request, len(d.Earlier))
		for i, r := range d.Earlier {
			r.Ages = slices.Clone(r.Ages)
			if r.Ages == nil {
				r.Ages = []int{}
			}
			c.Earlier[i] = r
		}
	}
	return &c
}

// Spec specifies a certified release: the privacy target, how α is
// obtained, the calibration and sampler of the Gaussian noise, and what is
// released of the memory. The caller's Spec is never modified.
//
// α is, by the fields set (spec §7):
//   - Deletion: derived by the toolkit from the learner's configuration, the
//     loss header and the request's public description, provenance
//     "proved" ([DeriveProfile]; the recursion when the learner is guarded,
//     capped by the diameter bound 2W');
//   - neither Deletion nor Alpha: the diameter bound 2W' of the learner's
//     radius, proved whatever produced the state;
//   - Alpha: the user's α, provenance "assumed".
type Spec struct {
	// Epsilon is ε > 0. Required. The classic calibration requires ε < 1.
	Epsilon float64
	// Delta is δ ∈ (0, 1). Required.
	Delta float64
	// Beta is the probability β ∈ [0, 1) that an assumed α fails; the
	// release is then (ε, δ + β)-certified. Derived bounds hold with β = 0.
	// Defaults to 0.
	Beta float64

	// Alpha gives an assumed α. At most one of Alpha and Deletion.
	Alpha *Given
	// Deletion describes the request for a derived α.
	Deletion *Deletion

	// Calibration selects how σ is computed. Defaults to noise.Analytic.
	Calibration noise.Calibration
	// Sampler draws the noise. Defaults to the secure sampler. Only a
	// *noise.SecureSampler or a *noise.SeededSampler (experiments, tests
	// and audits only; every certificate then says so) is accepted.
	Sampler noise.Sampler

	// Memory is Reset (default) or Rebuild.
	Memory MemoryPolicy
	// Retained is the data a Rebuild replays: inserts of ids that are not
	// deleted. Required (non-nil) with Rebuild, refused otherwise.
	Retained []stream.Event

	// Header is the loss's stream header. Defaults to [HeaderOf] the
	// state's loss; if set, its loss fields (kind, d, H0, H1, λ) must equal
	// those of the state's loss. Its metadata is never released.
	Header *stream.Header
	// Established is set by the toolkit's own packages only (package
	// certify's Wrap and CertifyTrained, the model store): it says how they
	// established the Deletion, or the exactness of an exact release,
	// themselves. Code outside this module cannot construct one; without it
	// a Deletion is the caller's description and α is "assumed", and no
	// release is exact.
	Established *established.Description
	// Intervention names the intervention for the certificate. Defaults to
	// Deletion.Intervention's kind, or "unspecified".
	Intervention string
	// Deletions is the number of deleted samples. With Deletion it defaults
	// to len(Deletion.Ages) and must be at least that (a window replay's
	// Ages name only the deletions older than its checkpoint).
	Deletions int
	// Toolkit is the toolkit version recorded. Defaults to
	// "unlearn " + Version.
	Toolkit string
}

// Sensitivity is the α of a certificate with what it was computed from,
// so that [Verify] can recompute it from public inputs.
type Sensitivity struct {
	// Alpha is α, the L2 sensitivity the noise is calibrated to: a bound on
	// ‖w̃ − w⁻‖₂ (0 for an exact release).
	Alpha float64 `json:"value"`
	// Source is "derived", "diameter", "exact" or "assumed".
	Source string `json:"source"`
	// Provenance is "proved" unless Source is "assumed".
	Provenance bound.Provenance `json:"provenance"`
	// Method says how an assumed α was obtained, or why a release is exact.
	Method string `json:"method,omitempty"`
	// Deletion holds the request's public description ("derived" only).
	Deletion *Deletion `json:"deletion,omitempty"`
	// Recursion is the bound of the recursion before the allowance and the
	// cap ("derived" with a guarded learner; else 0).
	Recursion float64 `json:"recursion"`
	// Allowance is the intervention's a-priori allowance.
	Allowance float64 `json:"allowance"`
	// Diameter is 2W', the cap.
	Diameter float64 `json:"diameter"`
	// Binding says which bound gives α: "recursion" or "diameter" (or
	// "radius" for drop and refill), and Why, when the recursion does not
	// give it, why not ("derived" and "diameter" sources).
	Binding string `json:"binding,omitempty"`
	Why     string `json:"why,omitempty"`
	// Metric names the distance α bounds.
	Metric string `json:"metric"`
	// Terms lists every quantity α rests on with its provenance.
	Terms []bound.Term `json:"terms"`
}

// MaxHorizon bounds Deletion.Horizon, Replayed and the number of ages
// (2²⁰): the bound's series is computed step by step, and a certificate's
// inputs must not make its verification allocate without limit.
const MaxHorizon = 1 << 20

const metricW = "parameter error ‖w̃ − w⁻‖₂ of the released w (after projection onto the learner's ball)"

// sensitivity computes α from the spec's public inputs, the learner's
// configuration and the loss header; exact is set only by the toolkit's
// own replay paths.
func sensitivity(s *Spec, cfg olbfgs.Config, h stream.Header, exact string) (Sensitivity, error) {
	if exact != "" {
		return Sensitivity{Alpha: 0, Source: "exact", Provenance: bound.Proved, Method: exact, Metric: metricW,
			Terms: []bound.Term{{Name: "exact", Value: 0, Provenance: bound.Proved, Paper: "Theorem \"o-LBFGS Unlearning Certificate\": exact unlearning when α_t = 0; established by the toolkit: " + exact}}}, nil
	}
	if s.Alpha != nil {
		if s.Deletion != nil {
			return Sensitivity{}, specErr("Alpha", nil, fmt.Errorf("%w: give Alpha or Deletion, not both", ErrSpec))
		}
		g := *s.Alpha
		if !finiteNonNeg(g.Alpha) || g.Alpha == 0 {
			return Sensitivity{}, specErr("Alpha.Alpha", g.Alpha, fmt.Errorf("%w: an assumed α must be finite and > 0 (exactness is established by the toolkit, never given)", ErrValue))
		}
		m := g.Method
		if m == "" {
			m = "given"
		}
		return Sensitivity{Alpha: g.Alpha, Source: "assumed", Provenance: bound.Assumed, Method: m, Metric: "parameter error ‖w̃ − w⁻‖₂",
			Terms: []bound.Term{{Name: "alpha (" + m + ")", Value: g.Alpha, Provenance: bound.Assumed,
				Paper: "α_t(m, τ) of Theorem \"o-LBFGS Unlearning Certificate\", supplied by the user and not checked by the toolkit"}}}, nil
	}
	p, err := DeriveProfile(cfg, h)
	if err != nil {
		return Sensitivity{}, err
	}
	// The released w is projected onto the ball of radius W' before the
	// noise; the float projection is within 4(d+8)u·W' of the exact one.
	proj := upBy(4*float64(cfg.ParamDim()+8)*unit*p.Radius, 2)
	out := Sensitivity{Source: "diameter", Provenance: bound.Proved, Diameter: p.Diameter, Metric: metricW, Terms: slices.Clone(p.Terms),
		Binding: "diameter", Why: "no deletion described: the diameter 2W' holds whatever produced the state"}
	alpha := p.Diameter
	if d := s.Deletion; d != nil {
		out.Source = "derived"
		dc := *d.clone()
		out.Deletion = &dc
		var allowance float64
		k := d.Intervention
		switch k.Kind {
		case unlearn.KindOracle:
			return Sensitivity{}, specErr("Deletion.Intervention", k.Kind, fmt.Errorf("%w: exactness is established by the toolkit's own replay (Wrap, the model store), never on a caller's word", ErrNotCertifiable))
		case unlearn.KindNoop, unlearn.KindPairDrop, unlearn.KindMemoryReset, unlearn.KindWindowReplay:
		case unlearn.KindParamOnly:
			allowance = float64(len(d.Ages))
		case unlearn.KindRetainFT:
			allowance = float64(d.Replayed)
		case unlearn.KindDropRefill:
			if d.Horizon == 0 {
				alpha = p.Radius // w̃ = 0 and ‖w⁻‖ ≤ W'
				out.Binding, out.Why = "radius", "drop and refill releases w̃ = 0 and ‖w⁻‖ ≤ W'"
			}
		default:
			return Sensitivity{}, specErr("Deletion.Intervention", k.Kind, fmt.Errorf("%w: unknown intervention", ErrSpec))
		}
		if d.Disclosed != "" && d.Disclosed != "pow2" && d.Disclosed != "none" {
			return Sensitivity{}, specErr("Deletion.Disclosed", d.Disclosed, fmt.Errorf("%w: pow2, none or empty", ErrSpec))
		}
		if d.Replayed < 0 || d.Replayed > MaxHorizon {
			return Sensitivity{}, specErr("Deletion.Replayed", d.Replayed, fmt.Errorf("%w: must be in [0, %d]", ErrValue, MaxHorizon))
		}
		if d.Horizon < 0 || d.Horizon > MaxHorizon {
			return Sensitivity{}, specErr("Deletion.Horizon", d.Horizon, fmt.Errorf("%w: must be in [0, %d]", ErrValue, MaxHorizon))
		}
		if len(d.Ages) > MaxHorizon || len(d.Earlier) > MaxHorizon || d.count() > MaxHorizon {
			return Sensitivity{}, specErr("Deletion.Ages", d.count(), fmt.Errorf("%w: at most %d deletions", ErrValue, MaxHorizon))
		}
		dropNow := k.Kind == unlearn.KindDropRefill && d.Horizon == 0
		if len(d.Earlier) > 0 && p.Dynamics == nil && !dropNow {
			out.Why = severalWhy
			out.Terms = append(out.Terms, bound.Term{Name: "several requests", Value: float64(len(d.Earlier) + 1), Provenance: bound.Proved, Paper: severalWhy})
		} else if p.Dynamics != nil && !dropNow {
			rec, allow, why, terms, err := scheduledSensitivity(p, d)
			if err != nil {
				return Sensitivity{}, err
			}
			out.Allowance = allow
			switch {
			case why != "":
				out.Why = why
				out.Terms = append(out.Terms, bound.Term{Name: "no scheduled bound", Value: 0, Provenance: bound.Proved, Paper: why})
			case rec < alpha:
				out.Recursion, alpha, out.Binding, out.Why = rec, rec, "recursion", ""
				out.Terms = append(out.Terms, terms...)
			default:
				out.Recursion = rec
				out.Why = fmt.Sprintf("the scheduled bound gives %.4g, not below the diameter 2W' = %.4g", rec, p.Diameter)
				out.Terms = append(out.Terms, terms...)
			}
		} else if p.Recursion && !dropNow {
			sc := bound.Scenario{Constants: p.Constants, Contraction: p.Contraction, Memory: bound.MemoryWorstCase,
				Ages: dc.Ages, Horizon: d.Horizon, RoundOff: p.RoundOff}
			if k.Kind == unlearn.KindDropRefill {
				// Drop and refill at t0 left ‖w̃ − w⁻‖ ≤ W' (w̃ = 0); the
				// shared steps since then contract it, with the memory term.
				sc.Start, sc.Delta0, sc.Delta0Provenance = bound.StartGiven, p.Radius, bound.Proved
			}
			res, err := sc.Bound()
			if err != nil {
				return Sensitivity{}, specErr(boundField(err), nil, err)
			}
			out.Recursion = res.Alpha[d.Horizon]
			// Each step an intervention adds moves w by at most η·hMax·G
			// (projection is non-expansive) plus its round-off.
			step := upBy(p.Constants.StepTerm()+p.RoundOff, 2)
			out.Allowance = upBy(allowance*step, 2)
			if k.Kind == unlearn.KindParamOnly && len(d.Ages) > 0 {
				// The correction's own float error (its n terms summed:
				// beyond one step's), and, when steps follow, the first of
				// them starting up to the allowance outside the ball (the
				// correction is not projected).
				extra := p.steps.paramOnly(len(d.Ages))
				if d.Horizon > 0 {
					extra = upBy(extra+p.steps.roundOff(out.Allowance), 2)
				}
				out.Allowance = upBy(out.Allowance+extra, 2)
			}
			if r := upBy(out.Recursion+out.Allowance, 2); r < alpha {
				alpha, out.Binding, out.Why = r, "recursion", ""
			} else {
				out.Why = fmt.Sprintf("the recursion gives %.4g (ρ = %.4g, its floor η·(hMax−hMin)·G/(1−ρ) = %.4g), not below the diameter 2W' = %.4g",
					r, p.Contraction.Rho, p.Constants.MemoryTerm()/(1-p.Contraction.Rho), p.Diameter)
			}
			out.Terms = append(out.Terms, res.Terms...)
		} else if !dropNow {
			out.Why = p.Why
			out.Terms = append(out.Terms, bound.Term{Name: "no recursion", Value: 0, Provenance: bound.Proved, Paper: p.Why})
		}
		if dc.Established == "" {
			out.Provenance = bound.Assumed
			out.Terms = append(out.Terms, bound.Term{Name: "the request's description (ages, intervention, steps since)", Value: 0, Provenance: bound.Assumed,
				Paper: "supplied by the caller, not established by the toolkit: α holds only if the state is what it describes"})
		}
	}
	out.Alpha = upBy(alpha+proj, 2)
	return out, nil
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

// resolved is a validated Spec with its defaults filled in, for one state.
type resolved struct {
	Spec
	header stream.Header
	// contract is the data contract the header records (nil: none).
	contract *model.Contract
	sens     Sensitivity
	gauss    *noise.Gaussian // nil for an exact release
	sampler  string
}

// resolve validates the spec against the state's configuration and loss
// and computes α and σ from public inputs only. exact is the toolkit's own
// reason for an exact release ("" otherwise).
func (s Spec) resolve(state *olbfgs.Learner, exact string) (*resolved, error) {
	if err := checkPrivacy(s.Epsilon, s.Delta, s.Beta); err != nil {
		return nil, err
	}
	r := &resolved{Spec: s}
	if s.Header != nil {
		r.header = *s.Header
	} else {
		h, err := HeaderOf(state.Loss())
		if err != nil {
			return nil, err
		}
		r.header = h
	}
	if r.header.Kind != state.Loss().Kind() || r.header.D != state.Config().Dim || r.header.K != state.Config().Outputs {
		return nil, specErr("Header", nil, fmt.Errorf("%w: the header (kind %q, d = %d) does not describe the state's loss", ErrSpec, r.header.Kind, r.header.D))
	}
	if own, err := HeaderOf(state.Loss()); err != nil || !sameLoss(own, r.header) {
		return nil, specErr("Header", nil, fmt.Errorf("%w: the header's loss constants (H0, H1, λ) are not the state's loss's", ErrSpec))
	}
	var err error
	if r.contract, err = model.ContractOf(r.header); err == nil && r.contract != nil {
		err = r.contract.Validate(r.header.Kind, r.header.D, r.header.K)
	}
	if err != nil {
		return nil, specErr("Header", nil, fmt.Errorf("%w: the data contract its metadata records: %w", ErrSpec, err))
	}
	if s.Deletion != nil {
		// The description is established only by the toolkit (Spec.
		// Established); a caller's own field is ignored.
		d := *s.Deletion.clone()
		d.Established = s.Established.How()
		r.Deletion = &d
		if !builtinLoss(state.Loss()) {
			return nil, specErr("Deletion", nil, fmt.Errorf("%w: the recursion's constants are derived only for the toolkit's own losses (%T is not one): leave Deletion unset for the diameter bound", ErrNotCertifiable, state.Loss()))
		}
		if r.Deletions == 0 {
			r.Deletions = d.count()
		}
		if d.InWindow < 0 || r.Deletions != d.count() {
			return nil, specErr("Deletions", r.Deletions, fmt.Errorf("%w: the deletion describes %d deleted inserts (%d ages, %d in a window, %d in earlier requests)", ErrSpec, d.count(), len(d.Ages), d.InWindow, d.count()-len(d.Ages)-d.InWindow))
		}
	}
	if exact != "" && s.Established.How() == "" {
		return nil, specErr("Established", nil, fmt.Errorf("%w: an exact release is established by the toolkit's own replay", ErrNotCertifiable))
	}
	if exact == "" && state.Config().Standardize {
		return nil, specErr("Config.Standardize", true, fmt.Errorf("%w: %s", ErrNotCertifiable, standardizeRefusal))
	}
	if s.Beta > 0 && s.Alpha == nil {
		return nil, specErr("Beta", s.Beta, fmt.Errorf("%w: a derived bound holds with β = 0; β is for an assumed α only", ErrBeta))
	}
	sens, err := sensitivity(&r.Spec, state.Config(), r.header, exact)
	if err != nil {
		return nil, err
	}
	r.sens = sens
	if exact != "" {
		r.Memory = Exact
		r.sampler = "none"
	} else {
		g, err := noise.NewGaussian(noise.GaussianOptions{
			Alpha: sens.Alpha, Epsilon: s.Epsilon, Delta: s.Delta, Calibration: s.Calibration, Sampler: s.Sampler,
		})
		if err != nil {
			return nil, specErr(noiseField(err, "Alpha.Alpha"), nil, err)
		}
		r.gauss = g
		r.Sampler = g.Options().Sampler
		switch r.Sampler.(type) {
		case *noise.SecureSampler:
			r.sampler = noise.NameSecure
		case *noise.SeededSampler:
			r.sampler = noise.NameSeeded
		default:
			return nil, specErr("Sampler", fmt.Sprintf("%T", r.Sampler), fmt.Errorf("%w: use noise.NewSecureSampler (deployment) or noise.NewSeededSampler (experiments only)", ErrSampler))
		}
		if s.Memory == Exact || !s.Memory.valid() {
			return nil, specErr("Memory", s.Memory.String(), fmt.Errorf("%w: ask for reset or rebuild; an exact release is established by the toolkit", ErrSpec))
		}
		// σ must dominate the resolution of the released w (a public
		// scale: the radius), so that the release never equals the
		// un-noised state.
		if rad := state.Config().RadiusBound(); !math.IsInf(rad, 0) && g.Sigma() < resolution*rad {
			return nil, specErr("Epsilon", s.Epsilon, fmt.Errorf("%w: σ = %g < 2⁻³⁰·W' = %g", ErrResolution, g.Sigma(), resolution*rad))
		}
	}
	switch {
	case r.Memory == Rebuild && r.Retained == nil:
		return nil, specErr("Retained", nil, fmt.Errorf("%w: required with the Rebuild policy (it may be empty)", ErrSpec))
	case r.Memory != Rebuild && r.Retained != nil:
		return nil, specErr("Retained", nil, fmt.Errorf("%w: retained data is used by the Rebuild policy only", ErrSpec))
	}
	if s.Deletion != nil && r.Intervention == "" {
		r.Intervention = s.Deletion.Intervention.Kind
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

// sameLoss reports whether two headers describe the same loss (kind, d
// and the loss's constants; metadata and format tag ignored).
func sameLoss(a, b stream.Header) bool {
	a.Meta, b.Meta, a.Format, b.Format = nil, nil, "", ""
	return reflect.DeepEqual(a, b)
}

// builtinLoss reports whether l is one of the toolkit's own losses, whose
// constants DeriveProfile knows; a user's type that embeds one and changes
// its gradient is not.
func builtinLoss(l stream.Loss) bool {
	switch l.(type) {
	case *stream.Logistic, *stream.Quadratic, *stream.Multinomial:
		return true
	}
	return false
}

// resolution is the smallest σ/W' accepted: below it the noise could
// vanish in the rounding of the released coordinates.
const resolution = 0x1p-30

// HeaderOf returns a stream header describing loss (format, kind, d and
// the loss's own fields), without metadata: stream.HeaderOf, which knows
// the built-in kinds and every kind registered with stream.RegisterLoss.
// Errors: a loss that cannot describe itself (ErrSpec): such a state cannot
// be released.
func HeaderOf(loss stream.Loss) (stream.Header, error) {
	h, err := stream.HeaderOf(loss)
	if err != nil {
		return stream.Header{}, specErr("Header", fmt.Sprintf("%T", loss), fmt.Errorf("%w: %w", ErrSpec, err))
	}
	return h, nil
}

// enforced names what a derived α rests on in the learner's configuration,
// by the bound's path: without a curvature memory the scheduled bound
// (docs/theory.md §16: radius, sample bound, step schedule), with one the
// guarded-memory recursion (§15: radius, sample bound, pair guard).
func enforced(c *Certificate) string {
	if c.Config.Memory == 0 {
		return "radius, sample bound, no curvature memory, the step schedule η₀/(1 + η₀·λ_η·t)"
	}
	return "radius, sample bound, pair guard"
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
		fmt.Fprintf(&b, " (δ = %v plus the failure probability β = %v of the assumed α)", c.Delta, c.Beta)
	}
	fmt.Fprintf(&b, " of the released state (w, Z) after %d deletion(s) by intervention %q. ", c.Deletions, c.Intervention)
	switch c.Memory {
	case Reset:
		b.WriteString("w carries Gaussian noise N(0, σ²I) calibrated to the L2 sensitivity α; the memory was released empty. ")
	case Rebuild:
		fmt.Fprintf(&b, "w carries Gaussian noise N(0, σ²I) calibrated to the L2 sensitivity α; the memory was rebuilt from the noised w by replaying %d retained insert(s) (post-processing). ", c.Retained)
	case Exact:
		fmt.Fprintf(&b, "The state equals the deletion-edited counterfactual bit for bit (%s), so it is released without noise, memory included. ", c.Sensitivity.Method)
	}
	switch c.Sensitivity.Source {
	case "derived":
		if c.Provenance == bound.Assumed {
			b.WriteString("α is derived by the toolkit from the learner's enforced configuration, the loss header and a description of the request (ages, intervention) that was SUPPLIED BY THE CALLER and is ASSUMED: the guarantee holds only if the released state is what that description says. ")
			warnings = append(warnings, "the request's description was supplied by the caller: α is assumed, not proved")
		} else {
			fmt.Fprintf(&b, "α is proved by the toolkit from the learner's enforced configuration (%s), the loss header and the public description of the request, which the toolkit established (%s; docs/theory.md). ", enforced(c), c.Sensitivity.Deletion.Established)
		}
		if c.Sensitivity.Binding != "recursion" && c.Sensitivity.Why != "" {
			fmt.Fprintf(&b, "It is the %s bound: %s. ", c.Sensitivity.Binding, c.Sensitivity.Why)
		}
	case "diameter":
		b.WriteString("α is the diameter 2W' of the ball every state of the learner lies in, proved whatever produced the state. ")
	case "assumed":
		fmt.Fprintf(&b, "α = %v was SUPPLIED BY THE USER (%s) and is ASSUMED, not proved: the guarantee holds only if ‖w̃ − w⁻‖ ≤ α for every deletion set this certificate speaks of. ", c.Sensitivity.Alpha, c.Sensitivity.Method)
		warnings = append(warnings, "α is assumed, not proved: the guarantee is conditional on it")
	}
	if c.Sampler == noise.NameSeeded {
		b.WriteString("The noise came from the SEEDED sampler: it is reproducible from its seed, and this release is NOT for deployment (experiments and tests only). ")
		warnings = append(warnings, "seeded sampler: NOT for deployment")
	}
	b.WriteString("The release holds the configuration, the loss header, w and the memory only: no counters, ids or hashes of un-noised data.")
	return b.String(), warnings
}
