package audit_test

import (
	"context"
	"fmt"

	"unlearn/audit"
	"unlearn/noise"
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
