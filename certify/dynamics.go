package certify

import (
	"fmt"
	"math"
	"slices"

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

// severalWhy is Sensitivity.Why when a deletion lists earlier requests
// and the learner's α is not the scheduled bound.
const severalWhy = "several pending requests are covered by the scheduled bound only (a learner without curvature memory, docs/theory.md §16.6): the diameter 2W' applies"

// scheduledSensitivity computes the derived α of a request for a learner
// with Profile.Dynamics (docs/theory.md §16.6, §16.11), together with the
// earlier pending requests it lists (Deletion.Earlier): ONE stream for
// bound.Dynamics.Bound, Steps = T₀ + Horizon (T₀ = d.Steps), the deleted
// steps Tᵢ − a of every request i (Tᵢ its Steps, a its ages: distinct
// across requests), and each request's intervention after its step Tᵢ
// with its a-priori allowance (parameter-only: |Uᵢ|·(η₀γ₀G + 2ε₁) plus the
// correction's own float error and, when steps follow, that of the first
// step from outside the ball; drop and refill of the newest request at
// once: α = W', handled by the caller). Two moving interventions at the
// same step (the second's allowance would be for a state outside the
// ball) and drop and refill followed by steps (olbfgs.Learner.Reset
// restarts the count) give the diameter. It returns the bound before the
// cap and projection (Recursion), the sum of the allowances (already inside
// Recursion: later steps contract them), and why the diameter applies
// instead, if it does.
func scheduledSensitivity(p *Profile, d *Deletion) (rec, allowance float64, why string, terms []bound.Term, err error) {
	t0 := d.Steps
	if t0 < 1 {
		return 0, 0, "the request does not record the learner's step count T₀ (deletion.steps), which the scheduled bound needs", nil, nil
	}
	if t0 > bound.MaxSteps-d.Horizon {
		return 0, 0, "", nil, specErr("Deletion.Steps", t0, fmt.Errorf("%w: T₀ + horizon must be at most %d", ErrValue, bound.MaxSteps))
	}
	reqs := append(slices.Clone(d.Earlier), Request{Ages: d.Ages, Steps: t0, Intervention: d.Intervention})
	s := bound.Stream{Steps: t0 + d.Horizon, Deleted: make([]int, 0, d.count())}
	deleted := make(map[int]bool, d.count())
	prevSteps, prevMoved := 0, false
	for i, r := range reqs {
		field := "Deletion"
		if i < len(d.Earlier) {
			field = fmt.Sprintf("Deletion.Earlier[%d]", i)
			if r.Steps < max(prevSteps, 1) || r.Steps > t0 {
				return 0, 0, "", nil, specErr(field+".Steps", r.Steps, fmt.Errorf("%w: in [%d, steps = %d] (requests oldest first)", ErrValue, max(prevSteps, 1), t0))
			}
		} else if r.Steps < prevSteps {
			return 0, 0, "", nil, specErr(field+".Steps", r.Steps, fmt.Errorf("%w: at least the earlier requests' steps %d", ErrValue, prevSteps))
		}
		for j, a := range r.Ages {
			if a < 0 || a >= r.Steps {
				return 0, 0, "", nil, specErr(fmt.Sprintf("%s.Ages[%d]", field, j), a, fmt.Errorf("%w: an age in [0, steps − 1 = %d]", ErrValue, r.Steps-1))
			}
			if deleted[r.Steps-a] {
				return 0, 0, "", nil, specErr(fmt.Sprintf("%s.Ages[%d]", field, j), a, fmt.Errorf("%w: step %d is deleted twice (one insert in two requests, or a repeated age)", ErrValue, r.Steps-a))
			}
			deleted[r.Steps-a] = true
			s.Deleted = append(s.Deleted, r.Steps-a)
		}
		moved := false
		switch r.Intervention.Kind {
		case unlearn.KindNoop, unlearn.KindPairDrop, unlearn.KindMemoryReset:
			// Without a memory they leave the state as it is.
		case unlearn.KindParamOnly:
			if n := len(r.Ages); n > 0 {
				if prevMoved && r.Steps == prevSteps {
					return 0, 0, "two parameter-only corrections at the same step count: the second's allowance is not bounded for a state the first moved outside the ball; the diameter 2W' applies", nil, nil
				}
				a := paramOnlyAllowance(p, n, r.Steps < s.Steps)
				allowance = upBy(allowance+a, 2)
				s.Interventions = append(s.Interventions, bound.Intervention{After: r.Steps, Move: a})
				moved = true
			}
		case unlearn.KindDropRefill:
			// olbfgs.Learner.Reset restarts the count (the schedule) and the
			// average: the later steps are not the scheduled bound's.
			if len(d.Earlier) == 0 {
				return 0, 0, "drop and refill restarts the learner's count and average (olbfgs.Learner.Reset), which the scheduled bound does not cover once steps follow: the diameter 2W' applies", nil, nil
			}
			return 0, 0, "drop and refill restarts the learner's count and average (olbfgs.Learner.Reset), which the scheduled bound does not cover once steps or other requests follow: the diameter 2W' applies", nil, nil
		default:
			return 0, 0, fmt.Sprintf("the scheduled bound covers no-op, pair drop, memory reset, parameter-only and drop and refill; %s gets the diameter 2W'", r.Intervention.Kind), nil, nil
		}
		if r.Steps == prevSteps {
			moved = moved || prevMoved
		}
		prevSteps, prevMoved = r.Steps, moved
	}
	var dev bound.Deviation
	if d.Disclosed == "" {
		dev, err = p.Dynamics.Bound(s)
	} else {
		var ranges []bound.AgeRange
		if ranges, err = disclosedRanges(d); err != nil {
			return 0, 0, "", nil, err
		}
		dev, err = p.Dynamics.WorstBound(s.Steps, ranges, s.Interventions)
	}
	if err != nil {
		return 0, 0, "", nil, specErr("Deletion", nil, fmt.Errorf("%w: %w", ErrValue, err))
	}
	return dev.Alpha, allowance, "", dev.Terms, nil
}

// paramOnlyAllowance is the a-priori allowance of a parameter-only
// correction of n deleted inserts (docs/theory.md §16.11): n steps of at
// most η₀γ₀G + 2ε₁ each, the correction's own float error (its n terms
// summed), and, when steps follow, the round-off of the first step, which
// starts up to the allowance outside the ball.
func paramOnlyAllowance(p *Profile, n int, stepsFollow bool) float64 {
	step := upBy(p.steps.eta*p.steps.hMax*p.Dynamics.G+p.RoundOff, 4)
	a := upBy(upBy(float64(n)*step, 2)+p.steps.paramOnly(n), 2)
	if stepsFollow {
		a = upBy(a+p.steps.roundOff(a), 2)
	}
	return a
}

// disclosedRanges returns the age ranges (counted from the release, after
// the horizon's steps) that a deletion's disclosed ages stand for
// (Deletion.Disclosed): for "pow2" one range per bucket [2^k, 2^(k+1))
// (0 and 1 alone, clipped to the ages below Steps) holding as many deleted
// inserts as ages are listed in it, which must be 2^k, 2^k + 1, …; for
// "none" the m ages 0, …, m − 1 stand for any m distinct ages below Steps.
func disclosedRanges(d *Deletion) ([]bound.AgeRange, error) {
	if len(d.Earlier) > 0 {
		return nil, specErr("Deletion.Disclosed", d.Disclosed, fmt.Errorf("%w: ages disclosed by range are not combined with earlier requests", ErrSpec))
	}
	m := len(d.Ages)
	asc := slices.Clone(d.Ages)
	slices.Sort(asc)
	var ranges []bound.AgeRange
	switch d.Disclosed {
	case "none":
		for i, a := range asc {
			if a != i {
				return nil, specErr("Deletion.Ages", d.Ages, fmt.Errorf("%w: ages disclosed as none are listed as 0, …, m − 1", ErrSpec))
			}
		}
		ranges = []bound.AgeRange{{Lo: 0, Hi: d.Steps - 1, Count: m}}
	case "pow2":
		for i := 0; i < m; {
			b := ageBucket(asc[i])
			j := i
			for j < m && ageBucket(asc[j]) == b {
				if asc[j] != b+(j-i) {
					return nil, specErr("Deletion.Ages", d.Ages, fmt.Errorf("%w: ages disclosed as pow2 are listed as 2^k, 2^k + 1, … in each bucket", ErrSpec))
				}
				j++
			}
			hi := min(max(2*b-1, b), d.Steps-1)
			ranges = append(ranges, bound.AgeRange{Lo: b, Hi: hi, Count: j - i})
			i = j
		}
	default:
		return nil, specErr("Deletion.Disclosed", d.Disclosed, fmt.Errorf("%w: pow2, none or empty", ErrSpec))
	}
	for i := range ranges { // ages counted from the release
		ranges[i].Lo += d.Horizon
		ranges[i].Hi += d.Horizon
	}
	return ranges, nil
}

// ageBucket is a rounded down to a power of two (0 and 1 as they are).
func ageBucket(a int) int {
	if a <= 1 {
		return a
	}
	b := 1
	for b*2 <= a {
		b *= 2
	}
	return b
}
