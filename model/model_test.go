package model

import (
	"math"
	"math/big"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"gonum.org/v1/gonum/floats/scalar"

	"unlearn/dataset"
	"unlearn/olbfgs"
	"unlearn/stream"
)

func TestNewRefusesWhatItCannotApply(t *testing.T) {
	q, err := stream.GenerateQuadratic(stream.QuadraticOptions{D: 2, T: 3, Seed: 1})
	require.NoError(t, err)
	l, err := olbfgs.New(olbfgs.DefaultConfig(2), q.Loss)
	require.NoError(t, err)
	_, err = New(l, nil)
	require.ErrorContains(t, err, "quadratic")

	lg, _ := trained(t, 3, 20, 1)
	_, err = New(lg, &Contract{Format: dataset.CSV, Features: []string{"a", "b"}})
	require.ErrorIs(t, err, ErrContract, "2 names for d = 3")
}

func TestNewClonesTheState(t *testing.T) {
	l, h := trained(t, 3, 40, 2)
	m, err := New(l, nil)
	require.NoError(t, err)
	before, err := m.Predict(h.Events[0].Sample.V)
	require.NoError(t, err)
	l.SetW([]float64{9, 9, 9})
	after, err := m.Predict(h.Events[0].Sample.V)
	require.NoError(t, err)
	require.Equal(t, before, after)
	assert.Equal(t, UnnamedClasses, m.Classes())
}

// TestScoresAreTheLearners checks that the scores behind a prediction are
// the learner's own (olbfgs.Learner.Scores: the deployed parameters, the
// preprocessing), bit for bit, for the paper's learner, each practitioner
// option and the multinomial loss, dense and sparse rows; and that for
// the paper's logistic learner the score is the margin inside its loss
// (Value(w, z) = Softplus(−y·score) + (λ/2)‖w‖² up to the summation
// order: relative 1e-12).
func TestScoresAreTheLearners(t *testing.T) {
	for _, tc := range optionCases(t) {
		t.Run(tc.Name, func(t *testing.T) {
			l, events := tc.Learner, tc.Events
			m, err := New(l, nil)
			require.NoError(t, err)
			k := l.Outputs()
			want, got, sp := make([]float64, k), make([]float64, k), make([]float64, k)
			for _, e := range events {
				l.Scores(want, e.Sample)
				m.scores(got, e.Sample)
				require.Equal(t, want, got)
				var p Prediction
				require.NoError(t, m.PredictTo(&p, e.Sample))
				require.Equal(t, want, p.Scores)
				// The sparse form of the row's even coordinates scores as
				// its dense form.
				var idx []int32
				var v []float64
				dense := make([]float64, len(e.Sample.V))
				for j, x := range e.Sample.V {
					if j%2 == 0 {
						idx, v, dense[j] = append(idx, int32(j)), append(v, x), x
					}
				}
				m.scores(got, stream.Sample{V: dense})
				m.scores(sp, stream.SparseSample(idx, v, 0))
				for c := range k {
					require.Equal(t, got[c] == 0, sp[c] == 0)
					if got[c] != 0 {
						require.Equal(t, got[c], sp[c])
					}
				}
				if tc.paperLogistic {
					w := l.W()
					var ww float64
					for _, v := range w {
						ww += float64(v * v)
					}
					ridge := l.Loss().(*stream.Logistic).Lambda() / 2 * ww
					m.scores(got, e.Sample)
					require.True(t, scalar.EqualWithinAbsOrRel(l.Loss().Value(w, e.Sample), stream.Softplus(-e.Sample.S*got[0])+ridge, 1e-14, 1e-12))
				}
			}
		})
	}
}

// TestPredictProbabilities checks the binary probabilities against the
// logistic function evaluated in high precision (math/big, 200 bits).
func TestPredictProbabilities(t *testing.T) {
	l, h := trained(t, 4, 100, 4)
	c := &Contract{Format: dataset.LIBSVM, Classes: []string{"no", "yes"}}
	m, err := New(l, c)
	require.NoError(t, err)
	for _, e := range h.Events {
		p, err := m.Predict(e.Sample.V)
		require.NoError(t, err)
		// An independent margin: the exact dot product, rounded once.
		exact := new(big.Float).SetPrec(200)
		for j, x := range e.Sample.V {
			exact.Add(exact, new(big.Float).SetPrec(200).Mul(big.NewFloat(x), big.NewFloat(l.W()[j])))
		}
		margin, _ := exact.Float64()
		require.True(t, scalar.EqualWithinAbsOrRel(p.Value, margin, 1e-12, 1e-12), "margin %v, exact %v", p.Value, margin)
		pos := 1 / (1 + math.Exp(-margin))
		assert.True(t, scalar.EqualWithinAbsOrRel(p.Probabilities[1], pos, 0, 1e-12))
		assert.True(t, scalar.EqualWithinAbsOrRel(p.Probabilities[0], 1-pos, 1e-15, 1e-12))
		want := "no"
		if p.Value >= 0 {
			want = "yes"
		}
		assert.Equal(t, want, p.Label)
		assert.Equal(t, p.Label, c.Classes[p.Class])
	}
}

// TestLinkSoftmax checks the K-class link against a direct softmax on
// moderate scores and against overflow on large ones.
func TestLinkSoftmax(t *testing.T) {
	scores := []float64{0.5, -1.25, 2, 0}
	got := make([]float64, 4)
	link(got, scores)
	var z float64
	for _, s := range scores {
		z += math.Exp(s)
	}
	for k, s := range scores {
		assert.True(t, scalar.EqualWithinAbsOrRel(got[k], math.Exp(s)/z, 0, 1e-15), "class %d", k)
	}
	assert.Equal(t, 2, decide(scores))
	// e^1000 overflows; the shifted form does not.
	link(got[:3], []float64{1000, 999, -5})
	e1 := math.Exp(-1)
	assert.True(t, scalar.EqualWithinAbsOrRel(got[0], 1/(1+e1+math.Exp(-1005)), 0, 1e-15))
	assert.True(t, scalar.EqualWithinAbsOrRel(got[1], e1/(1+e1+math.Exp(-1005)), 0, 1e-15))
	assert.Equal(t, 0, decide([]float64{3, 3, 1}), "ties go to the first class")
	// Cross-entropy of K scores: −log softmax.
	assert.True(t, scalar.EqualWithinAbsOrRel(crossEntropy(scores, 1), -math.Log(math.Exp(-1.25)/z), 0, 1e-14))
	// Binary: −log σ(±s).
	assert.True(t, scalar.EqualWithinAbsOrRel(crossEntropy([]float64{0.3}, 1), -math.Log(1/(1+math.Exp(-0.3))), 0, 1e-15))
	assert.True(t, scalar.EqualWithinAbsOrRel(crossEntropy([]float64{0.3}, 0), -math.Log(1/(1+math.Exp(0.3))), 0, 1e-15))
}

func TestPredictRefusesBadRows(t *testing.T) {
	l, _ := trained(t, 3, 20, 5)
	m, err := New(l, nil)
	require.NoError(t, err)
	for name, x := range map[string]stream.Sample{
		"short":            {V: []float64{1, 2}},
		"NaN":              {V: []float64{1, math.NaN(), 2}},
		"infinite":         {V: []float64{1, math.Inf(1), 2}},
		"index out of d":   stream.SparseSample([]int32{0, 3}, []float64{1, 1}, 0),
		"indices repeated": stream.SparseSample([]int32{1, 1}, []float64{1, 1}, 0),
		"lengths differ":   {V: []float64{1}, Idx: []int32{0, 1}},
	} {
		t.Run(name, func(t *testing.T) {
			var p Prediction
			require.ErrorIs(t, m.PredictTo(&p, x), ErrRow)
		})
	}
	// A score that overflows to ±Inf on both sides is not a number.
	l.SetW([]float64{1e300, -1e300, 0})
	m, err = New(l, nil)
	require.NoError(t, err)
	_, err = m.Predict([]float64{1e10, 1e10, 0})
	require.ErrorIs(t, err, ErrRow)
}

func TestRegressionPredict(t *testing.T) {
	m, err := New(regressionLearner(t, []float64{0.5, -2, 1}), &Contract{Format: dataset.LIBSVM})
	require.NoError(t, err)
	p, err := m.Predict([]float64{2, 1, 4})
	require.NoError(t, err)
	require.Equal(t, Prediction{Class: -1, Scores: []float64{0.5*2 - 2 + 4}, Value: 0.5*2 - 2 + 4}, p)
	require.Nil(t, m.Classes())
	require.Equal(t, []string{"id", "prediction"}, m.Columns())
}

func TestVector(t *testing.T) {
	l, _ := trained(t, 3, 20, 6)
	m, err := New(l, &Contract{Format: dataset.CSV, Features: []string{"a", "b", "c"}, Label: "y"})
	require.NoError(t, err)
	x, err := m.Vector(map[string]float64{"c": 3, "a": 1, "b": 2})
	require.NoError(t, err)
	require.Equal(t, []float64{1, 2, 3}, x)
	_, err = m.Vector(map[string]float64{"a": 1, "b": 2})
	require.ErrorContains(t, err, `feature "c" is missing`)
	_, err = m.Vector(map[string]float64{"a": 1, "b": 2, "c": 3, "zz": 0, "d": 4})
	require.ErrorContains(t, err, `"d" is not a feature of the model`)
	unnamed, err := New(l, nil)
	require.NoError(t, err)
	_, err = unnamed.Vector(map[string]float64{"a": 1})
	require.ErrorIs(t, err, ErrRow)
}

// TestPredictToDoesNotAllocate: the per-row path of a service and of
// WritePredictions allocates nothing once its result has room.
func TestPredictToDoesNotAllocate(t *testing.T) {
	l, h := trained(t, 100, 50, 7)
	m, err := New(l, nil)
	require.NoError(t, err)
	var p Prediction
	x := h.Events[3].Sample
	require.NoError(t, m.PredictTo(&p, x))
	pw := newPredictionWriter(m, false)
	pj := newPredictionWriter(m, true)
	allocs := testing.AllocsPerRun(100, func() {
		_ = m.PredictTo(&p, x)
		pw.line(42, &p)
		pj.line(42, &p)
	})
	require.Zero(t, allocs)
}
