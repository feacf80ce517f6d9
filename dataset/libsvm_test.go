package dataset

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"unlearn/olbfgs"
	"unlearn/stream"
)

func TestLIBSVMBasics(t *testing.T) {
	p := writeTemp(t, "s.svm", "# a comment line\n+1 qid:3 1:0.5 4:-2 # trailing comment\n-1 2:1e-3\r\n-1.0 \t1:1 3:7\n")
	h, evs, r := readAll(t, p, Options{})
	assert.Equal(t, 4, h.D, "d is the largest index")
	assert.Equal(t, []stream.Event{
		stream.InsertEvent(1, []float64{0.5, 0, 0, -2}, 1),
		stream.InsertEvent(2, []float64{0, 1e-3, 0, 0}, -1),
		stream.InsertEvent(3, []float64{1, 0, 7, 0}, -1),
	}, evs)
	assert.Equal(t, Stats{Rows: 3, Emitted: 3, Comments: 1, QIDs: 1}, r.Stats())

	h, evs, _ = readAll(t, p, Options{D: 6, Kind: stream.KindRegression})
	assert.Equal(t, 6, h.D, "d from the option")
	assert.Equal(t, []float64{1, -1, -1}, []float64{evs[0].Sample.S, evs[1].Sample.S, evs[2].Sample.S})
	assert.Len(t, evs[0].Sample.V, 6)
}

func TestLIBSVMSparse(t *testing.T) {
	p := writeTemp(t, "s.svm", "+1 qid:3 1:0.5 4:-2\n-1\n-1 2:0 3:7\n")
	h, evs, _ := readAll(t, p, Options{D: 6, Sparse: true})
	assert.Equal(t, 6, h.D)
	assert.Equal(t, []stream.Event{
		{Op: stream.Insert, ID: 1, Sample: stream.SparseSample([]int32{0, 3}, []float64{0.5, -2}, 1)},
		{Op: stream.Insert, ID: 2, Sample: stream.SparseSample([]int32{}, []float64{}, -1)},
		{Op: stream.Insert, ID: 3, Sample: stream.SparseSample([]int32{1, 2}, []float64{0, 7}, -1)},
	}, evs, "explicit zeros are kept; an empty row is an empty sparse vector")
	_, dense, _ := readAll(t, p, Options{D: 6})
	for i := range evs {
		assert.Equal(t, dense[i].Sample.V, evs[i].Sample.Dense(6))
	}
	_, _, err := Open(writeTemp(t, "s.csv", "a,y\n1,1\n"), Options{Label: "y", Sparse: true})
	assert.ErrorIs(t, err, ErrOptions, "Sparse is for LIBSVM")
}

func TestLIBSVMHeartScale(t *testing.T) {
	h, evs, r := readAll(t, "testdata/heart_scale_30.svm", Options{Format: LIBSVM})
	assert.Equal(t, 13, h.D)
	require.Len(t, evs, 30)
	assert.Equal(t, 30, r.Stats().Rows)
	// Line 1: +1 1:0.708333 2:1 3:1 4:-0.320755 5:-0.105023 6:-1 7:1
	// 8:-0.419847 9:-1 10:-0.225806 12:1 13:-1 (index 11 absent: zero).
	assert.Equal(t, stream.InsertEvent(1, []float64{0.708333, 1, 1, -0.320755, -0.105023, -1, 1, -0.419847, -1, -0.225806, 0, 1, -1}, 1), evs[0])
	for _, e := range evs {
		for _, v := range e.Sample.V {
			assert.True(t, v >= -1 && v <= 1, "heart_scale is scaled to [-1, 1]")
		}
	}
}

func TestLIBSVMErrors(t *testing.T) {
	for _, c := range []struct {
		name, content string
		opts          Options
		line, column  int
		sentinel      error
	}{
		{"index 0", "1 0:1\n", Options{}, 1, 3, ErrValue},
		{"decreasing", "1 1:1 3:2 2:1\n", Options{}, 1, 11, ErrValue},
		{"repeated", "1 2:1 2:1\n", Options{}, 1, 7, ErrValue},
		{"exceeds D", "1 1:1\n-1 5:1\n", Options{D: 4}, 2, 4, ErrValue},
		// 16 bytes that would be a dense row of 2³¹ floats (16 GiB).
		{"index beyond MaxDim", "1 2147483647:1\n", Options{}, 1, 3, ErrValue},
		{"index just beyond MaxDim", fmt.Sprintf("1 1:1 %d:1\n", MaxDim+1), Options{}, 1, 7, ErrValue},
		{"bad value", "1 1:x\n", Options{}, 1, 5, ErrValue},
		{"inf value", "1 1:inf\n", Options{}, 1, 5, ErrValue},
		{"no colon", "1 17\n", Options{}, 1, 3, ErrSyntax},
		{"empty value", "1 1:\n", Options{}, 1, 3, ErrSyntax},
		{"blank line", "1 1:1\n\n-1 1:2\n", Options{}, 2, 0, ErrSyntax},
		{"label 3", "1 1:1\n3 1:1\n", Options{}, 2, 1, ErrLabel},
		{"label not a number", "yes 1:1\n", Options{}, 1, 1, ErrValue},
		{"qid after a feature", "1 1:1 qid:2\n", Options{}, 1, 7, ErrSyntax},
		{"qid not an integer", "1 qid:a 1:1\n", Options{}, 1, 3, ErrValue},
	} {
		t.Run(c.name, func(t *testing.T) {
			err := readErr(writeTemp(t, "e.svm", c.content), c.opts)
			var pe *PosError
			require.ErrorAs(t, err, &pe)
			assert.Equal(t, c.line, pe.Line, "line")
			assert.Equal(t, c.column, pe.Column, "column")
			assert.ErrorIs(t, err, c.sentinel)
		})
	}
	err := readErr(writeTemp(t, "big.svm", "1 1:1\n"), Options{D: MaxDim + 1})
	var oe *OptionError
	require.ErrorAs(t, err, &oe, "a --d above MaxDim is refused before any row is read")
	assert.Equal(t, "D", oe.Field)
	err = readErr(writeTemp(t, "none.svm", "1\n-1\n"), Options{})
	assert.ErrorIs(t, err, ErrValue, "no index: d unknown")
}

func TestLIBSVMClassesKeepDimension(t *testing.T) {
	// d counts the indices of every row, selected or not: the data set's
	// dimension does not depend on the class selection.
	p := writeTemp(t, "k.svm", "1 1:1\n2 2:1\n3 5:1\n")
	h, evs, r := readAll(t, p, Options{Classes: []string{"1", "2"}})
	assert.Equal(t, 5, h.D)
	assert.Len(t, evs, 2)
	assert.Equal(t, 1, r.Stats().Skipped)
}

// TestMaxDimIsTheLearnersLimit pins MaxDim to the largest dimension
// olbfgs.Config.Validate accepts.
func TestMaxDimIsTheLearnersLimit(t *testing.T) {
	at := func(d int) error {
		c := olbfgs.DefaultConfig(d)
		c.Memory = 0 // at the largest d only a memoryless learner fits
		return c.Validate()
	}
	require.NoError(t, at(MaxDim))
	require.Error(t, at(MaxDim+1))
}
