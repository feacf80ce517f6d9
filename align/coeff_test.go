package align

import (
	"math"
	"testing"

	"unlearn/olbfgs"
	"unlearn/stream"
)

// TestCoefficientMatchesBlock: on trajectories of both losses, E_Z from the
// coefficient space (with its fallback) agrees with the block sweep within
// the spec's tolerance 1e-9·max(1, ‖w⁻‖), D_upd and the other metrics are
// bit-identical, and MeasureAll gives the bits of Measure. The coefficient
// space must actually be used (not only the fallback).
func TestCoefficientMatchesBlock(t *testing.T) {
	for _, kind := range []string{"quadratic", "logistic"} {
		t.Run(kind, func(t *testing.T) {
			const d, tau, mq = 12, 4, 6
			var loss stream.Loss
			var events []stream.Event
			if kind == "quadratic" {
				loss, events = quadStream(t, 5, d, 120)
			} else {
				loss, events = logisticStream(t, 5, d, 120)
			}
			u := stream.NewIDSet(20, 58, 59)
			prefix, future := events[:60], events[60:]
			ref := replay(t, loss, tau, stream.Counterfactual(prefix, u))
			act := replay(t, loss, tau, prefix)
			states := []*olbfgs.Learner{act.Clone(), act.Clone(), act.Clone(), ref.Clone()}
			states[1].Memory().Reset()
			states[2].Memory().DropTouching(u)
			blk := newEngine(t, d, Options{Seed: 2, Probes: mq, MemoryError: MemoryErrorBlock})
			cof := newEngine(t, d, Options{Seed: 2, Probes: mq, MemoryError: MemoryErrorCoefficients})
			got := make([]Point, len(states))
			for k := range future {
				var next *stream.Sample
				if k+1 < len(future) {
					next = &future[k+1].Sample
				}
				blk.SetReference(ref, next)
				cof.SetReference(ref, next)
				cof.MeasureAll(got, states, 3)
				for i, st := range states {
					want := blk.Measure(st)
					one := cof.Measure(st)
					if one != got[i] {
						t.Fatalf("step %d state %d: Measure %+v, MeasureAll %+v", k, i, one, got[i])
					}
					tol := ExactTol * max(1, want.RefWNorm)
					if math.Abs(one.EZ-want.EZ) > tol {
						t.Fatalf("step %d state %d: E_Z %v (coefficients), %v (block): more than %v apart", k, i, one.EZ, want.EZ, tol)
					}
					one.EZ, one.ETheta, want.EZ, want.ETheta = 0, 0, 0, 0
					if one != want {
						t.Fatalf("step %d state %d: %+v, block %+v", k, i, one, want)
					}
				}
				for _, l := range append([]*olbfgs.Learner{ref}, states...) {
					if err := l.Step(future[k]); err != nil {
						t.Fatal(err)
					}
				}
			}
			used, fell := cof.CoefficientStats()
			t.Logf("coefficient space used %d times, fell back %d times", used, fell)
			if used == 0 {
				t.Fatal("the coefficient space was never used")
			}
		})
	}
}
