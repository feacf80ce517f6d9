package stream

import (
	"bytes"
	"math"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"pgregory.net/rapid"
)

// equalFloats reports whether a and b are equal entry by entry (==, so +0
// and −0 agree; NaN never does).
func equalFloats(a, b []float64) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// TestSparseGradMatchesDense: a sparse payload gives the dense payload's
// gradient and value exactly, for the logistic and the regression loss.
func TestSparseGradMatchesDense(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		d := rapid.IntRange(1, 40).Draw(t, "d")
		lambda := rapid.SampledFrom([]float64{0, 0.05, 1.5}).Draw(t, "lambda")
		w := rapid.SliceOfN(rapid.Float64Range(-3, 3), d, d).Draw(t, "w")
		var idx []int32
		var vals []float64
		dense := make([]float64, d)
		for j := range d {
			if rapid.IntRange(0, 3).Draw(t, "nz") == 0 {
				v := rapid.Float64Range(-4, 4).Draw(t, "v")
				idx, vals = append(idx, int32(j)), append(vals, v)
				dense[j] = v
			}
		}
		lg, _ := NewLogistic(d, lambda)
		rg, _ := NewRegression(d, lambda)
		for _, c := range []struct {
			loss Loss
			y    float64
		}{{lg, rapid.SampledFrom([]float64{-1, 1}).Draw(t, "label")}, {rg, rapid.Float64Range(-5, 5).Draw(t, "target")}} {
			sp := SparseSample(idx, vals, c.y)
			dn := Sample{V: dense, S: c.y}
			if f, err := c.loss.CheckSample(sp); err != nil {
				t.Fatalf("%s: valid sparse sample rejected: %s: %v", c.loss.Kind(), f, err)
			}
			g1, g2 := make([]float64, d), make([]float64, d)
			c.loss.Grad(g1, w, sp)
			c.loss.Grad(g2, w, dn)
			if !equalFloats(g1, g2) {
				t.Fatalf("%s: sparse gradient %v ≠ dense %v", c.loss.Kind(), g1, g2)
			}
			if v1, v2 := c.loss.Value(w, sp), c.loss.Value(w, dn); v1 != v2 {
				t.Fatalf("%s: sparse value %v ≠ dense %v", c.loss.Kind(), v1, v2)
			}
			if !equalFloats(sp.Dense(d), dense) {
				t.Fatal("Dense() does not scatter the values")
			}
		}
	})
}

func TestSparseStreamFormat(t *testing.T) {
	const in = `{"format":"olbfgs-stream/v1","kind":"logistic","d":5,"lambda":0.1}
{"op":"insert","id":1,"x":[0.5,-2],"x_index":[0,3],"y":1}
{"op":"insert","id":2,"x":[],"x_index":[],"y":-1}
{"op":"insert","id":3,"x":[1,2,3,4,5],"y":-1}
{"op":"delete","id":1}
`
	h, err := Read(strings.NewReader(in))
	require.NoError(t, err)
	assert.Equal(t, SparseSample([]int32{0, 3}, []float64{0.5, -2}, 1), h.Events[0].Sample)
	assert.True(t, h.Events[1].Sample.IsSparse(), "an empty sparse vector is sparse (all zeros)")
	assert.False(t, h.Events[2].Sample.IsSparse(), "dense and sparse payloads mix")
	var b bytes.Buffer
	require.NoError(t, Write(&b, h))
	assert.Equal(t, in, b.String())

	hdr := `{"format":"olbfgs-stream/v1","kind":"regression","d":3,"lambda":0}` + "\n"
	for _, c := range []struct {
		name, line, field string
		err               error
	}{
		{"index out of range", `{"op":"insert","id":1,"x":[1],"x_index":[3],"y":0}`, "x_index", ErrDimension},
		{"negative index", `{"op":"insert","id":1,"x":[1],"x_index":[-1],"y":0}`, "x_index", ErrDimension},
		{"decreasing", `{"op":"insert","id":1,"x":[1,2],"x_index":[2,1],"y":0}`, "x_index", ErrInvalidValue},
		{"repeated", `{"op":"insert","id":1,"x":[1,2],"x_index":[1,1],"y":0}`, "x_index", ErrInvalidValue},
		{"lengths differ", `{"op":"insert","id":1,"x":[1,2],"x_index":[1],"y":0}`, "x_index", ErrDimension},
		{"non-integer index", `{"op":"insert","id":1,"x":[1],"x_index":[0.5],"y":0}`, "x_index", ErrInvalidValue},
		{"huge index", `{"op":"insert","id":1,"x":[1],"x_index":[4294967296],"y":0}`, "x_index", ErrInvalidValue},
		{"NaN value", `{"op":"insert","id":1,"x":[1e999],"x_index":[0],"y":0}`, "x", ErrNonFinite},
		{"index on a delete", `{"op":"insert","id":1,"x":[1,2,3],"y":0}` + "\n" + `{"op":"delete","id":1,"x_index":[]}`, "x_index", ErrFormat},
	} {
		_, err := Read(strings.NewReader(hdr + c.line + "\n"))
		var le *LineError
		require.ErrorAs(t, err, &le, c.name)
		assert.Equal(t, c.field, le.Field, c.name)
		assert.ErrorIs(t, err, c.err, c.name)
	}
	q := `{"format":"olbfgs-stream/v1","kind":"quadratic","d":1,"H0":[[1]],"H1":[[1]]}` + "\n" +
		`{"op":"insert","id":1,"a":[1],"a_index":[0],"alpha":0}` + "\n"
	_, err = Read(strings.NewReader(q))
	assert.ErrorIs(t, err, ErrFormat, "no sparse payloads in a quadratic stream")

	// Write checks sparse payloads too.
	qh, err := GenerateQuadratic(QuadraticOptions{D: 2, T: 1})
	require.NoError(t, err)
	qh.Events[0].Sample.Idx = []int32{0, 1}
	assert.ErrorIs(t, Write(&b, qh), ErrFormat)
	lh := &History{Header: Header{Kind: KindLogistic, D: 2}, Events: []Event{{Op: Insert, ID: 1, Sample: SparseSample([]int32{2}, []float64{1}, 1)}}}
	assert.ErrorIs(t, Write(&b, lh), ErrDimension)
}

func TestFitsDim(t *testing.T) {
	assert.True(t, Sample{V: []float64{1, 2}}.FitsDim(2))
	assert.False(t, Sample{V: []float64{1, 2}}.FitsDim(3))
	assert.True(t, SparseSample([]int32{1, 4}, []float64{1, 2}, 0).FitsDim(5))
	assert.False(t, SparseSample([]int32{1, 5}, []float64{1, 2}, 0).FitsDim(5))
	assert.False(t, SparseSample([]int32{1}, []float64{1, 2}, 0).FitsDim(5))
	assert.False(t, SparseSample([]int32{-1, 2}, []float64{1, 2}, 0).FitsDim(5))
	assert.True(t, SparseSample(nil, nil, 0).FitsDim(1))
	assert.Equal(t, []float64{0, 3, 0}, SparseSample([]int32{1}, []float64{3}, 0).Dense(3))
	_ = math.Pi
}
