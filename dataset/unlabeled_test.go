package dataset

import (
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"unlearn/stream"
)

// TestUnlabeledCSV reads rows to predict on: with or without the label
// column, every row (whatever its class), ids not checked for repeats.
func TestUnlabeledCSV(t *testing.T) {
	o := Options{Label: "y", ID: "name", Classes: []string{"a", "b"}, Unlabeled: true}
	for name, content := range map[string]string{
		"label column":    "name,x1,y,x2\nann,1,a,2\nbob,3,zzz,4\nann,5,,6\n",
		"no label column": "name,x1,x2\nann,1,2\nbob,3,4\nann,5,6\n",
	} {
		t.Run(name, func(t *testing.T) {
			p := writeTemp(t, "rows.csv", content)
			h, r, err := Open(p, o)
			require.NoError(t, err)
			var keys []string
			var xs [][]float64
			for {
				e, err := r.Next()
				if err != nil {
					break
				}
				require.Equal(t, 1.0, e.Sample.S, "the placeholder label of a logistic stream")
				keys = append(keys, r.Key())
				xs = append(xs, e.Sample.V)
			}
			require.NoError(t, r.Close())
			assert.Equal(t, []string{"ann", "bob", "ann"}, keys, "a repeated id is read again, not refused")
			assert.Equal(t, [][]float64{{1, 2}, {3, 4}, {5, 6}}, xs, "a class outside Classes is read too")
			assert.Empty(t, r.Mapping(), "an unlabeled read keeps nothing per row")
			var features []string
			_, err = h.MetaValue(MetaFeatures, &features)
			require.NoError(t, err)
			assert.Equal(t, []string{"x1", "x2"}, features)
		})
	}
	t.Run("integer ids repeat", func(t *testing.T) {
		p := writeTemp(t, "rows.csv", "id,x\n4,1\n4,2\n")
		_, evs, _ := readAll(t, p, Options{Label: "y", ID: "id", Unlabeled: true, Kind: stream.KindRegression})
		require.Len(t, evs, 2)
		assert.Equal(t, int64(4), evs[1].ID)
		assert.Equal(t, 0.0, evs[1].Sample.S, "the placeholder of a regression stream")
	})
	t.Run("no id or excluded column", func(t *testing.T) {
		p := writeTemp(t, "rows.csv", "x1,x2\n1,2\n3,4\n")
		_, evs, r := readAll(t, p, Options{Label: "y", ID: "name", Exclude: []string{"notes"}, Unlabeled: true})
		require.Len(t, evs, 2)
		assert.Equal(t, int64(2), evs[1].ID, "rows numbered")
		assert.Equal(t, "", r.Key())
		// A labelled read still refuses them.
		_, _, err := Open(p, Options{Label: "x1", ID: "name"})
		require.ErrorIs(t, err, ErrOptions)
	})
	t.Run("no label option", func(t *testing.T) {
		p := writeTemp(t, "rows.csv", "x,z\n1,2\n")
		_, evs, _ := readAll(t, p, Options{Unlabeled: true})
		assert.Equal(t, []float64{1, 2}, evs[0].Sample.V)
	})
}

func TestUnlabeledLIBSVM(t *testing.T) {
	// Rows with and without a label token; the label is never checked.
	p := writeTemp(t, "rows.svm", "1:0.5 3:2\n7 2:1\n-1 1:1 3:1 # c\nfoo 2:3\n")
	_, evs, _ := readAll(t, p, Options{D: 3, Unlabeled: true})
	require.Len(t, evs, 4)
	assert.Equal(t, []float64{0.5, 0, 2}, evs[0].Sample.V)
	assert.Equal(t, []float64{0, 1, 0}, evs[1].Sample.V)
	assert.Equal(t, []float64{0, 3, 0}, evs[3].Sample.V)
	_, evs, _ = readAll(t, p, Options{D: 3, Unlabeled: true, Sparse: true})
	assert.Equal(t, []int32{0, 2}, evs[0].Sample.Idx)
	// Without Unlabeled, a line without label is an error.
	require.ErrorIs(t, readErr(p, Options{D: 3}), ErrValue)
}

func TestUnlabeledIDX(t *testing.T) {
	p := idxFiles(t, []byte{0, 6, 3}, 2, 2, func(i, j int) byte { return byte(i + j) }, false)
	// No label file is opened: remove it.
	require.NoError(t, os.Remove(strings.Replace(p, "images-idx3", "labels-idx1", 1)))
	h, evs, _ := readAll(t, p, Options{Unlabeled: true, Classes: []string{"0", "6"}, Scale: 2})
	require.Len(t, evs, 3, "every image, whatever its class")
	assert.Equal(t, []float64{1, 1.5, 2, 2.5}, evs[2].Sample.V)
	src, _, ok, err := SourceOf(h)
	require.NoError(t, err)
	require.True(t, ok)
	assert.Equal(t, []int{2, 2}, src.Shape)
	assert.Equal(t, 2.0, src.Scale)
	_, err = func() (stream.Header, error) {
		h, _, err := Open(p, Options{Unlabeled: true, Labels: "x"})
		return h, err
	}()
	require.ErrorIs(t, err, ErrOptions)
}

// TestSourceOf reads back the "source" record of every format and ignores
// another program's use of the key.
func TestSourceOf(t *testing.T) {
	p := writeTemp(t, "d.csv", "id,a,skip,b,y\n1,1,0,2,1\n")
	h, _, _ := readAll(t, p, Options{Label: "y", ID: "id", Exclude: []string{"skip"}})
	src, features, ok, err := SourceOf(h)
	require.NoError(t, err)
	require.True(t, ok)
	assert.Equal(t, Source{File: "d.csv", Format: CSV, Label: "y", ID: "id", Exclude: []string{"skip"}}, src)
	assert.Equal(t, []string{"a", "b"}, features)

	for _, meta := range []any{"hand", 3, map[string]any{"format": "parquet"}, []int{1}} {
		hd := stream.Header{Format: stream.FormatV1, Kind: stream.KindLogistic, D: 1}
		require.NoError(t, hd.SetMeta(MetaSource, meta))
		_, _, ok, err := SourceOf(hd)
		require.NoError(t, err)
		require.False(t, ok, "%v is not a data source record", meta)
	}
	_, _, ok, err = SourceOf(stream.Header{})
	require.NoError(t, err)
	require.False(t, ok)
	hd := stream.Header{Format: stream.FormatV1, Kind: stream.KindLogistic, D: 1}
	require.NoError(t, hd.SetMeta(MetaSource, map[string]any{"format": "csv", "scale": "x"}))
	_, _, _, err = SourceOf(hd)
	require.Error(t, err)
}
