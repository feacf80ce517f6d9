package main

import (
	"io"
	"strings"
	"testing"

	"pgregory.net/rapid"
)

// settings are the settings the property test checks; put yours first.
var settings = []struct {
	name string
	make func() Setting
}{{"mine", MySetting}, {"quadratic", QuadraticSetting}, {"custom", CustomSetting}}

// TestBoundHoldsInMySetting is the property to copy: on real o-LBFGS float
// trajectories of the setting's learner, for every built-in intervention,
// the released-before-noise parameters are within certify.DerivedAlpha of
// the counterfactual's, with NO tolerance. It must be able to fail: drop
// the intervention's allowance (Deletion.Intervention = noop for
// param-only) or shorten an age, and rapid finds a counterexample.
func TestBoundHoldsInMySetting(t *testing.T) {
	for _, st := range settings {
		t.Run(st.name, func(t *testing.T) {
			s := st.make()
			rapid.Check(t, func(rt *rapid.T) {
				c := Case{
					Inserts: rapid.IntRange(1, 300).Draw(rt, "inserts"),
					Horizon: rapid.IntRange(0, 40).Draw(rt, "horizon"),
					Seed:    rapid.Uint64().Draw(rt, "seed"),
				}
				c.Deletions = rapid.IntRange(1, min(4, c.Inserts)).Draw(rt, "deletions")
				res, err := s.Check(c)
				if err != nil {
					rt.Fatal(err)
				}
				for _, r := range res {
					if !(r.Deviation <= r.Alpha) {
						rt.Fatalf("%s: deviation %v > α = %v (%s)", r.Name, r.Deviation, r.Alpha, r.Source)
					}
				}
			})
		})
	}
}

// TestCustomLossGetsTheDiameterOnly: the toolkit derives no constants for a
// loss it does not know, so every α of the custom setting is the diameter
// bound (W' for drop-refill), and the known kinds beat it for the
// interventions without an allowance.
func TestCustomLossGetsTheDiameterOnly(t *testing.T) {
	for _, st := range settings {
		s := st.make()
		res, err := s.Check(fixedCase)
		if err != nil {
			t.Fatal(err)
		}
		if len(res) != 6 {
			t.Fatalf("%s: %d interventions checked, want 6", st.name, len(res))
		}
		diam := 2 * s.Config.RadiusBound()
		for _, r := range res {
			switch {
			case st.name == "custom" && r.Source != "diameter":
				t.Errorf("custom loss, %s: α = %v from %s, want the diameter bound", r.Name, r.Alpha, r.Source)
			case st.name == "custom" && r.Name != "drop-refill" && !(r.Alpha >= diam):
				t.Errorf("custom loss, %s: α = %v below the diameter %v", r.Name, r.Alpha, diam)
			case st.name != "custom" && (r.Name == "noop" || r.Name == "memory-reset") && !(r.Alpha < diam):
				t.Errorf("%s, %s: α = %v does not beat the diameter %v", st.name, r.Name, r.Alpha, diam)
			}
		}
	}
}

func TestRun(t *testing.T) {
	var out strings.Builder
	if err := run(io.MultiWriter(testWriter{t}, &out)); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"logistic (MySetting)", "isotropic quadratic", "custom pseudo-Huber", "(recursion)", "(diameter)", "retain-ft"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("output lacks %q:\n%s", want, out.String())
		}
	}
}

// testWriter sends the program's output to the test log.
type testWriter struct{ t *testing.T }

func (w testWriter) Write(p []byte) (int, error) { w.t.Log(string(p)); return len(p), nil }
