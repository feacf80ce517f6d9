package experiment

import (
	"math"

	"unlearn/internal/floatbits"
	"unlearn/olbfgs"
)

// Twin states.
//
// Several interventions often leave the same state: pair-drop and the no-op
// when no pair of the memory holds a deleted sample, memory-reset and
// drop-and-refill in some modes, and so on. Such states are bitwise equal
// after the deletion and, since a learner's Step is deterministic (an insert
// depends only on w, Z, the configuration, the loss and the sample;
// olbfgs.Learner.Follow), they stay equal as long as both take the same
// events. Their metrics are then equal too: align.Engine.measure reads a
// state's w (E_w, the gradient of D_upd), its memory (E_Z through the two
// memories' probe images, the sources of its pairs for M_direct, the
// identity check) and, with the coefficient space and a non-quadratic loss,
// its loss (olbfgs.Learner.NextDirection); everything else it reads — the
// reference, its probe block, the next sample z, the deletion set U — is the
// step's and shared by every state.
//
// So at each measured step the meter looks, for every state, for an earlier
// state bitwise equal to it (w bits, olbfgs.Memory.Equal — pairs, their
// order, sᵀy and sources, capacity and γ0 — the same configuration and loss):
// its root. A state with a root (a twin) is not measured; its point is a
// copy of its root's, and at the next event it follows its root's step
// (stepAll) instead of taking its own, falling back to Step if Follow
// refuses. Only roots are measured (align.Engine.MeasureAll splits the roots
// over its workers). Nothing is carried from step to step but the memory
// versions at which a twin was last found equal to its root, which make the
// next check O(d) instead of O(τd) (olbfgs.Memory.EqualSince, exact whatever
// happened in between); the roots are found again at every step, first by
// the bits of w[0], so twins that part are measured separately again and
// states that become equal later are caught.
//
// Nothing of this changes a bit of any record: a twin's point is the point
// measuring it would give, and Follow leaves it exactly as its own Step would
// (TestTwinsSameRecords, TestTwinsProperty).

// detectTwins switches twin detection on (the default). Tests turn it off
// to compute the reference records by measuring and stepping every state.
var detectTwins = true

// twinSeen records that state i was last found equal to state root when
// its memory had version mv and root's memory version rv.
type twinSeen struct {
	root   int
	mv, rv uint64
}

// findTwins sets m.roots[i] to the index of the first earlier root state
// bitwise equal to states[i], or −1 (and every entry −1 when twin detection
// is off).
func (m *meter) findTwins(states []*olbfgs.Learner) {
	n := len(states)
	if cap(m.roots) < n {
		m.roots = make([]int, n)
	}
	for len(m.seen) < n {
		m.seen = append(m.seen, twinSeen{root: -1})
	}
	roots, seen := m.roots[:n], m.seen[:n]
	for i := range roots {
		roots[i] = -1
	}
	if !m.twins {
		return
	}
	for i, st := range states {
		w := st.W()
		// The root found at the previous step first (its versions make
		// the memory check O(d)), then every earlier root in order.
		if r := seen[i].root; r >= 0 && r < i && roots[r] < 0 && m.twinOf(st, states[r], w, seen[i]) {
			roots[i] = r
		} else {
			for j, o := range states[:i] {
				if roots[j] < 0 && j != r && m.twinOf(st, o, w, twinSeen{root: -1}) {
					roots[i] = j
					break
				}
			}
		}
		if r := roots[i]; r >= 0 {
			seen[i] = twinSeen{root: r, mv: st.Memory().Version(), rv: states[r].Memory().Version()}
			m.twinPoints++
		} else {
			seen[i].root = -1
		}
	}
}

// twinOf reports whether st, whose parameters are w, is bitwise equal to o
// in everything a point and a step depend on: w (the first coordinate's
// bits first), the memory (through EqualSince when s says st was found
// equal to o before), the configuration and the loss.
func (m *meter) twinOf(st, o *olbfgs.Learner, w []float64, s twinSeen) bool {
	ow := o.W()
	if len(w) == 0 || len(ow) != len(w) || math.Float64bits(w[0]) != math.Float64bits(ow[0]) {
		return false
	}
	if !floatbits.Equal(w, ow) || st.Config() != o.Config() || !olbfgs.SameLoss(st.Loss(), o.Loss()) {
		return false
	}
	if s.root >= 0 {
		return st.Memory().EqualSince(o.Memory(), s.mv, s.rv)
	}
	return st.Memory().Equal(o.Memory())
}
