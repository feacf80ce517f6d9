package certify

import (
	"fmt"
	"sync"

	"gonum.org/v1/gonum/floats"

	"unlearn/internal/established"
	"unlearn/olbfgs"
	"unlearn/stream"
	"unlearn/unlearn"
)

// Certified is an intervention followed by a certified release: an
// unlearn.Operator whose every result is released through [Certify]'s
// mechanism with a sensitivity the toolkit derives for each request. Create
// it with [Wrap]. It is safe for concurrent use if the wrapped operator is.
type Certified struct {
	op   unlearn.Operator
	spec Spec

	mu   sync.Mutex
	last *Certificate
}

// Wrap returns op as a certified intervention. spec is as for [Certify]
// without Alpha and Deletion, which Wrap derives per request.
//
// Nothing a caller hands in is taken on its word. Every request is first
// checked: its prefix, replayed from θ0 with the request learner's
// configuration and loss (keeping checkpoints as the request learner does,
// from θ0), must give the request learner bit for bit — w, the memory with
// its pair sources, the deleted ids and the counters
// (ErrNotCertifiable otherwise). The intervention then runs on that replay,
// the toolkit's own learner, never on the caller's (whose checkpoints could
// hold anything). So the ages, the exactness and the deletion count below
// are those of the state actually released: a deleted sample listed at
// another position, a window that did not hold the deletion, or a learner
// that already had a deletion applied (two deletions are one request on
// the original history, with U holding both) are refused, not certified.
// The check costs a replay of the prefix.
//
//   - Exactness is established here, never taken from the caller: oracle
//     replay (the toolkit's own operator, recognized by unlearn.BuiltinOf)
//     replays the deletion-edited prefix, and a window replay whose window,
//     checked against the request's prefix, holds every deleted insert
//     restores a checkpoint older than all of them and replays the edited
//     window; both give the counterfactual bit for bit, and the release is
//     exact (α = 0, no noise, memory included).
//   - Any other built-in operator gets the derived α of its [Deletion]: the
//     deleted inserts' ages in the prefix ([AgesOf]), the operator's
//     allowance, and for a window replay that cannot be exact the ages at
//     its checkpoint and the retained steps it replays.
//   - An operator of another package gets the diameter bound 2W' (its
//     behaviour is unknown; the release projects onto the learner's ball).
//
// Errors: the spec's, as a *SpecError (checked on the first request, which
// brings the learner's configuration).
func Wrap(op unlearn.Operator, spec Spec) (*Certified, error) {
	if op == nil {
		panic("certify: Wrap: nil operator")
	}
	if spec.Alpha != nil || spec.Deletion != nil {
		return nil, specErr("Alpha", nil, fmt.Errorf("%w: Wrap derives α for each request; leave Alpha and Deletion unset", ErrSpec))
	}
	return &Certified{op: op, spec: spec}, nil
}

// Name returns "certified-" + the wrapped operator's name.
func (c *Certified) Name() string { return "certified-" + c.op.Name() }

// Label returns the wrapped operator's label + " (certified)".
func (c *Certified) Label() string { return c.op.Label() + " (certified)" }

// Unwrap returns the wrapped operator.
func (c *Certified) Unwrap() unlearn.Operator { return c.op }

// Apply implements unlearn.Operator: [Certified.ApplyCertified], returning
// the released state as a learner (its w and memory; no history); the
// certificate is kept for [Certified.Last].
func (c *Certified) Apply(req unlearn.Request) (*olbfgs.Learner, unlearn.Cost, error) {
	rel, cert, cost, err := c.ApplyCertified(req)
	if err != nil {
		return nil, cost, err
	}
	l, err := rel.Learner()
	if err != nil {
		return nil, cost, err
	}
	l.MarkDeleted(req.U.Sorted()...)
	c.mu.Lock()
	c.last = cert
	c.mu.Unlock()
	return l, cost, nil
}

// Last returns the certificate of the latest successful Apply, or nil.
func (c *Certified) Last() *Certificate {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.last
}

// ApplyCertified checks req (see [Wrap]), runs the wrapped operator on the
// toolkit's own replay of it and releases the output: it returns the
// release, its certificate and the operator's cost (plus the replay of a
// memory rebuild; the check's replay is not counted). A request whose
// prefix does not reproduce its learner is a *SpecError for
// "Request.Actual" wrapping ErrNotCertifiable.
func (c *Certified) ApplyCertified(req unlearn.Request) (*Release, *Certificate, unlearn.Cost, error) {
	own, err := replayRequest(req)
	if err != nil {
		return nil, nil, unlearn.Cost{}, err
	}
	req.Actual = own
	out, cost, err := unlearn.Run(c.op, req)
	if err != nil {
		return nil, nil, cost, err
	}
	s := c.spec
	s.Deletions = len(req.U)
	if s.Intervention == "" {
		s.Intervention = c.op.Name()
	}
	exact := ""
	if b, ok := unlearn.BuiltinOf(c.op); ok && builtinLoss(out.Loss()) {
		del, why := deletionOf(b, req)
		switch {
		case why != "":
			exact = why
			s.Established = established.New(why)
		case b.Kind == unlearn.KindParamOnly && !payloadsBounded(out, req):
			// The allowance η·hMax·G per deleted sample needs each deleted
			// payload within the learner's checks; otherwise: the diameter.
		default:
			s.Deletion = del
			s.Established = established.New("certify.Wrap ran the intervention on the request's learner and prefix")
		}
	}
	if exact != "" {
		s.Memory, s.Retained = Reset, nil // the exact state is released as it is
	} else if s.Memory == Rebuild && s.Retained == nil {
		s.Retained = lastRetained(req.Prefix, req.U, out.Config().Memory)
	}
	r, err := s.resolve(out, exact)
	if err != nil {
		return nil, nil, cost, err
	}
	rel, cert, err := certify(out, r)
	if err != nil {
		return nil, nil, cost, err
	}
	if r.Memory == Rebuild {
		cost.EventsReplayed += len(r.Retained)
		cost.GradEvals += 2 * len(r.Retained)
	}
	return rel, cert, cost, nil
}

// replayRequest replays req.Prefix from θ0 with the configuration and loss
// of req.Actual, keeping checkpoints from θ0 with req.Actual's window, and
// returns the replay if it equals req.Actual bit for bit (olbfgs
// Learner.Equal: configuration, counters, w, memory with pair sources,
// deleted ids).
func replayRequest(req unlearn.Request) (*olbfgs.Learner, error) {
	if err := req.Validate(); err != nil {
		return nil, specErr("Request", nil, fmt.Errorf("%w: %w", ErrNotCertifiable, err))
	}
	a := req.Actual
	own, err := olbfgs.New(a.Config(), a.Loss())
	if err != nil {
		return nil, specErr("Request.Actual", nil, fmt.Errorf("%w: %w", ErrNotCertifiable, err))
	}
	if w := a.CheckpointWindow(); w > 0 {
		if err := own.KeepCheckpoints(w); err != nil {
			return nil, specErr("Request.Actual", nil, fmt.Errorf("%w: %w", ErrNotCertifiable, err))
		}
	}
	if err := own.Run(req.Prefix); err != nil {
		return nil, specErr("Request.Prefix", nil, fmt.Errorf("%w: replaying the prefix: %w", ErrNotCertifiable, err))
	}
	if !own.Equal(a) {
		return nil, specErr("Request.Actual", nil, fmt.Errorf("%w: replaying the request's %d-event prefix from θ0 does not give the request's learner bit for bit: it was not trained on this prefix (in this order, with this configuration), or it was changed since (an intervention already applied, w or the memory edited)", ErrNotCertifiable, len(req.Prefix)))
	}
	return own, nil
}

// deletionOf describes the request for a built-in operator, or returns why
// its result is exactly the counterfactual.
func deletionOf(b unlearn.Builtin, req unlearn.Request) (*Deletion, string) {
	ages := AgesOf(req.Prefix, req.U)
	switch b.Kind {
	case unlearn.KindOracle:
		return nil, "oracle replay of the deletion-edited prefix"
	case unlearn.KindWindowReplay:
		from := max(0, len(req.Prefix)-b.Window)
		if firstDeleted(req.Prefix, req.U) >= from {
			return nil, fmt.Sprintf("window replay over %d events from a checkpoint older than every deleted insert", b.Window)
		}
		// The checkpoint carries the older deletions: both trajectories then
		// take the window's retained inserts.
		horizon, inWindow := 0, 0
		for _, e := range req.Prefix[from:] {
			switch {
			case e.Op == stream.Insert && !req.U.Has(e.ID):
				horizon++
			case e.Op == stream.Insert:
				inWindow++
			}
		}
		return &Deletion{Ages: AgesOf(req.Prefix[:from], req.U), Horizon: horizon, Intervention: b, InWindow: inWindow}, ""
	case unlearn.KindRetainFT:
		n := len(lastRetained(req.Prefix, req.U, req.Actual.Config().Memory))
		return &Deletion{Ages: ages, Intervention: b, Replayed: n}, ""
	}
	return &Deletion{Ages: ages, Intervention: b}, ""
}

// payloadsBounded reports whether every deleted insert of the request
// passes the learner's own checks (the loss's sample check and the sample
// bound), as parameter-only's allowance requires of the gradients it
// evaluates at them.
func payloadsBounded(l *olbfgs.Learner, req unlearn.Request) bool {
	b := l.Config().SampleBound
	for _, e := range req.Prefix {
		if e.Op != stream.Insert || !req.U.Has(e.ID) {
			continue
		}
		if _, err := l.Loss().CheckSample(e.Sample); err != nil {
			return false
		}
		if b > 0 && !(floats.Norm(e.Sample.V, 2) <= b) {
			return false
		}
	}
	return true
}

// firstDeleted returns the index in prefix of the first insert of an id in
// u (len(prefix) if none).
func firstDeleted(prefix []stream.Event, u stream.IDSet) int {
	for i, e := range prefix {
		if e.Op == stream.Insert && u.Has(e.ID) {
			return i
		}
	}
	return len(prefix)
}

// lastRetained returns the inserts among the last tau inserts of prefix
// whose ids are not in u, in stream order (spec §8, retain fine-tuning).
func lastRetained(prefix []stream.Event, u stream.IDSet, tau int) []stream.Event {
	return stream.Counterfactual(stream.LastInserts(prefix, tau), u)
}

// Describe returns what [Wrap] derives α from for operator op on request
// req: the public description of the request (deletion ages, the
// operator's allowance, a window replay's checkpoint), or, when the toolkit
// establishes that op's result is the counterfactual itself, why (exact is
// then non-empty and del nil). An operator of another package gets
// (nil, ""): the diameter bound. It is what an audit or a service needs to
// release states the way Wrap does without running op through Wrap.
func Describe(op unlearn.Operator, req unlearn.Request) (del *Deletion, exact string) {
	b, ok := unlearn.BuiltinOf(op)
	if !ok {
		return nil, ""
	}
	return deletionOf(b, req)
}
