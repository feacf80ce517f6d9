//go:build amd64

package align

//go:noescape
func dot4AVX2(s, y, s2, y2 *float64, n int, out *[32]float64)

//go:noescape
func dot2AVX2(q, a, b *float64, n int, out *[16]float64)
