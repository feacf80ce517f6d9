package noise_test

import (
	"errors"
	"fmt"

	"unlearn/noise"
)

func ExampleSigmaAnalytic() {
	// Balle & Wang's example: α = 1, ε = 1, δ = 1e-5 needs σ ≈ 3.73; the
	// classic formula does not hold at ε = 1.
	s, err := noise.SigmaAnalytic(1, 1, 1e-5)
	fmt.Printf("analytic σ = %.4f, err = %v\n", s, err)
	_, err = noise.SigmaClassic(1, 1, 1e-5)
	fmt.Println(errors.Is(err, noise.ErrClassicEpsilon))
	// Output:
	// analytic σ = 3.7324, err = <nil>
	// true
}

func ExampleSigma() {
	// Exact values (mpmath): analytic 1.61152 (the library's bisection
	// returns up to 0.1% more), classic 2.11952.
	for _, name := range []string{"analytic", "classic"} {
		c, err := noise.ParseCalibration(name)
		if err != nil {
			fmt.Println(err)
			return
		}
		s, err := noise.Sigma(c, 0.2, 0.5, 1e-6)
		fmt.Printf("%s: σ = %.4f, err = %v\n", c, s, err)
	}
	// Output:
	// analytic: σ = 1.6125, err = <nil>
	// classic: σ = 2.1195, err = <nil>
}

func ExampleGaussian() {
	// The seeded sampler is for examples and tests only; deployments leave
	// Sampler nil and get the secure one.
	g, err := noise.NewGaussian(noise.GaussianOptions{
		Alpha:   0.05, // the state-deviation bound α_t
		Epsilon: 1,
		Delta:   1e-5,
		Sampler: noise.NewSeededSampler(42, noise.SamplerOptions{}),
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	w := []float64{0.5, -1.25, 2}
	released := make([]float64, len(w))
	r, err := g.Release(released, w)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Printf("σ = %.5f, sampler %s, zCDP ρ = %.5f\n", r.Sigma, r.Sampler, r.ZCDP)
	fmt.Printf("released %.4f\n", released)
	// Output:
	// σ = 0.18662, sampler seeded, zCDP ρ = 0.03589
	// released [0.6558 -1.2271 1.9639]
}

func ExampleZCDPEpsilon() {
	// Ten releases at α = 0.05, σ = 0.2 compose to 10·α²/(2σ²) zCDP.
	rho, _ := noise.ZCDP(0.05, 0.2)
	eps, _ := noise.ZCDPEpsilon(10*rho, 1e-5)
	fmt.Printf("per release ρ = %.5f, total ε = %.3f at δ = 1e-5\n", rho, eps)
	// Output:
	// per release ρ = 0.03125, total ε = 4.106 at δ = 1e-5
}
