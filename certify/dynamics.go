package certify

import (
	"fmt"
	"math"

	"unlearn/bound"
	"unlearn/olbfgs"
	"unlearn/stream"
	"unlearn/unlearn"
)

// scheduledWhy is Profile.Why for a learner with Profile.Dynamics.
const scheduledWhy = "no curvature memory and a scheduled step: α is the scheduled bound of docs/theory.md §16 (bound.Dynamics), from the learner's step count T"

// derivedDynamics is what deriveDynamics derives.
type derivedDynamics struct {
	dyn   *bound.Dynamics
	steps *stepBounds
	terms []bound.Term
}

// deriveDynamics returns the constants of the scheduled bound
// (docs/theory.md §16.10–16.11) for a configuration it covers: Memory = 0,
// a schedule of the bound's form (Config.Schedule), Radius and SampleBound
// set, a logistic loss (a regularized intercept allowed: the payload
// (x, 1), B̂ = √(B'² + 1)) or a quadratic one without intercept:
//
//	HMin = HMax = γ₀, μ = λ and L = λ + B̂²/4, G = B̂ + λW' (logistic);
//	μ, L from the header's spectra and G = L(W' + B') (quadratic);
//	RoundOff = 2ε₁ of §15.6 with τ = 0 at η₀ (every η(t) ≤ η₀), plus
//	W' − W (a state between the projection's radius and its bound);
//	Average = {From: AverageStart + 1, Power: AveragePower}.
//
// ok is false for every other configuration (the caller continues with
// the guarded-memory recursion or the diameter); wp is W'.
func deriveDynamics(cfg olbfgs.Config, h stream.Header, wp float64) (derivedDynamics, string, bool) {
	sched, form := cfg.Schedule()
	if cfg.Memory != 0 || !form || cfg.SampleBound == 0 || cfg.Standardize || (cfg.Intercept && !cfg.RidgeIntercept) {
		return derivedDynamics{}, "", false
	}
	bp := cfg.SampleBoundExact()
	var mu, l, g, fro float64
	switch {
	case h.Kind == stream.KindLogistic:
		if cfg.Intercept {
			bp = upBy(math.Sqrt(upBy(bp*bp+1, 2)), 2)
		}
		mu, l, g = h.Lambda, upBy(h.Lambda+bp*bp/4, 4), upBy(bp+h.Lambda*wp, 4)
	case h.Kind == stream.KindQuadratic && !cfg.Intercept && exactlySymmetric(h.H0) && exactlySymmetric(h.H1):
		mu, l = math.Inf(1), 0
		for _, m := range [][][]float64{h.H0, h.H1} {
			lo, hi, f, err := spectrum(m)
			if err != nil {
				return derivedDynamics{}, "", false
			}
			mu, l, fro = min(mu, lo), max(l, hi), max(fro, f)
		}
		g = upBy(l*(wp+bp), 4)
	default:
		return derivedDynamics{}, "", false
	}
	if !(mu > 0) || math.IsInf(l, 0) || math.IsInf(g, 0) {
		return derivedDynamics{}, "", false
	}
	gamma := cfg.InitialScale
	steps, ok := newStepBounds(cfg, h, gamma, l, fro)
	if !ok {
		return derivedDynamics{}, "", false
	}
	ro := upBy(steps.roundOff(0)+(wp-cfg.Radius), 2)
	if !(ro >= 0) || math.IsInf(ro, 0) {
		return derivedDynamics{}, "", false
	}
	dyn := &bound.Dynamics{Schedule: sched, HMin: gamma, HMax: gamma, Mu: mu, L: l, G: g, Radius: wp, RoundOff: ro, Provenance: bound.Proved}
	if cfg.Average {
		dyn.Average = bound.Averaging{From: cfg.AverageStart + 1, Power: cfg.AveragePower}
	}
	if dyn.Validate() != nil {
		return derivedDynamics{}, "", false
	}
	terms := []bound.Term{
		{Name: "sample bound B' (enforced)", Value: bp, Provenance: bound.Proved, Paper: "not in the paper: inserts with a larger payload norm are refused (olbfgs.Config.SampleBound); with a regularized intercept, of the payload (x, 1)"},
		{Name: "no curvature memory (τ = 0, H = γ₀I)", Value: gamma, Provenance: bound.Proved, Paper: "hMin = hMax = γ₀: the preconditioner commutes with every Hessian and is the same in both worlds (docs/theory.md §16.9: a memory costs the bound's decay)"},
		{Name: "schedule η(t) = η₀/(1 + η₀·λ_η·t)", Value: sched.Decay, Provenance: bound.Proved, Paper: "the learner's η·(1 + a·η·t)^(−1) with a = λ_η, evaluated as bound.Schedule.At (olbfgs.Config.StepAt)"},
		{Name: "round-off per step (τ = 0, at η₀)", Value: ro, Provenance: bound.Proved, Paper: "not in the paper (exact arithmetic): twice the forward error of one float step (docs/theory.md §15.6), plus W' − W"},
	}
	return derivedDynamics{dyn: dyn, steps: steps, terms: terms}, scheduledWhy, true
}

// scheduledSensitivity computes the derived α of a request for a learner
// with Profile.Dynamics (docs/theory.md §16.11): the stream of
// bound.Dynamics.Bound is Steps = T₀ + Horizon, the deleted steps T₀ − a
// for the ages a, and the intervention after step T₀ with its a-priori
// allowance (parameter-only: |U|·(η₀γ₀G + 2ε₁) plus the correction's own
// float error and that of the first step from outside the ball;
// drop and refill at once: α = W'). It returns the bound before the cap
// and projection (Recursion), the allowance (already inside Recursion:
// later steps contract it), and why the diameter applies instead, if it
// does.
func scheduledSensitivity(p *Profile, d *Deletion) (rec, allowance float64, why string, terms []bound.Term, err error) {
	t0 := d.Steps
	if t0 < 1 {
		return 0, 0, "the request does not record the learner's step count T₀ (deletion.steps), which the scheduled bound needs", nil, nil
	}
	if t0 > bound.MaxSteps-d.Horizon {
		return 0, 0, "", nil, specErr("Deletion.Steps", t0, fmt.Errorf("%w: T₀ + horizon must be at most %d", ErrValue, bound.MaxSteps))
	}
	s := bound.Stream{Steps: t0 + d.Horizon, Deleted: make([]int, len(d.Ages))}
	for i, a := range d.Ages {
		if a < 0 || a >= t0 {
			return 0, 0, "", nil, specErr(fmt.Sprintf("Deletion.Ages[%d]", i), a, fmt.Errorf("%w: an age in [0, steps − 1 = %d]", ErrValue, t0-1))
		}
		s.Deleted[i] = t0 - a
	}
	dyn := *p.Dynamics
	switch d.Intervention.Kind {
	case unlearn.KindNoop, unlearn.KindPairDrop, unlearn.KindMemoryReset:
		// Without a memory they leave the state as it is.
	case unlearn.KindParamOnly:
		if n := len(d.Ages); n > 0 {
			step := upBy(p.steps.eta*p.steps.hMax*dyn.G+p.RoundOff, 4)
			allowance = upBy(upBy(float64(n)*step, 2)+p.steps.paramOnly(n), 2)
			if d.Horizon > 0 {
				// The first step after the correction starts up to the
				// allowance outside the ball.
				allowance = upBy(allowance+p.steps.roundOff(allowance), 2)
			}
			s.Interventions = []bound.Intervention{{After: t0, Move: allowance}}
		}
	case unlearn.KindDropRefill:
		// olbfgs.Learner.Reset restarts the count (the schedule) and the
		// average: the later steps are not the scheduled bound's.
		return 0, 0, "drop and refill restarts the learner's count and average (olbfgs.Learner.Reset), which the scheduled bound does not cover once steps follow: the diameter 2W' applies", nil, nil
	default:
		return 0, 0, fmt.Sprintf("the scheduled bound covers no-op, pair drop, memory reset, parameter-only and drop and refill; %s gets the diameter 2W'", d.Intervention.Kind), nil, nil
	}
	dev, err := dyn.Bound(s)
	if err != nil {
		return 0, 0, "", nil, specErr("Deletion", nil, fmt.Errorf("%w: %w", ErrValue, err))
	}
	return dev.Alpha, allowance, "", dev.Terms, nil
}
