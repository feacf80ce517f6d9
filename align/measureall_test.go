package align

import (
	"fmt"
	"testing"

	"unlearn/olbfgs"
	"unlearn/stream"
)

// TestMeasureAllMatchesMeasure: measuring the states on several goroutines
// gives, state by state and step by step, exactly the points of Measure —
// on both losses, with the probes themselves (m_q < d) and with their
// Cholesky factor (m_q > d), for states that differ in w and Z, in w only,
// in nothing (identical), and after memory edits.
func TestMeasureAllMatchesMeasure(t *testing.T) {
	for _, kind := range []string{"quadratic", "logistic"} {
		for _, mq := range []int{4, 20} {
			t.Run(fmt.Sprintf("%s/mq=%d", kind, mq), func(t *testing.T) {
				const d, tau = 9, 4
				var loss stream.Loss
				var events []stream.Event
				if kind == "quadratic" {
					loss, events = quadStream(t, 3, d, 90)
				} else {
					loss, events = logisticStream(t, 3, d, 90)
				}
				u := stream.NewIDSet(20, 58, 59)
				prefix, future := events[:60], events[60:]
				ref := replay(t, loss, tau, stream.Counterfactual(prefix, u))
				act := replay(t, loss, tau, prefix)
				act.MarkDeleted(u.Sorted()...)
				states := []*olbfgs.Learner{act.Clone(), act.Clone(), act.Clone(), ref.Clone(), ref.Clone(), act.Clone()}
				states[1].Memory().Reset()
				states[2].Memory().DropTouching(u)
				w := append([]float64(nil), ref.W()...)
				w[0] += 1e-3
				states[4].SetW(w) // the reference's memory, another w
				states[5].Reset()

				e := newEngine(t, d, Options{Seed: 2, Probes: mq})
				e.SetDeletion(u)
				got := make([]Point, len(states))
				for k := 0; k < len(future); k++ {
					var next *stream.Sample
					if k+1 < len(future) {
						next = &future[k+1].Sample
					}
					e.SetReference(ref, next)
					want := make([]Point, len(states))
					for i, st := range states {
						want[i] = e.Measure(st)
					}
					for _, workers := range []int{1, 2, 3, 16} {
						clear(got)
						e.MeasureAll(got, states, workers)
						for i := range states {
							if got[i] != want[i] {
								t.Fatalf("step %d, state %d, %d workers: MeasureAll %+v, Measure %+v", k, i, workers, got[i], want[i])
							}
						}
					}
					// At k = 0 state 4 has the reference's memory (the
					// E_Z = 0 path); it gets a pair of its own at the next step.
					if !want[3].Identical || want[0].EZ == 0 || k == 0 && (want[4].EZ != 0 || want[4].Ew == 0) {
						t.Fatalf("step %d: test setup: the states do not cover the paths: %+v", k, want)
					}
					for _, l := range append([]*olbfgs.Learner{ref}, states...) {
						if err := l.Step(future[k]); err != nil {
							t.Fatal(err)
						}
					}
				}
			})
		}
	}
}
