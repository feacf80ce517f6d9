package olbfgs

import (
	"fmt"

	"unlearn/stream"
)

// checkpoints lets a learner restore θ_{t−k} for any k ≤ window.
//
// Design: two saved states and an event log. `ready` is the state at time
// readyT ≤ t − window; `pending` is a copy taken at time pendingT, which
// becomes ready once t ≥ pendingT + window. The log holds the events
// readyT+1 … t (at most 2·window of them). Keeping checkpoints therefore costs
// two states and O(window) events, and one state copy every `window` steps
// (amortized O(τd/window) per step); restoring θ_{t−k} copies `ready` and
// replays fewer than 2·window events.
type checkpoints struct {
	window   int
	ready    *Learner
	pending  *Learner
	readyT   int
	pendingT int
	log      eventRing // events readyT+1 … t
}

// KeepCheckpoints makes the learner keep what it needs to restore its state
// of up to window events ago (see [Learner.StateAgo]), from now on: states
// before the current one are not covered. window must be at least 1. Calling
// it again replaces the previous checkpoints.
//
// Checkpoints rebuild past states by replaying the events Step logged, so
// they hold only while the state changes through Step alone: SetW,
// MarkDeleted and Reset discard them, and a caller that edits the memory
// through Memory() (Push, DropTouching, Reset) must discard them itself by
// calling KeepCheckpoints again.
func (l *Learner) KeepCheckpoints(window int) error {
	if window < 1 {
		return fmt.Errorf("%w: checkpoint window = %d must be at least 1", ErrConfig, window)
	}
	c := &checkpoints{
		window:   window,
		ready:    l.Clone(),
		pending:  l.Clone(),
		readyT:   l.t,
		pendingT: l.t,
		log:      newEventRing(2*window + 1),
	}
	l.ckpt = c
	return nil
}

// CheckpointWindow returns the window given to KeepCheckpoints, or 0.
func (l *Learner) CheckpointWindow() int {
	if l.ckpt == nil {
		return 0
	}
	return l.ckpt.window
}

// record is called by Step after the event was applied (l.t already counts it).
func (c *checkpoints) record(l *Learner, e stream.Event) {
	c.log.push(e)
	if l.t >= c.pendingT+c.window {
		// pending is now at least window events old: promote it.
		c.ready, c.pending = c.pending, c.ready
		c.log.dropFront(c.pendingT - c.readyT)
		c.readyT = c.pendingT
		c.pending.CopyFrom(l)
		c.pendingT = l.t
	}
}

// StateAgo returns a new learner holding the state θ_{max(t0, t−k)} where t is
// the current time and t0 the time KeepCheckpoints was called, for
// 0 ≤ k ≤ window, together with the number of logged events it replayed to
// rebuild it. The result keeps no checkpoints. It returns an error wrapping
// ErrNoCheckpoint when no checkpoints are kept or k is outside [0, window].
//
// spec §8's window-replay checkpoint θ_{max(0, t_del−W)} is StateAgo(W) on a
// learner that kept checkpoints from θ0.
func (l *Learner) StateAgo(k int) (*Learner, int, error) {
	c := l.ckpt
	if c == nil {
		return nil, 0, fmt.Errorf("%w: the learner keeps no checkpoints", ErrNoCheckpoint)
	}
	if k < 0 || k > c.window {
		return nil, 0, fmt.Errorf("%w: %d events ago, window is %d", ErrNoCheckpoint, k, c.window)
	}
	target := max(l.t-k, c.readyT)
	out := c.ready.Clone()
	n := target - c.readyT
	for i := 0; i < n; i++ {
		if err := out.Step(c.log.at(i)); err != nil {
			return nil, i, fmt.Errorf("restoring checkpoint: %w", err)
		}
	}
	return out, n, nil
}

// eventRing is a FIFO of at most capacity events. A small ring (up to
// eagerEvents) is allocated at once; a larger one grows as events arrive,
// doubling up to its capacity, so that a huge window costs nothing until
// it fills. Once full size it never allocates.
type eventRing struct {
	buf      []stream.Event
	head     int // index of the oldest event
	count    int
	capacity int
}

// eagerEvents is the largest capacity an eventRing allocates at once.
const eagerEvents = 1 << 12

func newEventRing(capacity int) eventRing {
	r := eventRing{capacity: capacity}
	if capacity <= eagerEvents {
		r.buf = make([]stream.Event, capacity)
	}
	return r
}

func (r *eventRing) push(e stream.Event) {
	if r.count == r.capacity {
		panic("olbfgs: checkpoint log overflow") // cannot happen: the log is trimmed every window events
	}
	if r.count == len(r.buf) {
		buf := make([]stream.Event, min(max(2*len(r.buf), 16), r.capacity))
		for i := range r.count {
			buf[i] = r.at(i)
		}
		r.buf, r.head = buf, 0
	}
	r.buf[(r.head+r.count)%len(r.buf)] = e
	r.count++
}

func (r *eventRing) dropFront(n int) {
	for i := 0; i < n; i++ {
		r.buf[r.head] = stream.Event{} // release the payload
		r.head = (r.head + 1) % len(r.buf)
	}
	r.count -= n
}

func (r *eventRing) at(i int) stream.Event { return r.buf[(r.head+i)%len(r.buf)] }
