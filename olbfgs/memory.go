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
// produced it). Storage for all τ pairs is allocated once, contiguously; no
// operation on a Memory allocates once it exists, except DropTouching and
// Touching results.
type Memory struct {
	d, capacity int
	gamma0      float64

	sBuf, yBuf []float64 // slot k occupies [k·d, (k+1)·d)
	sy, yy     []float64 // per slot: sᵀy and yᵀy
	source     [][]int64 // per slot
	order      []int     // occupied slots, oldest → newest
	free       []int     // unoccupied slots
	alpha      []float64 // two-loop scratch, one per stored pair
}

// NewMemory returns an empty memory of capacity tau ≥ 0 for vectors of
// dimension d ≥ 1, whose initial matrix is gamma0·I while it is empty.
// It panics on invalid arguments (use [Config.Validate] for user input).
func NewMemory(d, tau int, gamma0 float64) *Memory {
	if d < 1 || tau < 0 || !(gamma0 > 0) {
		panic(fmt.Sprintf("olbfgs: NewMemory(d=%d, tau=%d, gamma0=%v): invalid arguments", d, tau, gamma0))
	}
	m := &Memory{
		d: d, capacity: tau, gamma0: gamma0,
		sBuf:   make([]float64, tau*d),
		yBuf:   make([]float64, tau*d),
		sy:     make([]float64, tau),
		yy:     make([]float64, tau),
		source: make([][]int64, tau),
		order:  make([]int, 0, tau),
		free:   make([]int, 0, tau),
		alpha:  make([]float64, tau),
	}
	for k := tau - 1; k >= 0; k-- {
		m.free = append(m.free, k)
		m.source[k] = make([]int64, 0, 1)
	}
	return m
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
	var k int
	if len(m.free) > 0 {
		k = m.free[len(m.free)-1]
		m.free = m.free[:len(m.free)-1]
	} else {
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
	for i := len(m.order) - 1; i >= 0; i-- {
		m.free = append(m.free, m.order[i])
	}
	m.order = m.order[:0]
}

// DirectMass returns the number of stored pairs whose source meets u: the
// paper's direct memory mass M_direct (SPEC §3).
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
// allocate unless a source set is longer than any m held before.
func (m *Memory) CopyFrom(src *Memory) {
	if m == src {
		return
	}
	if m.d != src.d || m.capacity != src.capacity {
		panic(fmt.Sprintf("olbfgs: Memory.CopyFrom: shape (d=%d, tau=%d) from (d=%d, tau=%d)", m.d, m.capacity, src.d, src.capacity))
	}
	m.gamma0 = src.gamma0
	// Copy slot for slot so that the physical layout matches too.
	copy(m.sBuf, src.sBuf)
	copy(m.yBuf, src.yBuf)
	copy(m.sy, src.sy)
	copy(m.yy, src.yy)
	for k := range src.source {
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

// Equal reports whether m and o hold bit-identical pairs with identical
// sources in the same order, with the same capacity and γ0.
func (m *Memory) Equal(o *Memory) bool {
	if m.d != o.d || m.capacity != o.capacity || m.gamma0 != o.gamma0 || len(m.order) != len(o.order) {
		return false
	}
	for i := range m.order {
		a, b := m.Pair(i), o.Pair(i)
		if !floatbits.Equal(a.S, b.S) || !floatbits.Equal(a.Y, b.Y) || !slices.Equal(a.Source, b.Source) {
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
