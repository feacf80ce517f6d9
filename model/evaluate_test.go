package model

import (
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"gonum.org/v1/gonum/floats/scalar"
	"pgregory.net/rapid"

	"unlearn/dataset"
	"unlearn/olbfgs"
	"unlearn/stream"
)

// pairwiseAUC is the definition of the AUC: over every (positive,
// negative) pair, 1 when the positive scores higher, ½ on a tie; O(n²).
// It returns the doubled count of pairs and the number of pairs.
func pairwiseAUC(rows []scored) (twice, pairs uint64) {
	for _, a := range rows {
		if !a.pos {
			continue
		}
		for _, b := range rows {
			if b.pos {
				continue
			}
			pairs++
			switch {
			case a.s > b.s:
				twice += 2
			case a.s == b.s:
				twice++
			}
		}
	}
	return twice, pairs
}

// TestAUCAgainstPairwiseDefinition checks the sort-based AUC against the
// pairwise definition on random rows with many ties (scores drawn from a
// few values), equal as floats: both count the same integer.
func TestAUCAgainstPairwiseDefinition(t *testing.T) {
	rapid.Check(t, func(rt *rapid.T) {
		n := rapid.IntRange(1, 60).Draw(rt, "n")
		levels := rapid.IntRange(1, 8).Draw(rt, "levels")
		rows := make([]scored, n)
		for i := range rows {
			rows[i] = scored{
				s:   float64(rapid.IntRange(0, levels-1).Draw(rt, "score")) - 2.5,
				pos: rapid.Bool().Draw(rt, "pos"),
			}
		}
		twice, pairs := pairwiseAUC(rows)
		got, ok := auc(rows)
		if pairs == 0 {
			if ok {
				rt.Fatalf("AUC %v of rows of one class", got)
			}
			return
		}
		if !ok {
			rt.Fatalf("no AUC for %d pairs", pairs)
		}
		if want := float64(twice) / float64(2*pairs); got != want {
			rt.Fatalf("AUC %v, pairwise %v", got, want)
		}
	})
}

func TestAUCKnownValues(t *testing.T) {
	// Perfect ranking, reversed ranking, all tied.
	for _, tc := range []struct {
		name string
		rows []scored
		want float64
	}{
		{"perfect", []scored{{0, false}, {1, true}, {-1, false}, {3, true}}, 1},
		{"reversed", []scored{{0, true}, {1, false}}, 0},
		{"all tied", []scored{{2, true}, {2, false}, {2, true}, {2, false}}, 0.5},
		// Hanley and McNeil's worked form: 3 positives, 2 negatives,
		// pairs won 1+1+2 (+ a tie ½) of 6 → 4.5/6.
		{"mixed", []scored{{1, false}, {2, true}, {3, false}, {3, true}, {4, true}}, 4.5 / 6},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, ok := auc(tc.rows)
			require.True(t, ok)
			require.Equal(t, tc.want, got)
		})
	}
}

// TestEvaluateAgainstPredictions builds every classifier metric
// independently from the per-row predictions (Model.Predict) and checks
// Evaluate's.
func TestEvaluateAgainstPredictions(t *testing.T) {
	// Held-out rows: the tail of the training stream (another seed would
	// have another true model).
	_, h := trained(t, 5, 700, 8)
	l, err := olbfgs.Replay(olbfgs.DefaultConfig(5), h.Loss, h.Events[:300])
	require.NoError(t, err)
	held := &stream.History{Events: h.Events[300:]}
	m, err := New(l, &Contract{Format: dataset.LIBSVM, Classes: []string{"neg", "pos"}})
	require.NoError(t, err)
	ev, err := Evaluate(m, rowsOf(held.Events))
	require.NoError(t, err)

	var (
		correct   int
		logLoss   float64
		confusion [2][2]int
		rows      []scored
		sumLoss   float64
	)
	for _, e := range held.Events {
		p, err := m.Predict(e.Sample.V)
		require.NoError(t, err)
		truth := 0
		if e.Sample.S > 0 {
			truth = 1
		}
		confusion[truth][p.Class]++
		if p.Class == truth {
			correct++
		}
		logLoss += -math.Log(p.Probabilities[truth])
		rows = append(rows, scored{p.Value, truth == 1})
		sumLoss += l.Loss().Value(l.W(), e.Sample)
	}
	n := float64(len(held.Events))
	require.Equal(t, len(held.Events), ev.N)
	require.Equal(t, sumLoss/n, ev.Loss)
	require.Equal(t, float64(correct)/n, *ev.Accuracy)
	require.True(t, scalar.EqualWithinAbsOrRel(*ev.LogLoss, logLoss/n, 0, 1e-12), "log loss %v, from probabilities %v", *ev.LogLoss, logLoss/n)
	twice, pairs := pairwiseAUC(rows)
	require.Equal(t, float64(twice)/float64(2*pairs), *ev.AUC)
	require.Len(t, ev.Confusion, 2)
	for i := range 2 {
		for j := range 2 {
			require.Equal(t, confusion[i][j], ev.Confusion[i][j])
		}
		c := ev.Classes[i]
		require.Equal(t, []string{"neg", "pos"}[i], c.Label)
		require.Equal(t, confusion[i][0]+confusion[i][1], c.Support)
		require.Equal(t, confusion[0][i]+confusion[1][i], c.Predicted)
		require.Equal(t, float64(confusion[i][i])/float64(c.Support), *c.Recall)
	}
	require.Nil(t, ev.RMSE)
	// A model fitted to its stream beats chance on held-out rows of the
	// same generator (sanity of the data, not of the metrics).
	require.Greater(t, *ev.AUC, 0.6)
}

func TestEvaluateOneClass(t *testing.T) {
	l, h := trained(t, 3, 50, 10)
	m, err := New(l, nil)
	require.NoError(t, err)
	var pos []stream.Event
	for _, e := range h.Events {
		if e.Sample.S > 0 {
			pos = append(pos, e)
		}
	}
	ev, err := Evaluate(m, rowsOf(pos))
	require.NoError(t, err)
	assert.Nil(t, ev.AUC, "no AUC without negatives")
	assert.Nil(t, ev.Classes[0].Recall, "no recall of a class without rows")
	assert.Equal(t, 0, ev.Classes[0].Support)
	require.NotNil(t, ev.Classes[1].Recall)
	assert.Equal(t, *ev.Accuracy, *ev.Classes[1].Recall)
}

func TestEvaluateRegression(t *testing.T) {
	w := []float64{1, -1}
	m, err := New(regressionLearner(t, w), nil)
	require.NoError(t, err)
	events := []stream.Event{
		stream.InsertEvent(1, []float64{1, 0}, 2),   // residual −1
		stream.InsertEvent(2, []float64{0, 1}, -1),  // 0
		stream.InsertEvent(3, []float64{2, 1}, 4),   // −3
		stream.DeleteEvent(1),                       // skipped
		stream.InsertEvent(4, []float64{0, 0}, 0.5), // −0.5
	}
	ev, err := Evaluate(m, rowsOf(events))
	require.NoError(t, err)
	require.Equal(t, 4, ev.N)
	require.Equal(t, math.Sqrt((1+0+9+0.25)/4), *ev.RMSE)
	require.Nil(t, ev.Accuracy)
	require.Nil(t, ev.Confusion)
}

func TestEvaluateErrors(t *testing.T) {
	l, _ := trained(t, 3, 10, 11)
	m, err := New(l, nil)
	require.NoError(t, err)
	_, err = Evaluate(m, rowsOf(nil))
	require.ErrorIs(t, err, ErrEmpty)
	_, err = Evaluate(m, rowsOf([]stream.Event{stream.InsertEvent(7, []float64{1, 2}, 1)}))
	require.ErrorIs(t, err, ErrRow)
	require.ErrorContains(t, err, "id 7")
}
