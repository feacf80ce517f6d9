package dataset

import (
	"errors"
	"math"
	"testing"

	"github.com/stretchr/testify/require"
)

const scaleCSV = "name,a,b,c,label\np1,3,-1,0.5,1\np2,-7.25,2,-4,0\np3,0.1,1e3,4,1\n"

// TestFeatureScaleDeclarations: the JSON and the CSV declarations of one
// scale read the same; bad declarations are refused naming the feature.
func TestFeatureScaleDeclarations(t *testing.T) {
	j, err := ReadFeatureScale(writeTemp(t, "s.json", `{"c": [-4, 4], "a": 3}`))
	require.NoError(t, err)
	c, err := ReadFeatureScale(writeTemp(t, "s.csv", "feature,divisor\na,3\nc,-4,4\n"))
	require.NoError(t, err)
	require.Equal(t, []FeatureScale{{Feature: "a", Divisor: 3}, {Feature: "c", Range: []float64{-4, 4}}}, j)
	require.Equal(t, j, c)
	for content, want := range map[string]string{
		`{"a": 0}`:               `feature "a": divisor 0`,
		`{"a": -2}`:              `feature "a": divisor -2`,
		`{"a": [4, 4]}`:          `range [4, 4]`,
		`{"a": [1, 2, 3]}`:       `range of 3 numbers`,
		`{"a": "x"}`:             `feature "a"`,
		"a,3\na,4\n":             `"a" is declared twice`,
		`{"a": 1, "a": 2}`:       `duplicate member "a"`,
		`{"a": 5e-324}`:          `too small`,
		`{"a": 1} {"b": 2}`:      `trailing`,
		"a,3\nb,x\n":             `line 2`,
		`{}`:                     `declares no feature`,
		`{"a": [0, 1e308]}`:      ``,
		`{"a": [-1e308, 1e308]}`: `want finite lo < hi`,
	} {
		_, err := ReadFeatureScale(writeTemp(t, "bad.json", content))
		if want == "" {
			require.NoError(t, err, content)
			continue
		}
		require.ErrorContains(t, err, want, content)
	}
}

// TestFeatureScaleApplied: a CSV read with a feature scale divides the
// declared feature and maps the ranged one onto [0, 1], records the scale
// resolved to coordinates in the header, and RawRows applies it to the raw
// cells bit for bit as the reader does; a value outside its range is
// refused naming the line and the feature (reader) or the feature
// (RawRows); unknown features, IDX files and ranges in sparse reads are
// refused.
func TestFeatureScaleApplied(t *testing.T) {
	path := writeTemp(t, "d.csv", scaleCSV)
	fs := []FeatureScale{{Feature: "c", Range: []float64{-4, 4}}, {Feature: "a", Divisor: 3}}
	o := Options{Label: "label", ID: "name", FeatureScale: fs}
	h, evs, _ := readAll(t, path, o)
	src, _, ok, err := SourceOf(h)
	require.NoError(t, err)
	require.True(t, ok)
	require.Equal(t, []FeatureScale{{Feature: "a", Index: 1, Divisor: 3}, {Feature: "c", Index: 3, Range: []float64{-4, 4}}}, src.FeatureScale)
	raw := [][]float64{{3, -1, 0.5}, {-7.25, 2, -4}, {0.1, 1e3, 4}}
	rr, err := NewRawRows(&src, h.Kind, []string{"0", "1"})
	require.NoError(t, err)
	for i, e := range evs {
		want := []float64{raw[i][0] / 3, raw[i][1], (raw[i][2] + 4) / 8}
		x := append([]float64(nil), raw[i]...)
		require.NoError(t, rr.Features(x))
		for j := range want {
			require.Equal(t, math.Float64bits(want[j]), math.Float64bits(e.Sample.V[j]), "row %d, feature %d", i, j)
			require.Equal(t, math.Float64bits(e.Sample.V[j]), math.Float64bits(x[j]), "RawRows, row %d, feature %d", i, j)
		}
	}
	// The stored resolved scale reads the file again the same way.
	_, again, _ := readAll(t, path, Options{Label: "label", ID: "name", FeatureScale: src.FeatureScale})
	require.Equal(t, evs, again)

	out := writeTemp(t, "o.csv", "name,a,b,c,label\np1,3,-1,0.5,1\np2,1,1,4.5,0\n")
	_, r, err := Open(out, o)
	require.NoError(t, err)
	_, err = r.Next()
	require.NoError(t, err)
	_, err = r.Next()
	var pe *PosError
	require.ErrorAs(t, err, &pe)
	require.Equal(t, 3, pe.Line)
	require.ErrorIs(t, err, ErrValue)
	require.ErrorContains(t, err, `feature "c" is 4.5, outside its declared range [-4, 4]`)
	x := []float64{1, 1, -4.5}
	err = rr.Features(x)
	require.ErrorIs(t, err, ErrValue)
	require.ErrorContains(t, err, `feature "c" is -4.5`)
	require.Equal(t, []float64{1, 1, -4.5}, x, "a refused row is unchanged")

	// A value a tiny declared divisor sends to infinity is refused, naming
	// the feature, not the coordinate.
	tiny := src
	tiny.FeatureScale = []FeatureScale{{Feature: "a", Index: 1, Divisor: 1e-300}}
	rt, err := NewRawRows(&tiny, h.Kind, []string{"0", "1"})
	require.NoError(t, err)
	x = []float64{1e10, 1, 0}
	err = rt.Features(x)
	require.ErrorIs(t, err, ErrValue)
	require.ErrorContains(t, err, `feature "a" is 1e+10: divided by its declared divisor 1e-300 it overflows`)

	_, _, err = Open(path, Options{Label: "label", ID: "name", FeatureScale: []FeatureScale{{Feature: "d", Divisor: 2}}})
	var oe *OptionError
	require.True(t, errors.As(err, &oe), "%v", err)
	require.Equal(t, "FeatureScale", oe.Field)
	require.ErrorContains(t, err, `"d" is not a feature of the data`)
	_, _, err = Open(writeTemp(t, "x.svm", "1 1:2 3:1\n-1 2:1\n"), Options{Sparse: true, FeatureScale: []FeatureScale{{Feature: "1", Range: []float64{0, 2}}}})
	require.ErrorContains(t, err, "a sparse read stores no zeros")
	_, _, err = Open("t-images-idx3-ubyte", Options{Classes: []string{"0", "1"}, FeatureScale: fs})
	require.ErrorContains(t, err, "CSV and LIBSVM files only")
}

// TestFeatureScaleLIBSVM: LIBSVM features are named by their index; a
// sparse read divides the stored entries only.
func TestFeatureScaleLIBSVM(t *testing.T) {
	path := writeTemp(t, "x.svm", "1 1:2 3:6\n-1 2:1\n")
	fs := []FeatureScale{{Feature: "3", Divisor: 3}, {Feature: "1", Divisor: 4}}
	_, dense, _ := readAll(t, path, Options{FeatureScale: fs})
	require.Equal(t, []float64{0.5, 0, 2}, dense[0].Sample.V)
	require.Equal(t, []float64{0, 1, 0}, dense[1].Sample.V)
	_, sparse, _ := readAll(t, path, Options{Sparse: true, FeatureScale: fs})
	require.Equal(t, []float64{0.5, 2}, sparse[0].Sample.V)
	require.Equal(t, []float64{1}, sparse[1].Sample.V)
}
