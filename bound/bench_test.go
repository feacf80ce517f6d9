package bound

import (
	"fmt"
	"testing"
)

// Sink variables keep the compiler from discarding benchmarked results.
var (
	sinkFloat  float64
	sinkResult Result
	sinkErr    error
)

func BenchmarkSeries(b *testing.B) {
	for _, n := range []int{1_000, 1_000_000} {
		b.Run(fmt.Sprintf("n=%d", n), func(b *testing.B) {
			etaEps := make([]float64, n)
			for i := range etaEps {
				etaEps[i] = 1e-3 * float64(i%7)
			}
			dst := make([]float64, n+1)
			b.ReportAllocs()
			for b.Loop() {
				_, sinkErr = Series(dst, 0.99, 1, etaEps)
			}
		})
	}
}

func BenchmarkConstant(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		sinkFloat, sinkErr = Constant(0.999, 1, 1e-3, 123456)
	}
}

// BenchmarkScenarioBound: cost independent of the ages (closed form on
// runs), linear in the horizon.
func BenchmarkScenarioBound(b *testing.B) {
	for _, tc := range []struct {
		deletions, horizon int
	}{{5, 0}, {5, 4500}, {1000, 0}} {
		b.Run(fmt.Sprintf("deletions=%d,horizon=%d", tc.deletions, tc.horizon), func(b *testing.B) {
			ages := make([]int, tc.deletions)
			for i := range ages {
				ages[i] = 7 + 1000*i // old deletions: the fold's cost does not grow with age
			}
			s := Scenario{Constants: testConstants, Contraction: Contraction{Rho: 0.95, Provenance: Assumed},
				Memory: MemoryDirect, Ages: ages, Horizon: tc.horizon}
			b.ReportAllocs()
			for b.Loop() {
				sinkResult, sinkErr = s.Bound()
			}
		})
	}
}

func BenchmarkTrackerStep(b *testing.B) {
	tr, err := NewTracker(testConstants, Contraction{Rho: 0.95, Provenance: Assumed}, TrackerOptions{Memory: MemoryDirect})
	if err != nil {
		b.Fatal(err)
	}
	for range 100 {
		tr.Step()
	}
	for _, a := range []int{3, 50, 90} {
		if _, err := tr.Delete(a); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportAllocs()
	for b.Loop() {
		sinkFloat, sinkErr = tr.Step()
	}
}

var sinkDeviation Deviation

// BenchmarkDynamicsBound: the scheduled recursion is linear in the steps
// after the first deleted insert; the memory-free learner (commuting
// contraction) is the cheap path, a guarded memory with non-commuting
// Hessians evaluates the general and near-isotropic bounds at each step.
func BenchmarkDynamicsBound(b *testing.B) {
	for _, memory := range []bool{false, true} {
		for _, steps := range []int{10_000, 1_000_000} {
			b.Run(fmt.Sprintf("memory=%v,steps=%d", memory, steps), func(b *testing.B) {
				d := Dynamics{Schedule: Schedule{Eta0: 1, Decay: 0.05}, HMin: 1, HMax: 1, Mu: 0.05, L: 0.3, G: 1.5,
					Radius: 10, RoundOff: 1e-9, Average: Averaging{From: 1, Power: 2}, Provenance: Proved}
				if memory {
					d.HMin, d.HMax = 0.95, 1.05
				}
				s := Stream{Steps: steps, Deleted: []int{1, steps / 2, steps}, Interventions: []Intervention{{After: steps / 2, Move: 0.01}}}
				b.ReportAllocs()
				for b.Loop() {
					sinkDeviation, sinkErr = d.Bound(s)
				}
			})
		}
	}
}
