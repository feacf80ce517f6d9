package align

import (
	"fmt"
	"slices"

	"unlearn/olbfgs"
	"unlearn/stream"
)

// Track propagates the reference and the states on the future events
// e_{t_del+1}, …, e_{t_del+H} (future[:h]) and measures every state against
// the reference at each step k = 0..h, before the k-th future event is
// applied (spec §8: state k follows e_{t_del+k}). D_upd(k) uses the first
// insert among future[k:] — which may lie after the horizon, so pass every
// event after t_del that the stream has — and is undefined where there is
// none (spec §8). It panics unless 0 ≤ h ≤ len(future). A delete
// event changes no state (spec §8); Track records it on each learner that has
// not yet recorded that id, and skips it on the others, so a deletion the
// intervention already marked is not an error.
//
// Track modifies ref and states (pass clones to keep the originals) and
// returns one series per state, in order. It stops at the first step error
// (for example olbfgs.ErrDiverged), naming the step and the state. The
// states must be distinct learners other than ref (it panics otherwise:
// they would be stepped twice).
func (e *Engine) Track(ref *olbfgs.Learner, states []*olbfgs.Learner, future []stream.Event, h int) ([]*Series, error) {
	if h < 0 || h > len(future) {
		panic(fmt.Sprintf("align: Track: horizon %d outside [0, %d]", h, len(future)))
	}
	for i, st := range states {
		if st == ref || slices.Contains(states[:i], st) {
			panic(fmt.Sprintf("align: Track: state %d is the reference or repeats an earlier state", i))
		}
	}
	series := make([]*Series, len(states))
	for i := range series {
		series[i] = NewSeries(h + 1)
	}
	// nextInsert[k] is the index of the first insert in future[k:], or −1.
	nextInsert := make([]int, len(future)+1)
	nextInsert[len(future)] = -1
	for k := len(future) - 1; k >= 0; k-- {
		nextInsert[k] = nextInsert[k+1]
		if future[k].Op == stream.Insert {
			nextInsert[k] = k
		}
	}
	step := func(l *olbfgs.Learner, ev stream.Event) error {
		if ev.Op == stream.Delete && l.IsDeleted(ev.ID) {
			return nil
		}
		return l.Step(ev)
	}
	for k := 0; k <= h; k++ {
		var next *stream.Sample
		if j := nextInsert[k]; j >= 0 {
			next = &future[j].Sample
		}
		e.SetReference(ref, next)
		for i, st := range states {
			series[i].Append(e.Measure(st))
		}
		if k == h {
			break
		}
		ev := future[k]
		if err := step(ref, ev); err != nil {
			return nil, fmt.Errorf("tracking step %d, reference: %w", k+1, err)
		}
		for i, st := range states {
			if err := step(st, ev); err != nil {
				return nil, fmt.Errorf("tracking step %d, state %d: %w", k+1, i, err)
			}
		}
	}
	return series, nil
}
