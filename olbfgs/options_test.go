package olbfgs

import (
	"fmt"
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"gonum.org/v1/gonum/diff/fd"
	"gonum.org/v1/gonum/floats"
	"pgregory.net/rapid"

	"unlearn/internal/floatbits"
	"unlearn/stream"
)

// optionSet draws a configuration with any combination of the options.
func optionSet(rt *rapid.T, c Config) Config {
	c.Intercept = rapid.Bool().Draw(rt, "intercept")
	c.RidgeIntercept = c.Intercept && rapid.Bool().Draw(rt, "ridge intercept")
	c.Standardize = rapid.Bool().Draw(rt, "standardize")
	c.Average = rapid.Bool().Draw(rt, "average")
	if c.Average {
		c.AverageStart = rapid.IntRange(0, 10).Draw(rt, "average start")
		c.AveragePower = rapid.SampledFrom([]float64{0, 3}).Draw(rt, "average power")
	}
	if rapid.Bool().Draw(rt, "schedule") {
		c.StepDecay = rapid.SampledFrom([]float64{0.01, 1}).Draw(rt, "step decay")
		c.StepPower = rapid.SampledFrom([]float64{0, 0.5, 0.75, 1}).Draw(rt, "step power")
	}
	c.Progress = rapid.Bool().Draw(rt, "progress")
	if rapid.Bool().Draw(rt, "damping") {
		c.Damping = 3
	}
	return c
}

// linearStream draws a stream of one of the linear kinds.
func linearStream(rt *rapid.T, t testing.TB, seed uint64, d, n int) (stream.Loss, stream.Header, []stream.Event) {
	switch rapid.IntRange(0, 2).Draw(rt, "kind") {
	case 0:
		return logisticStream(t, seed, d, n)
	case 1:
		return regressionStream(t, seed, d, n)
	}
	return multinomialStream(t, seed, d, rapid.IntRange(2, 4).Draw(rt, "classes"), n)
}

// sparseForm returns the events with every payload sparse (the zero
// entries left out).
func sparseForm(events []stream.Event) []stream.Event {
	out := make([]stream.Event, len(events))
	for i, e := range events {
		out[i] = e
		if e.Op != stream.Insert {
			continue
		}
		var idx []int32
		var v []float64
		for j, x := range e.Sample.V {
			if x != 0 {
				idx, v = append(idx, int32(j)), append(v, x)
			}
		}
		out[i].Sample = stream.SparseSample(idx, v, e.Sample.S)
	}
	return out
}

// TestOptionsReplayExactRapid checks, for random streams of every linear
// kind and every combination of the options, that the state is a function
// of the events: replaying them twice, replaying their sparse form,
// restoring a snapshot and stepping on, a Clone and a CopyFrom all give
// bit-identical states (Equal), and the snapshot round-trips.
func TestOptionsReplayExactRapid(t *testing.T) {
	rapid.Check(t, func(rt *rapid.T) {
		seed := rapid.Uint64().Draw(rt, "seed")
		d := rapid.IntRange(1, 6).Draw(rt, "d")
		n := rapid.IntRange(0, 40).Draw(rt, "n")
		loss, h, events := linearStream(rt, t, seed, d, n)
		// Zero some entries so that the sparse form differs from the dense.
		for _, e := range events {
			if e.Sample.V[0] > 0.8 {
				e.Sample.V[0] = 0
			}
		}
		cfg := optionSet(rt, DefaultConfig(d)).ForLoss(loss)
		cfg.Memory = rapid.IntRange(0, 5).Draw(rt, "tau")
		cut := rapid.IntRange(0, n).Draw(rt, "snapshot at")
		for _, id := range rapid.SliceOfNDistinct(rapid.Int64Range(1, int64(max(cut, 1))), 0, 3, func(v int64) int64 { return v }).Draw(rt, "deleted") {
			if int(id) <= cut {
				events = append(events[:cut:cut], append([]stream.Event{stream.DeleteEvent(id)}, events[cut:]...)...)
				cut++
			}
		}
		a := mustReplay(rt, cfg, loss, events)
		b := mustReplay(rt, cfg, loss, events)
		require.True(rt, a.Equal(b), "two replays differ")
		sp := mustReplay(rt, cfg, loss, sparseForm(events))
		require.True(rt, a.Equal(sp), "the sparse form's replay differs")

		head := mustReplay(rt, cfg, loss, events[:cut])
		doc, err := MarshalSnapshot(head, h)
		require.NoError(rt, err)
		back, _, err := UnmarshalSnapshot(doc)
		require.NoError(rt, err)
		require.True(rt, back.Equal(head), "snapshot round trip")
		require.NoError(rt, back.Run(events[cut:]))
		require.True(rt, back.Equal(a), "a restored snapshot stepped on differs")

		c := a.Clone()
		require.True(rt, c.Equal(a), "Clone")
		e := mustReplay(rt, cfg, loss, events[:cut])
		e.CopyFrom(a)
		require.True(rt, e.Equal(a), "CopyFrom")
	})
}

// TestOptionsOffPathKeepsTrajectory checks that Average and Progress do
// not change the trajectory: w and Z are those of the paper's learner, bit
// for bit, and with Average the deployed parameters are the average.
func TestOptionsOffPathKeepsTrajectory(t *testing.T) {
	lg, _, le := logisticStream(t, 5, 7, 200)
	paper := mustReplay(t, DefaultConfig(7), lg, le)
	cfg := DefaultConfig(7)
	cfg.Average, cfg.AverageStart, cfg.Progress = true, 50, true
	opt := mustReplay(t, cfg, lg, le)
	require.True(t, floatbits.Equal(paper.W(), opt.W()), "w")
	require.True(t, paper.Memory().Equal(opt.Memory()), "Z")
	assert.Equal(t, 150, opt.Averaged())
	assert.False(t, floatbits.Equal(opt.Deployed(), opt.W()), "the deployed parameters are the average")
}

// TestAverageIsTheMean checks the averaged iterate against the mean of
// the iterates after AverageStart, computed in a second pass.
func TestAverageIsTheMean(t *testing.T) {
	lg, _, le := logisticStream(t, 6, 4, 120)
	cfg := DefaultConfig(4)
	cfg.Average, cfg.AverageStart = true, 20
	l, err := New(cfg, lg)
	require.NoError(t, err)
	sum := make([]float64, 4)
	for i, e := range le {
		require.NoError(t, l.Step(e))
		if i+1 > cfg.AverageStart {
			floats.Add(sum, l.W())
		}
	}
	floats.Scale(1/float64(len(le)-cfg.AverageStart), sum)
	for j := range sum {
		// Round-off of a running mean of 100 terms of size ≲ 1: ≲ 1e-14.
		assert.InDelta(t, sum[j], l.Deployed()[j], 1e-13, "coordinate %d", j)
	}
}

// TestStandardizationStatistics checks the Welford statistics against a
// two-pass mean and (population) standard deviation, for a dense and a
// sparse stream.
func TestStandardizationStatistics(t *testing.T) {
	rg, _, re := regressionStream(t, 7, 5, 300)
	for _, events := range [][]stream.Event{re, sparseForm(re)} {
		cfg := DefaultConfig(5)
		cfg.Standardize = true
		l := mustReplay(t, cfg, rg, events)
		n, mean, std := l.Standardization()
		require.Equal(t, len(re), n)
		for j := range 5 {
			col := make([]float64, len(re))
			for i, e := range re {
				col[i] = e.Sample.V[j]
			}
			m := floats.Sum(col) / float64(len(col))
			var ss float64
			for _, x := range col {
				ss += (x - m) * (x - m)
			}
			// Welford's error is O(n·u) relative (Chan, Golub & LeVeque
			// 1983): far below 1e-12 at n = 300.
			assert.InEpsilon(t, m, mean[j], 1e-12, "mean %d", j)
			assert.InEpsilon(t, math.Sqrt(ss/float64(len(col))), std[j], 1e-12, "std %d", j)
		}
	}
}

// TestStandardizationIsScaleInvariant trains on features x and on
// a·x + b (a per-feature affine map): standardized features are the same
// up to rounding, so the predictions agree closely.
func TestStandardizationIsScaleInvariant(t *testing.T) {
	lg, _, le := logisticStream(t, 8, 4, 150)
	scaled := make([]stream.Event, len(le))
	for i, e := range le {
		x := slices.Clone(e.Sample.V)
		for j := range x {
			x[j] = 1000*float64(j+1)*x[j] + 5000
		}
		scaled[i] = stream.InsertEvent(e.ID, x, e.Sample.S)
	}
	cfg := DefaultConfig(4)
	cfg.Standardize, cfg.Intercept, cfg.Average = true, true, true
	a := mustReplay(t, cfg, lg, le)
	b := mustReplay(t, cfg, lg, scaled)
	ua, ub := make([]float64, 1), make([]float64, 1)
	for i := range 20 {
		a.Scores(ua, le[i].Sample)
		b.Scores(ub, scaled[i].Sample)
		// Round-off differences of the standardized features (≈1e-13)
		// grow along 150 steps; 1e-6 still separates this from any real
		// difference (scores of order 1).
		assert.InDelta(t, ua[0], ub[0], 1e-6, "sample %d", i)
	}
	// The paper's learner on the raw large features is far off.
	p := mustReplay(t, DefaultConfig(4), lg, scaled)
	assert.Greater(t, floats.Norm(p.W(), 2), 100*floats.Norm(a.W(), 2)+1)
}

// TestAffineGradientFiniteDifference checks the gradient of the affine
// path (Direction with an empty memory and γ0 = 1 is −∇ℓ) against central
// differences of an independently written objective: the standardized
// features from a two-pass mean and deviation over the samples so far and
// z, the scores with the intercept, the loss's data term, and the ridge on
// the weights (and on the intercepts with RidgeIntercept).
func TestAffineGradientFiniteDifference(t *testing.T) {
	type kase struct {
		name      string
		loss      stream.Loss
		events    []stream.Event
		intercept bool
		ridgeB    bool
		std       bool
	}
	lg, _, le := logisticStream(t, 9, 3, 12)
	mn, _, me := multinomialStream(t, 9, 3, 3, 12)
	rg, _, re := regressionStream(t, 9, 3, 12)
	var cases []kase
	for _, base := range []kase{{name: "logistic", loss: lg, events: le}, {name: "multinomial", loss: mn, events: me},
		{name: "regression", loss: rg, events: re}} {
		for _, o := range []struct{ b, rb, std bool }{{true, false, false}, {true, true, false}, {false, false, true}, {true, false, true}, {true, true, true}} {
			k := base
			k.intercept, k.ridgeB, k.std = o.b, o.rb, o.std
			k.name = fmt.Sprintf("%s/intercept=%v/ridge=%v/std=%v", base.name, o.b, o.rb, o.std)
			cases = append(cases, k)
		}
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			cfg := DefaultConfig(3).ForLoss(c.loss)
			cfg.Memory, cfg.Intercept, cfg.RidgeIntercept, cfg.Standardize = 0, c.intercept, c.ridgeB, c.std
			seen, z := c.events[:10], c.events[10].Sample
			l := mustReplay(t, cfg, c.loss, seen)
			lin := c.loss.(stream.Linear)
			// Features of z as its insert sees them.
			x := slices.Clone(z.V)
			if c.std {
				for j := range x {
					col := []float64{z.V[j]}
					for _, e := range seen {
						col = append(col, e.Sample.V[j])
					}
					m := floats.Sum(col) / float64(len(col))
					var ss float64
					for _, v := range col {
						ss += (v - m) * (v - m)
					}
					x[j] = (z.V[j] - m) / math.Sqrt(ss/float64(len(col)))
				}
			}
			K, r, d := lin.Outputs(), cfg.stride(), 3
			objective := func(w []float64) float64 {
				u := make([]float64, K)
				for k := range K {
					for j := range d {
						u[k] += w[k*r+j] * x[j]
					}
					if c.intercept {
						u[k] += w[k*r+d]
					}
				}
				v := lin.Link(make([]float64, K), u, z.S)
				for k := range K {
					for j := range d {
						v += lin.Lambda() / 2 * w[k*r+j] * w[k*r+j]
					}
					if c.intercept && c.ridgeB {
						v += lin.Lambda() / 2 * w[k*r+d] * w[k*r+d]
					}
				}
				return v
			}
			w := l.W()
			want := fd.Gradient(nil, objective, w, &fd.Settings{Formula: fd.Central})
			got := make([]float64, len(w))
			l.Direction(got, z)
			for i := range got {
				// Central differences with h = 6e-6 on a loss of order 1:
				// error ≲ 1e-9; 1e-6 as in the losses' tests.
				assert.InDelta(t, want[i], -got[i], 1e-6*max(1, math.Abs(want[i])), "∂ℓ/∂θ[%d]", i)
			}
		})
	}
}

func TestStepAt(t *testing.T) {
	c := DefaultConfig(1)
	assert.Equal(t, 0.1, c.StepAt(1000), "constant")
	c.StepDecay = 0.5 // η·a = 0.05
	for _, tt := range []struct {
		t    int
		want float64
	}{{0, 0.1}, {20, 0.05}, {60, 0.025}} {
		assert.InEpsilon(t, tt.want, c.StepAt(tt.t), 1e-15, "c = 1, t = %d", tt.t)
	}
	c.StepPower = 0.5
	assert.InEpsilon(t, 0.1/math.Sqrt(4), c.StepAt(60), 1e-15, "c = 1/2")
	prev := c.StepAt(0)
	for i := 1; i < 1000; i++ {
		require.LessOrEqual(t, c.StepAt(i), prev)
		prev = c.StepAt(i)
	}
}

// TestProgressIsPredictThenTrain recomputes the progressive statistics by
// scoring each insert with the deployed parameters of a copy taken before
// its step (Scores), for configurations without standardization (whose
// statistics would already count the insert in the learner's own
// scoring): the sums agree bit for bit.
func TestProgressIsPredictThenTrain(t *testing.T) {
	mn, _, me := multinomialStream(t, 10, 4, 3, 150)
	for _, average := range []bool{false, true} {
		cfg := DefaultConfig(4).ForLoss(mn)
		cfg.Progress, cfg.Intercept, cfg.Average = true, true, average
		if average {
			cfg.AverageStart = 30
		}
		l, err := New(cfg, mn)
		require.NoError(t, err)
		var sum float64
		correct := 0
		u, c := make([]float64, 3), make([]float64, 3)
		for _, e := range me {
			l.Scores(u, e.Sample)
			sum += mn.Link(c, u, e.Sample.S)
			if p, _ := mn.Predict(u); p == e.Sample.S {
				correct++
			}
			require.NoError(t, l.Step(e))
		}
		p, ok := l.Progress()
		require.True(t, ok)
		assert.Equal(t, len(me), p.N)
		assert.Equal(t, sum, p.LossSum, "average=%v", average)
		assert.Equal(t, correct, p.Correct)
		require.Len(t, p.RecentPredicted, 3)
		assert.InDelta(t, 1, floats.Sum(p.RecentLabels), 1e-12, "label shares sum to 1")
	}
}

// TestDiagnose checks that the paper's learner on large raw features is
// diagnosed (it diverges and predicts one class), and the standardized
// learner on the same data is not.
func TestDiagnose(t *testing.T) {
	lg, _, le := logisticStream(t, 11, 20, 1500)
	big := make([]stream.Event, len(le))
	for i, e := range le {
		x := slices.Clone(e.Sample.V)
		for j := range x {
			x[j] = 300 * (x[j] + 3) // positive and large, like pixels
		}
		big[i] = stream.InsertEvent(e.ID, x, e.Sample.S)
	}
	paper := DefaultConfig(20)
	paper.Progress = true
	p, _ := mustReplay(t, paper, lg, big).Progress()
	assert.True(t, p.Diagnose().Diverged, "paper learner on raw features: %+v", p)
	good := paper
	good.Standardize, good.Intercept, good.Average = true, true, true
	g, _ := mustReplay(t, good, lg, big).Progress()
	assert.Equal(t, Diagnosis{}, g.Diagnose(), "standardized learner: %+v", g)
	assert.Empty(t, g.Warnings(func(k int) string { return fmt.Sprint(k) }))

	single := Progress{N: 500, RecentLoss: 0.5, RecentZeroLoss: 0.69, RecentPredicted: []float64{0.995, 0.005}, RecentLabels: []float64{0.5, 0.5}}
	dg := single.Diagnose()
	assert.True(t, dg.SingleClass)
	assert.Equal(t, 0, dg.Class)
	assert.Len(t, single.Warnings(func(k int) string { return []string{"-1", "+1"}[k] }), 1)
	single.N = 99
	assert.Equal(t, Diagnosis{}, single.Diagnose(), "too few inserts to judge")
}

// TestScoresAgree checks Learner.Scores, a Scorer and the sparse form of a
// sample against each other (bit for bit), a Scorer's independence of
// later steps, and Scores of the paper's learner against wᵀx.
func TestScoresAgree(t *testing.T) {
	mn, _, me := multinomialStream(t, 12, 6, 4, 80)
	cfg := allOptions(DefaultConfig(6)).ForLoss(mn)
	l := mustReplay(t, cfg, mn, me[:60])
	sc := l.Scorer()
	a, b, c := make([]float64, 4), make([]float64, 4), make([]float64, 4)
	sp := sparseForm(me)
	for _, e := range me[60:] {
		l.Scores(a, e.Sample)
		sc.Scores(b, e.Sample)
		l.Scores(c, sp[e.ID-1].Sample)
		require.True(t, floatbits.Equal(a, b), "Scorer")
		require.True(t, floatbits.Equal(a, c), "sparse form")
	}
	require.NoError(t, l.Run(me[60:]))
	sc.Scores(b, me[0].Sample)
	l.Scores(a, me[0].Sample)
	assert.False(t, floatbits.Equal(a, b), "the learner moved on, its old Scorer did not")

	lg, _, le := logisticStream(t, 12, 5, 30)
	p := mustReplay(t, DefaultConfig(5), lg, le)
	u := make([]float64, 1)
	p.Scores(u, le[0].Sample)
	assert.InDelta(t, floats.Dot(p.W(), le[0].Sample.V), u[0], 1e-15)
	assert.Equal(t, 1, p.Outputs())
}

func TestStepWithOptionsDoesNotAllocate(t *testing.T) {
	mn, _, me := multinomialStream(t, 13, 8, 3, 200)
	for _, sparse := range []bool{false, true} {
		events := me
		if sparse {
			events = sparseForm(me)
		}
		l := mustReplay(t, allOptions(DefaultConfig(8)).ForLoss(mn), mn, events[:50])
		i := 50
		u := make([]float64, 3)
		allocs := testing.AllocsPerRun(100, func() {
			e := events[i]
			i++
			if err := l.Step(e); err != nil {
				t.Fatal(err)
			}
			l.Scores(u, e.Sample)
		})
		assert.Zero(t, allocs, "sparse=%v", sparse)
	}
}

func TestOptionsConfigErrors(t *testing.T) {
	q, _, _ := quadraticStream(t, 1, 2, 1)
	mn, _, _ := multinomialStream(t, 1, 2, 3, 1)
	lg, _, _ := logisticStream(t, 1, 2, 1)
	for _, tt := range []struct {
		name  string
		loss  stream.Loss
		edit  func(*Config)
		field string
	}{
		{"intercept on quadratic", q, func(c *Config) { c.Intercept = true }, "Intercept"},
		{"standardize on quadratic", q, func(c *Config) { c.Standardize = true }, "Standardize"},
		{"progress on quadratic", q, func(c *Config) { c.Progress = true }, "Progress"},
		{"multinomial without outputs", mn, func(c *Config) { c.Outputs = 0 }, "Outputs"},
		{"outputs on logistic", lg, func(c *Config) { c.Outputs = 3 }, "Outputs"},
		{"ridge intercept alone", lg, func(c *Config) { c.RidgeIntercept = true }, "RidgeIntercept"},
		{"average start alone", lg, func(c *Config) { c.AverageStart = 3 }, "AverageStart"},
		{"average power alone", lg, func(c *Config) { c.AveragePower = 3 }, "AveragePower"},
		{"negative average power", lg, func(c *Config) { c.Average, c.AveragePower = true, -1 }, "AveragePower"},
		{"negative average start", lg, func(c *Config) { c.Average, c.AverageStart = true, -1 }, "AverageStart"},
		{"negative decay", lg, func(c *Config) { c.StepDecay = -1 }, "StepDecay"},
		{"power without decay", lg, func(c *Config) { c.StepPower = 0.5 }, "StepPower"},
		{"power above 1", lg, func(c *Config) { c.StepDecay, c.StepPower = 1, 1.5 }, "StepPower"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			cfg := DefaultConfig(2).ForLoss(tt.loss)
			tt.edit(&cfg)
			_, err := New(cfg, tt.loss)
			var ce *ConfigError
			require.ErrorAs(t, err, &ce)
			assert.Equal(t, tt.field, ce.Field)
		})
	}
	// A quadratic loss takes averaging and a schedule.
	cfg := DefaultConfig(2)
	cfg.Average, cfg.StepDecay = true, 0.1
	_, err := New(cfg, q)
	require.NoError(t, err)
}

// TestSnapshotV2Rejects edits a v2 snapshot into inconsistent documents.
func TestSnapshotV2Rejects(t *testing.T) {
	mn, mh, me := multinomialStream(t, 14, 3, 3, 30)
	l := mustReplay(t, allOptions(DefaultConfig(3)).ForLoss(mn), mn, me)
	doc, err := MarshalSnapshot(l, mh)
	require.NoError(t, err)
	paper := mustReplay(t, DefaultConfig(3).ForLoss(mn), mn, me)
	pdoc, err := MarshalSnapshot(paper, mh)
	require.NoError(t, err)
	require.Contains(t, string(pdoc), `"olbfgs-state/v2"`, "a multinomial state has more than one output")
	lg, lh, le := logisticStream(t, 14, 3, 30)
	v1, err := MarshalSnapshot(mustReplay(t, DefaultConfig(3), lg, le), lh)
	require.NoError(t, err)
	require.Contains(t, string(v1), `"olbfgs-state/v1"`)
	for _, tt := range []struct {
		name, doc, old, new string
	}{
		{"v1 tag on options", string(doc), `"olbfgs-state/v2"`, `"olbfgs-state/v1"`},
		{"v2 tag without options", string(v1), `"olbfgs-state/v1"`, `"olbfgs-state/v2"`},
		{"inserts above t", string(doc), `"inserts": 30`, `"inserts": 31`},
		{"negative m2", string(doc), `"m2": [` + "\n   ", `"m2": [` + "\n   -"},
		{"average n above inserts", string(doc), `"average": {` + "\n  \"n\": 25", `"average": {` + "\n  \"n\": 26"},
		{"share above 1", string(doc), `"recent_accuracy": `, `"recent_accuracy": 2`},
		{"progress of a learner without it", string(v1), `"deleted": []`, `"deleted": [], "progress": {}`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			require.Contains(t, tt.doc, tt.old)
			_, _, err := UnmarshalSnapshot([]byte(strings.Replace(tt.doc, tt.old, tt.new, 1)))
			require.ErrorIs(t, err, ErrSnapshot)
		})
	}
}
