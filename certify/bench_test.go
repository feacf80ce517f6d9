package certify

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"unlearn/bound"
	"unlearn/noise"
	"unlearn/olbfgs"
	"unlearn/stream"
)

var (
	sinkLearner *olbfgs.Learner
	sinkCert    *Certificate
)

// benchState returns a ridge-logistic learner of dimension d with τ = 2
// and two curvature pairs (two inserts of fixed-seed features), the kind
// of state Certify releases.
func benchState(b *testing.B, d int) *olbfgs.Learner {
	b.Helper()
	loss, err := stream.NewLogistic(d, 0.05)
	if err != nil {
		b.Fatal(err)
	}
	cfg := olbfgs.DefaultConfig(d)
	cfg.Memory = 2
	l, err := olbfgs.New(cfg, loss)
	if err != nil {
		b.Fatal(err)
	}
	r := rand.New(rand.NewPCG(1, 1))
	for id := range int64(2) {
		x := make([]float64, d)
		for i := range x {
			x[i] = r.NormFloat64() / float64(d)
		}
		if err := l.Step(stream.InsertEvent(id+1, x, 1)); err != nil {
			b.Fatal(err)
		}
	}
	l.MarkDeleted(1)
	return l
}

// benchCertify times Certify (given α = 0.1 at (1, 1e-5), memory reset)
// for each size: noise on w, two canonical snapshots and their SHA-256,
// the certificate. ns/coord is per coordinate of w.
func benchCertify(b *testing.B, sampler func() noise.Sampler, sizes []int) {
	for _, d := range sizes {
		b.Run(fmt.Sprintf("d=%d", d), func(b *testing.B) {
			l := benchState(b, d)
			spec := Spec{Epsilon: 1, Delta: 1e-5, Alpha: &Given{Alpha: 0.1, Provenance: bound.Assumed}, Sampler: sampler()}
			b.ReportAllocs()
			for b.Loop() {
				var err error
				sinkLearner, sinkCert, err = Certify(l, spec)
				if err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(d), "ns/coord")
		})
	}
}

// BenchmarkCertifySecure: the deployment path. The DP library serializes
// its randomness behind one global lock, so the secure sampler runs on one
// core (noise.SecureSampler); expect ≈7 µs per coordinate, the library's
// own per-sample cost (noise's BenchmarkLibraryAddNoiseFloat64).
func BenchmarkCertifySecure(b *testing.B) {
	benchCertify(b, func() noise.Sampler { return noise.NewSecureSampler(noise.SamplerOptions{}) }, []int{1_000, 1_000_000})
}

// BenchmarkCertifySeeded: the experiment path (all cores); what remains is
// mostly the two snapshots (JSON of w and Z) and their hashes.
func BenchmarkCertifySeeded(b *testing.B) {
	benchCertify(b, func() noise.Sampler { return noise.NewSeededSampler(1, noise.SamplerOptions{}) }, []int{1_000, 1_000_000})
}

// BenchmarkVerify times Verify of a d = 10⁶ release from its snapshots
// (parse both, re-marshal and hash them, recompute α and σ, χ² test).
func BenchmarkVerify(b *testing.B) {
	l := benchState(b, 1_000_000)
	out, c, err := Certify(l, Spec{Epsilon: 1, Delta: 1e-5, Alpha: &Given{Alpha: 0.1, Provenance: bound.Assumed},
		Sampler: noise.NewSeededSampler(1, noise.SamplerOptions{})})
	if err != nil {
		b.Fatal(err)
	}
	h, err := HeaderOf(l.Loss())
	if err != nil {
		b.Fatal(err)
	}
	before, err := olbfgs.MarshalSnapshot(l, h)
	if err != nil {
		b.Fatal(err)
	}
	after, err := olbfgs.MarshalSnapshot(out, h)
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Verify(c, before, after); err != nil {
			b.Fatal(err)
		}
	}
}
