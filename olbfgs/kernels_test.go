package olbfgs

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"

	"unlearn/internal/floatbits"
)

// referenceAxpyScaleDot is the documented contract of axpyScaleDot written
// out plainly: r_k = γ·(r_k + c·u_k), then s_j = Σ_{k ≡ j mod 4} x_k·r_k in
// increasing k, except that the elements past the last multiple of four go
// into s_0, and the result (s_0+s_1)+(s_2+s_3). Each product is rounded
// before it is added.
func referenceAxpyScaleDot(r []float64, c float64, u []float64, gamma float64, x []float64) float64 {
	var s [4]float64
	full := len(r) &^ 3
	for k := range r {
		r[k] = gamma * (r[k] + float64(c*u[k]))
		j := k % 4
		if k >= full {
			j = 0
		}
		s[j] += float64(x[k] * r[k])
	}
	return (s[0] + s[1]) + (s[2] + s[3])
}

// withoutAsm runs f with the assembly sweeps switched off.
func withoutAsm(f func()) {
	saved := useAVX2
	defer func() { useAVX2 = saved }()
	useAVX2 = false
	f()
}

// TestFusedSweepMatchesReference checks axpyDot and axpyScaleDot, with and
// without the assembly body, bit for bit against the plainly written
// contract, for lengths around every multiple of 4 and 8 and a long one.
func TestFusedSweepMatchesReference(t *testing.T) {
	if !useAVX2 {
		t.Log("no AVX2 on this machine: only the Go path is exercised")
	}
	rng := rand.New(rand.NewPCG(7, 8))
	lengths := []int{100003}
	for n := 0; n <= 41; n++ {
		lengths = append(lengths, n)
	}
	for _, n := range lengths {
		for _, gamma := range []float64{1, 0.37} {
			r0, u, x := randVec(rng, n), randVec(rng, n), randVec(rng, n)
			c := rng.NormFloat64()
			want := append([]float64(nil), r0...)
			wantDot := referenceAxpyScaleDot(want, c, u, gamma, x)
			check := func(name string, f func(r []float64) float64) {
				r := append([]float64(nil), r0...)
				got := f(r)
				require.Equalf(t, math.Float64bits(wantDot), math.Float64bits(got), "%s n=%d γ=%v: dot %v, want %v", name, n, gamma, got, wantDot)
				require.Truef(t, floatbits.Equal(want, r), "%s n=%d γ=%v: r differs", name, n, gamma)
			}
			for _, asm := range []bool{true, false} {
				run := func(f func()) { f() }
				if !asm {
					run = withoutAsm
				}
				run(func() {
					check(fmt.Sprintf("axpyScaleDot asm=%v", asm), func(r []float64) float64 { return axpyScaleDot(r, c, u, gamma, x) })
					if gamma == 1 {
						check(fmt.Sprintf("axpyDot asm=%v", asm), func(r []float64) float64 { return axpyDot(r, c, u, x) })
					}
				})
			}
		}
	}
}

// TestFusedSweepRejectsShortVectors: the sweep panics, before any
// assembly runs, when u or x is shorter than r.
func TestFusedSweepRejectsShortVectors(t *testing.T) {
	r := make([]float64, 16)
	require.Panics(t, func() { axpyDot(r, 1, make([]float64, 15), make([]float64, 16)) })
	require.Panics(t, func() { axpyScaleDot(r, 1, make([]float64, 16), 2, make([]float64, 8)) })
}

// TestApplySameBitsWithoutAsm: H_Z q is bit-identical with the assembly
// sweeps on and off, so results never depend on the CPU's features.
func TestApplySameBitsWithoutAsm(t *testing.T) {
	for _, d := range []int{1, 7, 8, 9, 25, 64, 1003} {
		rng := rand.New(rand.NewPCG(uint64(d), 3))
		m := NewMemory(d, 5, 1)
		for k, p := range randomPairsDiag(rng, d, 7) {
			require.NoError(t, m.Push(p[0], p[1], int64(k)))
		}
		q := randVec(rng, d)
		asm, plain := make([]float64, d), make([]float64, d)
		m.Apply(asm, q)
		withoutAsm(func() { m.Apply(plain, q) })
		require.Truef(t, floatbits.Equal(asm, plain), "d=%d: Apply differs with and without assembly", d)
	}
}

// randomPairsDiag returns n pairs (s, D s) for a random positive diagonal D:
// sᵀy > 0 at any d without building a dense matrix.
func randomPairsDiag(rng *rand.Rand, d, n int) [][2][]float64 {
	diag := make([]float64, d)
	for i := range diag {
		diag[i] = 1 + 9*rng.Float64()
	}
	pairs := make([][2][]float64, n)
	for k := range pairs {
		s := randVec(rng, d)
		y := make([]float64, d)
		for i := range y {
			y[i] = diag[i] * s[i]
		}
		pairs[k] = [2][]float64{s, y}
	}
	return pairs
}
