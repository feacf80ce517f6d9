// Command bound-property shows how to check the certification bound for
// your own loss. The loss here, PseudoHuber, stands for yours: a smooth,
// strongly convex per-sample loss on R^d, implemented as a stream.Loss so
// that the online L-BFGS learner can train on it. bound_property_test.go,
// next to this file, is the property test to copy: it generates random
// streams and deletion requests with pgregory.net/rapid and asserts that
// the measured distance of every intervention's parameters to the
// deletion-edited counterfactual never exceeds the certified α.
//
// This program runs the same check once, for a fixed seed, and prints the
// deviation and α. Run it with
//
//	go run ./examples/bound-property
//	go test ./examples/bound-property -rapid.checks=5000
package main

import (
	"fmt"
	"io"
	"log"
	"math"
	"math/rand/v2"
	"os"

	"unlearn/stream"
)

// PseudoHuber is a one-dimensional robust regression loss with a ridge:
//
//	ℓ_z(w) = c·(sqrt(1 + (w − b)²) − 1) + (λ/2)·(w − b)²,
//
// for a sample z with payload V = [b] and weight S = c ∈ [0, 1]. Its second
// derivative c/(1 + (w − b)²)^{3/2} + λ lies in [λ, λ + 1]: it is
// μ-strongly convex and L-smooth with μ = λ, L = λ + 1 (the paper's
// Assumption "Strong convexity and smoothness").
//
// In d = 1 every inverse-Hessian approximation of o-LBFGS is s/y of its
// newest curvature pair, and by the mean value theorem y/s ∈ [μ, L], so
// hMin = 1/L and hMax = 1/μ (Assumption "Bounded inverse-Hessian
// approximations", with γ0 in that range too); every H commutes with every
// Hessian, so the analytic contraction of the commuting case holds.
type PseudoHuber struct {
	// Lambda is the ridge λ > 0.
	Lambda float64
}

// Kind names the loss.
func (PseudoHuber) Kind() stream.Kind { return "pseudo-huber" }

// Dim returns 1.
func (PseudoHuber) Dim() int { return 1 }

// Grad stores ℓ'(w) = c·r/sqrt(1 + r²) + λ·r, r = w − b, in dst.
func (p PseudoHuber) Grad(dst, w []float64, z stream.Sample) {
	r := w[0] - z.V[0]
	dst[0] = z.S*r/math.Sqrt(1+r*r) + p.Lambda*r
}

// Value returns ℓ(w).
func (p PseudoHuber) Value(w []float64, z stream.Sample) float64 {
	r := w[0] - z.V[0]
	return z.S*(math.Sqrt(1+r*r)-1) + p.Lambda*r*r/2
}

// CheckSample accepts a finite b and c ∈ [0, 1].
func (PseudoHuber) CheckSample(z stream.Sample) (string, error) {
	if len(z.V) != 1 || math.IsNaN(z.V[0]) || math.IsInf(z.V[0], 0) {
		return "V", fmt.Errorf("want one finite value")
	}
	if !(z.S >= 0 && z.S <= 1) {
		return "S", fmt.Errorf("weight %v outside [0, 1]", z.S)
	}
	return "", nil
}

func main() {
	if err := run(os.Stdout); err != nil {
		log.Fatal(err)
	}
}

func run(w io.Writer) error {
	c := Case{Lambda: 0.5, Tau: 3, EtaFrac: 1, Inserts: 80, Horizon: 40, Deletions: 4, Seed: 1}
	res, err := c.Check(rand.New(rand.NewPCG(c.Seed, 1)))
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "pseudo-Huber, λ = %v: μ = %v, L = %v, ρ = %.4f (%s), G = %.4g\n", c.Lambda, c.Lambda, c.Lambda+1, res.Rho, res.RhoProvenance, res.G)
	for _, r := range res.Interventions {
		fmt.Fprintf(w, "%-13s max over %d steps of deviation/α = %.3f (α at t_del = %.4g)\n", r.Name, c.Horizon+1, r.WorstRatio, r.Alpha0)
	}
	return nil
}
