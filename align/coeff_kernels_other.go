//go:build !amd64

package align

func dot4AVX2(s, y, s2, y2 *float64, n int, out *[32]float64) {
	panic("align: no assembly dot products on this architecture")
}

func dot2AVX2(q, a, b *float64, n int, out *[16]float64) {
	panic("align: no assembly dot products on this architecture")
}

func dot4HubAVX512(v *[10]*float64, n int, out *[16][8]float64) {
	panic("align: no assembly dot products on this architecture")
}

var hasAVX512 = false

func dot2HubAVX512(v *[9]*float64, n int, out *[8][8]float64) {
	panic("align: no assembly dot products on this architecture")
}
