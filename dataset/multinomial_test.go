package dataset

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"unlearn/stream"
)

// sourceClasses returns the "classes" of a header's "source" metadata.
func sourceClasses(t *testing.T, h stream.Header) []string {
	t.Helper()
	var m Source
	ok, err := h.MetaValue("source", &m)
	require.NoError(t, err)
	require.True(t, ok)
	return m.Classes
}

func TestMultinomialIDX(t *testing.T) {
	labels := []byte{3, 0, 9, 3, 7}
	p := idxFiles(t, labels, 1, 2, func(i, j int) byte { return byte(i + j) }, true)

	t.Run("all", func(t *testing.T) {
		h, evs, r := readAll(t, p, Options{Kind: stream.KindMultinomial, Classes: []string{"all"}})
		assert.Equal(t, 4, h.K, "labels 0, 3, 7, 9")
		assert.Equal(t, []string{"0", "3", "7", "9"}, sourceClasses(t, h))
		var ys []float64
		for _, e := range evs {
			ys = append(ys, e.Sample.S)
		}
		assert.Equal(t, []float64{1, 0, 3, 1, 2}, ys)
		assert.Zero(t, r.Stats().Skipped)
		_, err := h.Loss()
		require.NoError(t, err)
	})
	t.Run("list", func(t *testing.T) {
		h, evs, r := readAll(t, p, Options{Kind: stream.KindMultinomial, Classes: []string{"9", "3", "0"}})
		assert.Equal(t, 3, h.K)
		var ys []float64
		var ids []int64
		for _, e := range evs {
			ys, ids = append(ys, e.Sample.S), append(ids, e.ID)
		}
		assert.Equal(t, []float64{1, 2, 0, 1}, ys, "class index = position in the list")
		assert.Equal(t, []int64{1, 2, 3, 4}, ids)
		assert.Equal(t, 1, r.Stats().Skipped, "label 7 is not selected")
	})
}

func TestMultinomialCSVAndLIBSVM(t *testing.T) {
	csvPath := writeTemp(t, "data.csv", "a,b,species\n1,2,setosa\n3,4,virginica\n5,6,versicolor\n7,8,setosa\n")
	h, evs, _ := readAll(t, csvPath, Options{Kind: stream.KindMultinomial, Label: "species", Classes: []string{"all"}})
	assert.Equal(t, 3, h.K)
	assert.Equal(t, []string{"setosa", "versicolor", "virginica"}, sourceClasses(t, h), "string labels in byte order")
	assert.Equal(t, 0.0, evs[0].Sample.S)
	assert.Equal(t, 2.0, evs[1].Sample.S)
	assert.Equal(t, 1.0, evs[2].Sample.S)

	svm := writeTemp(t, "data.svm", "2 1:1\n10 2:1\n1.0 1:3 2:4\n2 2:5\n")
	h, evs, _ = readAll(t, svm, Options{Kind: stream.KindMultinomial, Classes: []string{"all"}, Sparse: true})
	assert.Equal(t, 3, h.K)
	assert.Equal(t, []string{"1.0", "2", "10"}, sourceClasses(t, h), "numeric labels by value, first spelling kept")
	var ys []float64
	for _, e := range evs {
		ys = append(ys, e.Sample.S)
	}
	assert.Equal(t, []float64{1, 2, 0, 1}, ys)
}

func TestMultinomialOptionErrors(t *testing.T) {
	p := idxFiles(t, []byte{1, 1, 1}, 1, 1, func(i, j int) byte { return 0 }, false)
	csvPath := writeTemp(t, "data.csv", "a,y\n1,0\n2,1\n")
	for _, tt := range []struct {
		name string
		path string
		o    Options
	}{
		{"no classes", p, Options{Kind: stream.KindMultinomial}},
		{"one class", p, Options{Kind: stream.KindMultinomial, Classes: []string{"1"}}},
		{"duplicate", p, Options{Kind: stream.KindMultinomial, Classes: []string{"1", "2", "1.0"}}},
		{"all of one label", p, Options{Kind: stream.KindMultinomial, Classes: []string{"all"}}},
		{"all for logistic", p, Options{Classes: []string{"all"}}},
		{"three for logistic", p, Options{Classes: []string{"0", "1", "2"}}},
		{"classes for regression", csvPath, Options{Kind: stream.KindRegression, Label: "y", Classes: []string{"0", "1"}}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, r, err := Open(tt.path, tt.o)
			if r != nil {
				r.Close()
			}
			var oe *OptionError
			require.ErrorAs(t, err, &oe)
			assert.Equal(t, "Classes", oe.Field)
		})
	}
}
