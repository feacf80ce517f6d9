package certify

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"pgregory.net/rapid"

	"unlearn/internal/floatbits"
	"unlearn/olbfgs"
	"unlearn/stream"
	"unlearn/unlearn"
)

// TestPropertyDeviationWithinAlpha: on real o-LBFGS float trajectories of
// guarded learners, for every built-in intervention, the released-before-
// noise w (projected as Certify projects it) is within the derived α of
// the float counterfactual w⁻, with NO tolerance (the distance is computed
// exactly); exact releases are the counterfactual bit for bit. Streams are
// isotropic quadratics (the commuting case, where the recursion is not
// capped by the diameter) and one-dimensional logistic ones, with
// deletions up to hundreds of steps old.
func TestPropertyDeviationWithinAlpha(t *testing.T) {
	rapid.Check(t, func(rt *rapid.T) {
		logistic := rapid.Bool().Draw(rt, "logistic")
		d := rapid.IntRange(1, 4).Draw(rt, "d")
		if logistic {
			d = 1
		}
		tau := rapid.IntRange(1, 6).Draw(rt, "tau")
		n := rapid.IntRange(20, 400).Draw(rt, "n")
		seed := rapid.Uint64().Draw(rt, "seed")
		r := rand.New(rand.NewPCG(seed, 1))
		var loss stream.Loss
		var cfg olbfgs.Config
		var events []stream.Event
		if logistic {
			l, _ := stream.NewLogistic(1, rapid.Float64Range(0.05, 1).Draw(rt, "lambda"))
			loss = l
			cfg = logisticCfg(1, tau)
			cfg.StepSize = rapid.Float64Range(0.05, 1).Draw(rt, "eta")
			cfg.PairAngle, cfg.PairMin, cfg.PairMax = 1e-6, l.Lambda(), l.Lambda()+0.25
			cfg.InitialScale = 1 / (l.Lambda() + 0.25)
			events = logisticStream(r, 1, n)
		} else {
			c0 := rapid.Float64Range(0.2, 2).Draw(rt, "c0")
			c1 := c0 * rapid.Float64Range(1, 1.5).Draw(rt, "ratio")
			loss = scalarLoss(t, d, c0, c1)
			cfg = guarded(d, tau, rapid.Float64Range(0.05, 0.9).Draw(rt, "eta")/c1, c0, c1, rapid.Float64Range(0.5, 5).Draw(rt, "W"), 2)
			events = randomInserts(r, d, n, 1)
		}
		m := rapid.IntRange(1, 3).Draw(rt, "deletions")
		ids := make([]int64, m)
		for i := range ids {
			ids[i] = int64(rapid.IntRange(1, n).Draw(rt, fmt.Sprintf("id%d", i)))
		}
		u := stream.NewIDSet(ids...)
		actual, err := olbfgs.New(cfg, loss)
		if err != nil {
			rt.Fatal(err)
		}
		if err := actual.KeepCheckpoints(5 * tau); err != nil {
			rt.Fatal(err)
		}
		if err := actual.Run(events); err != nil {
			rt.Fatal(err)
		}
		cf, err := olbfgs.Replay(cfg, loss, stream.Counterfactual(events, u))
		if err != nil {
			rt.Fatal(err)
		}
		h, _ := HeaderOf(loss)
		req := unlearn.Request{Actual: actual, Prefix: events, U: u}
		ops := []unlearn.Operator{unlearn.Oracle(), unlearn.NoOp(), unlearn.ParamOnly(), unlearn.PairDrop(), unlearn.MemoryReset(),
			unlearn.RetainFineTune(), unlearn.DropRefill(), unlearn.WindowReplay(tau, "w1", "w1"), unlearn.WindowReplay(5*tau, "w5", "w5")}
		for _, op := range ops {
			out, _, err := unlearn.Run(op, req)
			if err != nil {
				rt.Fatalf("%s: %v", op.Name(), err)
			}
			b, _ := unlearn.BuiltinOf(op)
			del, exact := deletionOf(b, req)
			if exact != "" {
				if !floatbits.Equal(out.W(), cf.W()) {
					rt.Fatalf("%s: called exact (%s) but differs from the counterfactual", op.Name(), exact)
				}
				continue
			}
			sens, err := sensitivity(&Spec{Deletion: del}, cfg, h, "")
			if err != nil {
				rt.Fatalf("%s: %v", op.Name(), err)
			}
			w := append([]float64(nil), out.W()...)
			if rad := cfg.RadiusBound(); normExact(w) > rad {
				scale(w, rad)
			}
			if dev := exactDistance(w, cf.W()); !(dev <= sens.Alpha) {
				rt.Fatalf("%s: deviation %v > α = %v (recursion %v, allowance %v)", op.Name(), dev, sens.Alpha, sens.Recursion, sens.Allowance)
			}
		}
	})
}

func normExact(w []float64) float64 { return exactDistance(w, make([]float64, len(w))) }

// scale projects w as Certify does.
func scale(w []float64, r float64) {
	var s float64
	for _, v := range w {
		s += v * v
	}
	n := math.Sqrt(s)
	for i := range w {
		w[i] *= r / n
	}
}
