package certify

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"unlearn/noise"
	"unlearn/olbfgs"
	"unlearn/stream"
)

// benchState returns a certifiable ridge-logistic learner of dimension d
// (radius 10, sample bound 1) with τ = 2 and two curvature pairs, after
// inserts of fixed-seed features: the kind of state a release noises.
func benchState(b *testing.B, d int) *olbfgs.Learner {
	b.Helper()
	loss, err := stream.NewLogistic(d, 0.05)
	if err != nil {
		b.Fatal(err)
	}
	cfg := olbfgs.DefaultConfig(d)
	cfg.Memory, cfg.Radius, cfg.SampleBound = 2, 10, 1
	l, err := olbfgs.New(cfg, loss)
	if err != nil {
		b.Fatal(err)
	}
	r := rand.New(rand.NewPCG(1, 1))
	for id := range int64(3) {
		x := make([]float64, d)
		for i := range x {
			x[i] = r.NormFloat64() / float64(d)
		}
		if err := l.Step(stream.InsertEvent(id+1, x, 1)); err != nil {
			b.Fatal(err)
		}
	}
	return l
}

// BenchmarkCertify times Certify with a given α = 0.1 at (ε, δ) = (1,
// 10⁻⁵), memory reset — the Gaussian noise on w, the release and its
// certificate — for each sampler and size; ns/coord is per coordinate of
// w. The secure sampler (deployments) costs what the DP library's sampler
// costs (noise's BenchmarkSecureAddNoise); the seeded one (experiments)
// leaves the snapshots and hashes.
func BenchmarkCertify(b *testing.B) {
	samplers := []struct {
		name string
		make func() noise.Sampler
	}{
		{"secure", func() noise.Sampler { return noise.NewSecureSampler(noise.SamplerOptions{}) }},
		{"seeded", func() noise.Sampler { return noise.NewSeededSampler(1, noise.SamplerOptions{}) }},
	}
	for _, s := range samplers {
		for _, d := range []int{1_000, 100_000, 1_000_000} {
			b.Run(fmt.Sprintf("%s/d=%d", s.name, d), func(b *testing.B) {
				l := benchState(b, d)
				spec := Spec{Epsilon: 1, Delta: 1e-5, Alpha: &Given{Alpha: 0.1}, Sampler: s.make()}
				b.ReportAllocs()
				for b.Loop() {
					if _, _, err := Certify(l, spec); err != nil {
						b.Fatal(err)
					}
				}
				b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(d), "ns/coord")
			})
		}
	}
}
