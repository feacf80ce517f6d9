package audit_test

import (
	"context"
	"fmt"

	"gonum.org/v1/gonum/floats"

	"unlearn/audit"
	"unlearn/noise"
	"unlearn/olbfgs"
	"unlearn/stream"
	"unlearn/unlearn"
)

// Audit a release whose σ is a tenth of what its claim needs: the worlds'
// parameters differ by α = 1, and σ is calibrated for α = 0.1 at ε = 1.
func ExampleRun() {
	wA := []float64{1, 0, 0}
	wB := []float64{0, 0, 0} // ‖wA − wB‖ = 1
	sigma, err := noise.SigmaAnalytic(0.1, 1, 1e-5)
	if err != nil {
		fmt.Println(err)
		return
	}
	rep, err := audit.Run(context.Background(), audit.Config{
		A: audit.Gaussian(wA, nil, sigma), B: audit.Gaussian(wB, nil, sigma),
		Epsilon: 1, Delta: 1e-5,
		Seeded: true, Seed: 7, // seeded: for speed, not deployment
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Printf("n = %d per world, γ = %g, ceiling %.2f\n", rep.Trials, rep.Gamma, rep.Ceiling)
	fmt.Printf("ε_lb = %.2f > ε = %g: %s\n", rep.EpsilonLB, rep.Epsilon, rep.Verdict)
	// Output:
	// n = 10000 per world, γ = 1e-05, ceiling 5.96
	// ε_lb = 4.29 > ε = 1: VIOLATION
}

// A confidence bound needs enough trials: with no error at all on n
// evaluation trials per world, ε_lb cannot exceed Ceiling(n, γ, δ).
func ExampleCeiling() {
	for _, n := range []int{100, 1000, 5000, 50000} {
		fmt.Printf("n = %d: %.2f\n", n, audit.Ceiling(n, audit.DefaultGamma, 1e-5))
	}
	// Output:
	// n = 100: 1.98
	// n = 1000: 4.34
	// n = 5000: 5.96
	// n = 50000: 8.26
}

// Audit a pipeline end to end: a drifting quadratic stream, the 5 most
// recent inserts deleted at t_del = 300, the no-op intervention, and a
// release that noises w correctly but publishes the curvature memory
// beside it — which still holds pairs made from the deleted samples.
func ExampleWorlds() {
	o := stream.DefaultQuadraticOptions()
	o.Seed, o.T = 1, 300
	h, err := stream.GenerateQuadratic(o)
	if err != nil {
		fmt.Println(err)
		return
	}
	ids, err := stream.ChooseDeletions(h.Events, stream.Recent, 5, stream.ChooseOptions{})
	if err != nil {
		fmt.Println(err)
		return
	}
	cfg := olbfgs.DefaultConfig(h.Header.D)
	a, b, err := audit.Worlds(cfg, h.Loss, h.Events, stream.NewIDSet(ids...), unlearn.NoOp())
	if err != nil {
		fmt.Println(err)
		return
	}
	// σ calibrated to the true distance: w alone would be sound.
	sigma, err := noise.SigmaAnalytic(floats.Distance(a.W(), b.W(), 2), 1, 1e-5)
	if err != nil {
		fmt.Println(err)
		return
	}
	rep, err := audit.Run(context.Background(), audit.Config{
		A:       audit.Gaussian(a.W(), audit.Flatten(a.Memory()), sigma),
		B:       audit.Gaussian(b.W(), audit.Flatten(b.Memory()), sigma),
		Epsilon: 1, Delta: 1e-5, WDim: cfg.Dim, Trials: 2000,
		Seeded: true, Seed: 1,
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	bb := rep.Tests[1]
	fmt.Printf("black-box test on %s: %d/%d false positives, %d/%d false negatives\n",
		bb.Statistic, bb.FalsePositives, bb.NegativesB, bb.FalseNegatives, bb.PositivesA)
	fmt.Printf("ε_lb = %.2f, certified ε = %g: %s\n", rep.EpsilonLB, rep.Epsilon, rep.Verdict)
	// Output:
	// black-box test on memory[0]: 0/1000 false positives, 0/1000 false negatives
	// ε_lb = 4.34, certified ε = 1: VIOLATION
}
