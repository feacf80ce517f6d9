package align

import (
	"fmt"

	"unlearn/olbfgs"
)

// blockApplier applies the inverse-Hessian action of a memory to a
// row-major block of vectors (the probe basis and the gradient of the next
// event) by the two-loop recursion run on the whole block at once: each
// sweep over a pair's vectors updates every column, and on amd64 with AVX2
// four columns go through each vector instruction (block_amd64.s). Elsewhere
// it falls back to olbfgs.Memory.ApplyBlock. Both give, column by column,
// exactly the bits of olbfgs.Memory.Apply (tested), so results do not depend
// on the machine.
type blockApplier struct {
	d, ld int       // dimension and row stride (a multiple of 4)
	alpha []float64 // first-loop coefficients, pair i at [i·ld, (i+1)·ld)
	acc   []float64 // dot products of the current sweep, one per column
}

func newBlockApplier(d, ld int) *blockApplier {
	if d < 1 || ld < 4 || ld%4 != 0 {
		panic(fmt.Sprintf("align: block of %d rows with stride %d (want a positive multiple of 4)", d, ld))
	}
	return &blockApplier{d: d, ld: ld, acc: make([]float64, ld)}
}

// apply stores H_Z Q in dst for the d×ld row-major block q (all ld columns;
// padding columns should be zero). dst and q must not overlap. It allocates
// only the first time it meets a memory longer than any before.
func (b *blockApplier) apply(m *olbfgs.Memory, dst, q []float64) {
	d, ld := b.d, b.ld
	if m.Dim() != d || len(dst) != d*ld || len(q) != d*ld {
		panic(fmt.Sprintf("align: block apply: d=%d, len(dst)=%d, len(q)=%d, want d=%d and %d", m.Dim(), len(dst), len(q), d, d*ld))
	}
	if !useAVX2 || m.Len() == 0 {
		m.ApplyBlock(dst, q, ld, ld)
		return
	}
	if n := m.Len(); len(b.alpha) < n*ld {
		b.alpha = make([]float64, max(n, m.Cap())*ld)
	}
	b.applyAVX2(m, dst, q)
}
