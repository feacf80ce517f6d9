package dataset

import (
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"pgregory.net/rapid"
)

// TestReadersRoundTripProperty: any finite table written as CSV and as
// LIBSVM (dense and sparse) reads back to exactly its numbers, labels and
// row ids, in file order or in the order of a seeded shuffle.
func TestReadersRoundTripProperty(t *testing.T) {
	dir := t.TempDir()
	n := 0
	rapid.Check(t, func(t *rapid.T) {
		rows := rapid.IntRange(1, 20).Draw(t, "rows")
		d := rapid.IntRange(1, 6).Draw(t, "d")
		val := rapid.OneOf(rapid.Float64Range(-1e6, 1e6), rapid.SampledFrom([]float64{0, 1, -1, 5e-324, math.MaxFloat64, -0.1}))
		x := make([][]float64, rows)
		y := make([]float64, rows)
		var csvText, svmText strings.Builder
		for j := range d {
			fmt.Fprintf(&csvText, "c%d,", j)
		}
		csvText.WriteString("label\n")
		for i := range rows {
			x[i] = rapid.SliceOfN(val, d, d).Draw(t, "x")
			y[i] = rapid.SampledFrom([]float64{-1, 1}).Draw(t, "y")
			lab := strconv.FormatFloat(y[i], 'g', -1, 64)
			svmText.WriteString(lab)
			for j, v := range x[i] {
				s := strconv.FormatFloat(v, 'g', -1, 64)
				csvText.WriteString(s + ",")
				if v != 0 || math.Signbit(v) { // −0 is written: absent means +0
					fmt.Fprintf(&svmText, " %d:%s", j+1, s)
				}
			}
			csvText.WriteString(lab + "\n")
			svmText.WriteString("\n")
		}
		n++
		cp := filepath.Join(dir, fmt.Sprintf("t%d.csv", n))
		sp := filepath.Join(dir, fmt.Sprintf("t%d.svm", n))
		if err := os.WriteFile(cp, []byte(csvText.String()), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(sp, []byte(svmText.String()), 0o644); err != nil {
			t.Fatal(err)
		}
		var shuffle *uint64
		if rapid.Bool().Draw(t, "shuffle") {
			shuffle = new(rapid.Uint64().Draw(t, "seed"))
		}
		order := make([]int, rows)
		for i := range order {
			order[i] = i
		}
		if shuffle != nil {
			order = Permutation(rows, *shuffle)
		}
		for _, c := range []struct {
			path string
			o    Options
		}{
			{cp, Options{Label: "label", Shuffle: shuffle}},
			{sp, Options{D: d, Shuffle: shuffle}},
			{sp, Options{D: d, Sparse: true, Shuffle: shuffle}},
		} {
			_, r, err := Open(c.path, c.o)
			if err != nil {
				t.Fatalf("%s: %v", c.path, err)
			}
			for k := 0; ; k++ {
				e, err := r.Next()
				if err == io.EOF {
					if k != rows {
						t.Fatalf("%s: %d events, want %d", c.path, k, rows)
					}
					break
				}
				if err != nil {
					t.Fatalf("%s: %v", c.path, err)
				}
				i := order[k]
				if e.ID != int64(i+1) || e.Sample.S != y[i] {
					t.Fatalf("%s: event %d is (id %d, y %v), want (%d, %v)", c.path, k, e.ID, e.Sample.S, i+1, y[i])
				}
				got := e.Sample.Dense(d)
				for j := range d {
					if math.Float64bits(got[j]) != math.Float64bits(x[i][j]) {
						t.Fatalf("%s: row %d entry %d = %v, want %v", c.path, i+1, j, got[j], x[i][j])
					}
				}
				if c.o.Sparse != e.Sample.IsSparse() {
					t.Fatalf("%s: sparse = %v, want %v", c.path, e.Sample.IsSparse(), c.o.Sparse)
				}
			}
			r.Close()
		}
	})
}
