package main

import (
	"fmt"
	"math"
	"math/rand/v2"

	"unlearn/bound"
	"unlearn/certify"
	"unlearn/olbfgs"
	"unlearn/stream"
	"unlearn/unlearn"
)

// Case is one random instance of the check: a stream of PseudoHuber
// samples, a deletion request and a continuation.
type Case struct {
	Lambda    float64 // ridge λ > 0: μ = λ, L = λ + 1
	Tau       int     // memory size τ ≥ 1
	EtaFrac   float64 // η·hMax·L ∈ (0, 2): the step size relative to its stability limit
	Inserts   int     // inserts before the deletion request
	Horizon   int     // inserts after it
	Deletions int     // |U| ≤ Inserts
	Seed      uint64  // seed of the samples and of U
}

// Result is the outcome of a Case.
type Result struct {
	Rho           float64
	RhoProvenance bound.Provenance
	G             float64
	Interventions []InterventionResult
}

// InterventionResult holds, for one intervention, α at the deletion time and
// the largest ratio of the measured deviation ‖w̃_k − w⁻_k‖ to α_k over
// k = 0…Horizon (≤ 1 when the bound holds; +Inf if a positive deviation
// meets α = 0).
type InterventionResult struct {
	Name       string
	Alpha0     float64
	WorstRatio float64
}

// Check trains online L-BFGS on the case's stream, applies each
// intervention to the deletion request, propagates it and the
// deletion-edited counterfactual on the same future samples, and compares
// their distance with the certified bound:
//
//   - the constants: μ = λ, L = λ + 1, hMin = 1/L, hMax = 1/μ (proved for
//     this loss in d = 1, see PseudoHuber), ρ from bound.AnalyticContraction
//     (commuting case), and G measured at exactly the points the proof uses
//     (docs/theory.md §2, A2): the actual learner's states before each
//     shared step, the counterfactual's before each deleted insert, and
//     every intervention's states after the deletion;
//   - α at the deletion time from certify.Spec with the untouched learner's
//     scenario (ages from certify.AgesOf) plus the intervention's shift
//     certify.ShiftOf(actual, intervened);
//   - α_k after k more steps from the same scenario started at that α
//     (bound.StartGiven).
func (c Case) Check(r *rand.Rand) (Result, error) {
	loss := PseudoHuber{Lambda: c.Lambda}
	mu, L := c.Lambda, c.Lambda+1
	hMin, hMax := 1/L, 1/mu
	cfg := olbfgs.DefaultConfig(1)
	cfg.Memory, cfg.InitialScale, cfg.StepSize = c.Tau, hMin, c.EtaFrac/(hMax*L)
	events := make([]stream.Event, c.Inserts+c.Horizon)
	for i := range events {
		events[i] = stream.InsertEvent(int64(i+1), []float64{2 * r.NormFloat64()}, r.Float64())
	}
	prefix, future := events[:c.Inserts], events[c.Inserts:]
	u := stream.NewIDSet()
	for len(u) < c.Deletions {
		u.Add(int64(1 + r.IntN(c.Inserts)))
	}

	// The actual learner (with checkpoints, for window replay) and the
	// counterfactual, stepped together over the prefix; G at the proof's
	// points.
	actual, err := olbfgs.New(cfg, loss)
	if err != nil {
		return Result{}, err
	}
	if err := actual.KeepCheckpoints(c.Tau); err != nil {
		return Result{}, err
	}
	cf, err := olbfgs.New(cfg, loss)
	if err != nil {
		return Result{}, err
	}
	var g float64
	grad := []float64{0}
	gradAt := func(w []float64, z stream.Sample) float64 { loss.Grad(grad, w, z); return math.Abs(grad[0]) }
	for _, e := range prefix {
		if u.Has(e.ID) {
			g = max(g, gradAt(cf.W(), e.Sample))
		} else {
			g = max(g, gradAt(actual.W(), e.Sample))
			if err := cf.Step(e); err != nil {
				return Result{}, err
			}
		}
		if err := actual.Step(e); err != nil {
			return Result{}, err
		}
	}

	req := unlearn.Request{Actual: actual, Prefix: prefix, U: u}
	ops := []unlearn.Operator{unlearn.NoOp(), unlearn.ParamOnly(), unlearn.PairDrop(), unlearn.MemoryReset(),
		unlearn.RetainFineTune(), unlearn.WindowReplay(c.Tau, "window-tau", "Window replay τ"), unlearn.Oracle()}
	outs := make([]*olbfgs.Learner, len(ops))
	devs := make([][]float64, len(ops))
	for i, op := range ops {
		out, _, err := unlearn.Run(op, req)
		if err != nil {
			return Result{}, err
		}
		outs[i] = out
		a, b := out.Clone(), cf.Clone()
		devs[i] = []float64{math.Abs(a.W()[0] - b.W()[0])}
		for _, e := range future {
			g = max(g, gradAt(a.W(), e.Sample))
			if err := a.Step(e); err != nil {
				return Result{}, err
			}
			if err := b.Step(e); err != nil {
				return Result{}, err
			}
			devs[i] = append(devs[i], math.Abs(a.W()[0]-b.W()[0]))
		}
	}

	rho, err := bound.AnalyticContraction(bound.AnalyticParams{Mu: mu, L: L, Eta: cfg.StepSize, HMin: hMin, HMax: hMax, Case: bound.Commuting})
	if err != nil {
		return Result{}, err
	}
	res := Result{Rho: rho.Rho, RhoProvenance: rho.Provenance, G: g}
	consts := bound.Constants{G: g, HMin: hMin, HMax: hMax, Eta: cfg.StepSize, Tau: c.Tau, Source: bound.Proved}
	ages := certify.AgesOf(prefix, u)
	for i, op := range ops {
		at0, err := certify.Spec{
			Scenario: &bound.Scenario{Constants: consts, Contraction: rho, Ages: ages},
			Shift:    certify.ShiftOf(actual, outs[i]),
		}.Sensitivity()
		if err != nil {
			return Result{}, err
		}
		ir := InterventionResult{Name: op.Name(), Alpha0: at0.Alpha}
		// One scenario started at that α covers every k: its Alpha[k] is α_k.
		later, err := bound.Scenario{Constants: consts, Contraction: rho, Ages: ages, Horizon: len(devs[i]) - 1,
			Start: bound.StartGiven, Delta0: at0.Alpha, Delta0Source: at0.Provenance}.Bound()
		if err != nil {
			return Result{}, err
		}
		for k, dev := range devs[i] {
			switch a := later.Alpha[k]; {
			case a > 0:
				ir.WorstRatio = max(ir.WorstRatio, dev/a)
			case dev > 0:
				ir.WorstRatio = math.Inf(1)
			}
		}
		if at0.Provenance != bound.Proved {
			return Result{}, fmt.Errorf("%s: α is %s, want proved", op.Name(), at0.Provenance)
		}
		res.Interventions = append(res.Interventions, ir)
	}
	return res, nil
}
