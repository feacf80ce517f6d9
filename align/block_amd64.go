//go:build amd64

package align

import (
	"golang.org/x/sys/cpu"

	"unlearn/olbfgs"
)

// useAVX2 selects the assembly sweeps; tests switch it off to check that
// both paths give the same bits.
var useAVX2 = cpu.X86.HasAVX2

//go:noescape
func dotAVX2(r *float64, ld, rows, cols int, x, acc *float64)

//go:noescape
func firstAVX2(r *float64, ld, rows, cols int, acc *float64, sy float64, alpha, u, x *float64)

//go:noescape
func firstScaleAVX2(r *float64, ld, rows, cols int, acc *float64, sy float64, alpha, u *float64, gamma float64, x *float64)

//go:noescape
func secondAVX2(r *float64, ld, rows, cols int, acc *float64, sy float64, alpha, u, x *float64)

//go:noescape
func lastAVX2(r *float64, ld, rows, cols int, acc *float64, sy float64, alpha, u *float64)

// applyAVX2 is the block two-loop recursion of Memory.Apply (Nocedal &
// Wright, Algorithm 7.4) with every sweep over the d×ld block done in
// assembly. The memory holds at least one pair and alpha is large enough.
func (b *blockApplier) applyAVX2(m *olbfgs.Memory, dst, q []float64) {
	d, ld, n := b.d, b.ld, m.Len()
	// Guards for the assembly, which reads and writes d·ld entries of dst,
	// ld of acc and alpha (per pair), d of each pair vector.
	if len(dst) < d*ld || len(b.acc) < ld || len(b.alpha) < n*ld {
		panic("align: block apply: scratch too small")
	}
	copy(dst, q)
	r, acc := &dst[0], &b.acc[0]
	rows, cols := d, ld
	alpha := func(i int) *float64 { return &b.alpha[i*ld] }
	vec := func(v []float64) *float64 {
		if len(v) != d {
			panic("align: block apply: pair of the wrong dimension")
		}
		return &v[0]
	}
	// First loop, newest → oldest: a_i = s_iᵀr/(s_iᵀy_i), r = r − a_i·y_i,
	// each update fused with the next pair's dot product.
	top := m.Pair(n - 1)
	dotAVX2(r, ld, rows, cols, vec(top.S), acc)
	for i := n - 1; i > 0; i-- {
		firstAVX2(r, ld, rows, cols, acc, m.Curvature(i), alpha(i), vec(m.Pair(i).Y), vec(m.Pair(i-1).S))
	}
	// Last update of the first loop, scaling by γ, first dot of the second.
	y0 := vec(m.Pair(0).Y)
	firstScaleAVX2(r, ld, rows, cols, acc, m.Curvature(0), alpha(0), y0, m.Gamma(), y0)
	// Second loop, oldest → newest: b = y_iᵀr/(s_iᵀy_i), r = r + (a_i − b)·s_i.
	for i := 0; i < n-1; i++ {
		secondAVX2(r, ld, rows, cols, acc, m.Curvature(i), alpha(i), vec(m.Pair(i).S), vec(m.Pair(i+1).Y))
	}
	lastAVX2(r, ld, rows, cols, acc, m.Curvature(n-1), alpha(n-1), vec(top.S))
}
