package audit

import (
	"context"
	"fmt"
	"testing"

	"unlearn/certify"
	"unlearn/unlearn"
)

// BenchmarkRun measures an audit of n = 2000 trials per world with the
// seeded sampler, in a family of artifact lengths: d = 25 (w only),
// 525 (w and a τ = 10 memory) and 2025 (d = 45 with its memory). Each
// world's artifact is fixed apart from the noise, so the cost is the
// releases plus the choice of the black-box statistic (Dim sorts of the
// selection split).
func BenchmarkRun(b *testing.B) {
	for _, dim := range []int{25, 525, 2025} {
		b.Run(fmt.Sprintf("dim=%d", dim), func(b *testing.B) {
			wA, wB := make([]float64, dim), make([]float64, dim)
			wA[0] = 1
			cfg := Config{A: Gaussian(wA, nil, 3.73), B: Gaussian(wB, nil, 3.73),
				Epsilon: 1, Delta: 1e-5, Trials: 2000, Seeded: true, Seed: 1}
			b.ReportAllocs()
			for b.Loop() {
				if _, err := Run(context.Background(), cfg); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkCostD25 times TestCostD25's audit — the default audit (10⁴
// trials per world) of a d = 25 configuration through Certified, as
// `unlearn audit` runs it — with each sampler. Run it with -benchtime=1x.
func BenchmarkCostD25(b *testing.B) {
	p := newPipeline(b, 1, 500, 5)
	a, w, dist := p.worlds(b, unlearn.MemoryReset())
	spec := certify.Spec{Epsilon: 1, Delta: 1e-5, Memory: certify.Reset, Alpha: &certify.Given{Alpha: dist, Method: "the true distance"}}
	for _, seeded := range []bool{true, false} {
		name := "secure"
		if seeded {
			name = "seeded"
		}
		b.Run(name, func(b *testing.B) {
			cfg := Config{A: Certified(a, spec), B: Certified(w, spec),
				Epsilon: 1, Delta: 1e-5, Seeded: seeded, Seed: 1, WDim: a.Config().Dim}
			b.ReportAllocs()
			for b.Loop() {
				if _, err := Run(context.Background(), cfg); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
