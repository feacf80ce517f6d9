package noise

import (
	"fmt"
	"math"

	"golang.org/x/sync/errgroup"
)

// Names of the samplers, as they appear in a certificate.
const (
	// NameSecure names [SecureSampler].
	NameSecure = "secure"
	// NameSeeded names [SeededSampler].
	NameSeeded = "seeded"
)

// Sampler adds independent Gaussian noise to every coordinate of a vector.
//
// Implementations must be safe for concurrent use.
type Sampler interface {
	// Name identifies the sampler in a certificate: [NameSecure] or
	// [NameSeeded].
	Name() string

	// AddNoise stores x[i] + Z_i in dst[i] for every i, where Z_1, …, Z_d
	// are independent N(0, s²) and s ≥ sigma is the scale actually applied,
	// which it returns (a sampler may round σ up, never down). sigma = 0
	// copies x and returns 0. dst may alias x.
	//
	// It panics if len(dst) != len(x) (a programmer error). It returns an
	// *ArgError for σ < 0 or not finite (ErrSigma), a non-finite x[i]
	// (ErrNonFinite), or a σ or noised value out of range (ErrRange); dst
	// is then unspecified.
	AddNoise(dst, x []float64, sigma float64) (float64, error)
}

// SamplerOptions configures a sampler. The zero value is ready to use.
type SamplerOptions struct {
	// Workers is the number of goroutines that add noise to a vector longer
	// than one chunk (4096 coordinates). If Workers ≤ 0, it defaults to
	// runtime.GOMAXPROCS(0), read at each call, for the seeded sampler, and
	// to 1 for the secure sampler, which more workers slow down (see
	// [SecureSampler]). The output of the seeded sampler does not depend
	// on it.
	Workers int
}

// workers resolves Workers, with def used when it is ≤ 0.
func (o SamplerOptions) workers(def int) int {
	if o.Workers > 0 {
		return o.Workers
	}
	return def
}

// chunkSize is the number of coordinates per unit of parallel work. It is
// part of the definition of the seeded stream (one random stream per chunk),
// so it is a constant, not an option: changing it changes seeded outputs.
const chunkSize = 4096

// forChunks calls f on the chunks [lo, hi) of [0, n) of length chunkSize
// (the last may be shorter), on up to workers goroutines, and returns the
// first error. Vectors of at most one chunk run on the calling goroutine.
func forChunks(n, workers int, f func(chunk, lo, hi int) error) error {
	chunks := (n + chunkSize - 1) / chunkSize
	if chunks <= 1 || workers <= 1 {
		for c := range chunks {
			if err := f(c, c*chunkSize, min(n, (c+1)*chunkSize)); err != nil {
				return err
			}
		}
		return nil
	}
	var g errgroup.Group
	g.SetLimit(workers)
	for c := range chunks {
		g.Go(func() error { return f(c, c*chunkSize, min(n, (c+1)*chunkSize)) })
	}
	return g.Wait()
}

// checkNoiseArgs validates the arguments every sampler shares.
func checkNoiseArgs(fn string, dst, x []float64, sigma float64) error {
	if len(dst) != len(x) {
		panic(fmt.Sprintf("noise: %s: len(dst) = %d, len(x) = %d", fn, len(dst), len(x)))
	}
	if math.IsNaN(sigma) || math.IsInf(sigma, 0) || sigma < 0 {
		return argErr(fn, "sigma", sigma, ErrSigma)
	}
	for i, v := range x {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return argErr(fn, fmt.Sprintf("x[%d]", i), v, ErrNonFinite)
		}
	}
	return nil
}
