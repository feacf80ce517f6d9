package noise

import (
	"fmt"
	"runtime"
	"testing"

	dpnoise "github.com/google/differential-privacy/go/v3/noise"
)

// Sink variables keep the compiler from discarding benchmarked results.
var (
	sinkFloat float64
	sinkErr   error
)

func BenchmarkSigmaAnalytic(b *testing.B) {
	for _, tc := range []struct {
		name           string
		epsilon, delta float64
	}{
		{"eps=1,delta=1e-5", 1, 1e-5},
		{"eps=0.1,delta=1e-10", 0.1, 1e-10},
		{"eps=10,delta=1e-5", 10, 1e-5},
	} {
		b.Run(tc.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				sinkFloat, sinkErr = SigmaAnalytic(1, tc.epsilon, tc.delta)
			}
		})
	}
}

func BenchmarkSigmaClassic(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		sinkFloat, sinkErr = SigmaClassic(1, 0.5, 1e-5)
	}
}

// benchSampler adds noise at σ = 1 to a vector of each size; ns/op is per
// vector. The x values are fixed (no seed is needed for the secure sampler,
// and the seeded one is seeded with 1).
func benchSampler(b *testing.B, s Sampler, sizes []int) {
	for _, d := range sizes {
		b.Run(fmt.Sprintf("d=%d", d), func(b *testing.B) {
			x := make([]float64, d)
			for i := range x {
				x[i] = float64(i%13) * 0.1
			}
			dst := make([]float64, d)
			b.ReportAllocs()
			b.SetBytes(int64(8 * d))
			for b.Loop() {
				sinkFloat, sinkErr = s.AddNoise(dst, x, 1)
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(d), "ns/coord")
		})
	}
}

// BenchmarkSecureAddNoise uses the default (one worker, see SecureSampler).
func BenchmarkSecureAddNoise(b *testing.B) {
	benchSampler(b, NewSecureSampler(SamplerOptions{}), []int{1_000, 1_000_000})
}

// BenchmarkSecureAddNoiseAllCores shows the DP library's lock contention:
// GOMAXPROCS workers are slower than one.
func BenchmarkSecureAddNoiseAllCores(b *testing.B) {
	benchSampler(b, NewSecureSampler(SamplerOptions{Workers: runtime.GOMAXPROCS(0)}), []int{1_000_000})
}

func BenchmarkSeededAddNoise(b *testing.B) {
	benchSampler(b, NewSeededSampler(1, SamplerOptions{}), []int{1_000, 1_000_000})
}

func BenchmarkSeededAddNoiseOneWorker(b *testing.B) {
	benchSampler(b, NewSeededSampler(1, SamplerOptions{Workers: 1}), []int{1_000, 1_000_000})
}

// BenchmarkLibraryAddNoiseFloat64 is the reference: the DP library's own
// cost for one secure sample through its public API (σ recomputed by
// bisection on every call), at the ε = 1, δ = 1e-5 of Balle & Wang's example
// and at this package's handle.
func BenchmarkLibraryAddNoiseFloat64(b *testing.B) {
	for _, tc := range []struct {
		name           string
		epsilon, delta float64
	}{
		{"eps=1,delta=1e-5", 1, 1e-5},
		{"handle", secureEpsilon, secureDelta},
	} {
		b.Run(tc.name, func(b *testing.B) {
			g := dpnoise.Gaussian()
			b.ReportAllocs()
			for b.Loop() {
				sinkFloat, sinkErr = g.AddNoiseFloat64(0.5, 1, 1, tc.epsilon, tc.delta)
			}
		})
	}
}

// BenchmarkLibrarySigmaForGaussian is the part of the library's per-sample
// cost spent recomputing σ.
func BenchmarkLibrarySigmaForGaussian(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		sinkFloat = dpnoise.SigmaForGaussian(1, 1, secureEpsilon, secureDelta)
	}
}
