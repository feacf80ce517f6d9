package certify

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"
	"gonum.org/v1/gonum/floats"
	"pgregory.net/rapid"

	"unlearn/internal/floatbits"
	"unlearn/olbfgs"
	"unlearn/stream"
	"unlearn/unlearn"
)

// TestPropertyScheduledDeviationWithinAlpha: for learners of the
// certifiable profile (olbfgs.Config.CertifiableProfile: no memory, a
// ridged intercept or none, the schedule η₀/(1 + η₀λ_η t), the last
// iterate or an average of either kind), the α that DerivedAlpha gives
// from public quantities (Steps, Ages, Horizon, the intervention) bounds
// the exact (math/big) distance between the released vector before noise
// — the deployed parameters of the unlearned learner, projected as
// Certify projects them — and the counterfactual's, retrained from θ0
// without the deleted inserts on the same later inserts, with NO
// tolerance. Deletions of several ages, every intervention the store's
// approximate path uses, and steps after the intervention.
func TestPropertyScheduledDeviationWithinAlpha(t *testing.T) {
	rapid.Check(t, func(rt *rapid.T) {
		d := rapid.IntRange(1, 3).Draw(rt, "d")
		lambda := rapid.Float64Range(0.01, 1).Draw(rt, "lambda")
		loss, _ := stream.NewLogistic(d, lambda)
		cfg := olbfgs.DefaultConfig(d)
		cfg.SampleBound = rapid.Float64Range(0.5, 2).Draw(rt, "B")
		cfg = cfg.CertifiableProfile(lambda)
		cfg.Intercept = rapid.Bool().Draw(rt, "intercept")
		cfg.RidgeIntercept = cfg.Intercept
		switch rapid.IntRange(0, 2).Draw(rt, "average") {
		case 0:
			cfg.Average, cfg.AveragePower = false, 0
		case 1:
			cfg.AveragePower = 0
			cfg.AverageStart = rapid.IntRange(0, 30).Draw(rt, "average start")
		}
		// Any schedule is covered; the profile's is the recommended one.
		cfg.StepSize *= rapid.Float64Range(0.5, 4).Draw(rt, "eta factor")
		cfg.StepDecay *= rapid.Float64Range(0.5, 2).Draw(rt, "decay factor")
		if rapid.Bool().Draw(rt, "small radius") {
			cfg.Radius = rapid.Float64Range(0.5, 3).Draw(rt, "W")
		}
		t0 := rapid.IntRange(2, 200).Draw(rt, "T0")
		horizon := rapid.IntRange(0, 100).Draw(rt, "horizon")
		r := rand.New(rand.NewPCG(rapid.Uint64().Draw(rt, "seed"), 7))
		events := logisticStream(r, d, t0+horizon)
		for i := range events {
			floats.Scale(cfg.SampleBound*0.999, events[i].Sample.V) // ‖x‖ < B
		}
		prefix, later := events[:t0], events[t0:]
		m := rapid.IntRange(1, 4).Draw(rt, "deletions")
		var ids []int64
		for i := range m {
			ids = append(ids, prefix[rapid.IntRange(0, t0-1).Draw(rt, fmt.Sprintf("deleted %d", i))].ID)
		}
		u := stream.NewIDSet(ids...)
		actual, err := olbfgs.Replay(cfg, loss, prefix)
		if err != nil {
			rt.Fatal(err)
		}
		op := rapid.SampledFrom([]unlearn.Operator{unlearn.NoOp(), unlearn.ParamOnly(), unlearn.PairDrop(), unlearn.MemoryReset(), unlearn.DropRefill()}).Draw(rt, "intervention")
		if op.Name() == "drop-refill" {
			horizon, later = 0, nil // with steps after it, the diameter (not tested here)
		}
		out, _, err := unlearn.Run(op, unlearn.Request{Actual: actual, Prefix: prefix, U: u})
		if err != nil {
			rt.Fatal(err)
		}
		if err := out.Run(later); err != nil {
			rt.Fatal(err)
		}
		cf, err := olbfgs.Replay(cfg, loss, append(stream.Counterfactual(prefix, u), later...))
		if err != nil {
			rt.Fatal(err)
		}
		b, _ := unlearn.BuiltinOf(op)
		h, _ := HeaderOf(loss)
		sens, err := DerivedAlpha(cfg, h, &Deletion{Ages: AgesOf(prefix, u), Steps: t0, Horizon: horizon, Intervention: b})
		if err != nil {
			rt.Fatal(err)
		}
		if sens.Source != "derived" || sens.Provenance.String() != "proved" {
			rt.Fatalf("%s: α of source %s, %v", op.Name(), sens.Source, sens.Provenance)
		}
		w := append([]float64(nil), out.Deployed()...)
		if rad := cfg.RadiusBound(); floats.Norm(w, 2) > rad {
			floats.Scale(rad/floats.Norm(w, 2), w)
		}
		if dev := floatbits.ExactDistance(w, cf.Deployed()); !(dev <= sens.Alpha) {
			rt.Fatalf("%s: deviation %v > α = %v", op.Name(), dev, sens.Alpha)
		}
	})
}

// TestScheduledAlphaShrinksWithStream: the derived α of one deletion of a
// fixed age falls as the stream grows, and is far below the diameter for a
// long stream (the Fashion-MNIST configuration of docs/results-real.md).
func TestScheduledAlphaShrinksWithStream(t *testing.T) {
	cfg := olbfgs.DefaultConfig(784)
	cfg.SampleBound = 28
	cfg = cfg.CertifiableProfile(olbfgs.CertifiableLambda)
	h := stream.Header{Format: stream.FormatV1, Kind: stream.KindLogistic, D: 784, Lambda: olbfgs.CertifiableLambda}
	prev := math.Inf(1)
	for _, steps := range []int{1000, 10000, 100000} {
		s, err := DerivedAlpha(cfg, h, &Deletion{Ages: []int{steps / 2}, Steps: steps, Intervention: unlearn.Builtin{Kind: unlearn.KindNoop}})
		if err != nil {
			t.Fatal(err)
		}
		if s.Source != "derived" || s.Binding != "recursion" || !(s.Alpha < prev) || !(s.Alpha < s.Diameter/100) {
			t.Fatalf("T = %d: α = %v (%s, %s), previous %v, diameter %v", steps, s.Alpha, s.Source, s.Binding, prev, s.Diameter)
		}
		prev = s.Alpha
	}
	// Without the step count the scheduled bound is not used.
	s, err := DerivedAlpha(cfg, h, &Deletion{Ages: []int{5}, Intervention: unlearn.Builtin{Kind: unlearn.KindNoop}})
	if err != nil || s.Binding != "diameter" {
		t.Fatalf("no steps: %v, %v", s.Binding, err)
	}
}

// TestPropertyScheduledSeveralRequests: several approximate requests
// pending at once (Deletion.Earlier), each served by its own intervention
// at its own step count with inserts between them (or none) and after the
// last, are covered by the one scheduled recursion: the derived α bounds
// the exact (math/big) distance between the released vector and the
// counterfactual retrained without every request's inserts, with NO
// tolerance. Leaving the earlier requests out of the description makes it
// fail (the deviation exceeds the one-request α).
func TestPropertyScheduledSeveralRequests(t *testing.T) {
	rapid.Check(t, func(rt *rapid.T) {
		d := rapid.IntRange(1, 3).Draw(rt, "d")
		lambda := rapid.Float64Range(0.01, 1).Draw(rt, "lambda")
		loss, _ := stream.NewLogistic(d, lambda)
		cfg := olbfgs.DefaultConfig(d)
		cfg.SampleBound = rapid.Float64Range(0.5, 2).Draw(rt, "B")
		cfg = cfg.CertifiableProfile(lambda)
		cfg.Intercept = rapid.Bool().Draw(rt, "intercept")
		cfg.RidgeIntercept = cfg.Intercept
		if rapid.Bool().Draw(rt, "last iterate") {
			cfg.Average, cfg.AveragePower = false, 0
		}
		cfg.StepSize *= rapid.Float64Range(0.5, 4).Draw(rt, "eta factor")
		if rapid.Bool().Draw(rt, "small radius") {
			cfg.Radius = rapid.Float64Range(0.5, 3).Draw(rt, "W")
		}
		r := rand.New(rand.NewPCG(rapid.Uint64().Draw(rt, "seed"), 11))
		var nextID int64
		newEvents := func(n int) []stream.Event {
			ev := logisticStream(r, d, n)
			for i := range ev {
				floats.Scale(cfg.SampleBound*0.999, ev[i].Sample.V)
				nextID++
				ev[i].ID = nextID
			}
			return ev
		}
		actual, err := olbfgs.New(cfg, loss)
		if err != nil {
			rt.Fatal(err)
		}
		var log []stream.Event // every insert the actual learner applied
		all := stream.NewIDSet()
		var reqs []Request
		ops := []unlearn.Operator{unlearn.NoOp(), unlearn.ParamOnly(), unlearn.PairDrop(), unlearn.MemoryReset()}
		for q := range rapid.IntRange(2, 3).Draw(rt, "requests") {
			// Before a request: some inserts, or none (two requests at one count).
			ev := newEvents(rapid.IntRange(0, 80).Draw(rt, fmt.Sprintf("inserts before %d", q)) + 1 - min(q, 1))
			if err := actual.Run(ev); err != nil {
				rt.Fatal(err)
			}
			log = append(log, ev...)
			var ids []int64
			for i := range rapid.IntRange(1, 3).Draw(rt, fmt.Sprintf("deletions %d", q)) {
				if id := log[rapid.IntRange(0, len(log)-1).Draw(rt, fmt.Sprintf("deleted %d.%d", q, i))].ID; !all.Has(id) {
					ids = append(ids, id)
				}
			}
			if len(ids) == 0 {
				continue
			}
			u := stream.NewIDSet(ids...)
			op := rapid.SampledFrom(ops).Draw(rt, fmt.Sprintf("intervention %d", q))
			if actual, _, err = unlearn.Run(op, unlearn.Request{Actual: actual, Prefix: log, U: u}); err != nil {
				rt.Fatal(err)
			}
			all = stream.NewIDSet(append(all.Sorted(), ids...)...)
			b, _ := unlearn.BuiltinOf(op)
			reqs = append(reqs, Request{Ages: AgesOf(log, u), Steps: len(log), Intervention: b})
		}
		later := newEvents(rapid.IntRange(0, 80).Draw(rt, "horizon"))
		if err := actual.Run(later); err != nil {
			rt.Fatal(err)
		}
		cf, err := olbfgs.Replay(cfg, loss, append(stream.Counterfactual(log, all), later...))
		if err != nil {
			rt.Fatal(err)
		}
		last := reqs[len(reqs)-1]
		del := &Deletion{Ages: last.Ages, Steps: last.Steps, Horizon: len(log) - last.Steps + len(later), Intervention: last.Intervention, Earlier: reqs[:len(reqs)-1]}
		h, _ := HeaderOf(loss)
		sens, err := DerivedAlpha(cfg, h, del)
		if err != nil {
			rt.Fatal(err)
		}
		if sens.Source != "derived" || sens.Provenance.String() != "proved" {
			rt.Fatalf("α of source %s, %v", sens.Source, sens.Provenance)
		}
		w := append([]float64(nil), actual.Deployed()...)
		if rad := cfg.RadiusBound(); floats.Norm(w, 2) > rad {
			floats.Scale(rad/floats.Norm(w, 2), w)
		}
		if dev := floatbits.ExactDistance(w, cf.Deployed()); !(dev <= sens.Alpha) {
			rt.Fatalf("%d requests: deviation %v > α = %v (%s: %s)", len(reqs), dev, sens.Alpha, sens.Binding, sens.Why)
		}
	})
}

// TestSeveralRequestsPaths: earlier requests on a learner the scheduled
// bound does not cover give the diameter and say why; an insert deleted in
// two requests, or steps out of order, are refused naming the field; two
// parameter-only corrections at one step count give the diameter.
func TestSeveralRequestsPaths(t *testing.T) {
	cfg := olbfgs.DefaultConfig(2)
	cfg.SampleBound = 1
	cfg = cfg.CertifiableProfile(0.5)
	h := stream.Header{Format: stream.FormatV1, Kind: stream.KindLogistic, D: 2, Lambda: 0.5}
	noop := unlearn.Builtin{Kind: unlearn.KindNoop}
	po := unlearn.Builtin{Kind: unlearn.KindParamOnly}
	del := func(e ...Request) *Deletion {
		return &Deletion{Ages: []int{3}, Steps: 100, Horizon: 10, Intervention: noop, Earlier: e}
	}
	one, err := DerivedAlpha(cfg, h, del())
	require.NoError(t, err)
	two, err := DerivedAlpha(cfg, h, del(Request{Ages: []int{10}, Steps: 50, Intervention: po}))
	require.NoError(t, err)
	require.Equal(t, "recursion", two.Binding)
	require.Greater(t, two.Alpha, one.Alpha, "a second request adds to α")

	_, err = DerivedAlpha(cfg, h, del(Request{Ages: []int{0}, Steps: 97, Intervention: noop}))
	require.ErrorContains(t, err, "Deletion.Ages[0]")
	require.ErrorContains(t, err, "deleted twice")
	_, err = DerivedAlpha(cfg, h, del(Request{Ages: []int{1}, Steps: 60, Intervention: noop}, Request{Ages: []int{1}, Steps: 50, Intervention: noop}))
	require.ErrorContains(t, err, "Deletion.Earlier[1].Steps")

	same := &Deletion{Ages: []int{3}, Steps: 100, Intervention: po, Earlier: []Request{{Ages: []int{10}, Steps: 100, Intervention: po}}}
	s, err := DerivedAlpha(cfg, h, same)
	require.NoError(t, err)
	require.Equal(t, "diameter", s.Binding)
	require.Contains(t, s.Why, "two parameter-only corrections")

	paper := olbfgs.DefaultConfig(2)
	paper.Radius, paper.SampleBound, paper.PairAngle, paper.PairMin, paper.PairMax = 3, 1, 0.01, 0.99, 1.01
	s, err = DerivedAlpha(paper, h, del(Request{Ages: []int{10}, Steps: 50, Intervention: noop}))
	require.NoError(t, err)
	require.Equal(t, "diameter", s.Binding)
	require.Equal(t, severalWhy, s.Why)
}
