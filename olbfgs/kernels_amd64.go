//go:build amd64

package olbfgs

import "golang.org/x/sys/cpu"

// useAVX2 selects the assembly body of the fused sweeps; tests switch it off
// to check that both paths give the same bits.
var useAVX2 = cpu.X86.HasAVX2

//go:noescape
func axpyScaleDotAVX2(r, u, x *float64, n int, c, gamma float64, acc *[4]float64)

// axpyScaleDotBody runs the AVX2 body of axpyScaleDot over the longest prefix
// of r whose length is a multiple of 8 and returns the length n of that
// prefix and the four partial sums of xᵀr over it. The caller checks
// useAVX2 and len(r) ≥ 8. It panics if u or x is shorter than the prefix.
func axpyScaleDotBody(r []float64, c float64, u []float64, gamma float64, x []float64) (n int, s0, s1, s2, s3 float64) {
	n = len(r) &^ 7
	if n == 0 {
		return 0, 0, 0, 0, 0
	}
	if len(u) < n || len(x) < n {
		panic("olbfgs: fused sweep: vectors shorter than r")
	}
	var acc [4]float64
	axpyScaleDotAVX2(&r[0], &u[0], &x[0], n, c, gamma, &acc)
	return n, acc[0], acc[1], acc[2], acc[3]
}
