//go:build amd64

package olbfgs

//go:noescape
func standardizeAVX2(x, mean, m2, nm, nq, w, avg *float64, n int, rn float64, acc *[8]float64)

// standardizeBody runs the AVX2 body of standardizeScores over the longest
// prefix of x whose length is a multiple of 4, and returns its length and
// the partial sums over it (w's in acc[0:4], avg's in acc[4:8]). The
// caller checks useAVX2; the slices must be at least as long as x (avg
// may be nil).
func standardizeBody(x, mean, m2, nm, nq, w, avg []float64, rn float64) (n int, acc [8]float64) {
	n = len(x) &^ 3
	if n == 0 {
		return 0, acc
	}
	if len(mean) < n || len(m2) < n || len(nm) < n || len(nq) < n || len(w) < n || (avg != nil && len(avg) < n) {
		panic("olbfgs: standardization: vectors shorter than x")
	}
	var pa *float64
	if avg != nil {
		pa = &avg[0]
	}
	standardizeAVX2(&x[0], &mean[0], &m2[0], &nm[0], &nq[0], &w[0], pa, n, rn, &acc)
	return n, acc
}
