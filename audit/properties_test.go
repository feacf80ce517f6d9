package audit

import (
	"context"
	"math"
	"testing"

	"gonum.org/v1/gonum/floats"
	"pgregory.net/rapid"

	"unlearn/noise"
)

// TestBestRuleCountsItsErrors checks the sweep of bestRule against direct
// counting: the score it reports is the bound of the errors its rule makes
// on the same data, and no rule at any of the data's values (either
// orientation) scores more.
func TestBestRuleCountsItsErrors(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		n := rapid.IntRange(1, 40).Draw(t, "n")
		// Few distinct values, so ties across and within worlds are common.
		vals := rapid.SliceOfN(rapid.IntRange(-4, 4), 2*n, 2*n).Draw(t, "vals")
		a, b := make([]float64, n), make([]float64, n)
		for i := range n {
			a[i], b[i] = float64(vals[i])/2, float64(vals[n+i])/2
		}
		level := rapid.Float64Range(1e-4, 0.4).Draw(t, "level")
		delta := rapid.Float64Range(0, 0.1).Draw(t, "delta")
		up := cpTable(n, level)
		score := func(r rule) float64 {
			fp, fn := 0, 0
			for i := range n {
				if !r.guessA(a[i]) {
					fn++
				}
				if r.guessA(b[i]) {
					fp++
				}
			}
			return EpsilonLowerBound(up[fp], up[fn], delta)
		}
		r, s := bestRule(clone(a), clone(b), up, up, delta)
		if got := score(r); got != s {
			t.Fatalf("rule %+v: reported score %v, direct count %v", r, s, got)
		}
		for _, v := range append(clone(a), b...) {
			for _, above := range []bool{true, false} {
				if c := score(rule{threshold: v, above: above}); c > s {
					t.Fatalf("rule at %v (above %v) scores %v > the best %v", v, above, c, s)
				}
			}
		}
	})
}

// TestRunSoundGaussian audits random sound Gaussian releases — two means at
// a random distance in a random dimension, σ = SigmaAnalytic of that
// distance at a random (ε, δ) — and requires ε_lb ≤ ε, 0 ≤ ε_lb ≤ the
// ceiling, and each test's bounds recomputable from its counts. On a sound
// release each audit falsely reports ε_lb > ε with probability ≤ γ = 10⁻⁵
// (see Run), so the 500 seeded cases fail on a correct audit with
// probability ≤ 5·10⁻³, decided once by the fixed rapid seed.
func TestRunSoundGaussian(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		d := rapid.IntRange(1, 6).Draw(t, "d")
		wA := make([]float64, d)
		wB := make([]float64, d)
		for i := range d {
			wA[i] = rapid.Float64Range(-2, 2).Draw(t, "wA")
			wB[i] = rapid.Float64Range(-2, 2).Draw(t, "wB")
		}
		eps := rapid.Float64Range(0.05, 6).Draw(t, "eps")
		delta := rapid.SampledFrom([]float64{1e-8, 1e-5, 1e-3, 0.05}).Draw(t, "delta")
		sigma, err := noise.SigmaAnalytic(floats.Distance(wA, wB, 2), eps, delta)
		if err != nil {
			t.Fatal(err)
		}
		rep, err := Run(context.Background(), Config{
			A: Gaussian(wA, nil, sigma), B: Gaussian(wB, nil, sigma),
			Epsilon: eps, Delta: delta,
			Trials:            rapid.IntRange(20, 600).Draw(t, "trials"),
			SelectionFraction: rapid.Float64Range(0.2, 0.8).Draw(t, "selection"),
			Seeded:            true, Seed: rapid.Uint64().Draw(t, "seed"),
		})
		if err != nil {
			t.Fatal(err)
		}
		if !(rep.EpsilonLB >= 0 && rep.EpsilonLB <= rep.Ceiling) {
			t.Fatalf("ε_lb = %v outside [0, ceiling %v]", rep.EpsilonLB, rep.Ceiling)
		}
		if rep.EpsilonLB > eps {
			t.Fatalf("sound release refuted: ε_lb = %v > ε = %v (tests %+v)", rep.EpsilonLB, eps, rep.Tests)
		}
		best := 0.0
		for _, tr := range rep.Tests {
			fpr := ClopperPearsonUpper(tr.FalsePositives, rep.Evaluation, rep.Gamma/4)
			fnr := ClopperPearsonUpper(tr.FalseNegatives, rep.Evaluation, rep.Gamma/4)
			if fpr != tr.FPRUpper || fnr != tr.FNRUpper || EpsilonLowerBound(fpr, fnr, delta) != tr.EpsilonLB {
				t.Fatalf("test %s: bounds do not follow from its counts", tr.Name)
			}
			best = math.Max(best, tr.EpsilonLB)
		}
		if best != rep.EpsilonLB {
			t.Fatalf("ε_lb %v is not the tests' largest, %v", rep.EpsilonLB, best)
		}
	})
}
