package certify

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

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
