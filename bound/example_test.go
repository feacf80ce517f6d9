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
	// bound: rho = 1: the contraction factor ρ must be in [0, 1)
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

func ExampleDynamics_Bound() {
	// A certifiable practitioner learner: no curvature memory (H = I), the
	// schedule η(t) = 1/(1 + 0.05·t), ridge-logistic constants for
	// payloads of norm ≤ 1 and λ = 0.05 (μ = λ, L = λ + 1/4, G = 1 + λ·W),
	// radius W = 10.
	d := bound.Dynamics{
		Schedule: bound.Schedule{Eta0: 1, Decay: 0.05},
		HMin:     1, HMax: 1,
		Mu: 0.05, L: 0.3, G: 1.5, Radius: 10,
		Provenance: bound.Proved,
	}
	// One insert deleted at step 1000, served by a no-op intervention; the
	// release comes after T steps. α shrinks with T, far below the
	// diameter 2W = 20: the last iterate's like log(T/p)/T, a
	// polynomial-decay average (κ = 2) in the same order, a uniform
	// (Polyak–Ruppert) average a log factor higher.
	uniform, poly := d, d
	uniform.Average = bound.Averaging{From: 1}
	poly.Average = bound.Averaging{From: 1, Power: 2}
	for _, T := range []int{1000, 10000, 100000} {
		s := bound.Stream{Steps: T, Deleted: []int{1000}}
		last, _ := d.Bound(s)
		u, _ := uniform.Bound(s)
		p, _ := poly.Bound(s)
		fmt.Printf("T = %6d: last %.2e, uniform average %.2e, κ = 2 average %.2e\n", T, last.Alpha, u.Alpha, p.Alpha)
	}
	// Output:
	// T =   1000: last 2.94e-02, uniform average 2.00e-02, κ = 2 average 5.99e-02
	// T =  10000: last 9.84e-03, uniform average 1.67e-02, κ = 2 average 1.55e-02
	// T = 100000: last 1.68e-03, uniform average 4.73e-03, κ = 2 average 2.59e-03
}
