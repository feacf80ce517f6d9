package olbfgs

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"
	"gonum.org/v1/gonum/floats"

	"unlearn/stream"
)

// filledMemory returns a memory of capacity tau after pushing n random
// well-conditioned pairs with ids 0..n−1 (n > tau exercises eviction).
func filledMemory(t *testing.T, rng *rand.Rand, d, tau, n int) *Memory {
	t.Helper()
	m := NewMemory(d, tau, 0.7)
	for i, p := range randomPairs(rng, d, n) {
		require.NoError(t, m.Push(p[0], p[1], int64(i)))
	}
	return m
}

func TestApplyBlockBitIdenticalToApply(t *testing.T) {
	tests := []struct {
		name              string
		d, tau, n         int
		ld, cols          int
		dropOldestTouched bool // drop pairs through DropTouching (non-contiguous slots)
	}{
		{"empty memory", 5, 3, 0, 4, 4, false},
		{"one pair", 5, 3, 1, 3, 3, false},
		{"full with eviction, d=25", 25, 10, 13, 36, 33, false},
		{"d not a multiple of 4", 7, 4, 6, 9, 5, false},
		{"d < 4", 3, 2, 5, 2, 2, false},
		{"after a pair drop", 25, 10, 12, 32, 32, true},
		{"zero columns", 4, 2, 2, 3, 0, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rng := rand.New(rand.NewPCG(uint64(tt.d), uint64(tt.n)))
			m := filledMemory(t, rng, tt.d, tt.tau, tt.n)
			if tt.dropOldestTouched {
				m.DropTouching(stream.NewIDSet(4, 7))
			}
			q := make([]float64, tt.d*tt.ld)
			for i := range q {
				q[i] = rng.NormFloat64()
			}
			dst := make([]float64, len(q))
			const sentinel = -12345.0 // marks entries ApplyBlock must not write
			for i := range dst {
				dst[i] = sentinel
			}
			m.ApplyBlock(dst, q, tt.ld, tt.cols)
			col, want := make([]float64, tt.d), make([]float64, tt.d)
			for j := 0; j < tt.ld; j++ {
				for k := 0; k < tt.d; k++ {
					col[k] = q[k*tt.ld+j]
				}
				m.Apply(want, col)
				for k := 0; k < tt.d; k++ {
					got := dst[k*tt.ld+j]
					if j >= tt.cols {
						if got != sentinel {
							t.Fatalf("entry (%d,%d) beyond cols was written", k, j)
						}
						continue
					}
					if math.Float64bits(got) != math.Float64bits(want[k]) {
						t.Fatalf("entry (%d,%d) = %v, Apply gives %v", k, j, got, want[k])
					}
				}
			}
			// In place gives the same bits.
			inPlace := append([]float64(nil), q...)
			m.ApplyBlock(inPlace, inPlace, tt.ld, tt.cols)
			for k := 0; k < tt.d; k++ {
				for j := 0; j < tt.cols; j++ {
					if inPlace[k*tt.ld+j] != dst[k*tt.ld+j] {
						t.Fatalf("in-place entry (%d,%d) differs", k, j)
					}
				}
			}
		})
	}
}

func TestApplyBlockPanicsOnBadShape(t *testing.T) {
	m := NewMemory(3, 2, 1)
	tests := []struct {
		name     string
		n, ld, c int
	}{
		{"cols > ld", 9, 2, 3},
		{"short slices", 8, 3, 3},
		{"negative cols", 9, 3, -1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			require.Panics(t, func() {
				m.ApplyBlock(make([]float64, tt.n), make([]float64, tt.n), tt.ld, tt.c)
			})
		})
	}
}

func TestCurvature(t *testing.T) {
	rng := rand.New(rand.NewPCG(8, 8))
	m := filledMemory(t, rng, 6, 4, 7)
	for i := 0; i < m.Len(); i++ {
		p := m.Pair(i)
		// Push stores floats.Dot(s, y); Curvature must return those bits.
		if got, want := m.Curvature(i), floats.Dot(p.S, p.Y); math.Float64bits(got) != math.Float64bits(want) || !(got > 0) {
			t.Fatalf("Curvature(%d) = %v, want sᵀy = %v > 0", i, got, want)
		}
	}
}

// BenchmarkApplyBlock is the portable probe block of the alignment metrics:
// m_q = 32 probes at d = 25 (the paper's sizes), one column at a time.
func BenchmarkApplyBlock(b *testing.B) {
	for _, tau := range []int{5, 10, 20} {
		b.Run(fmt.Sprintf("d=25/tau=%d/cols=32", tau), func(b *testing.B) {
			m := fullMemory(25, tau)
			q, dst := make([]float64, 25*32), make([]float64, 25*32)
			for i := range q {
				q[i] = float64(i%7) - 3
			}
			b.ReportAllocs()
			for b.Loop() {
				m.ApplyBlock(dst, q, 32, 32)
			}
		})
	}
}
