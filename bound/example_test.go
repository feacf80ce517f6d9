package bound_test

import (
	"fmt"

	"unlearn/bound"
)

func ExampleSeries() {
	// Lemma "One-step state-error recursion" with ρ = 0.5 from Δ_{t0} = 1
	// and perturbations η·ε = 0.1, 0, 0.
	a, err := bound.Series(nil, 0.5, 1, []float64{0.1, 0, 0})
	fmt.Printf("%.4f %v\n", a, err)
	// Output:
	// [1.0000 0.6000 0.3000 0.1500] <nil>
}

func ExampleConstant() {
	// A constant perturbation η·ε = 0.01 with ρ = 0.99 for 100 steps from
	// Δ = 0, and the t → ∞ limit 0.01/(1−0.99) = 1.
	a, _ := bound.Constant(0.99, 0, 0.01, 100)
	lim, _ := bound.Limit(0.99, 0.01)
	fmt.Printf("α_100 = %.4f, limit = %.4f\n", a, lim)
	// ρ ≥ 1 gives no bound.
	_, err := bound.Constant(1, 0, 0.01, 100)
	fmt.Println(err)
	// Output:
	// α_100 = 0.6340, limit = 1.0000
	// bound: Constant: rho = 1: the contraction factor ρ must be in [0, 1)
}

func ExampleAnalyticContraction() {
	// Isotropic losses (Hessians a·I, a ∈ [1, 4]) commute with any
	// preconditioner; the o-LBFGS memory has spectrum in [1/4, 1].
	k, err := bound.AnalyticContraction(bound.AnalyticParams{
		Mu: 1, L: 4, Eta: 0.3, HMin: 0.25, HMax: 1, Case: bound.Commuting,
	})
	fmt.Printf("ρ = %.4f (%v), err = %v\n", k.Rho, k.Provenance, err)
	// Output:
	// ρ = 0.9250 (proved), err = <nil>
}

func ExampleScenario() {
	k, _ := bound.AnalyticContraction(bound.AnalyticParams{
		Mu: 1, L: 4, Eta: 0.3, HMin: 0.25, HMax: 1, Case: bound.Commuting,
	})
	s := bound.Scenario{
		Constants:   bound.Constants{G: 2, HMin: 0.25, HMax: 1, Eta: 0.3, Tau: 10, Provenance: bound.Proved},
		Contraction: k,
		Ages:        []int{0, 3, 40}, // three deleted inserts
		Horizon:     50,
	}
	r, err := s.Bound()
	if err != nil {
		fmt.Println(err)
		return
	}
	// The proved worst-case model tends to its floor
	// η·(hMax−hMin)·G/(1−ρ) = 0.45/0.075 = 6 (hand check of α at t0:
	// 0.6 at the oldest deletion, then 36 memory steps, 0.6, two memory
	// steps, 0.6 gives 6.0299).
	fmt.Printf("α at t0: %.4f, 50 steps later: %.4f, provenance %v\n", r.Alpha[0], r.Alpha[50], r.Provenance)
	// Output:
	// α at t0: 6.0299, 50 steps later: 6.0006, provenance proved
}

func ExampleTracker() {
	k, _ := bound.AssumedContraction(0.9)
	c := bound.Constants{G: 1, HMin: 0.5, HMax: 1, Eta: 0.1, Tau: 5, Provenance: bound.Assumed}
	tr, _ := bound.NewTracker(c, k, bound.TrackerOptions{Memory: bound.MemoryDirect})
	for range 20 {
		tr.Step() // the learner processes 20 inserts
	}
	a, _ := tr.Delete(4) // the insert 4 steps ago is deleted
	fmt.Printf("after the request: %.4f\n", a)
	for range 30 {
		a, _ = tr.Step()
	}
	fmt.Printf("30 steps later: %.4f\n", a)
	// Output:
	// after the request: 0.2376
	// 30 steps later: 0.0124
}
