//go:build amd64

package align

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
)

// TestBlockStripsBitIdentical: a block swept strip by strip (stripBytes
// lowered so that small blocks are cut into strips of 8 columns and a last
// one of 4) gives exactly the bits of the whole-block sweeps and of
// Memory.Apply, column by column.
func TestBlockStripsBitIdentical(t *testing.T) {
	if !useAVX2 {
		t.Skip("no AVX2")
	}
	for _, tt := range []struct{ d, tau, n, ld int }{
		{25, 10, 14, 36}, {7, 4, 9, 12}, {3, 2, 5, 20}, {33, 5, 5, 8},
	} {
		t.Run(fmt.Sprintf("d=%d/tau=%d/ld=%d", tt.d, tt.tau, tt.ld), func(t *testing.T) {
			rng := rand.New(rand.NewPCG(uint64(tt.d), 11))
			m := testMemory(t, rng, tt.d, tt.tau, tt.n)
			q := make([]float64, tt.d*tt.ld)
			for i := range q {
				q[i] = rng.NormFloat64()
			}
			whole, strips := make([]float64, len(q)), make([]float64, len(q))
			newBlockApplier(tt.d, tt.ld).apply(m, whole, q)
			saved := stripBytes
			stripBytes = 0
			defer func() { stripBytes = saved }()
			if w := stripCols(tt.d, tt.ld); w != min(8, tt.ld) {
				t.Fatalf("stripCols = %d with stripBytes = 0, want %d", w, min(8, tt.ld))
			}
			newBlockApplier(tt.d, tt.ld).apply(m, strips, q)
			col, want := make([]float64, tt.d), make([]float64, tt.d)
			for j := 0; j < tt.ld; j++ {
				for k := range col {
					col[k] = q[k*tt.ld+j]
				}
				m.Apply(want, col)
				for k := range col {
					i := k*tt.ld + j
					if math.Float64bits(strips[i]) != math.Float64bits(whole[i]) || math.Float64bits(strips[i]) != math.Float64bits(want[k]) {
						t.Fatalf("entry (%d,%d): strips %v, whole block %v, Apply %v", k, j, strips[i], whole[i], want[k])
					}
				}
			}
		})
	}
}

func TestStripCols(t *testing.T) {
	for _, tt := range []struct{ d, ld, want int }{
		{25, 36, 36},     // 7 KB: one strip
		{100000, 36, 8},  // 29 MB: 8 columns, 6.4 MB
		{10000, 36, 36},  // 2.9 MB: one strip
		{40000, 36, 24},  // 11.5 MB: 8 MB / 320 KB per column = 26 → 24
		{1 << 22, 36, 8}, // the minimum width
		{100000, 4, 4},   // never wider than the block
	} {
		if got := stripCols(tt.d, tt.ld); got != tt.want {
			t.Errorf("stripCols(%d, %d) = %d, want %d", tt.d, tt.ld, got, tt.want)
		}
	}
}

// BenchmarkBlockApplyHighDim is one state's probe block at high dimension
// (m_q = 32 probes and a gradient column, ld = 36, τ = 10), swept as one
// block (strips=off, the sweeps before column strips) or in strips of
// stripCols columns (strips=on, the default).
func BenchmarkBlockApplyHighDim(b *testing.B) {
	if !useAVX2 {
		b.Skip("no AVX2")
	}
	for _, d := range []int{10000, 100000} {
		for _, on := range []bool{false, true} {
			b.Run(fmt.Sprintf("d=%d/tau=10/cols=36/strips=%v", d, on), func(b *testing.B) {
				saved := stripBytes
				defer func() { stripBytes = saved }()
				if !on {
					stripBytes = math.MaxInt
				}
				rng := rand.New(rand.NewPCG(1, 2))
				m := testMemory(b, rng, d, 10, 10)
				q, dst := make([]float64, d*36), make([]float64, d*36)
				for i := range q {
					q[i] = rng.NormFloat64()
				}
				ba := newBlockApplier(d, 36)
				b.ReportAllocs()
				for b.Loop() {
					ba.apply(m, dst, q)
				}
			})
		}
	}
}
