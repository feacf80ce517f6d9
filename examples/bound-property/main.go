// Command bound-property shows how to check the certified bound for your
// own setting: your loss's header and your certifiable learner's
// configuration (Setting). bound_property_test.go, next to this file, is
// the property test to copy: it generates random streams the learner
// accepts and random deletion requests with pgregory.net/rapid, runs the
// real o-LBFGS learner in floating point, applies every built-in
// intervention the toolkit derives α for, and asserts that the distance of
// the released-before-noise parameters from the deletion-edited
// counterfactual's never exceeds certify.DerivedAlpha — with NO tolerance:
// the distance is computed exactly (math/big), and α already includes the
// round-off of two float trajectories (docs/theory.md, "Floating point").
//
// Your loss. α is derived, never measured: the toolkit knows μ, L and the
// gradient bound G only for its own loss kinds — quadratic (from the
// header's H0, H1) and ridge logistic (from λ and the sample bound). A
// custom loss (PseudoHuber below stands for one) gets no recursion: its
// only proved sensitivity is the diameter bound 2W' of the learner's ball,
// whatever produced the state. Constants you derive by hand for your own
// loss can only enter a certificate as an ASSUMED α (certify.Given): the
// toolkit cannot check them, and the certificate says so.
//
// This program runs the check once, for a fixed case of each setting, and
// prints the deviation beside α. Run it with
//
//	go run ./examples/bound-property
//	go test ./examples/bound-property -rapid.checks=2000
package main

import (
	"fmt"
	"io"
	"log"
	"math"
	"os"

	"unlearn/olbfgs"
	"unlearn/stream"
)

// MySetting is the setting to edit: a ridge-logistic loss in d = 3 with
// λ = 1 and a certifiable learner (τ = 4, η = 1, radius 2, features of
// norm ≤ 1, a pair guard whose window [λ, λ + B²/4] holds the curvature of
// every logistic pair, and angle 0.01: pairs further from isotropic are not
// stored). A wider angle or a smaller λ/B² soon leaves no proved
// contraction (the logistic Hessians do not commute with H_Z in d > 1), and
// α falls back to the diameter bound.
func MySetting() Setting {
	const d, lambda, b = 3, 1.0, 1.0
	cfg := olbfgs.DefaultConfig(d)
	cfg.Memory, cfg.StepSize = 4, 1
	cfg.Radius, cfg.SampleBound = 2, b
	cfg.PairAngle, cfg.PairMin, cfg.PairMax = 0.01, lambda, lambda+b*b/4
	cfg.InitialScale = 1 / cfg.PairMax
	return Setting{Header: stream.Header{Format: stream.FormatV1, Kind: stream.KindLogistic, D: d, Lambda: lambda}, Config: cfg}
}

// QuadraticSetting is an isotropic quadratic loss in d = 2 (H0 = I,
// H1 = 1.2·I: every Hessian commutes with every H_Z, so ρ is that of the
// commuting case).
func QuadraticSetting() Setting {
	const d = 2
	h0, h1 := [][]float64{{1, 0}, {0, 1}}, [][]float64{{1.2, 0}, {0, 1.2}}
	cfg := olbfgs.DefaultConfig(d)
	cfg.Memory, cfg.StepSize, cfg.InitialScale = 3, 0.8, 1/1.2
	cfg.Radius, cfg.SampleBound = 3, 2
	cfg.PairAngle, cfg.PairMin, cfg.PairMax = 1e-6, 1*(1-1e-9), 1.2*(1+1e-9)
	return Setting{Header: stream.Header{Format: stream.FormatV1, Kind: stream.KindQuadratic, D: d, H0: h0, H1: h1}, Config: cfg}
}

// CustomSetting is the same learner in d = 1 on the custom PseudoHuber
// loss: the toolkit knows no constants for it, so α is the diameter bound.
// Its header names the kind only (the toolkit never builds the loss from
// it); Check uses the loss itself.
func CustomSetting() Setting {
	cfg := olbfgs.DefaultConfig(1)
	cfg.Memory, cfg.StepSize = 3, 0.5
	cfg.Radius, cfg.SampleBound = 2, 2
	cfg.PairAngle, cfg.PairMin, cfg.PairMax = 1e-6, 0.5, 1.5
	return Setting{Header: stream.Header{Format: stream.FormatV1, Kind: PseudoHuberKind, D: 1}, Config: cfg, Custom: PseudoHuber{Lambda: 0.5}}
}

// PseudoHuberKind is the custom loss's kind.
const PseudoHuberKind stream.Kind = "pseudo-huber"

// PseudoHuber is a one-dimensional robust regression loss with a ridge:
//
//	ℓ_z(w) = c·(sqrt(1 + (w − b)²) − 1) + (λ/2)·(w − b)²,
//
// for a sample z with payload V = [b] and weight S = c ∈ [0, 1]. Its second
// derivative lies in [λ, λ + 1]. The toolkit does not know that: it derives
// constants only for its own loss kinds, so a release of a learner trained
// on it is calibrated to the diameter bound 2W'.
type PseudoHuber struct {
	// Lambda is the ridge λ > 0.
	Lambda float64
}

// Kind names the loss.
func (PseudoHuber) Kind() stream.Kind { return PseudoHuberKind }

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

// fixedCase is the case the program prints.
var fixedCase = Case{Inserts: 120, Horizon: 10, Deletions: 3, Seed: 1}

func run(w io.Writer) error {
	for _, s := range []struct {
		name    string
		setting Setting
	}{{"logistic (MySetting)", MySetting()}, {"isotropic quadratic", QuadraticSetting()}, {"custom pseudo-Huber", CustomSetting()}} {
		res, err := s.setting.Check(fixedCase)
		if err != nil {
			return fmt.Errorf("%s: %w", s.name, err)
		}
		fmt.Fprintf(w, "%s, d = %d, %d inserts, %d deletions, release %d steps later:\n", s.name, s.setting.Config.Dim, fixedCase.Inserts, fixedCase.Deletions, fixedCase.Horizon)
		for _, r := range res {
			fmt.Fprintf(w, "  %-13s deviation %-10.4g α %-10.4g (%s)  α/deviation %.3g\n", r.Name, r.Deviation, r.Alpha, r.Source, r.Alpha/r.Deviation)
		}
	}
	return nil
}
