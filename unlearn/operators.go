package unlearn

import (
	"fmt"

	"unlearn/olbfgs"
	"unlearn/stream"
)

// The operators of spec §5, with the conventions of spec §8. Each validates
// its request (Request.Validate), works on a copy of the actual state (or a
// fresh one) and marks U deleted on its result.

// base carries the key and label of an operator.
type base struct{ name, label string }

func (b base) Name() string  { return b.name }
func (b base) Label() string { return b.label }

// replayCost is the spec §8 cost of replaying n events of which ins are
// inserts: n events, two gradient evaluations per insert.
func replayCost(n, ins int) Cost { return Cost{EventsReplayed: n, GradEvals: 2 * ins} }

// countInserts returns the number of inserts in events whose id is not in
// skip (a nil set skips none).
func countInserts(events []stream.Event, skip stream.IDSet) int {
	n := 0
	for _, e := range events {
		if e.Op == stream.Insert && !skip.Has(e.ID) {
			n++
		}
	}
	return n
}

// start validates req and returns a copy of the actual state with U marked
// deleted.
func start(req Request) (*olbfgs.Learner, error) {
	if err := req.Validate(); err != nil {
		return nil, err
	}
	l := req.Actual.Clone()
	l.MarkDeleted(req.U.Sorted()...)
	return l, nil
}

// Oracle returns oracle replay ("oracle", "Oracle replay"): the state
// reached by replaying the deletion-edited prefix stream.Counterfactual(
// Prefix, U) from θ0 (spec §5). It is computed from the prefix on its own —
// never taken from a reference counterfactual — so that its zero error in a
// benchmark is a check (spec §8). Cost: every event of the edited prefix.
func Oracle() Operator { return oracle{base{"oracle", "Oracle replay"}} }

type oracle struct{ base }

func (o oracle) Apply(req Request) (*olbfgs.Learner, Cost, error) {
	if err := req.Validate(); err != nil {
		return nil, Cost{}, err
	}
	cf := stream.Counterfactual(req.Prefix, req.U)
	l, err := olbfgs.Replay(req.Actual.Config(), req.Actual.Loss(), cf)
	if err != nil {
		return nil, Cost{}, fmt.Errorf("oracle replay: %w", err)
	}
	l.MarkDeleted(req.U.Sorted()...)
	return l, replayCost(len(cf), countInserts(cf, nil)), nil
}

// NoOp returns no-op deletion ("noop", "No-op deletion"): the state is
// unchanged, the deletion only registered (U marked deleted). Cost: none.
func NoOp() Operator { return noop{base{"noop", "No-op deletion"}} }

type noop struct{ base }

func (o noop) Apply(req Request) (*olbfgs.Learner, Cost, error) {
	l, err := start(req)
	return l, Cost{}, err
}

// ParamOnly returns the parameter-only correction ("param-only",
// "Parameter-only"): one quasi-Newton step that undoes the deleted samples'
// contributions, with Z unchanged (spec §5, §8):
//
//	w̃ = w + η·Σ_{u∈U} H_Z ∇ℓ_u(w),
//
// the sum taken in ascending id order (the terms accumulated into a zero
// vector, then scaled by η and added to w). The samples are read from the
// inserts of the prefix. Cost: one gradient evaluation per deleted sample,
// no replay.
func ParamOnly() Operator { return paramOnly{base{"param-only", "Parameter-only"}} }

type paramOnly struct{ base }

func (o paramOnly) Apply(req Request) (*olbfgs.Learner, Cost, error) {
	l, err := start(req)
	if err != nil {
		return nil, Cost{}, err
	}
	samples := make(map[int64]stream.Sample, len(req.U))
	for _, e := range req.Prefix {
		if e.Op == stream.Insert && req.U.Has(e.ID) {
			samples[e.ID] = e.Sample
		}
	}
	d := l.ParamDim()
	w, g, h, acc := l.W(), make([]float64, d), make([]float64, d), make([]float64, d)
	for _, id := range req.U.Sorted() {
		l.Gradient(g, samples[id]) // the loss's Grad at w for the paper's learner
		l.Memory().Apply(h, g)     // the copy's memory: Apply uses scratch space
		for i, v := range h {
			acc[i] += v
		}
	}
	eta := l.Config().StepSize
	wNew := make([]float64, d)
	for i, v := range w {
		wNew[i] = v + eta*acc[i]
	}
	l.SetW(wNew)
	return l, Cost{GradEvals: len(req.U)}, nil
}

// PairDrop returns the contaminated pair drop ("pair-drop", "Contaminated
// pair drop"): every curvature pair whose source meets U is removed, the
// others keep their order, w is unchanged (spec §5); afterwards the direct
// memory mass of U is 0. Cost: none.
func PairDrop() Operator { return pairDrop{base{"pair-drop", "Contaminated pair drop"}} }

type pairDrop struct{ base }

func (o pairDrop) Apply(req Request) (*olbfgs.Learner, Cost, error) {
	l, err := start(req)
	if err != nil {
		return nil, Cost{}, err
	}
	l.Memory().DropTouching(req.U)
	return l, Cost{}, nil
}

// MemoryReset returns the full memory reset ("memory-reset", "Full memory
// reset"): Z = ∅, w unchanged (spec §5). Cost: none.
func MemoryReset() Operator { return memoryReset{base{"memory-reset", "Full memory reset"}} }

type memoryReset struct{ base }

func (o memoryReset) Apply(req Request) (*olbfgs.Learner, Cost, error) {
	l, err := start(req)
	if err != nil {
		return nil, Cost{}, err
	}
	l.Memory().Reset()
	return l, Cost{}, nil
}

// RetainFineTune returns retain fine-tuning ("retain-ft", "Retain
// fine-tuning"): from the current state, keeping and updating Z, replay the
// last τ inserts of the prefix (τ the learner's memory size; deleted inserts
// count towards the τ) except those in U, in stream order (spec §5, §8).
// Cost: the replayed inserts.
func RetainFineTune() Operator { return retainFT{base{"retain-ft", "Retain fine-tuning"}} }

type retainFT struct{ base }

func (o retainFT) Apply(req Request) (*olbfgs.Learner, Cost, error) {
	l, err := start(req)
	if err != nil {
		return nil, Cost{}, err
	}
	retained := stream.Counterfactual(stream.LastInserts(req.Prefix, l.Config().Memory), req.U)
	if err := l.Run(retained); err != nil {
		return nil, Cost{}, fmt.Errorf("retain fine-tuning: %w", err)
	}
	return l, replayCost(len(retained), len(retained)), nil
}

// DropRefill returns drop and refill ("drop-refill", "Drop and refill"): the
// state is reset to θ0 = (0, ∅) and the future stream refills it (spec §5).
// The learner keeps its event count and its deleted ids
// (olbfgs.Learner.Reset). Cost: none.
func DropRefill() Operator { return dropRefill{base{"drop-refill", "Drop and refill"}} }

type dropRefill struct{ base }

func (o dropRefill) Apply(req Request) (*olbfgs.Learner, Cost, error) {
	l, err := start(req)
	if err != nil {
		return nil, Cost{}, err
	}
	l.Reset()
	return l, Cost{}, nil
}

// WindowReplay returns window replay over the last w ≥ 0 events, with the
// given key and label (the paper uses w = τ, "window-tau", and w = 5τ,
// "window-5tau"): restore the checkpoint θ_{max(0, t_del−w)} of the actual
// learner (olbfgs.Learner.StateAgo(w)) and replay the events
// max(0, t_del−w)+1 .. t_del minus U (spec §5, §8). The result equals oracle
// replay when U lies inside the window and no older deletion precedes it;
// otherwise the checkpoint still carries the older deletions, as intended.
//
// The actual learner must keep checkpoints covering the window, from θ0 when
// w ≥ t_del: Apply returns an error wrapping olbfgs.ErrNoCheckpoint if it
// keeps none, if its window is smaller than w, or if its checkpoints begin
// after the window's start. Cost: the replayed events (RestoreEvents counts
// the events re-applied to rebuild the checkpoint). It panics if w < 0.
func WindowReplay(w int, key, label string) Operator {
	if w < 0 {
		panic(fmt.Sprintf("unlearn: WindowReplay(%d): the window must be non-negative", w))
	}
	return window{base{key, label}, w}
}

type window struct {
	base
	w int
}

func (o window) Apply(req Request) (*olbfgs.Learner, Cost, error) {
	if err := req.Validate(); err != nil {
		return nil, Cost{}, err
	}
	a := req.Actual
	if kept := a.CheckpointWindow(); kept < o.w {
		return nil, Cost{}, fmt.Errorf("window replay over %d events: the learner keeps checkpoints for %d: %w", o.w, kept, olbfgs.ErrNoCheckpoint)
	}
	l, restored, err := a.StateAgo(o.w)
	if err != nil {
		return nil, Cost{}, fmt.Errorf("window replay over %d events: %w", o.w, err)
	}
	from := max(0, a.T()-o.w)
	if l.T() != from {
		return nil, Cost{}, fmt.Errorf("window replay over %d events: checkpoints begin at event %d, after the window start %d: %w", o.w, l.T(), from, olbfgs.ErrNoCheckpoint)
	}
	l.MarkDeleted(req.U.Sorted()...)
	window := req.Prefix[from:]
	n, err := l.ReplaySkipping(window, req.U)
	if err != nil {
		return nil, Cost{}, fmt.Errorf("window replay over %d events: %w", o.w, err)
	}
	c := replayCost(n, countInserts(window, req.U))
	c.RestoreEvents = restored
	return l, c, nil
}
