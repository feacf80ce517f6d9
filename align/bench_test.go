package align

import (
	"fmt"
	"testing"

	"unlearn/olbfgs"
	"unlearn/stream"
)

// Benchmarks at the paper's sizes (Table 1): d = 25, m_q = 32 probes,
// τ ∈ {5, 10, 20} (the grid of spec §6), on a fixed-seed quadratic stream.

var benchTaus = []int{5, 10, 20}

// benchPair returns a reference (counterfactual) and a no-op state at
// t_del = 500 with five recent deletions, and the next insert.
func benchPair(b *testing.B, tau int) (ref, act *olbfgs.Learner, next stream.Sample, u stream.IDSet) {
	b.Helper()
	loss, events := quadStream(b, 1, 25, 501)
	u = stream.NewIDSet(496, 497, 498, 499, 500)
	prefix := events[:500]
	ref = replay(b, loss, tau, stream.Counterfactual(prefix, u))
	act = replay(b, loss, tau, prefix)
	return ref, act, events[500].Sample, u
}

// BenchmarkMeasure is the per-step cost of all metrics of one state against
// a reference whose probe block is already computed (E_w, E_Z over 32
// probes, E_Θ, D_upd, M_direct).
func BenchmarkMeasure(b *testing.B) {
	for _, tau := range benchTaus {
		b.Run(fmt.Sprintf("d=25/tau=%d/mq=32", tau), func(b *testing.B) {
			ref, act, next, u := benchPair(b, tau)
			e := newEngine(b, 25, Options{Seed: 1})
			e.SetDeletion(u)
			e.SetReference(ref, &next)
			b.ReportAllocs()
			for b.Loop() {
				e.Measure(act)
			}
		})
	}
}

// BenchmarkSetReference is the reference's share of a step: its probe
// block and update direction, computed once for all states.
func BenchmarkSetReference(b *testing.B) {
	for _, tau := range benchTaus {
		b.Run(fmt.Sprintf("d=25/tau=%d/mq=32", tau), func(b *testing.B) {
			ref, _, next, _ := benchPair(b, tau)
			e := newEngine(b, 25, Options{Seed: 1})
			b.ReportAllocs()
			for b.Loop() {
				e.SetReference(ref, &next)
			}
		})
	}
}

// BenchmarkMeasureDirect is BenchmarkMeasure with the probes applied
// directly (Options.DirectProbes) instead of through the d×d factor.
func BenchmarkMeasureDirect(b *testing.B) {
	ref, act, next, u := benchPair(b, 10)
	e := newEngine(b, 25, Options{Seed: 1, DirectProbes: true})
	e.SetDeletion(u)
	e.SetReference(ref, &next)
	b.ReportAllocs()
	for b.Loop() {
		e.Measure(act)
	}
}

// BenchmarkTrack runs one configuration of Experiment 2 at the paper's
// size on the metric side: a reference and nine states (two identical to
// it, like oracle and an exact window replay) propagated over H = 4500 future
// events with every metric at every step. Stepping the ten learners is
// included; the interventions themselves are not.
func BenchmarkTrack(b *testing.B) {
	for _, kind := range []string{"quadratic", "logistic"} {
		for _, tau := range benchTaus {
			b.Run(fmt.Sprintf("%s/d=25/tau=%d/H=4500", kind, tau), func(b *testing.B) {
				var loss stream.Loss
				var events []stream.Event
				if kind == "quadratic" {
					loss, events = quadStream(b, 2, 25, 5000)
				} else {
					loss, events = logisticStream(b, 2, 25, 5000)
				}
				u := stream.NewIDSet(100, 250, 498, 499, 500)
				prefix, future := events[:500], events[500:]
				ref0 := replay(b, loss, tau, stream.Counterfactual(prefix, u))
				act0 := replay(b, loss, tau, prefix)
				act0.MarkDeleted(u.Sorted()...)
				e := newEngine(b, 25, Options{Seed: 1})
				e.SetDeletion(u)
				for b.Loop() {
					ref := ref0.Clone()
					states := make([]*olbfgs.Learner, 9)
					for i := range states {
						states[i] = act0.Clone()
					}
					states[0], states[8] = ref0.Clone(), ref0.Clone()
					states[2].Memory().DropTouching(u)
					states[3].Memory().Reset()
					states[4].Reset()
					w := append([]float64(nil), act0.W()...)
					w[0] += 0.1
					states[5].SetW(w)
					if _, err := e.Track(ref, states, future, len(future)); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}

// BenchmarkTrackHighDim times a whole propagation at high d, as unlearn run
// does it: SetReference and MeasureAll (2 workers) of 4 intervened states
// at each of 10 steps, d from 256 to 20000, τ = 10, m_q = 32, on a fixed-seed logistic stream,
// with E_Z by the block sweep or in the pairs' coefficient space.
//
//	go test ./align -run '^$' -bench TrackHighDim -benchtime 2x
func BenchmarkTrackHighDim(b *testing.B) {
	for _, d := range []int{256, 1024, 4096, 20000} {
		benchTrackHighDim(b, d)
	}
}

func benchTrackHighDim(b *testing.B, d int) {
	const tau, steps = 10, 10
	loss, events := logisticStream(b, 4, d, 80)
	u := stream.NewIDSet(55, 58, 59)
	prefix, future := events[:60], events[60:60+steps+1]
	for _, method := range []struct {
		name string
		m    MemoryErrorMethod
	}{{"block", MemoryErrorBlock}, {"coefficients", MemoryErrorCoefficients}} {
		b.Run(fmt.Sprintf("d=%d/tau=%d/mq=32/%s", d, tau, method.name), func(b *testing.B) {
			ref0 := replay(b, loss, tau, stream.Counterfactual(prefix, u))
			act := replay(b, loss, tau, prefix)
			b.ReportAllocs()
			for b.Loop() {
				b.StopTimer()
				ref := ref0.Clone()
				states := []*olbfgs.Learner{act.Clone(), act.Clone(), act.Clone(), act.Clone()}
				states[1].Memory().Reset()
				states[2].Memory().DropTouching(u)
				states[3].SetW(ref.W())
				e := newEngine(b, d, Options{Seed: 1, MemoryError: method.m})
				e.SetDeletion(u)
				pts := make([]Point, len(states))
				b.StartTimer()
				for k := range steps {
					e.SetReference(ref, &future[k+1].Sample)
					e.MeasureAll(pts, states, 2)
					for _, l := range append([]*olbfgs.Learner{ref}, states...) {
						if err := l.Step(future[k]); err != nil {
							b.Fatal(err)
						}
					}
				}
			}
		})
	}
}

// BenchmarkCoefficientStep times one step in the steady state of a long
// run with the coefficient space — SetReference, MeasureAll of 4
// intervened states on 1 or 2 workers, stepping the 5 learners — after 30
// warm-up steps, at d = 4096, τ = 10, m_q = 32 (logistic; the future events
// are cycled). Its allocs/op is what a step allocates once the engine has
// held as many pairs as it holds at once (TestCoefficientStepAllocs).
//
//	go test ./align -run '^$' -bench CoefficientStep -benchmem -benchtime 50x
func BenchmarkCoefficientStep(b *testing.B) {
	for _, workers := range []int{1, 2} {
		b.Run(fmt.Sprintf("d=4096/tau=10/mq=32/workers=%d", workers), func(b *testing.B) {
			step := coefficientStepper(b, 4096, workers)
			for range 30 {
				step()
			}
			b.ReportAllocs()
			for b.Loop() {
				step()
			}
		})
	}
}

// coefficientStepper returns a function that runs the next step of a
// tracking loop with the coefficient space (see BenchmarkCoefficientStep).
func coefficientStepper(tb testing.TB, d, workers int) func() {
	const tau = 10
	loss, events := logisticStream(tb, 4, d, 100)
	u := stream.NewIDSet(55, 58, 59)
	prefix, future := events[:60], events[60:]
	ref := replay(tb, loss, tau, stream.Counterfactual(prefix, u))
	act := replay(tb, loss, tau, prefix)
	states := []*olbfgs.Learner{act.Clone(), act.Clone(), act.Clone(), act.Clone()}
	states[1].Memory().Reset()
	states[2].Memory().DropTouching(u)
	states[3].SetW(ref.W())
	e := newEngine(tb, d, Options{Seed: 1, MemoryError: MemoryErrorCoefficients})
	e.SetDeletion(u)
	pts := make([]Point, len(states))
	all := append([]*olbfgs.Learner{ref}, states...)
	k := 0
	return func() {
		ev := future[k%len(future)]
		e.SetReference(ref, &ev.Sample)
		e.MeasureAll(pts, states, workers)
		for _, l := range all {
			if err := l.Step(ev); err != nil {
				tb.Fatal(err)
			}
		}
		k++
	}
}
