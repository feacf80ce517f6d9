package model

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"unlearn/dataset"
	"unlearn/stream"
)

// csvHeader returns the stream header dataset.Open gives a CSV with the
// given header row (and one data row of ones, label 1).
func csvHeader(t *testing.T, cols []string, opts dataset.Options) stream.Header {
	t.Helper()
	dir := t.TempDir()
	name := filepath.Join(dir, "d.csv")
	row := ""
	head := ""
	for i, c := range cols {
		if i > 0 {
			head += ","
			row += ","
		}
		head += c
		row += "1"
	}
	require.NoError(t, os.WriteFile(name, []byte(head+"\n"+row+"\n"), 0o644))
	h, r, err := dataset.Open(name, opts)
	require.NoError(t, err)
	require.NoError(t, r.Close())
	return h
}

func TestContractOf(t *testing.T) {
	t.Run("csv", func(t *testing.T) {
		h := csvHeader(t, []string{"name", "a", "b", "skip", "y"}, dataset.Options{Label: "y", ID: "name", Exclude: []string{"skip"}, Classes: []string{"0", "1"}})
		c, err := ContractOf(h)
		require.NoError(t, err)
		require.Equal(t, &Contract{Format: dataset.CSV, Features: []string{"a", "b"}, Label: "y", ID: "name",
			Exclude: []string{"skip"}, Classes: []string{"0", "1"}}, c)
		require.NoError(t, c.Validate(stream.KindLogistic, 2, 0))
	})
	t.Run("idx", func(t *testing.T) {
		// The Fashion-MNIST slice of package dataset's tests: 28×28 images.
		img := filepath.Join("..", "dataset", "testdata", "fashion-t10k-16-images-idx3-ubyte.gz")
		h, r, err := dataset.Open(img, dataset.Options{Classes: []string{"0", "6"}, Scale: 7140})
		require.NoError(t, err)
		require.NoError(t, r.Close())
		c, err := ContractOf(h)
		require.NoError(t, err)
		require.Equal(t, &Contract{Format: dataset.IDX, Classes: []string{"0", "6"}, Scale: 7140, Shape: []int{28, 28}}, c)
		require.NoError(t, c.Validate(stream.KindLogistic, 784, 0))
	})
	t.Run("libsvm", func(t *testing.T) {
		h, r, err := dataset.Open(filepath.Join("..", "dataset", "testdata", "heart_scale_30.svm"), dataset.Options{})
		require.NoError(t, err)
		require.NoError(t, r.Close())
		c, err := ContractOf(h)
		require.NoError(t, err)
		require.Equal(t, &Contract{Format: dataset.LIBSVM}, c)
	})
	t.Run("none", func(t *testing.T) {
		h, err := stream.GenerateLogistic(stream.LogisticOptions{D: 3, T: 5, Seed: 1})
		require.NoError(t, err)
		c, err := ContractOf(h.Header)
		require.NoError(t, err)
		require.Nil(t, c, "a synthetic stream records no data source")
		// Another program's "source" metadata is not a data source record.
		hd := stream.Header{Format: stream.FormatV1, Kind: stream.KindLogistic, D: 2, Lambda: 0.1}
		require.NoError(t, hd.SetMeta("source", "hand"))
		c, err = ContractOf(hd)
		require.NoError(t, err)
		require.Nil(t, c)
	})
	t.Run("malformed", func(t *testing.T) {
		hd := stream.Header{Format: stream.FormatV1, Kind: stream.KindLogistic, D: 2, Lambda: 0.1}
		require.NoError(t, hd.SetMeta("source", map[string]any{"format": "csv", "classes": "0,1"}))
		_, err := ContractOf(hd)
		require.ErrorContains(t, err, `"source"`)
	})
}

func TestContractValidate(t *testing.T) {
	for _, tc := range []struct {
		name  string
		c     Contract
		kind  stream.Kind
		d, k  int
		field string
	}{
		{"unknown format", Contract{Format: "xls"}, stream.KindLogistic, 2, 0, "format"},
		{"csv names for another d", Contract{Format: dataset.CSV, Features: []string{"a"}}, stream.KindLogistic, 2, 0, "features"},
		{"csv name twice", Contract{Format: dataset.CSV, Features: []string{"a", "a"}}, stream.KindLogistic, 2, 0, "features"},
		{"columns in a libsvm contract", Contract{Format: dataset.LIBSVM, Label: "y"}, stream.KindLogistic, 2, 0, "features"},
		{"idx without scale", Contract{Format: dataset.IDX}, stream.KindLogistic, 4, 0, "scale"},
		{"idx shape of another d", Contract{Format: dataset.IDX, Scale: 255, Shape: []int{2, 3}}, stream.KindLogistic, 4, 0, "shape"},
		{"scale of a csv", Contract{Format: dataset.CSV, Features: []string{"a"}, Scale: 2}, stream.KindLogistic, 1, 0, "scale"},
		{"classes of a regression", Contract{Format: dataset.LIBSVM, Classes: []string{"a", "b"}}, stream.KindRegression, 2, 0, "classes"},
		{"three classes of a binary model", Contract{Format: dataset.LIBSVM, Classes: []string{"a", "b", "c"}}, stream.KindLogistic, 2, 0, "classes"},
		{"two classes of a three-class model", Contract{Format: dataset.LIBSVM, Classes: []string{"a", "b"}}, stream.KindMultinomial, 2, 3, "classes"},
		{"one class twice in a multinomial model", Contract{Format: dataset.IDX, Scale: 255, Classes: []string{"0", "1", "1.0"}}, stream.KindMultinomial, 4, 3, "classes"},
		{"one class twice", Contract{Format: dataset.LIBSVM, Classes: []string{"1", "1.0"}}, stream.KindLogistic, 2, 0, "classes"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.c.Validate(tc.kind, tc.d, tc.k)
			var ce *ContractError
			require.ErrorAs(t, err, &ce)
			require.Equal(t, tc.field, ce.Field)
			require.ErrorIs(t, err, ErrContract)
		})
	}
}

func TestContractCheck(t *testing.T) {
	csv := func(features ...string) *Contract {
		return &Contract{Format: dataset.CSV, Features: features, Label: "y"}
	}
	idx := func(scale float64, classes ...string) *Contract {
		return &Contract{Format: dataset.IDX, Scale: scale, Shape: []int{28, 28}, Classes: classes}
	}
	model := csv("age", "bmi", "bp")
	for _, tc := range []struct {
		name       string
		model      *Contract
		data       *Contract
		byPosition bool
		field      string // "" accepted
		detail     string
	}{
		{"same", model, csv("age", "bmi", "bp"), false, "", ""},
		{"no record", model, nil, false, "", ""},
		{"swapped columns", model, csv("age", "bp", "bmi"), false, "features", `feature 2 is "bp", the model's is "bmi": columns in another order`},
		{"renamed column", model, csv("age", "BMI", "bp"), false, "features", `column 2 is "BMI" where the model has "bmi": renamed?`},
		{"missing column", model, csv("age", "bp"), false, "features", `the model's feature "bmi" is missing`},
		{"extra column", model, csv("age", "bmi", "bp", "zip"), false, "features", `column "zip" is not a feature of the model`},
		{"renamed by position", model, csv("a", "b", "c"), true, "", ""},
		{"another format", model, &Contract{Format: dataset.LIBSVM}, false, "format", ""},
		{"another format by position", model, &Contract{Format: dataset.LIBSVM}, true, "", ""},
		{"same classes as numbers", idx(255, "0", "6"), idx(255, "0.0", "6"), false, "", ""},
		{"swapped classes", idx(255, "0", "6"), idx(255, "6", "0"), false, "classes", ""},
		{"swapped classes by position", idx(255, "0", "6"), idx(255, "6", "0"), true, "classes", ""},
		{"classes not named", &Contract{Format: dataset.LIBSVM, Classes: []string{"-1", "1"}}, &Contract{Format: dataset.LIBSVM}, false, "classes", ""},
		{"another scale", idx(7140, "0", "6"), idx(255, "0", "6"), false, "scale", ""},
		{"another scale by position", idx(7140, "0", "6"), idx(255, "0", "6"), true, "scale", ""},
		{"another shape", idx(255, "0", "6"), &Contract{Format: dataset.IDX, Scale: 255, Shape: []int{14, 56}, Classes: []string{"0", "6"}}, false, "shape", ""},
		{"shape not recorded", &Contract{Format: dataset.IDX, Scale: 255, Classes: []string{"0", "6"}}, idx(255, "0", "6"), false, "", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.model.Check(tc.data, CheckOptions{ByPosition: tc.byPosition})
			if tc.field == "" {
				require.NoError(t, err)
				return
			}
			var me *MismatchError
			require.ErrorAs(t, err, &me)
			require.True(t, errors.Is(err, ErrMismatch))
			assert.Equal(t, tc.field, me.Field)
			assert.NotEqual(t, me.Want, me.Got, "the message shows a difference")
			if tc.detail != "" {
				assert.Contains(t, me.Detail, tc.detail)
			}
			assert.Contains(t, err.Error(), tc.field+": the model expects ")
		})
	}
}

func TestContractCheckMessages(t *testing.T) {
	// What a user reads, in full, for the three cases.
	m := &Contract{Format: dataset.IDX, Scale: 7140, Shape: []int{28, 28}, Classes: []string{"0", "6"}}
	err := m.Check(&Contract{Format: dataset.IDX, Scale: 7140, Shape: []int{28, 28}, Classes: []string{"6", "0"}}, CheckOptions{})
	require.EqualError(t, err, "classes: the model expects classes 0, 6 (0 → −1, 6 → +1), the data has classes 6, 0 (6 → −1, 0 → +1)")
	err = m.Check(&Contract{Format: dataset.IDX, Scale: 255, Shape: []int{28, 28}, Classes: []string{"0", "6"}}, CheckOptions{})
	require.EqualError(t, err, "scale: the model expects pixels divided by 7140, the data has pixels divided by 255")
	c := &Contract{Format: dataset.CSV, Features: []string{"a", "b"}}
	err = c.Check(&Contract{Format: dataset.CSV, Features: []string{"b", "a"}}, CheckOptions{})
	require.EqualError(t, err, `features: the model expects 2 feature columns "a", "b", the data has 2 feature columns "b", "a" (feature 1 is "b", the model's is "a": columns in another order)`)
}

// TestContractFeatureScale: a declared feature scale goes from the data
// options through the stream header into the contract and back through
// JSON unchanged; Validate refuses a scale that cannot describe the
// model's features; Check refuses data without the model's scale, with
// another one, and a model without one given data with one, naming the
// field feature_scale.
func TestContractFeatureScale(t *testing.T) {
	fs := []dataset.FeatureScale{{Feature: "b", Range: []float64{-1, 3}}, {Feature: "a", Divisor: 2600}}
	cols := []string{"a", "b", "y"}
	h := csvHeader(t, cols, dataset.Options{Label: "y", FeatureScale: fs})
	c, err := ContractOf(h)
	require.NoError(t, err)
	want := []dataset.FeatureScale{{Feature: "a", Index: 1, Divisor: 2600}, {Feature: "b", Index: 2, Range: []float64{-1, 3}}}
	require.Equal(t, want, c.FeatureScale)
	require.NoError(t, c.Validate(stream.KindLogistic, 2, 0))
	b, err := json.Marshal(c)
	require.NoError(t, err)
	require.Contains(t, string(b), `"feature_scale":[{"feature":"a","index":1,"divisor":2600},{"feature":"b","index":2,"range":[-1,3]}]`)
	var back Contract
	require.NoError(t, json.Unmarshal(b, &back))
	require.Equal(t, c, &back)
	require.NoError(t, c.Check(&back, CheckOptions{}))

	for name, edit := range map[string]func(c *Contract){
		"index out of range": func(c *Contract) { c.FeatureScale[1].Index = 3 },
		"wrong name":         func(c *Contract) { c.FeatureScale[0].Feature = "b" },
		"out of order":       func(c *Contract) { c.FeatureScale[0], c.FeatureScale[1] = c.FeatureScale[1], c.FeatureScale[0] },
		"zero divisor":       func(c *Contract) { c.FeatureScale[0].Divisor = 0 },
		"both":               func(c *Contract) { c.FeatureScale[1].Divisor = 2 },
		"empty range":        func(c *Contract) { c.FeatureScale[1].Range = []float64{3, 3} },
		"idx":                func(c *Contract) { c.Format, c.Features, c.Label, c.Scale = dataset.IDX, nil, "", 255 },
	} {
		bad := back
		bad.FeatureScale = []dataset.FeatureScale{want[0], want[1]}
		bad.FeatureScale[1].Range = slices.Clone(want[1].Range)
		edit(&bad)
		err := bad.Validate(stream.KindLogistic, 2, 0)
		var ce *ContractError
		require.True(t, errors.As(err, &ce), "%s: %v", name, err)
		require.Equal(t, "feature_scale", ce.Field, name)
	}

	plain, err := ContractOf(csvHeader(t, cols, dataset.Options{Label: "y"}))
	require.NoError(t, err)
	other, err := ContractOf(csvHeader(t, cols, dataset.Options{Label: "y", FeatureScale: fs[1:]}))
	require.NoError(t, err)
	for _, pair := range [][2]*Contract{{c, plain}, {plain, c}, {c, other}} {
		err := pair[0].Check(pair[1], CheckOptions{ByPosition: true})
		var me *MismatchError
		require.True(t, errors.As(err, &me), "%v", err)
		require.Equal(t, "feature_scale", me.Field)
	}
	err = c.Check(plain, CheckOptions{})
	require.ErrorContains(t, err, `feature scale of 2 features: "a" / 2600, "b" in [-1, 3]`)
	require.ErrorContains(t, err, "no feature scale (values as they are)")
}
