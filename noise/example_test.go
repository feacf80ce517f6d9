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

func ExampleGDPEpsilon() {
	// Ten releases, each calibrated to (ε, δ) = (1, 10⁻⁵) for sensitivity
	// 1, compose exactly to sqrt(10)·μ₁-GDP (Dong, Roth & Su 2022): ε at
	// δ = 10⁻⁵ is 3.62, against 4.42 from zCDP.
	sigma, _ := noise.SigmaAnalytic(1, 1, 1e-5)
	mu1, _ := noise.GDPMu(1, sigma)
	mus := make([]float64, 10)
	for i := range mus {
		mus[i] = mu1
	}
	mu, _ := noise.GDPCompose(mus...)
	eps, _ := noise.GDPEpsilon(mu, 1e-5)
	d, _ := noise.GDPDelta(mu, eps)
	rho, _ := noise.ZCDP(1, sigma)
	zeps, _ := noise.ZCDPEpsilon(10*rho, 1e-5)
	fmt.Printf("μ₁ = %.4f, μ = %.4f, ε = %.4f (δ(ε) = %.3g), zCDP ε = %.2f\n", mu1, mu, eps, d, zeps)
	// Output:
	// μ₁ = 0.2679, μ = 0.8472, ε = 3.6166 (δ(ε) = 1e-05), zCDP ε = 4.42
}
