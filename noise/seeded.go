package noise

import (
	"fmt"
	"math"
	"math/rand/v2"
	"runtime"
	"sync/atomic"
)

// SeededSampler is an INSECURE, reproducible sampler for experiments and
// tests only. Its noise comes from math/rand/v2 (PCG and the ziggurat
// NormFloat64), which anyone who knows the seed can regenerate, and which is
// not protected against floating-point attacks. Never use it for a deployed
// release; a certificate records its name, [NameSeeded].
//
// # Determinism
//
// The output depends only on the seed, the number of earlier AddNoise calls
// on the sampler (the release counter r = 0, 1, …), σ and x — not on the
// number of workers or cores. Coordinates are split into fixed chunks of
// 4096; chunk c of release r draws from its own PCG stream seeded with
//
//	hi = mix(seed ⊕ mix(r)),  lo = mix(hi ⊕ mix(c + 0x632be59bd9b4e019)),
//
// where mix is the SplitMix64 finalizer (Steele, Lea & Flood, OOPSLA 2014),
// and coordinate i of the chunk gets σ·NormFloat64() in order. Concurrent
// calls on one sampler each get a distinct release number, in the order
// they start.
type SeededSampler struct {
	seed     uint64
	opts     SamplerOptions
	releases atomic.Uint64
}

// NewSeededSampler returns an insecure sampler seeded with seed, for
// experiments and tests only (see [SeededSampler]).
func NewSeededSampler(seed uint64, opts SamplerOptions) *SeededSampler {
	return &SeededSampler{seed: seed, opts: opts}
}

// Name returns [NameSeeded].
func (*SeededSampler) Name() string { return NameSeeded }

// Releases returns the number of AddNoise calls made so far (the next
// release number).
func (s *SeededSampler) Releases() uint64 { return s.releases.Load() }

// mix is the SplitMix64 output function.
func mix(z uint64) uint64 {
	z += 0x9e3779b97f4a7c15
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9
	z = (z ^ (z >> 27)) * 0x94d049bb133111eb
	return z ^ (z >> 31)
}

// AddNoise implements [Sampler]; it applies σ exactly. An overflowing
// noised value gives ErrRange.
func (s *SeededSampler) AddNoise(dst, x []float64, sigma float64) (float64, error) {
	const fn = "SeededSampler.AddNoise"
	if err := checkNoiseArgs(fn, dst, x, sigma); err != nil {
		return 0, err
	}
	r := s.releases.Add(1) - 1
	if sigma == 0 {
		copy(dst, x)
		return 0, nil
	}
	hi := mix(s.seed ^ mix(r))
	err := forChunks(len(x), s.opts.workers(runtime.GOMAXPROCS(0)), func(c, lo, end int) error {
		rng := rand.New(rand.NewPCG(hi, mix(hi^mix(uint64(c)+0x632be59bd9b4e019))))
		for i := lo; i < end; i++ {
			v := x[i] + sigma*rng.NormFloat64()
			if math.IsInf(v, 0) {
				return argErr(fn, fmt.Sprintf("dst[%d]", i), v, ErrRange)
			}
			dst[i] = v
		}
		return nil
	})
	if err != nil {
		return 0, err
	}
	return sigma, nil
}
