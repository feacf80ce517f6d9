package align

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"

	"unlearn/olbfgs"
	"unlearn/stream"
)

// testMemory returns a memory of capacity tau (γ0 = 0.7) after n pushes of
// pairs (s, A s) for a random diagonal A with entries in [1, 10]: curvature
// sᵀy > 0 always, condition number ≤ 10. n > tau exercises eviction.
func testMemory(t testing.TB, rng *rand.Rand, d, tau, n int) *olbfgs.Memory {
	t.Helper()
	m := olbfgs.NewMemory(d, tau, 0.7)
	diag := make([]float64, d)
	for i := range diag {
		diag[i] = 1 + 9*rng.Float64()
	}
	s, y := make([]float64, d), make([]float64, d)
	for k := 0; k < n; k++ {
		for i := range s {
			s[i] = rng.NormFloat64()
			y[i] = diag[i] * s[i]
		}
		require.NoError(t, m.Push(s, y, int64(k+1)))
	}
	return m
}

// paths runs f once per available sweep implementation.
func paths(t *testing.T, f func(t *testing.T)) {
	t.Helper()
	saved := useAVX2
	defer func() { useAVX2 = saved }()
	impls := []struct {
		name string
		asm  bool
	}{{"portable", false}}
	if saved {
		impls = append(impls, struct {
			name string
			asm  bool
		}{"avx2", true})
	}
	for _, im := range impls {
		t.Run(im.name, func(t *testing.T) {
			useAVX2 = im.asm
			f(t)
		})
	}
}

func TestBlockApplyBitIdenticalToApply(t *testing.T) {
	tests := []struct {
		name       string
		d, tau, n  int
		ld         int
		dropSource int64 // drop the pairs touching this id (0: none)
	}{
		{"empty memory", 5, 3, 0, 4, 0},
		{"one pair", 5, 3, 1, 8, 0},
		{"paper size d=25 tau=10", 25, 10, 14, 36, 0},
		{"d=25 tau=20", 25, 20, 20, 32, 0},
		{"d not a multiple of 4", 7, 4, 9, 12, 0},
		{"d < 4", 3, 2, 5, 4, 0},
		{"after a pair drop", 25, 10, 12, 32, 6},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			paths(t, func(t *testing.T) {
				rng := rand.New(rand.NewPCG(uint64(tt.d), uint64(tt.n)))
				m := testMemory(t, rng, tt.d, tt.tau, tt.n)
				if tt.dropSource != 0 {
					m.DropTouching(stream.NewIDSet(tt.dropSource))
				}
				q := make([]float64, tt.d*tt.ld)
				for i := range q {
					q[i] = rng.NormFloat64()
				}
				dst := make([]float64, len(q))
				newBlockApplier(tt.d, tt.ld).apply(m, dst, q)
				col, want := make([]float64, tt.d), make([]float64, tt.d)
				for j := 0; j < tt.ld; j++ {
					for k := range col {
						col[k] = q[k*tt.ld+j]
					}
					m.Apply(want, col)
					for k := range col {
						if got := dst[k*tt.ld+j]; math.Float64bits(got) != math.Float64bits(want[k]) {
							t.Fatalf("entry (%d,%d) = %v, Apply gives %v", k, j, got, want[k])
						}
					}
				}
			})
		})
	}
}

func BenchmarkBlockApply(b *testing.B) {
	for _, asm := range []bool{false, true} {
		for _, tau := range []int{5, 10, 20} {
			b.Run(fmt.Sprintf("avx2=%v/d=25/tau=%d/cols=36", asm, tau), func(b *testing.B) {
				saved := useAVX2
				defer func() { useAVX2 = saved }()
				useAVX2 = asm && saved
				rng := rand.New(rand.NewPCG(1, 2))
				m := testMemory(b, rng, 25, tau, tau)
				q, dst := make([]float64, 25*36), make([]float64, 25*36)
				for i := range q {
					q[i] = rng.NormFloat64()
				}
				ba := newBlockApplier(25, 36)
				b.ReportAllocs()
				for b.Loop() {
					ba.apply(m, dst, q)
				}
			})
		}
	}
}
