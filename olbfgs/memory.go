package olbfgs

import (
	"fmt"
	"math"
	"slices"

	"gonum.org/v1/gonum/floats"

	"unlearn/internal/floatbits"
	"unlearn/stream"
)

// Memory is the o-LBFGS curvature memory Z: a FIFO of at most τ pairs (s, y),
// oldest first, each tagged with its source (the ids of the events whose data
// produced it).
//
// Storage is contiguous, one slot per pair. A small memory (τ·d up to
// eagerFloats) allocates all τ slots when it is made; a larger one grows
// its slots as pairs arrive, doubling up to τ, so that its size follows the
// pairs actually stored (a snapshot or a short stream that asks for a huge
// τ costs nothing until pairs come). Once τ pairs have been stored — at
// once for a small memory — no operation allocates, except DropTouching and
// Touching results.
type Memory struct {
	d, capacity int
	gamma0      float64

	// Per slot, for the len(sy) slots allocated so far (at most capacity).
	sBuf, yBuf []float64 // slot k occupies [k·d, (k+1)·d)
	sy, yy     []float64 // sᵀy and yᵀy
	source     [][]int64
	alpha      []float64 // two-loop scratch, one per stored pair

	order []int // occupied slots, oldest → newest
	free  []int // allocated, unoccupied slots

	// ver counts the changes of the stored pairs (push, Reset,
	// DropTouching, CopyFrom): a learner's cached direction is valid only
	// for the version it was computed at (Learner.NextDirection).
	ver uint64
	// pushVer is ver after the last push: pushVer == ver when the last
	// change was a push (EqualSince).
	pushVer uint64
}

// eagerFloats is the largest τ·d for which NewMemory allocates every slot
// at once (512 KiB of pairs). A variable so that tests can make small
// memories grow lazily too.
var eagerFloats = 1 << 16

// NewMemory returns an empty memory of capacity tau ≥ 0 for vectors of
// dimension d ≥ 1, whose initial matrix is gamma0·I while it is empty.
// It panics on invalid arguments (use [Config.Validate] for user input).
func NewMemory(d, tau int, gamma0 float64) *Memory {
	if d < 1 || tau < 0 || !(gamma0 > 0) {
		panic(fmt.Sprintf("olbfgs: NewMemory(d=%d, tau=%d, gamma0=%v): invalid arguments", d, tau, gamma0))
	}
	m := &Memory{d: d, capacity: tau, gamma0: gamma0}
	if tau <= eagerFloats/d {
		m.reserve(tau)
		for range tau {
			m.free = append(m.free, m.newSlot())
		}
		slices.Reverse(m.free) // popped from the end: slot 0 first
	}
	return m
}

// reserve makes room for n slots in every per-slot array without changing
// the number of slots.
func (m *Memory) reserve(n int) {
	k := len(m.sy)
	if m.hasRoom(n) {
		return
	}
	more := max(n-k, 0)
	m.sBuf = slices.Grow(m.sBuf, more*m.d)
	m.yBuf = slices.Grow(m.yBuf, more*m.d)
	m.sy = slices.Grow(m.sy, more)
	m.yy = slices.Grow(m.yy, more)
	m.source = slices.Grow(m.source, more)
	m.alpha = slices.Grow(m.alpha, more)
	m.order = slices.Grow(m.order, max(n-len(m.order), 0))
	m.free = slices.Grow(m.free, max(n-len(m.free), 0))
}

// hasRoom reports whether every per-slot array has room for n slots.
func (m *Memory) hasRoom(n int) bool {
	return n*m.d <= cap(m.sBuf) && n*m.d <= cap(m.yBuf) && n <= cap(m.sy) && n <= cap(m.yy) &&
		n <= cap(m.source) && n <= cap(m.alpha) && n <= cap(m.order) && n <= cap(m.free)
}

// newSlot allocates one more slot, growing the arrays to min(2k, τ) slots
// when they are full, and returns its index.
func (m *Memory) newSlot() int {
	k := len(m.sy)
	if k >= m.capacity {
		panic("olbfgs: Memory: no slot left") // cannot happen: callers check
	}
	if !m.hasRoom(k + 1) {
		m.reserve(min(max(2*k, 4), m.capacity))
	}
	m.sBuf = m.sBuf[:(k+1)*m.d]
	m.yBuf = m.yBuf[:(k+1)*m.d]
	m.sy = append(m.sy, 0)
	m.yy = append(m.yy, 0)
	m.alpha = append(m.alpha, 0)
	m.source = m.source[:k+1] // a set left by an earlier CopyFrom is reused
	if m.source[k] == nil {
		m.source[k] = make([]int64, 0, 1)
	}
	m.source[k] = m.source[k][:0]
	return k
}

// Dim returns d.
func (m *Memory) Dim() int { return m.d }

// Cap returns τ, the capacity.
func (m *Memory) Cap() int { return m.capacity }

// Len returns the number of stored pairs.
func (m *Memory) Len() int { return len(m.order) }

// InitialScale returns γ0.
func (m *Memory) InitialScale() float64 { return m.gamma0 }

// Pair is a read-only view of one stored curvature pair. Its slices alias
// the memory and are valid until the memory next changes; do not modify them.
type Pair struct {
	S, Y   []float64
	Source []int64
}

// Pair returns the i-th stored pair, oldest first (0 ≤ i < Len).
func (m *Memory) Pair(i int) Pair {
	k := m.order[i]
	return Pair{S: m.slotS(k), Y: m.slotY(k), Source: m.source[k]}
}

func (m *Memory) slotS(k int) []float64 { return m.sBuf[k*m.d : (k+1)*m.d : (k+1)*m.d] }
func (m *Memory) slotY(k int) []float64 { return m.yBuf[k*m.d : (k+1)*m.d : (k+1)*m.d] }

// Gamma returns the scale γ of the initial matrix γI used by Apply:
// sᵀy/yᵀy of the newest pair, or γ0 when the memory is empty.
func (m *Memory) Gamma() float64 {
	if len(m.order) == 0 {
		return m.gamma0
	}
	k := m.order[len(m.order)-1]
	return m.sy[k] / m.yy[k]
}

// Apply stores H_Z q in dst, by the two-loop recursion (Nocedal & Wright,
// Algorithm 7.4), with ρ_i = 1/(s_iᵀy_i) applied as a division:
//
//	r = q
//	for i = newest … oldest:  a_i = (s_iᵀ r)/(s_iᵀy_i);  r = r − a_i·y_i
//	r = γ·r
//	for i = oldest … newest:  b = (y_iᵀ r)/(s_iᵀy_i);    r = r + (a_i − b)·s_i
//
// dst and q must have length d; dst may be q. Apply does not allocate and
// costs 4·Len·d + d flops. It is not safe for concurrent use on one Memory
// (it uses the memory's scratch space).
func (m *Memory) Apply(dst, q []float64) {
	if len(dst) != m.d || len(q) != m.d {
		panic(fmt.Sprintf("olbfgs: Memory.Apply: len(dst)=%d, len(q)=%d, want d=%d", len(dst), len(q), m.d))
	}
	n := len(m.order)
	if n == 0 {
		scaleTo(dst, m.gamma0, q)
		return
	}
	// First loop, newest → oldest, each axpy fused with the next dot.
	top := m.order[n-1]
	acc := copyDot(dst, q, m.slotS(top))
	for i := n - 1; i > 0; i-- {
		k := m.order[i]
		a := acc / m.sy[k]
		m.alpha[i] = a
		acc = axpyDot(dst, -a, m.slotY(k), m.slotS(m.order[i-1]))
	}
	// Last axpy of the first loop, the scaling by γ and the first dot of
	// the second loop, in one sweep.
	k0 := m.order[0]
	a0 := acc / m.sy[k0]
	m.alpha[0] = a0
	acc = axpyScaleDot(dst, -a0, m.slotY(k0), m.Gamma(), m.slotY(k0))
	// Second loop, oldest → newest.
	for i := 0; i < n-1; i++ {
		k := m.order[i]
		b := acc / m.sy[k]
		acc = axpyDot(dst, m.alpha[i]-b, m.slotS(k), m.slotY(m.order[i+1]))
	}
	b := acc / m.sy[top]
	axpy(dst, m.alpha[n-1]-b, m.slotS(top))
}

// ErrCurvature is returned by Push for a pair with sᵀy ≤ 0, non-finite
// entries or the wrong dimension: H_Z would not be positive definite.
var ErrCurvature = fmt.Errorf("%w: curvature pair rejected", ErrEvent)

// Push appends the pair (s, y) with the given source, evicting the oldest
// pair when the memory is full (a memory of capacity 0 stores nothing). The
// vectors are copied. It returns an error wrapping ErrCurvature unless
// s and y have length d, are finite and sᵀy > 0. The learner applies its
// own, stricter guard (Config.CurvatureTol) before pushing.
func (m *Memory) Push(s, y []float64, source ...int64) error {
	if len(s) != m.d || len(y) != m.d {
		return fmt.Errorf("%w: len(s)=%d, len(y)=%d, want %d", ErrCurvature, len(s), len(y), m.d)
	}
	sy := floats.Dot(s, y)
	if !(sy > 0) || math.IsInf(sy, 0) || !finite(s) || !finite(y) {
		return fmt.Errorf("%w: sᵀy = %v", ErrCurvature, sy)
	}
	m.push(s, y, sy, source)
	return nil
}

// push stores a pair that already passed the guard.
func (m *Memory) push(s, y []float64, sy float64, source []int64) {
	if m.capacity == 0 {
		return
	}
	m.ver++
	m.pushVer = m.ver
	var k int
	switch {
	case len(m.free) > 0:
		k = m.free[len(m.free)-1]
		m.free = m.free[:len(m.free)-1]
	case len(m.order) < m.capacity:
		k = m.newSlot()
	default:
		k = m.order[0]
		copy(m.order, m.order[1:])
		m.order = m.order[:len(m.order)-1]
	}
	copy(m.slotS(k), s)
	y0 := m.slotY(k)
	copy(y0, y)
	m.sy[k] = sy
	m.yy[k] = floats.Dot(y0, y0)
	m.source[k] = append(m.source[k][:0], source...)
	m.order = append(m.order, k)
}

// Reset empties the memory (the "full memory reset" intervention).
func (m *Memory) Reset() {
	m.ver++
	for i := len(m.order) - 1; i >= 0; i-- {
		m.free = append(m.free, m.order[i])
	}
	m.order = m.order[:0]
}

// DirectMass returns the number of stored pairs whose source meets u: the
// paper's direct memory mass M_direct (spec §3).
func (m *Memory) DirectMass(u stream.IDSet) int {
	n := 0
	for _, k := range m.order {
		if u.Meets(m.source[k]) {
			n++
		}
	}
	return n
}

// Touching returns the positions (oldest first, as for Pair) of the stored
// pairs whose source meets u.
func (m *Memory) Touching(u stream.IDSet) []int {
	var idx []int
	for i, k := range m.order {
		if u.Meets(m.source[k]) {
			idx = append(idx, i)
		}
	}
	return idx
}

// DropTouching removes every pair whose source meets u, keeping the order of
// the others (the "contaminated pair drop" intervention), and returns how
// many it removed.
func (m *Memory) DropTouching(u stream.IDSet) int {
	m.ver++
	kept := m.order[:0]
	dropped := 0
	for _, k := range m.order {
		if u.Meets(m.source[k]) {
			m.free = append(m.free, k)
			dropped++
			continue
		}
		kept = append(kept, k)
	}
	m.order = kept
	return dropped
}

// CopyFrom makes m an exact copy of src (same pairs in the same order, same
// γ0). It panics if the dimensions or capacities differ. It does not
// allocate unless src has more slots than m has room for, or a source set
// is longer than any m held before.
func (m *Memory) CopyFrom(src *Memory) {
	if m == src {
		return
	}
	if m.d != src.d || m.capacity != src.capacity {
		panic(fmt.Sprintf("olbfgs: Memory.CopyFrom: shape (d=%d, tau=%d) from (d=%d, tau=%d)", m.d, m.capacity, src.d, src.capacity))
	}
	m.ver++
	m.gamma0 = src.gamma0
	// Copy slot for slot so that the physical layout matches too: m takes
	// exactly src's slots, keeping any room it has beyond them.
	n := len(src.sy)
	m.reserve(n)
	m.sBuf, m.yBuf = m.sBuf[:n*m.d], m.yBuf[:n*m.d]
	m.sy, m.yy, m.alpha, m.source = m.sy[:n], m.yy[:n], m.alpha[:n], m.source[:n]
	copy(m.sBuf, src.sBuf)
	copy(m.yBuf, src.yBuf)
	copy(m.sy, src.sy)
	copy(m.yy, src.yy)
	for k := range n {
		m.source[k] = append(m.source[k][:0], src.source[k]...)
	}
	m.order = append(m.order[:0], src.order...)
	m.free = append(m.free[:0], src.free...)
}

// Clone returns a deep copy of m.
func (m *Memory) Clone() *Memory {
	c := NewMemory(m.d, m.capacity, m.gamma0)
	c.CopyFrom(m)
	return c
}

// Version returns the memory's version: a counter that every change of
// the stored pairs (Push, Reset, DropTouching, CopyFrom, a learner's
// insert) increments. Changes written through the slices of [Memory.Pair]
// are not seen (they must not be made).
func (m *Memory) Version() uint64 { return m.ver }

// PushedSince reports whether the only change to m since it had version v
// (Version) is one push: the pairs it held then are still held, unchanged
// and in their slots, except the oldest when the push evicted it, and the
// newest pair is the pushed one.
func (m *Memory) PushedSince(v uint64) bool { return m.ver == v+1 && m.pushVer == m.ver }

// EqualSince reports m.Equal(o), given that the caller saw m.Equal(o) true
// when m had version mv and o version ov (Version). If since then neither
// changed, or each changed by exactly one push (a step of two learners in
// lockstep), the pairs they held then are still equal — a push writes only
// the new pair's slot, and both evict their oldest pair or neither — so
// only the O(τ) fields of Equal and the newest pairs' vectors are
// compared: O(d) instead of O(τd). Otherwise it is Equal.
func (m *Memory) EqualSince(o *Memory, mv, ov uint64) bool {
	if m == o {
		return true
	}
	unchanged := m.ver == mv && o.ver == ov
	pushed := m.PushedSince(mv) && o.PushedSince(ov)
	if !unchanged && !pushed {
		return m.Equal(o)
	}
	if !m.sameHeads(o) {
		return false
	}
	if n := len(m.order); pushed && n > 0 {
		a, b := m.Pair(n-1), o.Pair(n-1)
		return floatbits.Equal(a.S, b.S) && floatbits.Equal(a.Y, b.Y)
	}
	return true
}

// sameHeads compares the O(τ) part of Equal: dimension, capacity, γ0, the
// number of pairs, and each pair's sources and sᵀy — which every path that
// stores a pair (push from Learner.insert and Push, CopyFrom) sets to
// floats.Dot(s, y) of the stored vectors, so pairs whose sᵀy bits differ
// differ. Memories that differ in any pair are then told apart without
// reading the O(τd) vectors of the pairs they share.
func (m *Memory) sameHeads(o *Memory) bool {
	if m.d != o.d || m.capacity != o.capacity || m.gamma0 != o.gamma0 || len(m.order) != len(o.order) {
		return false
	}
	for i, k := range m.order {
		l := o.order[i]
		if math.Float64bits(m.sy[k]) != math.Float64bits(o.sy[l]) || !slices.Equal(m.source[k], o.source[l]) {
			return false
		}
	}
	return true
}

// Equal reports whether m and o hold bit-identical pairs with identical
// sources in the same order, with the same capacity and γ0.
func (m *Memory) Equal(o *Memory) bool {
	if !m.sameHeads(o) {
		return false
	}
	for i := range m.order {
		a, b := m.Pair(i), o.Pair(i)
		if !floatbits.Equal(a.S, b.S) || !floatbits.Equal(a.Y, b.Y) {
			return false
		}
	}
	return true
}

func finite(v []float64) bool {
	for _, x := range v {
		if math.IsNaN(x) || math.IsInf(x, 0) {
			return false
		}
	}
	return true
}
