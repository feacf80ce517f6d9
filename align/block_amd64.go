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

// stripBytes bounds the working set of one column strip: a block larger
// than this is swept strip by strip (see applyAVX2). Tests lower it to
// exercise the strips on small blocks.
var stripBytes = 8 << 20

// stripCols returns the width of the column strips for a d×ld block: all
// ld columns when the block fits in stripBytes, otherwise the widest
// multiple of 8 columns (one 64-byte cache line of a row) whose d rows fit,
// at least 8.
func stripCols(d, ld int) int {
	if d*ld*8 <= stripBytes {
		return ld
	}
	w := stripBytes / (d * 8) &^ 7
	return min(ld, max(8, w))
}

// applyAVX2 is the block two-loop recursion of Memory.Apply (Nocedal &
// Wright, Algorithm 7.4) with every sweep over the d×ld block done in
// assembly. The memory holds at least one pair and alpha is large enough.
//
// Each sweep needs the dot products over all d rows before the next can
// start, so a sweep over the whole block streams it through the caches
// 2·Len+1 times; at d = 10⁵ with 36 columns that is 29 MB per sweep, and the
// recursion runs at memory bandwidth. The columns are independent, so a
// large block is processed in strips of a few columns (stripCols), each
// strip going through all its sweeps while it stays in the last-level
// cache. Every column still gets exactly the operations of Memory.Apply, in
// the same order: the result is bit-identical whatever the strip width
// (tested).
func (b *blockApplier) applyAVX2(m *olbfgs.Memory, dst, q []float64) {
	d, ld, n := b.d, b.ld, m.Len()
	// Guards for the assembly, which reads and writes d·ld entries of dst,
	// ld of acc and alpha (per pair), d of each pair vector.
	if len(dst) < d*ld || len(q) < d*ld || len(b.acc) < ld || len(b.alpha) < n*ld {
		panic("align: block apply: scratch too small")
	}
	copy(dst, q)
	w := stripCols(d, ld)
	for c0 := 0; c0 < ld; c0 += w {
		b.sweeps(m, dst, c0, min(w, ld-c0))
	}
}

// sweeps runs the two-loop recursion on columns c0..c0+cols−1 of the d×ld
// block dst (c0 and cols multiples of 4).
func (b *blockApplier) sweeps(m *olbfgs.Memory, dst []float64, c0, cols int) {
	d, ld, n := b.d, b.ld, m.Len()
	if c0 < 0 || cols < 4 || c0%4 != 0 || cols%4 != 0 || c0+cols > ld {
		panic("align: block apply: bad strip")
	}
	r, acc := &dst[c0], &b.acc[c0]
	rows := d
	alpha := func(i int) *float64 { return &b.alpha[i*ld+c0] }
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
