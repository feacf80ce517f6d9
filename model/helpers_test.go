package model

import (
	"io"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"

	"unlearn/olbfgs"
	"unlearn/stream"
)

// trained returns a logistic learner trained on a generated stream of T
// events in d dimensions, and the stream (fixed seed).
func trained(t testing.TB, d, T int, seed uint64) (*olbfgs.Learner, *stream.History) {
	t.Helper()
	h, err := stream.GenerateLogistic(stream.LogisticOptions{D: d, T: T, Seed: seed})
	require.NoError(t, err)
	cfg := olbfgs.DefaultConfig(d)
	cfg.Memory = 5
	l, err := olbfgs.Replay(cfg, h.Loss, h.Events)
	require.NoError(t, err)
	return l, h
}

// regressionLearner returns a regression learner at the parameters w.
func regressionLearner(t testing.TB, w []float64) *olbfgs.Learner {
	t.Helper()
	loss, err := stream.NewRegression(len(w), 0.1)
	require.NoError(t, err)
	l, err := olbfgs.New(olbfgs.DefaultConfig(len(w)), loss)
	require.NoError(t, err)
	l.SetW(w)
	return l
}

// eventRows is a Rows over a slice of events.
type eventRows struct {
	events []stream.Event
	i      int
}

func (r *eventRows) Next() (stream.Event, error) {
	if r.i == len(r.events) {
		return stream.Event{}, io.EOF
	}
	r.i++
	return r.events[r.i-1], nil
}

func rowsOf(events []stream.Event) *eventRows { return &eventRows{events: events} }

// optionCase is a trained learner of one loss and set of options, with
// the events it was trained on.
type optionCase struct {
	Name    string
	Learner *olbfgs.Learner
	Events  []stream.Event
	// paperLogistic: the paper's logistic learner (no options).
	paperLogistic bool
}

// optionCases returns learners of the paper's configuration, of each
// practitioner option alone, of every option together, and of the
// multinomial loss without and with options, each trained on a small
// generated stream (fixed seeds).
func optionCases(t testing.TB) []optionCase {
	t.Helper()
	lh, err := stream.GenerateLogistic(stream.LogisticOptions{D: 6, T: 120, Seed: 3})
	require.NoError(t, err)
	mn, me := multinomialEvents(t, 5, 3, 150, 9)
	base := olbfgs.DefaultConfig(6)
	base.Memory = 5
	with := func(edit func(*olbfgs.Config)) olbfgs.Config {
		c := base
		edit(&c)
		return c
	}
	all := func(c *olbfgs.Config) {
		c.Intercept, c.Standardize, c.Average, c.AveragePower, c.Progress = true, true, true, 10, true
		c.StepDecay, c.StepPower, c.Damping = 0.01, 0.75, 2
	}
	var out []optionCase
	for _, c := range []struct {
		name string
		cfg  olbfgs.Config
	}{
		{"paper", base},
		{"intercept", with(func(c *olbfgs.Config) { c.Intercept = true })},
		{"standardize", with(func(c *olbfgs.Config) { c.Standardize = true })},
		{"average", with(func(c *olbfgs.Config) { c.Average, c.AverageStart = true, 10 })},
		{"every option", with(all)},
		{"practitioner profile", base.Practitioner()},
	} {
		l, err := olbfgs.Replay(c.cfg, lh.Loss, lh.Events)
		require.NoError(t, err)
		out = append(out, optionCase{Name: c.name, Learner: l, Events: lh.Events, paperLogistic: c.name == "paper"})
	}
	for _, c := range []struct {
		name string
		cfg  olbfgs.Config
	}{
		{"multinomial", olbfgs.DefaultConfig(5)},
		{"multinomial, every option", func() olbfgs.Config { c := olbfgs.DefaultConfig(5); all(&c); return c }()},
	} {
		l, err := olbfgs.Replay(c.cfg.ForLoss(mn), mn, me)
		require.NoError(t, err)
		out = append(out, optionCase{Name: c.name, Learner: l, Events: me})
	}
	return out
}

// multinomialEvents returns a K-class softmax loss (λ = 0.05) and n
// inserts whose features have a nonzero mean and unequal scales, with
// labels drawn from the softmax of a random model.
func multinomialEvents(t testing.TB, d, k, n int, seed uint64) (*stream.Multinomial, []stream.Event) {
	t.Helper()
	rng := rand.New(rand.NewPCG(seed, 5))
	loss, err := stream.NewMultinomial(d, k, 0.05)
	require.NoError(t, err)
	beta := make([]float64, k*d)
	for i := range beta {
		beta[i] = rng.NormFloat64()
	}
	events := make([]stream.Event, n)
	p := make([]float64, k)
	for i := range events {
		x := make([]float64, d)
		for j := range x {
			x[j] = 2 + float64(j+1)*rng.NormFloat64()
		}
		var sum float64
		for c := range k {
			p[c] = math.Exp(stream.Dot4(x, beta[c*d:(c+1)*d]) / float64(d))
			sum += p[c]
		}
		u, y := rng.Float64()*sum, k-1
		for c := range k {
			if u < p[c] {
				y = c
				break
			}
			u -= p[c]
		}
		events[i] = stream.InsertEvent(int64(i+1), x, float64(y))
	}
	return loss, events
}
