package certify

import (
	"fmt"
	"sync"

	"unlearn/bound"
	"unlearn/olbfgs"
	"unlearn/stream"
	"unlearn/unlearn"
)

// Certified is an intervention followed by certification: an
// unlearn.Operator whose every result is a certified release. Create it
// with [Wrap]. It is safe for concurrent use if the wrapped operator is.
//
// Use [Certified.ApplyCertified] to get each result's certificate; Apply
// (the unlearn.Operator method, for code that runs any operator, such as
// unlearn.Run or a benchmark) keeps the certificate of its latest call for
// [Certified.Last].
type Certified struct {
	op   unlearn.Operator
	spec Spec

	mu   sync.Mutex
	last *Certificate
}

// Wrap returns op as a certified intervention: Apply runs op (through
// unlearn.Run, which checks its contract) and certifies its output with
// [Certify], naming op in the certificate. spec is as for Certify, with
// these per-request settings:
//
//   - Scenario: its Ages are set from each request (the deleted inserts'
//     ages in the prefix, [AgesOf]) and Deletions to |U|. With
//     Start = bound.StartUntouched the scenario bounds the untouched
//     learner, and Shift is set to ‖w̃ − w‖₂ between op's output and the
//     actual state ([ShiftOf]): α = α_{t_del} + Shift bounds the deviation
//     of ANY intervention's parameters (triangle inequality). With
//     Start = bound.StartGiven the caller's Δ₀ is used as is (e.g. 0, with
//     its provenance, for an intervention known to be exact). Horizon must
//     be 0: the state is certified at t_del.
//   - Alpha: used as given; Deletions defaults to |U|.
//   - Intervention defaults to op.Name().
//   - Retained (Rebuild only) defaults, when nil, to the retained ones
//     among the last τ inserts of the prefix (as retain fine-tuning).
//   - Header defaults to [HeaderOf] the output's loss.
//
// Errors: the spec's, as a *SpecError (checked here, before any request).
func Wrap(op unlearn.Operator, spec Spec) (*Certified, error) {
	if op == nil {
		panic("certify: Wrap: nil operator")
	}
	probe := spec
	if spec.Scenario != nil {
		if spec.Scenario.Horizon != 0 {
			return nil, specErr("Scenario.Horizon", spec.Scenario.Horizon, fmt.Errorf("%w: Wrap certifies the state at t_del (Horizon 0)", ErrSpec))
		}
		sc := *spec.Scenario
		sc.Ages = nil
		probe.Scenario = &sc
	}
	if probe.Memory == Rebuild && probe.Retained == nil {
		probe.Retained = []stream.Event{}
	}
	probe.Deletions = 0
	if _, err := probe.resolve(); err != nil {
		return nil, err
	}
	return &Certified{op: op, spec: spec}, nil
}

// Name returns "certified-" + the wrapped operator's name.
func (c *Certified) Name() string { return "certified-" + c.op.Name() }

// Label returns the wrapped operator's label + " (certified)".
func (c *Certified) Label() string { return c.op.Label() + " (certified)" }

// Unwrap returns the wrapped operator.
func (c *Certified) Unwrap() unlearn.Operator { return c.op }

// Apply implements unlearn.Operator: [Certified.ApplyCertified] without
// the certificate, which [Certified.Last] then returns.
func (c *Certified) Apply(req unlearn.Request) (*olbfgs.Learner, unlearn.Cost, error) {
	l, cert, cost, err := c.ApplyCertified(req)
	if err != nil {
		return nil, cost, err
	}
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

// ApplyCertified runs the wrapped operator on req and certifies its output:
// it returns the released state, its certificate and the operator's cost
// (plus the replay of a memory rebuild: its events and two gradient
// evaluations per insert).
func (c *Certified) ApplyCertified(req unlearn.Request) (*olbfgs.Learner, *Certificate, unlearn.Cost, error) {
	out, cost, err := unlearn.Run(c.op, req)
	if err != nil {
		return nil, nil, cost, err
	}
	s := c.spec
	s.Deletions = len(req.U)
	if s.Scenario != nil {
		sc := *s.Scenario
		sc.Ages = AgesOf(req.Prefix, req.U)
		if sc.Start == bound.StartUntouched {
			s.Shift = ShiftOf(req.Actual, out)
		}
		s.Scenario = &sc
	}
	if s.Intervention == "" {
		s.Intervention = c.op.Name()
	}
	if s.Memory == Rebuild && s.Retained == nil {
		s.Retained = lastRetained(req.Prefix, req.U, out.Config().Memory)
	}
	r, err := s.resolve()
	if err != nil {
		return nil, nil, cost, err
	}
	rel, cert, err := certify(out, r)
	if err != nil {
		return nil, nil, cost, err
	}
	if s.Memory == Rebuild {
		cost.EventsReplayed += len(s.Retained)
		cost.GradEvals += 2 * len(s.Retained)
	}
	return rel, cert, cost, nil
}

// lastRetained returns the inserts among the last tau inserts of prefix
// whose ids are not in u, in stream order (SPEC §8, retain fine-tuning).
func lastRetained(prefix []stream.Event, u stream.IDSet, tau int) []stream.Event {
	return stream.Counterfactual(stream.LastInserts(prefix, tau), u)
}
