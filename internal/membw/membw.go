// Package membw holds the reference streaming kernel that the benchmarks
// measure memory-bound kernels against: the least time in which one core
// can read a vector from memory.
//
// Sum reads its vector once, in order, with AVX2 on amd64 and software
// prefetches PrefetchDistance bytes ahead — the same instruction set and
// prefetching as olbfgs's two-loop sweeps, so a ratio of the two compares
// memory traffic, not code quality. It is a measuring instrument: its
// result is the sum of the elements, in an unspecified order.
package membw

import "gonum.org/v1/gonum/floats"

// PrefetchDistance is how far ahead, in bytes, the assembly Sum prefetches.
const PrefetchDistance = 1024

// Sum returns the sum of x, reading x once.
func Sum(x []float64) float64 {
	n := len(x) &^ 15
	if !useAVX2 || n == 0 {
		return floats.Sum(x)
	}
	return sumAVX2(&x[0], n) + floats.Sum(x[n:])
}

// Scale stores q·src[i] in dst[i]: the Scale kernel of McCalpin's STREAM
// benchmark ("Memory Bandwidth and Machine Balance in Current High
// Performance Computers", IEEE TCCA Newsletter, 1995), which counts
// 16 bytes per element (one read, one write). Over vectors much larger
// than the last-level cache it measures the sustainable memory bandwidth
// of one core, the rate the olbfgs benchmarks state their floors in
// (docs/performance.md). It panics if the lengths differ.
func Scale(dst, src []float64, q float64) {
	if len(dst) != len(src) {
		panic("membw: Scale: length mismatch")
	}
	for i, x := range src {
		dst[i] = q * x
	}
}
