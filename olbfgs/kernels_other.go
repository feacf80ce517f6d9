//go:build !amd64

package olbfgs

// useAVX2 is false without assembly: the fused sweeps run in Go.
var useAVX2 = false

// axpyScaleDotBody is never called without assembly (useAVX2 is false).
func axpyScaleDotBody(r []float64, c float64, u []float64, gamma float64, x []float64) (n int, s0, s1, s2, s3 float64) {
	panic("olbfgs: no assembly sweeps on this architecture")
}

// standardizeBody is never called without assembly (useAVX2 is false).
func standardizeBody(x, mean, m2, nm, nq, w, avg []float64, rn float64) (n int, acc [8]float64) {
	panic("olbfgs: no assembly standardization on this architecture")
}
