package noise

import (
	"fmt"
	"math"
	"sync"

	dpnoise "github.com/google/differential-privacy/go/v3/noise"
)

// SecureSampler draws its noise from the Google differential-privacy
// library's Gaussian mechanism, which is robust to floating-point attacks
// (Mironov, "On Significance of the Least Significant Bits for Differential
// Privacy", CCS 2012): it rounds x to a power-of-two grid of spacing
// g ≤ σ·2⁻⁵⁶ and adds g times a symmetric binomial sample of standard
// deviation σ/g, drawn with Bringmann et al.'s rejection sampler from
// crypto/rand (see the library's Secure_Noise_Generation.pdf). It cannot be
// seeded. Use it for every release that is deployed.
//
// # How σ reaches the library
//
// The library exposes this sampler only as
// noise.Gaussian().AddNoiseFloat64(x, l0, lInf, ε, δ), which recomputes
// σ = SigmaForGaussian(l0, lInf, ε, δ) by bisection on every call. Its noise
// depends on (l0, lInf, ε, δ) only through that σ, so the parameters serve
// as a handle for σ: we fix l0 = 1, ε₀ = 0.5, δ₀ = 0.1 and choose lInf once
// per call of AddNoise so that the library's σ is the smallest value ≥ the
// requested one that the handle can express. AddNoise returns that σ; it
// exceeds the request by a relative 10⁻¹⁵ at most (a few ulps). The privacy
// guarantee is computed by us from that σ, not from (ε₀, δ₀).
//
// Why this handle: the library's bisection for σ/lInf visits only points of
// the grid 2⁻¹⁰·Z in [1, 2] and stops on the cell that holds the exact
// ratio, here 1.5562879 (mpmath), which lies 0.36 of a cell (2.3·10⁻⁴
// relative) from the nearest grid point. Floating-point round-off (≈10⁻¹⁵)
// can therefore never flip one of its decisions, so the library's σ is
// lInf·1594/1024 up to a few ulps for every lInf, and a tiny upward step of
// lInf reaches any target. (A handle whose exact ratio falls on a grid point
// is unusable: ε = ln 3, δ = 0.10985556344445052, exact ratio 1 − 10⁻¹⁶,
// makes the library's σ jump by 0.1% between neighbouring lInf.) It is
// also cheap for the bisection: ≈0.39 µs against ≈1.2 µs at ε = 1,
// δ = 10⁻⁵. The library's bisection is exactly equivariant under
// power-of-two scaling of lInf, which lets us compute the handle at a
// mantissa in [1, 2) and scale it exactly.
//
// # Cost and parallelism
//
// About 6.5–7 µs and 66 allocations per coordinate on one 2.8 GHz Xeon
// core, almost all of it in the library: its rejection sampler evaluates
// exp, log and pow several times per sample, and the σ recomputation is
// ≈0.4 µs of it. A d = 10⁶ vector takes ≈6.7 s.
//
// The library draws every random byte through one global mutex
// (rand.readRandBuf and rand.Boolean), several times per sample, so
// goroutines do not run in parallel: they contend. Measured at
// d = 2·10⁵ on an idle 2-core machine: 1 worker 6.7–7.2 µs per
// coordinate, 2 workers 8.7–9.0 µs, 4 workers 11.4 µs. The secure sampler
// therefore defaults to one worker; SamplerOptions.Workers can still raise
// it (e.g. should a future library version remove the lock). See
// BenchmarkSecureAddNoise, BenchmarkSecureAddNoiseOneWorker and the
// reference BenchmarkLibraryAddNoiseFloat64.
type SecureSampler struct {
	opts SamplerOptions
}

// NewSecureSampler returns a secure sampler.
func NewSecureSampler(opts SamplerOptions) *SecureSampler {
	return &SecureSampler{opts: opts}
}

// Name returns [NameSecure].
func (*SecureSampler) Name() string { return NameSecure }

// The handle (ε₀, δ₀) through which σ is passed to the library; see the
// type's documentation.
const (
	secureL0      = 1
	secureEpsilon = 0.5
	secureDelta   = 0.1
)

// secureUnitSigma is the library's σ at lInf = 1 for the handle,
// 1594/1024.
var secureUnitSigma = sync.OnceValue(func() float64 {
	return dpnoise.SigmaForGaussian(secureL0, 1, secureEpsilon, secureDelta)
})

// Limits of σ accepted by the secure sampler. Inside them the library's
// bisection and its grid spacing 2σ/2⁵⁷ stay normal and finite.
const (
	secureMinSigma = 0x1p-900
	secureMaxSigma = 0x1p900
)

// secureHandle returns the lInf that makes the library use the smallest σ
// ≥ sigma it can express, and that σ.
func secureHandle(sigma float64) (lInf, applied float64) {
	frac, exp := math.Frexp(sigma)
	m, k := 2*frac, exp-1 // sigma = m·2^k, m ∈ [1, 2)
	l := m / secureUnitSigma()
	s := dpnoise.SigmaForGaussian(secureL0, l, secureEpsilon, secureDelta)
	// σ_lib(l) = l·σ_lib(1) up to a few ulps (see the type's doc); step l
	// up until σ_lib(l) ≥ m. The bound of 64 steps guards against a change
	// of the library.
	for i := 0; s < m && i < 64; i++ {
		l = math.Nextafter(l, math.Inf(1))
		s = dpnoise.SigmaForGaussian(secureL0, l, secureEpsilon, secureDelta)
	}
	if s < m {
		panic("noise: secureHandle: the DP library's σ does not grow with lInf")
	}
	return math.Ldexp(l, k), math.Ldexp(s, k)
}

// AddNoise implements [Sampler]. Besides the errors of the interface, σ
// outside [2⁻⁹⁰⁰, 2⁹⁰⁰] (other than 0) gives ErrRange, and so does an x[i]
// so large against σ (|x[i]|/σ ≳ 2⁹⁶⁰) that the library's grid overflows.
func (s *SecureSampler) AddNoise(dst, x []float64, sigma float64) (float64, error) {
	const fn = "SecureSampler.AddNoise"
	if err := checkNoiseArgs(fn, dst, x, sigma); err != nil {
		return 0, err
	}
	if sigma == 0 {
		copy(dst, x)
		return 0, nil
	}
	if sigma < secureMinSigma || sigma > secureMaxSigma {
		return 0, argErr(fn, "sigma", sigma, ErrRange)
	}
	lInf, applied := secureHandle(sigma)
	gauss := dpnoise.Gaussian()
	err := forChunks(len(x), s.opts.workers(1), func(_, lo, hi int) error {
		for i := lo; i < hi; i++ {
			v, err := gauss.AddNoiseFloat64(x[i], secureL0, lInf, secureEpsilon, secureDelta)
			if err != nil {
				// Unreachable: the arguments were validated above.
				return fmt.Errorf("noise: %s: DP library: %w", fn, err)
			}
			if math.IsInf(v, 0) || math.IsNaN(v) {
				return argErr(fn, fmt.Sprintf("dst[%d]", i), v, ErrRange)
			}
			dst[i] = v
		}
		return nil
	})
	if err != nil {
		return 0, err
	}
	return applied, nil
}
