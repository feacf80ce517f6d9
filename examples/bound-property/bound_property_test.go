package main

// A property test of the certification bound for your own loss. To adapt
// it: replace PseudoHuber by your loss (a stream.Loss), derive μ, L, hMin,
// hMax for it in Case.Check (or measure them and label them
// bound.Estimated), and keep the assertion. It must be able to fail: give
// Check a smaller hMax than the truth, or drop the shift, and rapid finds a
// counterexample within a few hundred cases.

import (
	"io"
	"math/rand/v2"
	"strings"
	"testing"

	"pgregory.net/rapid"
)

// tolerance covers the simulation's own round-off: the bound is an upper
// bound in exact arithmetic (rounded up), the simulated deviation carries a
// few ulps of error per step on values of size ≤ ~10: 1e-9 relative, as
// in the toolkit's own end-to-end test.
const tolerance = 1e-9

func TestBoundHoldsForMyLoss(t *testing.T) {
	rapid.Check(t, func(rt *rapid.T) {
		c := Case{
			Lambda:  rapid.Float64Range(0.05, 2).Draw(rt, "lambda"),
			Tau:     rapid.IntRange(1, 6).Draw(rt, "tau"),
			EtaFrac: rapid.Float64Range(0.05, 1.9).Draw(rt, "etaFrac"),
			Inserts: rapid.IntRange(1, 60).Draw(rt, "inserts"),
			Horizon: rapid.IntRange(0, 30).Draw(rt, "horizon"),
			Seed:    rapid.Uint64().Draw(rt, "seed"),
		}
		c.Deletions = rapid.IntRange(1, min(4, c.Inserts)).Draw(rt, "deletions")
		res, err := c.Check(rand.New(rand.NewPCG(c.Seed, 1)))
		if err != nil {
			rt.Fatal(err)
		}
		for _, r := range res.Interventions {
			if r.WorstRatio > 1+tolerance {
				rt.Fatalf("%s: the deviation from the counterfactual exceeds α by a factor %v (α at t_del %v, ρ %v, G %v)",
					r.Name, r.WorstRatio, r.Alpha0, res.Rho, res.G)
			}
		}
	})
}

func TestRun(t *testing.T) {
	var out strings.Builder
	if err := run(io.MultiWriter(testWriter{t}, &out)); err != nil {
		t.Fatal(err)
	}
	// The program's fixed case: ρ proved, one line per intervention, and
	// the bound holds for each of them.
	for _, want := range []string{"(proved)", "noop", "oracle", "window-tau"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("output lacks %q:\n%s", want, out.String())
		}
	}
	c := Case{Lambda: 0.5, Tau: 3, EtaFrac: 1, Inserts: 80, Horizon: 40, Deletions: 4, Seed: 1}
	res, err := c.Check(rand.New(rand.NewPCG(c.Seed, 1)))
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Interventions) != 7 {
		t.Fatalf("%d interventions checked, want 7", len(res.Interventions))
	}
	for _, r := range res.Interventions {
		if !(r.WorstRatio <= 1+tolerance) {
			t.Errorf("%s: deviation/α = %v > 1", r.Name, r.WorstRatio)
		}
	}
}

// testWriter sends the program's output to the test log.
type testWriter struct{ t *testing.T }

func (w testWriter) Write(p []byte) (int, error) { w.t.Log(string(p)); return len(p), nil }
