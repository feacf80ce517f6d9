package align_test

import (
	"fmt"
	"math"

	"unlearn/align"
	"unlearn/olbfgs"
	"unlearn/stream"
)

// Experiment 1 in miniature: after deleting the two most recent of 40
// samples, the actual learner (no intervention) and the counterfactual one
// are propagated on the same 30 future events and compared at every step.
func ExampleEngine_Track() {
	h0 := [][]float64{{2, 0.3, 0}, {0.3, 1, 0}, {0, 0, 0.5}}
	h1 := [][]float64{{1, 0, 0}, {0, 3, 0.2}, {0, 0.2, 1}}
	loss, err := stream.NewQuadratic(h0, h1)
	if err != nil {
		panic(err)
	}
	var events []stream.Event
	for t := 1; t <= 70; t++ {
		a := []float64{math.Sin(float64(t) / 7), math.Cos(float64(t) / 5), 1}
		events = append(events, stream.InsertEvent(int64(t), a, float64(t%4)/4))
	}
	prefix, future := events[:40], events[40:]
	u := stream.NewIDSet(39, 40)

	cfg := olbfgs.DefaultConfig(3)
	cfg.Memory = 5
	actual, err := olbfgs.Replay(cfg, loss, prefix)
	if err != nil {
		panic(err)
	}
	actual.MarkDeleted(u.Sorted()...)
	counterfactual, err := olbfgs.Replay(cfg, loss, stream.Counterfactual(prefix, u))
	if err != nil {
		panic(err)
	}

	e, err := align.NewEngine(3, align.Options{Seed: 1})
	if err != nil {
		panic(err)
	}
	e.SetDeletion(u)
	series, err := e.Track(counterfactual, []*olbfgs.Learner{actual}, future, len(future))
	if err != nil {
		panic(err)
	}
	s := series[0]
	sum := s.Summarize(cfg.Memory)
	fmt.Printf("k=0: E_w %.3e, E_Z %.3e, M_direct %d\n", s.Ew[0], s.EZ[0], s.Mdirect[0])
	fmt.Printf("direct clearance at k=%d (τ = %d)\n", sum.ClearanceStep, cfg.Memory)
	fmt.Printf("state AUC %.3e, exact recovery %v\n", sum.StateAUC, sum.ExactRecovery)
	fmt.Printf("ρ̂ in P3 = [%d, %d]: %.3f\n", sum.Decay[2].From, sum.Decay[2].To, sum.Decay[2].Rho)
	// Output:
	// k=0: E_w 7.076e-02, E_Z 4.034e-01, M_direct 2
	// direct clearance at k=5 (τ = 5)
	// state AUC 2.393e+00, exact recovery false
	// ρ̂ in P3 = [10, 30]: 0.890
}

// The decay fit recovers the rate of a geometric series and skips zeros.
func ExampleFitDecay() {
	series := []float64{8, 4, 0, 1, 0.5, 0.25}
	f := align.FitDecay(series, 0, 5)
	fmt.Printf("points %d, ρ̂ = %.4f, C = %.4f\n", f.Points, f.Rho, math.Exp(f.LogC))
	// Output:
	// points 5, ρ̂ = 0.5000, C = 8.0000
}
