package unlearn

import (
	"fmt"
	"slices"
	"time"

	"unlearn/olbfgs"
	"unlearn/stream"
)

// Request is what every operator sees at the deletion time t_del (spec §5).
// Operators must not modify Actual or Prefix.
type Request struct {
	// Actual is the learner's state θ_{t_del} after the prefix. Window
	// replay needs it to keep checkpoints (olbfgs.Learner.KeepCheckpoints
	// with a window at least the largest replay window, called at θ0).
	Actual *olbfgs.Learner
	// Prefix is the event history e_1..e_{t_del} that produced Actual.
	Prefix []stream.Event
	// U is the deletion set. It must contain only ids inserted in the
	// prefix, and it must contain the id of every delete event of the prefix
	// (a realized deletion request joins U, spec §8).
	U stream.IDSet
}

// Validate reports whether the request is well formed: Actual is set and has
// applied exactly len(Prefix) events, every id of U is inserted in the
// prefix, and every delete event of the prefix names an id of U. Errors wrap
// ErrRequest. Every operator of this package validates its request.
func (r Request) Validate() error {
	if r.Actual == nil {
		return fmt.Errorf("%w: no actual learner", ErrRequest)
	}
	if r.Actual.T() != len(r.Prefix) {
		return fmt.Errorf("%w: the actual learner has applied %d events, the prefix has %d", ErrRequest, r.Actual.T(), len(r.Prefix))
	}
	found := 0
	for i, e := range r.Prefix {
		switch {
		case e.Op == stream.Insert && r.U.Has(e.ID):
			found++
		case e.Op == stream.Delete && !r.U.Has(e.ID):
			return fmt.Errorf("%w: event %d deletes id %d, which is not in U (a realized deletion joins U, spec §8)", ErrRequest, i+1, e.ID)
		}
	}
	if found != len(r.U) {
		for _, id := range r.U.Sorted() {
			if !slices.ContainsFunc(r.Prefix, func(e stream.Event) bool { return e.Op == stream.Insert && e.ID == id }) {
				return fmt.Errorf("%w: id %d of U is not inserted in the prefix", ErrRequest, id)
			}
		}
	}
	return nil
}

// Cost is what an intervention spent (spec §5, §8).
type Cost struct {
	// EventsReplayed is the number of prefix events the operator applied to
	// a learner again.
	EventsReplayed int
	// GradEvals counts gradient evaluations: 2 per replayed insert (o-LBFGS
	// evaluates the sample's gradient at w and w⁺) plus any others the
	// operator makes (parameter-only: one per deleted sample).
	GradEvals int
	// RestoreEvents is the number of logged events window replay re-applied
	// to rebuild its checkpoint θ_{t_del−W} (the learner stores two states
	// and an event log rather than a state per step, see
	// olbfgs.Learner.StateAgo). It is a cost of that storage scheme, not of
	// the spec §8 cost model, and its gradient evaluations are not in
	// GradEvals.
	RestoreEvents int
	// Wall is the wall-clock time of Apply, measured by Run.
	Wall time.Duration
}

// Operator is an unlearning operator (an intervention of spec §5). Apply
// returns a new learner state — never Actual itself, nor one sharing its
// memory — with every id of U marked deleted (olbfgs.Learner.MarkDeleted),
// so that later replays exclude them, and the cost of the intervention.
// Apply must not modify the request. Implementations of this package are
// safe for concurrent use on the same request.
//
// To add an operator, implement this interface; [Run] measures it and the
// benchmark (package experiment) runs any list of operators.
type Operator interface {
	// Name is a stable machine key, such as "window-tau".
	Name() string
	// Label is the human-readable label of the paper's tables.
	Label() string
	// Apply performs the intervention.
	Apply(req Request) (*olbfgs.Learner, Cost, error)
}

// Run applies op to req, measures the wall-clock time of Apply into
// Cost.Wall and checks the operator's contract: a non-nil learner that is
// neither req.Actual nor shares its memory (ErrOperator otherwise). It also marks U deleted on the result
// (a no-op for conforming operators). Errors of Apply are wrapped with the
// operator's name.
func Run(op Operator, req Request) (*olbfgs.Learner, Cost, error) {
	start := time.Now()
	l, c, err := op.Apply(req)
	c.Wall = time.Since(start)
	if err != nil {
		return nil, c, fmt.Errorf("%s: %w", op.Name(), err)
	}
	switch {
	case l == nil:
		return nil, c, fmt.Errorf("%w: %s returned no learner", ErrOperator, op.Name())
	case req.Actual != nil && (l == req.Actual || l.Memory() == req.Actual.Memory()):
		return nil, c, fmt.Errorf("%w: %s returned the actual learner or its memory", ErrOperator, op.Name())
	}
	l.MarkDeleted(req.U.Sorted()...)
	return l, c, nil
}

// Paper returns the nine interventions of the paper's Experiment 2 (spec §5)
// in the order of its tables: oracle replay, no-op, parameter-only,
// contaminated pair drop, full memory reset, retain fine-tuning, drop and
// refill, window replay τ and window replay 5τ. tau is the learner's memory
// size τ, which sets the two replay windows. It panics if tau < 0.
func Paper(tau int) []Operator {
	if tau < 0 {
		panic(fmt.Sprintf("unlearn: Paper(%d): tau must be non-negative", tau))
	}
	return []Operator{
		Oracle(),
		NoOp(),
		ParamOnly(),
		PairDrop(),
		MemoryReset(),
		RetainFineTune(),
		DropRefill(),
		WindowReplay(tau, "window-tau", "Window replay τ"),
		WindowReplay(5*tau, "window-5tau", "Window replay 5τ"),
	}
}
