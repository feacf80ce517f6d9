package certify

import (
	"testing"

	"github.com/stretchr/testify/require"
	"pgregory.net/rapid"

	"unlearn/bound"
	"unlearn/noise"
)

// genScenario draws a valid scenario over the whole input space of the
// three memory models.
func genScenario(t *rapid.T) bound.Scenario {
	hMin := rapid.Float64Range(0, 2).Draw(t, "hMin")
	s := bound.Scenario{
		Constants: bound.Constants{
			G:      rapid.Float64Range(0, 10).Draw(t, "G"),
			HMin:   hMin,
			HMax:   hMin + rapid.Float64Range(0, 2).Draw(t, "hSpread"),
			Eta:    rapid.Float64Range(1e-3, 1).Draw(t, "eta"),
			Tau:    rapid.IntRange(1, 30).Draw(t, "tau"),
			Source: bound.Proved,
		},
		Contraction: bound.Contraction{Rho: rapid.Float64Range(0, 0.99).Draw(t, "rho"), Provenance: bound.Proved},
		Memory:      rapid.SampledFrom([]bound.MemoryModel{bound.MemoryWorstCase, bound.MemoryDirect, bound.MemoryCoupled}).Draw(t, "memory"),
		LambdaZ:     new(rapid.Float64Range(0, 3).Draw(t, "lambdaZ")),
		Ages:        rapid.SliceOfNDistinct(rapid.IntRange(0, 300), 0, 6, rapid.ID[int]).Draw(t, "ages"),
		Horizon:     rapid.IntRange(0, 100).Draw(t, "horizon"),
	}
	if rapid.Bool().Draw(t, "given") {
		s.Start, s.Delta0, s.Delta0Source = bound.StartGiven, rapid.Float64Range(0, 5).Draw(t, "delta0"), bound.Estimated
	}
	return s
}

func alphaOf(t *rapid.T, s bound.Scenario, shift float64) float64 {
	sens, err := Spec{Scenario: &s, Shift: shift}.Sensitivity()
	require.NoError(t, err)
	return sens.Alpha
}

// TestAlphaMonotone: the certified α never decreases when any input grows
// (G, hMax, η, τ, ρ, λ_Z, Δ₀, the shift, one more deletion) or hMin
// shrinks, and σ never decreases with α. Each per-step perturbation of the
// model (docs/theory.md §4) is non-decreasing in these inputs and the
// recursion is monotone in ρ and in its non-negative terms; a property
// that fails means the certified noise could shrink when the problem gets
// harder. Increases are at least 10⁻⁶ relative (the rounded-up evaluation
// is monotone for such steps; its last-ulp inflation is not for a 1-ulp
// change).
func TestAlphaMonotone(t *testing.T) {
	inputs := []string{"G", "hMax", "hMin", "eta", "tau", "rho", "lambdaZ", "delta0", "shift", "deletion"}
	rapid.Check(t, func(t *rapid.T) {
		s := genScenario(t)
		shift := rapid.Float64Range(0, 2).Draw(t, "shift")
		in := rapid.SampledFrom(inputs).Draw(t, "input")
		f := 1 + rapid.Float64Range(1e-6, 1).Draw(t, "factor")
		b := s
		b.Ages = append([]int(nil), s.Ages...)
		c := &b.Constants
		shift2 := shift
		switch in {
		case "G":
			c.G = c.G*f + 1e-6
		case "hMax":
			c.HMax = c.HMax*f + 1e-6
		case "hMin":
			c.HMin /= f
		case "eta":
			c.Eta *= f
		case "tau":
			c.Tau += rapid.IntRange(1, 10).Draw(t, "dTau")
		case "rho":
			b.Contraction.Rho = min(s.Contraction.Rho+(1-s.Contraction.Rho)*(f-1)/2, 0.999)
		case "lambdaZ":
			b.LambdaZ = new(*s.LambdaZ*f + 1e-6)
		case "delta0":
			b.Delta0 = s.Delta0*f + 1e-6
		case "shift":
			shift2 = shift*f + 1e-6
		case "deletion":
			age := rapid.IntRange(0, 300).Draw(t, "newAge")
			for _, a := range s.Ages {
				if a == age {
					t.Skip("age already deleted")
				}
			}
			b.Ages = append(b.Ages, age)
		}
		a1, a2 := alphaOf(t, s, shift), alphaOf(t, b, shift2)
		if a2 < a1 {
			t.Fatalf("α decreased from %v to %v when %s grew", a1, a2, in)
		}
		s1, err := noise.SigmaAnalytic(a1, 1, 1e-5)
		require.NoError(t, err)
		s2, err := noise.SigmaAnalytic(a2, 1, 1e-5)
		require.NoError(t, err)
		if s2 < s1 {
			t.Fatalf("σ decreased from %v to %v as α grew from %v to %v", s1, s2, a1, a2)
		}
	})
}

// perturbations returns η_s·ε_s for every step s from the first deleted
// insert (or t0 with a given start) to t0 + Horizon, from the definitions of
// docs/theory.md §4 step by step (independently of bound's segment fold),
// and the value the recursion starts from.
func perturbations(s bound.Scenario) (start float64, etaEps []float64) {
	c := s.Constants
	lz := 1.0
	if s.LambdaZ != nil {
		lz = *s.LambdaZ
	}
	deleted := map[int]bool{}
	first := 1
	for _, a := range s.Ages {
		deleted[-a] = true
		first = min(first, -a)
	}
	pi := func(u int) float64 {
		if deleted[u] {
			if s.Memory == bound.MemoryCoupled {
				return c.Eta*c.HMax*c.G + lz*(c.HMax-c.HMin)
			}
			return c.Eta * c.HMax * c.G
		}
		after, inWindow := false, false
		for p := range deleted {
			after = after || p < u
			inWindow = inWindow || (p < u && u <= p+c.Tau)
		}
		if (s.Memory == bound.MemoryWorstCase && after) || (s.Memory == bound.MemoryDirect && inWindow) {
			return c.Eta * (c.HMax - c.HMin) * c.G
		}
		return 0
	}
	from := first
	if s.Start == bound.StartGiven {
		start, from = s.Delta0, 1
	}
	for u := from; u <= s.Horizon; u++ {
		etaEps = append(etaEps, pi(u))
	}
	return start, etaEps
}

// TestClosedFormEqualsIteratedRecursion: the α a certificate records (the
// closed form α_t = ρ^{t−t0}Δ_{t0} + Σ ρ^{t−1−s}η_sε_s of Theorem "Bounded
// counterfactual state deviation", which bound evaluates in closed-form
// segments) equals the Lemma "One-step state-error recursion" iterated one
// step at a time (bound.Recursion) on the per-step perturbations
// recomputed from their definitions, and bound.ClosedForm summed term by
// term — to 1e-12 relative (the rounding bounds of docs/theory.md §3 for
// ≤ 400 steps), plus 1e-300 absolute for an α that underflows.
func TestClosedFormEqualsIteratedRecursion(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		s := genScenario(t)
		got := alphaOf(t, s, 0)
		start, etaEps := perturbations(s)
		r, err := bound.NewRecursion(s.Contraction.Rho, start)
		require.NoError(t, err)
		for _, c := range etaEps {
			_, err := r.Step(c)
			require.NoError(t, err)
		}
		closed, err := bound.ClosedForm(s.Contraction.Rho, start, etaEps)
		require.NoError(t, err)
		for _, v := range []struct {
			name string
			x    float64
		}{{"iterated", r.Alpha()}, {"closed form", closed}} {
			if !approx(got, v.x, 1e-300, 1e-12) {
				t.Fatalf("certified α = %.17g, %s = %.17g (%d steps)", got, v.name, v.x, len(etaEps))
			}
		}
	})
}
