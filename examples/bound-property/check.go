package main

import (
	"fmt"
	"math/rand/v2"
	"unlearn/experiment"

	"gonum.org/v1/gonum/floats"

	"unlearn/certify"
	"unlearn/olbfgs"
	"unlearn/stream"
	"unlearn/unlearn"
)

// Setting is YOUR deployment: the loss's public header (a kind the toolkit
// knows constants for, quadratic or logistic, with your λ or H0, H1) and the
// certifiable learner's configuration (radius, sample bound, pair guard).
// certify.DerivedAlpha turns them and a deletion's public description into
// the α every release is calibrated to.
type Setting struct {
	Header stream.Header
	Config olbfgs.Config
	// Custom is a loss the toolkit does not know (nil: the header's loss).
	Custom stream.Loss
}

// Loss returns the setting's loss.
func (s Setting) Loss() (stream.Loss, error) {
	if s.Custom != nil {
		return s.Custom, nil
	}
	return s.Header.Loss()
}

// Inserts returns n inserts with ids 1..n that the setting's learner
// accepts: payloads of norm at most Config.SampleBound in a uniform
// direction (logistic features x with labels ±1; quadratic minimizers a
// with curvature weights in [0, 1]). Replace it by your own data's
// distribution: the bound must hold for every stream the learner accepts.
func (s Setting) Inserts(r *rand.Rand, n int) []stream.Event {
	d, b := s.Config.Dim, s.Config.SampleBound
	out := make([]stream.Event, n)
	for i := range out {
		v := make([]float64, d)
		for j := range v {
			v[j] = r.NormFloat64()
		}
		// Radii up to b: a quarter of the payloads on the sphere ‖v‖ = b.
		rad := b * min(1, 1.25*r.Float64())
		floats.Scale(rad/max(floats.Norm(v, 2), 1e-300), v)
		for floats.Norm(v, 2) > b { // rounding: the learner would refuse it
			floats.Scale(1-0x1p-50, v)
		}
		lab := r.Float64()
		if s.Header.Kind == stream.KindLogistic {
			lab = float64(1 - 2*r.IntN(2))
		}
		out[i] = stream.InsertEvent(int64(i+1), v, lab)
	}
	return out
}

// Case is one random instance of the check: a stream the setting's learner
// accepts, a deletion request, and a number of retained inserts both the
// intervened state and the counterfactual take before the release.
type Case struct {
	Inserts   int    // inserts before the deletion request
	Horizon   int    // retained inserts after it, before the release
	Deletions int    // |U| ≤ Inserts
	Seed      uint64 // seed of the stream and of U
}

// Outcome is the check of one intervention.
type Outcome struct {
	Name      string
	Alpha     float64 // certify.DerivedAlpha: the α of a release of this state
	Source    string  // "recursion", or "diameter" when the diameter bound 2W' (or W' for drop-refill) is the smaller
	Deviation float64 // ‖w̃ − w⁻‖₂ computed exactly, rounded up
}

// Check trains the setting's learner on the case's stream, applies every
// built-in intervention for which the toolkit derives α to the deletion
// request, continues the intervened state and the counterfactual on the same
// Horizon retained inserts, and returns, for each, the derived α and the
// exact distance of the released-before-noise parameters (projected onto
// the learner's ball, as certify.Certify projects them) from the
// counterfactual's. The bound holds when Deviation ≤ Alpha, with no
// tolerance.
func (s Setting) Check(c Case) ([]Outcome, error) {
	loss, err := s.Loss()
	if err != nil {
		return nil, err
	}
	r := rand.New(rand.NewPCG(c.Seed, 1))
	events := s.Inserts(r, c.Inserts+c.Horizon)
	prefix, future := events[:c.Inserts], events[c.Inserts:]
	u := stream.NewIDSet()
	for len(u) < c.Deletions {
		u.Add(int64(1 + r.IntN(c.Inserts)))
	}
	actual, err := olbfgs.Replay(s.Config, loss, prefix)
	if err != nil {
		return nil, err
	}
	cf, err := olbfgs.Replay(s.Config, loss, stream.Counterfactual(events, u))
	if err != nil {
		return nil, err
	}
	req := unlearn.Request{Actual: actual, Prefix: prefix, U: u}
	ages := certify.AgesOf(prefix, u)
	var out []Outcome
	for _, op := range []unlearn.Operator{unlearn.NoOp(), unlearn.ParamOnly(), unlearn.PairDrop(), unlearn.MemoryReset(),
		unlearn.RetainFineTune(), unlearn.DropRefill()} {
		b, _ := unlearn.BuiltinOf(op)
		del := &certify.Deletion{Ages: ages, Horizon: c.Horizon, Intervention: b}
		if b.Kind == unlearn.KindRetainFT {
			// Retain fine-tuning re-applies the retained inserts among the
			// last τ (spec §8): its allowance counts them.
			del.Replayed = len(stream.Counterfactual(stream.LastInserts(prefix, s.Config.Memory), u))
		}
		sens, err := certify.DerivedAlpha(s.Config, s.Header, del)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", op.Name(), err)
		}
		state, _, err := unlearn.Run(op, req)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", op.Name(), err)
		}
		if err := state.Run(future); err != nil {
			return nil, fmt.Errorf("%s: continuing: %w", op.Name(), err)
		}
		w := append([]float64(nil), state.W()...)
		if rad := s.Config.RadiusBound(); floats.Norm(w, 2) > rad {
			floats.Scale(rad/floats.Norm(w, 2), w)
		}
		src := "recursion"
		if !(sens.Recursion > 0 && sens.Recursion+sens.Allowance < sens.Diameter) {
			src = "diameter"
		}
		out = append(out, Outcome{Name: op.Name(), Alpha: sens.Alpha, Source: src, Deviation: exactDistance(w, cf.W())})
	}
	return out, nil
}

// exactDistance is experiment.ExactDistance: ‖a − b‖₂ computed exactly
// and rounded up, so that a deviation is compared with α without tolerance.
func exactDistance(a, b []float64) float64 { return experiment.ExactDistance(a, b) }
