package main

import "testing"

// The paper's Assumption "Contractive update map" fails in its own state
// metric even on isotropic quadratics: one step on the same sample expands
// the distance of most state pairs that differ in memory, by orders of magnitude, and of
// some independent ones (docs/theory.md §15.8 reports the table).
func TestOneStepExpands(t *testing.T) {
	for _, tau := range []int{2, 5} {
		r, err := Measure(3, tau, 400, 1, "memory")
		if err != nil {
			t.Fatal(err)
		}
		if r.Expanding <= 0.5 || r.Max <= 5 {
			t.Errorf("memory-only, τ = %d: %.0f%% of pairs expand, max ratio %.3g; docs/theory.md §15.8 reports most expanding, several-fold at least", tau, 100*r.Expanding, r.Max)
		}
		r, err = Measure(3, tau, 400, 1, "independent")
		if err != nil {
			t.Fatal(err)
		}
		if r.Expanding == 0 || r.Max <= 1 {
			t.Errorf("independent, τ = %d: no pair expands; docs/theory.md §15.8 reports some", tau)
		}
	}
}
