package olbfgs

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"
	"gonum.org/v1/gonum/floats"
	"gonum.org/v1/gonum/mat"
	"pgregory.net/rapid"

	"unlearn/internal/floatbits"
	"unlearn/stream"
)

// explicitInverseHessian builds H_Z independently of the two-loop recursion:
// start from γI (γ = sᵀy/yᵀy of the newest pair, or γ0) and apply the BFGS
// inverse update H ← (I − ρ s yᵀ) H (I − ρ y sᵀ) + ρ s sᵀ, ρ = 1/(sᵀy), pair
// by pair from oldest to newest (Nocedal & Wright, eq. 6.17 and 7.19).
func explicitInverseHessian(d int, pairs [][2][]float64, gamma0 float64) *mat.Dense {
	gamma := gamma0
	if n := len(pairs); n > 0 {
		s, y := pairs[n-1][0], pairs[n-1][1]
		gamma = floats.Dot(s, y) / floats.Dot(y, y)
	}
	h := mat.NewDense(d, d, nil)
	for i := 0; i < d; i++ {
		h.Set(i, i, gamma)
	}
	for _, p := range pairs {
		s, y := mat.NewVecDense(d, p[0]), mat.NewVecDense(d, p[1])
		rho := 1 / mat.Dot(s, y)
		var left mat.Dense // I − ρ s yᵀ
		left.Outer(-rho, s, y)
		for i := 0; i < d; i++ {
			left.Set(i, i, left.At(i, i)+1)
		}
		var tmp, next mat.Dense
		tmp.Mul(&left, h)
		next.Mul(&tmp, left.T())
		var ss mat.Dense
		ss.Outer(rho, s, s)
		next.Add(&next, &ss)
		h = &next
	}
	return h
}

// randomPairs returns n curvature pairs (s, A s) for a random SPD A with
// condition number 10, so sᵀy > 0 and the pairs are well conditioned.
func randomPairs(rng *rand.Rand, d, n int) [][2][]float64 {
	a := randSPD(rng, d, 10)
	pairs := make([][2][]float64, n)
	for k := range pairs {
		s := randVec(rng, d)
		y := make([]float64, d)
		for i := range y {
			y[i] = floats.Dot(a[i], s)
		}
		pairs[k] = [2][]float64{s, y}
	}
	return pairs
}

func TestApplyMatchesExplicitBFGS(t *testing.T) {
	for _, d := range []int{1, 2, 5, 25, 60} {
		for _, tau := range []int{0, 1, 3, 10, 20} {
			t.Run(fmt.Sprintf("d=%d/tau=%d", d, tau), func(t *testing.T) {
				rng := rand.New(rand.NewPCG(uint64(d), uint64(tau)))
				// Push more pairs than fit so eviction is exercised too.
				pairs := randomPairs(rng, d, tau+3)
				const gamma0 = 0.7
				m := NewMemory(d, tau, gamma0)
				for i, p := range pairs {
					require.NoError(t, m.Push(p[0], p[1], int64(i)))
				}
				kept := pairs[len(pairs)-tau:]
				require.Equal(t, tau, m.Len(), "pairs kept")
				h := explicitInverseHessian(d, kept, gamma0)
				for trial := 0; trial < 5; trial++ {
					q := randVec(rng, d)
					got := make([]float64, d)
					m.Apply(got, q)
					var want mat.VecDense
					want.MulVec(h, mat.NewVecDense(d, q))
					// Relative 1e-10 in the 2-norm (issue #2); both sides are
					// O(1) with condition number ≤ 10, so round-off is ~1e-14.
					diff := make([]float64, d)
					floats.SubTo(diff, got, want.RawVector().Data)
					if rel := floats.Norm(diff, 2) / floats.Norm(want.RawVector().Data, 2); rel > 1e-10 {
						t.Fatalf("trial %d: relative error %.3g > 1e-10", trial, rel)
					}
				}
			})
		}
	}
}

func TestApplyInPlaceAndEmpty(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 3))
	m := NewMemory(4, 3, 2.5)
	q := randVec(rng, 4)
	got := append([]float64(nil), q...)
	m.Apply(got, got)
	for i := range q {
		if got[i] != 2.5*q[i] {
			t.Fatalf("empty memory: H q = %v, want γ0·q = %v", got, q)
		}
	}
	for i, p := range randomPairs(rng, 4, 3) {
		require.NoError(t, m.Push(p[0], p[1], int64(i)))
	}
	want := make([]float64, 4)
	m.Apply(want, q)
	inPlace := append([]float64(nil), q...)
	m.Apply(inPlace, inPlace)
	if !floatbits.Equal(want, inPlace) {
		t.Fatalf("in-place Apply %v differs from out-of-place %v", inPlace, want)
	}
}

func TestPushRejectsBadPairs(t *testing.T) {
	m := NewMemory(2, 2, 1)
	tests := []struct {
		name string
		s, y []float64
	}{
		{"negative curvature", []float64{1, 0}, []float64{-1, 0}},
		{"zero curvature", []float64{1, 0}, []float64{0, 1}},
		{"wrong dimension", []float64{1}, []float64{1}},
		{"NaN", []float64{1, nan()}, []float64{1, 1}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			require.Error(t, m.Push(tt.s, tt.y, 1), "Push accepted a bad pair")
			require.Zero(t, m.Len(), "pairs in memory after a rejected push")
		})
	}
}

func TestProvenance(t *testing.T) {
	rng := rand.New(rand.NewPCG(4, 4))
	m := NewMemory(3, 4, 1)
	for i, p := range randomPairs(rng, 3, 6) { // ids 10..15; 12..15 stay
		require.NoError(t, m.Push(p[0], p[1], int64(10+i)))
	}
	u := stream.NewIDSet(11, 13, 15, 99)
	require.Equal(t, 2, m.DirectMass(u), "DirectMass: ids 13 and 15 are stored, 11 was evicted")
	require.Equal(t, []int{1, 3}, m.Touching(u), "Touching")
	before := []Pair{m.Pair(0), m.Pair(2)}
	wantS := [][]float64{append([]float64(nil), before[0].S...), append([]float64(nil), before[1].S...)}
	require.Equal(t, 2, m.DropTouching(u), "pairs removed by DropTouching")
	require.Equal(t, 2, m.Len(), "Len after drop")
	require.Zero(t, m.DirectMass(u), "DirectMass after drop")
	for i, id := range []int64{12, 14} {
		p := m.Pair(i)
		require.Equal(t, []int64{id}, p.Source, "pair %d after drop: source", i)
		if !floatbits.Equal(p.S, wantS[i]) {
			t.Fatalf("pair %d after drop: s changed", i)
		}
	}
	// Freed slots are reused and the FIFO order continues.
	for i, p := range randomPairs(rng, 3, 3) {
		require.NoError(t, m.Push(p[0], p[1], int64(20+i)))
	}
	var ids []int64
	for i := 0; i < m.Len(); i++ {
		ids = append(ids, m.Pair(i).Source[0])
	}
	require.Equal(t, []int64{14, 20, 21, 22}, ids, "order after refill")
	c := m.Clone()
	if !c.Equal(m) {
		t.Fatal("Clone is not Equal")
	}
	m.Reset()
	require.Zero(t, m.Len(), "Len after Reset")
	require.Equal(t, 4, c.Len(), "Len of the clone after Reset of the original")
}

// TestLazyMemoryMatchesEager: a memory that grows its slots as pairs arrive
// (the path of large τ·d, forced here by setting eagerFloats to 0) behaves
// exactly like one allocated at once, through any sequence of pushes,
// resets, drops, copies and clones: same pairs, same H_Z q to the bit, and
// never more slots than τ.
func TestLazyMemoryMatchesEager(t *testing.T) {
	rapid.Check(t, func(rt *rapid.T) {
		d := rapid.IntRange(1, 6).Draw(rt, "d")
		tau := rapid.IntRange(0, 9).Draw(rt, "tau")
		eager := NewMemory(d, tau, 0.7)
		saved := eagerFloats
		eagerFloats = 0
		lazy := NewMemory(d, tau, 0.7)
		eagerFloats = saved
		rng := rand.New(rand.NewPCG(uint64(d), uint64(tau)))
		q := randVec(rng, d)
		id := int64(0)
		for step := range rapid.IntRange(1, 40).Draw(rt, "steps") {
			switch op := rapid.IntRange(0, 9).Draw(rt, "op"); {
			case op < 6: // push
				s := randVec(rng, d)
				y := make([]float64, d)
				for i := range y {
					y[i] = (1 + float64(i)) * s[i]
				}
				id++
				require.NoError(rt, eager.Push(s, y, id))
				require.NoError(rt, lazy.Push(s, y, id))
			case op == 6:
				eager.Reset()
				lazy.Reset()
			case op == 7:
				u := stream.NewIDSet(id, id-2)
				require.Equal(rt, eager.DropTouching(u), lazy.DropTouching(u))
			case op == 8: // copy each way through a fresh clone
				lazy.CopyFrom(eager.Clone())
			default:
				lazy = lazy.Clone()
			}
			require.Truef(rt, lazy.Equal(eager), "step %d: memories differ", step)
			require.LessOrEqual(rt, len(lazy.sy), tau, "more slots than τ")
			a, b := make([]float64, d), make([]float64, d)
			eager.Apply(a, q)
			lazy.Apply(b, q)
			require.Truef(rt, floatbits.Equal(a, b), "step %d: H_Z q differs", step)
		}
	})
}

// TestEventRingGrows: a checkpoint log larger than eagerEvents grows as
// events arrive and stays a FIFO: it matches a plain slice through pushes
// and front drops, across several growths and wrap-arounds.
func TestEventRingGrows(t *testing.T) {
	const capacity = eagerEvents + 1000
	r := newEventRing(capacity)
	require.Empty(t, r.buf, "a large ring must not allocate up front")
	var model []stream.Event
	id := int64(0)
	for round := range 6 {
		for range capacity - len(model) {
			id++
			e := stream.DeleteEvent(id)
			r.push(e)
			model = append(model, e)
		}
		require.LessOrEqual(t, len(r.buf), capacity)
		drop := (round + 1) * 700
		r.dropFront(drop)
		model = model[drop:]
		require.Equal(t, len(model), r.count)
		for i, e := range model {
			if r.at(i).ID != e.ID {
				t.Fatalf("round %d: event %d is id %d, want %d", round, i, r.at(i).ID, e.ID)
			}
		}
	}
	require.Panics(t, func() {
		for {
			id++
			r.push(stream.DeleteEvent(id))
		}
	}, "pushing past the capacity must panic")
}
