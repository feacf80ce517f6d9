package certify_test

import (
	"errors"
	"fmt"
	"os"

	"unlearn/bound"
	"unlearn/certify"
	"unlearn/noise"
	"unlearn/olbfgs"
	"unlearn/stream"
	"unlearn/unlearn"
)

// request trains a learner on 20 inserts of an isotropic quadratic stream
// in d = 2 (curvatures in [μ, L] = [1, 4]) and asks to delete ids 5 and 18.
func request() unlearn.Request {
	loss, err := stream.NewQuadratic([][]float64{{1, 0}, {0, 1}}, [][]float64{{4, 0}, {0, 4}})
	if err != nil {
		panic(err)
	}
	var prefix []stream.Event
	for i := 1; i <= 20; i++ {
		x := float64(i)
		prefix = append(prefix, stream.InsertEvent(int64(i), []float64{x / 20, 1 - x/20}, float64(i%3)/2))
	}
	cfg := olbfgs.DefaultConfig(2)
	cfg.Memory, cfg.StepSize, cfg.InitialScale = 4, 0.2, 0.5
	actual, err := olbfgs.Replay(cfg, loss, prefix)
	if err != nil {
		panic(err)
	}
	return unlearn.Request{Actual: actual, Prefix: prefix, U: stream.NewIDSet(5, 18)}
}

// scenario: isotropic losses with μ = 1, L = 4 give hMin = 1/L, hMax = 1/μ
// (docs/theory.md §13); η = 0.2 proves ρ = max(|1 − 0.2·0.25·1|,
// |1 − 0.2·1·4|) = 0.95; G = 2 bounds the gradients this stream visits.
func scenario() *bound.Scenario {
	k, err := bound.AnalyticContraction(bound.AnalyticParams{Mu: 1, L: 4, Eta: 0.2, HMin: 0.25, HMax: 1, Case: bound.Commuting})
	if err != nil {
		panic(err)
	}
	return &bound.Scenario{
		Constants:   bound.Constants{G: 2, HMin: 0.25, HMax: 1, Eta: 0.2, Tau: 4, Source: bound.Proved},
		Contraction: k,
	}
}

// Certify the no-op unlearned state (the learner after the deletion is
// registered) at (ε, δ) = (1, 1e-5), with α from the proved bound for the
// two deletions' ages. The seeded sampler makes the output reproducible;
// it is for experiments only, and the certificate says so.
func Example() {
	req := request()
	state := req.Actual.Clone()
	state.MarkDeleted(5, 18)
	sc := scenario()
	sc.Ages = certify.AgesOf(req.Prefix, req.U)
	released, cert, err := certify.Certify(state, certify.Spec{
		Epsilon: 1, Delta: 1e-5, Scenario: sc, Intervention: "noop",
		Sampler: noise.NewSeededSampler(1, noise.SamplerOptions{}), // experiments only
	})
	if err != nil {
		panic(err)
	}
	fmt.Printf("ages %v: α = %.4f (%s), σ = %.4f (%s)\n", sc.Ages, cert.Sensitivity.Alpha, cert.Provenance, cert.Sigma, cert.Calibration)
	fmt.Printf("covers %s, memory pairs released: %d, sampler %s, deployable %v\n", cert.Covers, released.Memory().Len(), cert.Sampler, cert.Deployable)
	fmt.Println(cert.Warnings)
	_, err = certify.VerifyStates(cert, state, released, nil)
	fmt.Println("verified:", err == nil)
	// Output:
	// ages [15 2]: α = 3.4958 (proved), σ = 13.0479 (analytic)
	// covers state, memory pairs released: 0, sampler seeded, deployable false
	// [seeded sampler: NOT for deployment]
	// verified: true
}

// Wrap turns an intervention into a certified one that can run wherever an
// unlearn.Operator runs; the certificate names it and covers its shift of
// the parameters.
func ExampleWrap() {
	req := request()
	op, err := certify.Wrap(unlearn.ParamOnly(), certify.Spec{
		Epsilon: 0.5, Delta: 1e-6, Scenario: scenario(), Memory: certify.Keep,
		Sampler: noise.NewSeededSampler(2, noise.SamplerOptions{}),
	})
	if err != nil {
		panic(err)
	}
	_, cert, _, err := op.ApplyCertified(req)
	if err != nil {
		panic(err)
	}
	s := cert.Sensitivity
	fmt.Printf("%s: α = %.4f = bound %.4f + shift %.4f\n", cert.Intervention, s.Alpha, s.BoundAlpha, s.Shift)
	fmt.Printf("covers %s; σ = %.4f\n", cert.Covers, cert.Sigma)
	// Output:
	// param-only: α = 3.6801 = bound 3.4958 + shift 0.1842
	// covers parameters; σ = 29.6705
}

// Verify rejects a certificate whose fields were edited.
func ExampleVerify() {
	req := request()
	state := req.Actual.Clone()
	state.MarkDeleted(5, 18)
	released, cert, err := certify.Certify(state, certify.Spec{
		Epsilon: 1, Delta: 1e-5, Alpha: &certify.Given{Alpha: 0.4, Provenance: bound.Assumed},
		Sampler: noise.NewSeededSampler(3, noise.SamplerOptions{}),
	})
	if err != nil {
		panic(err)
	}
	h, _ := certify.HeaderOf(state.Loss())
	before, _ := olbfgs.MarshalSnapshot(state, h)
	after, _ := olbfgs.MarshalSnapshot(released, h)
	if _, err := certify.Verify(cert, before, after); err == nil {
		fmt.Println("genuine: valid")
	}
	cert.Sensitivity.Alpha = 0.1 // claim less sensitivity
	_, err = certify.Verify(cert, before, after)
	fmt.Println("tampered:", errors.Is(err, certify.ErrDigest))
	// Output:
	// genuine: valid
	// tampered: true
}

// How much noise does a deployment need? Required σ over deletion counts
// and the time since the deletion, for the scenario's constants. Under
// the proved worst-case memory model the memory term η·(hMax−hMin)·G is
// charged at every step after a deletion, so α tends to the floor
// η·(hMax−hMin)·G/(1−ρ) = 6 instead of decaying (docs/theory.md §4.2).
func ExampleRequiredSigma() {
	sc := scenario()
	tab, err := certify.RequiredSigma(certify.PlanSpec{
		Epsilon: 1, Delta: 1e-5, Constants: sc.Constants, Contraction: sc.Contraction,
		Deletions: []int{1, 10}, Since: []int{0, 50},
	})
	if err != nil {
		panic(err)
	}
	if err := tab.WriteMarkdown(os.Stdout); err != nil {
		panic(err)
	}
	// Output:
	// Required σ at (ε, δ) = (1, 1e-05), analytic calibration, worst-case memory model; α is proved.
	//
	// | deletions | τ | steps since deletion | α | σ | provenance |
	// | ---: | ---: | ---: | ---: | ---: | --- |
	// | 1 | 4 | 0 | 0.4 | 1.49297 | proved |
	// | 1 | 4 | 50 | 5.56911 | 20.7863 | proved |
	// | 10 | 4 | 0 | 3.2101 | 11.9815 | proved |
	// | 10 | 4 | 50 | 5.78533 | 21.5933 | proved |
}
