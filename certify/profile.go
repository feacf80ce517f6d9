package certify

import (
	"fmt"
	"math"

	"gonum.org/v1/gonum/mat"

	"unlearn/bound"
	"unlearn/olbfgs"
	"unlearn/stream"
)

// unit is the unit round-off u = 2⁻⁵³.
const unit = 0x1p-53

// standardizeRefusal says why a learner that standardizes its features has
// no noised release (docs/theory.md §15.9).
const standardizeRefusal = "the learner standardizes its features (olbfgs.Config.Standardize): the means and deviations are part of the model a release must carry, and they are un-noised functions of every ingested row, the deleted ones included, so no noised release of it can be certified, whatever α; publish an exact release after an exact forget (α = 0)"

// Profile holds what the toolkit derives — proves from the learner's
// configuration and the loss's public header, never from data — about
// every trajectory a certifiable learner can take (docs/theory.md, "The
// certifiable learner"). Nothing in it depends on the events.
type Profile struct {
	// Radius is W' ≥ ‖w‖ for every state (Config.RadiusBound): the
	// learner projects onto the ball of radius Config.Radius.
	Radius float64
	// Diameter is 2W', a bound on ‖w̃ − w⁻‖ for any two states in the ball:
	// the sensitivity of a release whatever produced the state.
	Diameter float64

	// Recursion is true when the bound of Theorem "Bounded counterfactual
	// state deviation" is available: the pair guard, a sample bound and a
	// loss kind with known constants give G, hMin, hMax, μ, L, and they
	// give a contraction ρ < 1. The fields below are set only then (Why
	// says otherwise why not).
	Recursion bool
	// Why says why Recursion is false.
	Why string
	// Constants are G, hMin, hMax, η, τ, all proved.
	Constants bound.Constants
	// Mu and L bound the spectrum of every loss Hessian.
	Mu, L float64
	// Commuting says that every loss Hessian is a multiple of I (d = 1, or
	// a quadratic header with H0 and H1 both multiples of I), so that it
	// commutes with every H_Z; read from the header, never asserted.
	Commuting bool
	// Contraction is ρ, proved (bound.AnalyticContraction).
	Contraction bound.Contraction
	// RoundOff is the per-step divergence bound of two float trajectories
	// (bound.Scenario.RoundOff): twice the forward error ε₁ of one float
	// step, bounded operation by operation with Higham's γₙ and every
	// bound rounded upwards (roundoff.go; docs/theory.md §15.6).
	RoundOff float64
	// steps holds what RoundOff was computed from, for the bounds of a
	// step from outside the ball and of a parameter-only correction.
	steps *stepBounds
	// Terms lists every derived quantity with its reason.
	Terms []bound.Term

	// Dynamics, when not nil, are the constants of the scheduled bound of
	// docs/theory.md §16 (bound.Dynamics.Bound): set for a learner without
	// curvature memory (Memory = 0: H = γ₀I) whose schedule has the bound's
	// form (a constant step, or StepPower 1: η(t) = η₀/(1 + η₀·λ_η·t)), a
	// radius, a sample bound, and a logistic loss (a regularized intercept
	// allowed) or a quadratic one (no intercept); averaging as
	// olbfgs.Config.Average says. A release of such a learner derives α
	// from the learner's step count T (Deletion.Steps): of order G/(λT), it
	// shrinks with the stream. Recursion is then false (the guarded-memory
	// recursion of §4 does not apply) and Why says so.
	Dynamics *bound.Dynamics
}

// DeriveProfile derives the [Profile] of a learner configuration and the
// header of its loss. It requires Config.Radius > 0 (otherwise no state
// bound, hence no proved sensitivity, exists: ErrNotCertifiable); the
// recursion also needs the pair guard (PairAngle > 0), a SampleBound and a
// loss kind whose constants the toolkit knows (quadratic, logistic).
//
// Constants, with B' = Config.SampleBoundExact() and W' = RadiusBound():
//
//   - logistic (ridge λ): every Hessian is λI + c·xxᵀ with c ∈ (0, 1/4], so
//     μ = λ, L = λ + B'²/4; ‖∇ℓ(w)‖ ≤ ‖x‖ + λ‖w‖ ≤ G = B' + λW'.
//   - quadratic: every Hessian is H(α) = (1−α)H0 + αH1, so μ = min of the
//     smallest eigenvalues of H0, H1 and L = max of the largest (computed by
//     gonum's symmetric eigensolver and widened by 16·d·u·‖H‖_F, which
//     exceeds its backward error); ‖∇ℓ(w)‖ = ‖H(α)(w − a)‖ ≤ G = L·(W' + B').
//   - hMin, hMax: Config.SpectralBounds (the pair guard).
//   - ρ: bound.AnalyticContraction, in its commuting case when every
//     Hessian is a multiple of I (read from the header), general otherwise.
func DeriveProfile(cfg olbfgs.Config, h stream.Header) (*Profile, error) {
	if err := cfg.Validate(); err != nil {
		return nil, specErr("Config", nil, fmt.Errorf("%w: %w", ErrNotCertifiable, err))
	}
	if cfg.Radius == 0 {
		return nil, specErr("Config.Radius", 0.0, fmt.Errorf("%w: the learner has no radius (the radius W, unlearn train --radius): no bound on its states exists", ErrNotCertifiable))
	}
	if h.D != cfg.Dim {
		return nil, specErr("Header.D", h.D, fmt.Errorf("%w: the learner has d = %d", ErrSpec, cfg.Dim))
	}
	if cfg.Standardize {
		return nil, specErr("Config.Standardize", true, fmt.Errorf("%w: %s", ErrNotCertifiable, standardizeRefusal))
	}
	wp := cfg.RadiusBound()
	p := &Profile{Radius: wp, Diameter: math.Nextafter(2*wp, math.Inf(1))}
	p.Terms = []bound.Term{
		{Name: "radius W' (projection, enforced)", Value: wp, Provenance: bound.Proved,
			Paper: "not in the paper: the learner projects w onto ‖w‖ ≤ W after every step (olbfgs.Config.Radius), plus round-off"},
	}
	no := func(why string) (*Profile, error) { p.Why = why; return p, nil }
	if dyn, why, ok := deriveDynamics(cfg, h, wp); ok {
		p.Dynamics, p.Why, p.Mu, p.L = dyn.dyn, why, dyn.dyn.Mu, dyn.dyn.L
		p.steps, p.RoundOff = dyn.steps, dyn.dyn.RoundOff
		p.Terms = append(p.Terms, dyn.terms...)
		return p, nil
	}
	// The practitioner's options (docs/theory.md §15.9): each either keeps
	// the constants below or leaves only the diameter bound, said here.
	switch {
	case cfg.Average:
		return no("averaging (olbfgs.Config.Average): the released parameters are the average of the iterates, and the recursion bounds one iterate: no proved α beyond the diameter bound 2W' (an average of states in the ball lies in the ball, and the release projects onto it)")
	case cfg.StepDecay > 0:
		return no("a decaying step (olbfgs.Config.StepDecay): the recursion is proved for the constant step η only: no proved α beyond the diameter bound 2W'")
	case cfg.Intercept && !cfg.RidgeIntercept:
		return no("an intercept without ridge (olbfgs.Config.RidgeIntercept off): the loss is not strongly convex along the intercepts (μ = 0), so no contraction: only the diameter bound 2W' applies")
	case cfg.Intercept && h.Kind != stream.KindLogistic:
		return no(fmt.Sprintf("an intercept on a %s loss: the toolkit derives the constants of a regularized intercept for the logistic loss only: only the diameter bound 2W' applies", h.Kind))
	}
	hMin, hMax, ok := cfg.SpectralBounds()
	if !ok {
		return no("no pair guard (olbfgs.Config.PairAngle = 0): no bound on the spectrum of H_Z is known, so only the diameter bound 2W' applies")
	}
	if cfg.SampleBound == 0 {
		return no("no sample bound (olbfgs.Config.SampleBound = 0): no gradient bound G, so only the diameter bound 2W' applies")
	}
	bp := cfg.SampleBoundExact()
	var mu, l, g, fro float64
	d := cfg.ParamDim() // the dimension of the vectors every step computes
	switch h.Kind {
	case stream.KindLogistic:
		if cfg.Intercept {
			// A regularized intercept is the logistic loss of the payload
			// (x, 1), whose norm is at most sqrt(B'² + 1).
			bp = upBy(math.Sqrt(upBy(bp*bp+1, 2)), 2)
		}
		mu = h.Lambda
		l = upBy(h.Lambda+bp*bp/4, 4)
		g = upBy(bp+h.Lambda*wp, 4)
		p.Commuting = d == 1
	case stream.KindQuadratic:
		if !exactlySymmetric(h.H0) || !exactlySymmetric(h.H1) {
			return no("the header's H0 or H1 is not exactly symmetric (the gradient uses the full matrix, the spectral bounds its symmetric part): only the diameter bound 2W' applies")
		}
		mu, l, fro = math.Inf(1), 0, 0
		for _, m := range [][][]float64{h.H0, h.H1} {
			lo, hi, f, err := spectrum(m)
			if err != nil {
				return nil, specErr("Header", nil, fmt.Errorf("%w: %w", ErrSpec, err))
			}
			mu, l, fro = min(mu, lo), max(l, hi), max(fro, f)
		}
		g = upBy(l*(wp+bp), 4)
		p.Commuting = d == 1 || (scalarMatrix(h.H0) && scalarMatrix(h.H1))
	case stream.KindMultinomial:
		return no("multinomial: μ = λ, L = λ + B'²/2 and G = √2·B' + λW' hold (docs/theory.md §15.9), but the floating-point analysis of a step (§15.6) is made for the logistic and quadratic gradients only: no proved α beyond the diameter bound 2W'")
	default:
		return no(fmt.Sprintf("the toolkit knows no constants for loss kind %q: only the diameter bound 2W' applies", h.Kind))
	}
	if !(mu > 0) {
		return no("the loss is not strongly convex (μ = 0): no contraction, only the diameter bound 2W' applies")
	}
	p.Mu, p.L = mu, l
	p.Constants = bound.Constants{G: g, HMin: hMin, HMax: hMax, Eta: cfg.StepSize, Tau: max(cfg.Memory, 1), Provenance: bound.Proved}
	kase := bound.General
	if p.Commuting {
		kase = bound.Commuting
	}
	p.Terms = append(p.Terms,
		bound.Term{Name: "sample bound B' (enforced)", Value: bp, Provenance: bound.Proved, Paper: "not in the paper: inserts with a larger payload norm are refused (olbfgs.Config.SampleBound)"},
		bound.Term{Name: "mu", Value: mu, Provenance: bound.Proved, Paper: "μ of Assumption \"Strong convexity and smoothness\", from the " + string(h.Kind) + " header"},
		bound.Term{Name: "L", Value: l, Provenance: bound.Proved, Paper: "L of Assumption \"Strong convexity and smoothness\", from the header and B'"},
		bound.Term{Name: "pair guard window and angle", Value: cfg.PairAngle, Provenance: bound.Proved, Paper: fmt.Sprintf("curvature pairs with sᵀy/‖s‖² in [%g, %g] and tan∠(s,y) ≤ %g only (olbfgs.Config.PairAngle), giving hMin and hMax", cfg.PairMin, cfg.PairMax, cfg.PairAngle)},
		bound.Term{Name: "commuting Hessians", Value: b2f(p.Commuting), Provenance: bound.Proved, Paper: commutingReason(p.Commuting, h)},
	)
	k, err := bound.AnalyticContraction(bound.AnalyticParams{Mu: mu, L: l, Eta: cfg.StepSize, HMin: hMin, HMax: hMax, Case: kase})
	if err != nil {
		return no(fmt.Sprintf("no contraction is proved (%v): only the diameter bound 2W' applies", err))
	}
	p.Contraction = k
	// Round-off (docs/theory.md §15.6): twice the forward error of one
	// float step, bounded operation by operation (roundoff.go).
	steps, ok := newStepBounds(cfg, h, hMax, l, fro)
	if !ok {
		return no(fmt.Sprintf("no round-off bound for loss kind %q: only the diameter bound 2W' applies", h.Kind))
	}
	p.steps = steps
	p.RoundOff = steps.roundOff(0)
	if !(p.RoundOff >= 0) || math.IsInf(p.RoundOff, 0) {
		return no("the round-off bound of one step is not finite for this configuration: only the diameter bound 2W' applies")
	}
	p.Terms = append(p.Terms, bound.Term{Name: "round-off per step", Value: p.RoundOff, Provenance: bound.Proved,
		Paper: "not in the paper (exact arithmetic): twice the forward error of one float step, bounded with Higham's γₙ for every operation and rounded upwards (docs/theory.md §15.6)"})
	p.Recursion = true
	return p, nil
}

// upBy returns x·(1 + k·u) rounded up: x computed with at most k roundings
// of non-negative terms, made an upper bound.
func upBy(x float64, k int) float64 {
	if x == 0 {
		return 0
	}
	return math.Nextafter(x*(1+float64(k)*unit), math.Inf(1))
}

func b2f(b bool) float64 {
	if b {
		return 1
	}
	return 0
}

func commutingReason(c bool, h stream.Header) string {
	switch {
	case c && h.D == 1:
		return "d = 1: every matrix commutes; ρ of the commuting case"
	case c:
		return "H0 and H1 are multiples of I in the header: every Hessian commutes with every H_Z; ρ of the commuting case"
	}
	return "not commuting (checked on the header): ρ of the general case, sqrt(hMax/hMin) times the commuting one"
}

// exactlySymmetric reports whether m equals its transpose bit for bit.
func exactlySymmetric(m [][]float64) bool {
	for i := range m {
		for j := range i {
			if m[i][j] != m[j][i] {
				return false
			}
		}
	}
	return true
}

// scalarMatrix reports whether m is exactly c·I.
func scalarMatrix(m [][]float64) bool {
	for i, row := range m {
		for j, v := range row {
			if (i == j && v != m[0][0]) || (i != j && v != 0) {
				return false
			}
		}
	}
	return true
}

// spectrum returns bounds lo ≤ λmin, hi ≥ λmax of a symmetric matrix and
// its Frobenius norm: gonum's eigenvalues widened by 16·d·u·‖m‖_F, more
// than the backward error of the symmetric eigensolver (LAPACK dsyev's is
// p(d)·u·‖m‖₂ with a modest p; Anderson et al., LAPACK Users' Guide,
// §4.7).
func spectrum(m [][]float64) (lo, hi, fro float64, err error) {
	d := len(m)
	s := mat.NewSymDense(d, nil)
	for i := range d {
		for j := i; j < d; j++ {
			s.SetSym(i, j, m[i][j])
			fro += m[i][j] * m[i][j]
			if i != j {
				fro += m[i][j] * m[i][j]
			}
		}
	}
	fro = upBy(math.Sqrt(fro), 2*d+4)
	var e mat.EigenSym
	if !e.Factorize(s, false) {
		return 0, 0, 0, fmt.Errorf("the eigenvalues of a %d×%d header matrix did not converge", d, d)
	}
	v := e.Values(nil)
	w := upBy(16*float64(d)*unit*fro, 2)
	return v[0] - w, v[len(v)-1] + w, fro, nil
}

// DerivedAlpha returns the sensitivity the toolkit derives for a learner
// configuration, a loss header and a deletion request described by del
// (nil: the diameter bound): the α a release of such a state is calibrated
// to, from public quantities only. It is what [Certify] computes for a
// [Spec] with Deletion set, exposed for planning, audits and property
// tests of the bound.
//
// The description is taken as given (a plan, a test): the result is the α
// of a request that is as described, labelled "proved" under that premise.
func DerivedAlpha(cfg olbfgs.Config, h stream.Header, del *Deletion) (Sensitivity, error) {
	if del != nil {
		d := *del
		if d.Established == "" {
			d.Established = "the request as described (planning)"
		}
		del = &d
	}
	return sensitivity(&Spec{Deletion: del}, cfg, h, "")
}
