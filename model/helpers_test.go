package model

import (
	"io"
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
