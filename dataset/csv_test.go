package dataset

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"unlearn/stream"
)

// writeTemp writes content to a file name in a fresh temporary folder.
func writeTemp(t testing.TB, name, content string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	require.NoError(t, os.WriteFile(p, []byte(content), 0o644))
	return p
}

// readAll opens path and returns its header, events and reader.
func readAll(t testing.TB, path string, o Options) (stream.Header, []stream.Event, *Reader) {
	t.Helper()
	h, r, err := Open(path, o)
	require.NoError(t, err)
	var evs []stream.Event
	for {
		e, err := r.Next()
		if err == io.EOF {
			break
		}
		require.NoError(t, err)
		evs = append(evs, e)
	}
	require.NoError(t, r.Close())
	return h, evs, r
}

// readErr opens path and reads until the first error, which it returns.
func readErr(path string, o Options) error {
	_, r, err := Open(path, o)
	if err != nil {
		return err
	}
	defer r.Close()
	for {
		if _, err := r.Next(); err == io.EOF {
			return nil
		} else if err != nil {
			return err
		}
	}
}

func TestCSVBasics(t *testing.T) {
	p := writeTemp(t, "d.csv", "age,name,label,income\n 30 ,ann,1,1.5\n41,bob,0,-2e3\n\"52\",cy,1,0\n")
	h, evs, r := readAll(t, p, Options{Label: "label", Exclude: []string{"name"}})
	assert.Equal(t, stream.KindLogistic, h.Kind)
	assert.Equal(t, 2, h.D)
	assert.Equal(t, DefaultLambda, h.Lambda)
	var names []string
	_, err := h.MetaValue("features", &names)
	require.NoError(t, err)
	assert.Equal(t, []string{"age", "income"}, names)
	assert.Equal(t, []stream.Event{
		stream.InsertEvent(1, []float64{30, 1.5}, 1),
		stream.InsertEvent(2, []float64{41, -2000}, -1),
		stream.InsertEvent(3, []float64{52, 0}, 1),
	}, evs)
	assert.Equal(t, Stats{Rows: 3, Emitted: 3}, r.Stats())
	assert.Empty(t, r.Mapping())

	// Columns by 1-based index; integer ids used as they are; regression
	// keeps the real targets.
	_, evs, _ = readAll(t, p, Options{Label: "4", ID: "1", Exclude: []string{"2"}, Kind: stream.KindRegression, Lambda: new(0.0)})
	assert.Equal(t, []stream.Event{
		stream.InsertEvent(30, []float64{1}, 1.5),
		stream.InsertEvent(41, []float64{0}, -2000),
		stream.InsertEvent(52, []float64{1}, 0),
	}, evs)
}

func TestCSVStringIDs(t *testing.T) {
	p := writeTemp(t, "ids.csv", "user;x;y\nu-17;0.5;-1\n42;1;1\nzed;2;-1\n")
	_, evs, r := readAll(t, p, Options{Label: "y", ID: "user", Comma: ';'})
	assert.Equal(t, []int64{1, 2, 3}, stream.InsertIDs(evs), "string ids become data row numbers")
	assert.Equal(t, []Mapping{{1, "u-17"}, {2, "42"}, {3, "zed"}}, r.Mapping())

	// Shuffled, the mapping is the same (ids belong to rows, not positions).
	_, evs2, r2 := readAll(t, p, Options{Label: "y", ID: "user", Comma: ';', Shuffle: new(uint64(5))})
	assert.ElementsMatch(t, evs, evs2)
	assert.Equal(t, r.Mapping(), r2.Mapping())
}

func TestCSVErrors(t *testing.T) {
	for _, c := range []struct {
		name, content string
		opts          Options
		line, column  int
		colName       string
		sentinel      error
	}{
		{"empty cell", "a,b,y\n1,,0\n", Options{Label: "y"}, 2, 3, "b", ErrValue},
		{"non-numeric", "a,b,y\n1,2,0\n1,two,1\n", Options{Label: "y"}, 3, 3, "b", ErrValue},
		{"NaN", "a,y\nNaN,1\n", Options{Label: "y"}, 2, 1, "a", ErrValue},
		{"overflow", "a,y\n1e999,1\n", Options{Label: "y"}, 2, 1, "a", ErrValue},
		{"label 2", "a,y\n1,0\n1,2\n", Options{Label: "y"}, 3, 3, "y", ErrLabel},
		{"0 after -1", "a,y\n1,-1\n1,1\n2,0\n", Options{Label: "y"}, 4, 3, "y", ErrLabel},
		{"-1 after 0", "a,y\n1,0\n2,-1\n", Options{Label: "y"}, 3, 3, "y", ErrLabel},
		{"empty label", "a,y\n1,\n", Options{Label: "y"}, 2, 3, "y", ErrValue},
		{"regression target", "a,y\n1,abc\n", Options{Label: "y", Kind: stream.KindRegression}, 2, 3, "y", ErrValue},
		{"duplicate int id", "id,a,y\n5,1,1\n6,1,1\n5,2,0\n", Options{Label: "y", ID: "id"}, 4, 1, "id", ErrDuplicateID},
		{"duplicate string id", "id,a,y\nx,1,1\nx,1,1\n", Options{Label: "y", ID: "id"}, 3, 1, "id", ErrDuplicateID},
		{"string id after int ids", "id,a,y\n5,1,1\nq,1,1\n", Options{Label: "y", ID: "id"}, 3, 1, "id", ErrValue},
		{"empty id", "id,a,y\n,1,1\n", Options{Label: "y", ID: "id"}, 2, 1, "id", ErrValue},
		{"too few fields", "a,b,y\n1,2,1\n1,2\n", Options{Label: "y"}, 3, 0, "", ErrSyntax},
		{"bare quote", "a,y\n1\"x,1\n", Options{Label: "y"}, 2, 2, "", ErrSyntax},
	} {
		t.Run(c.name, func(t *testing.T) {
			err := readErr(writeTemp(t, "e.csv", c.content), c.opts)
			var pe *PosError
			require.ErrorAs(t, err, &pe)
			assert.Equal(t, c.line, pe.Line, "line")
			assert.Equal(t, c.column, pe.Column, "column")
			assert.Equal(t, c.colName, pe.ColumnName, "column name")
			// The field is the column's 1-based place in the header row.
			field := 0
			if c.colName != "" {
				field = slices.Index(strings.Split(strings.SplitN(c.content, "\n", 2)[0], ","), c.colName) + 1
				assert.Contains(t, err.Error(), fmt.Sprintf("line %d, field %d (%q): ", c.line, field, c.colName))
			}
			assert.Equal(t, field, pe.Field, "field")
			assert.ErrorIs(t, err, c.sentinel)
			assert.Contains(t, err.Error(), "e.csv: line ")
		})
	}
}

// TestCSVErrorNamesField: the new user's case (issue #12). A cell's
// error names its field number and header name, which differ from the
// byte column as soon as an earlier cell is longer than one byte: "a" is
// field 2 at byte column 5 of "u-22,,1".
func TestCSVErrorNamesField(t *testing.T) {
	path := writeTemp(t, "u.csv", "user,a,clicked\nu-1,0.5,0\nu-22,,1\nu-3,1,x\n")
	err := readErr(path, Options{Label: "clicked", ID: "user"})
	require.EqualError(t, err, path+`: line 3, field 2 ("a"): empty cell: invalid value`)
	var pe *PosError
	require.ErrorAs(t, err, &pe)
	assert.Equal(t, PosError{File: path, Line: 3, Column: 6, Field: 2, ColumnName: "a", Err: pe.Err}, *pe)

	path = writeTemp(t, "v.csv", "user,a,clicked\nu-1,0.5,0\nu-3,1,x\n")
	err = readErr(path, Options{Label: "clicked", ID: "user"})
	require.ErrorContains(t, err, path+`: line 3, field 3 ("clicked"): `)
}

func TestCSVOptionErrors(t *testing.T) {
	p := writeTemp(t, "o.csv", "a,b,y\n1,2,1\n")
	for _, c := range []struct {
		name  string
		opts  Options
		field string
	}{
		{"no label", Options{}, "Label"},
		{"unknown label", Options{Label: "z"}, "Label"},
		{"label index 0", Options{Label: "0"}, "Label"},
		{"label index too big", Options{Label: "4"}, "Label"},
		{"id is the label", Options{Label: "y", ID: "3"}, "ID"},
		{"no features", Options{Label: "y", Exclude: []string{"a", "b"}}, "Exclude"},
		{"bad kind", Options{Label: "y", Kind: "quadratic"}, "Kind"},
		{"negative lambda", Options{Label: "y", Lambda: new(-1.0)}, "Lambda"},
		{"one class", Options{Label: "y", Classes: []string{"1"}}, "Classes"},
		{"same classes", Options{Label: "y", Classes: []string{"1", "1.0"}}, "Classes"},
		{"classes for regression", Options{Label: "y", Kind: stream.KindRegression, Classes: []string{"0", "1"}}, "Classes"},
		{"D for CSV", Options{Label: "y", D: 3}, "D"},
		{"negative limit", Options{Label: "y", Limit: -1}, "Limit"},
		{"unknown format", Options{Label: "y", Format: "xlsx"}, "Format"},
	} {
		_, _, err := Open(p, c.opts)
		var oe *OptionError
		require.ErrorAs(t, err, &oe, c.name)
		assert.Equal(t, c.field, oe.Field, c.name)
		assert.ErrorIs(t, err, ErrOptions, c.name)
	}
	_, _, err := Open(writeTemp(t, "empty.csv", ""), Options{Label: "y"})
	assert.ErrorIs(t, err, ErrSyntax)
	_, _, err = Open(filepath.Join(t.TempDir(), "missing.csv"), Options{Label: "y"})
	assert.True(t, errors.Is(err, os.ErrNotExist), "%v", err)
	_, _, err = Open(writeTemp(t, "data.bin", "x"), Options{})
	assert.ErrorIs(t, err, ErrOptions, "a format that cannot be guessed")
}

func TestCSVClasses(t *testing.T) {
	p := writeTemp(t, "c.csv", "x,digit\n1,3\n2,8\n3,5\n4,3.0\n")
	_, evs, r := readAll(t, p, Options{Label: "digit", Classes: []string{"3", "8"}})
	assert.Equal(t, []stream.Event{
		stream.InsertEvent(1, []float64{1}, -1),
		stream.InsertEvent(2, []float64{2}, 1),
		stream.InsertEvent(4, []float64{4}, -1),
	}, evs, "class 5 is skipped; 3.0 is class 3; ids stay row numbers")
	assert.Equal(t, Stats{Rows: 4, Skipped: 1, Emitted: 3}, r.Stats())
}

func TestCSVSkipLinesAndNoHeader(t *testing.T) {
	// scikit-learn's bundled CSVs start with a summary line
	// ("569,30,malignant,benign") and have no header row.
	p := writeTemp(t, "bc.csv", "3,2,malignant,benign\n17.99,10.38,0\n20.57,17.77,1\n19.69,x,1\n")
	h, r, err := Open(p, Options{SkipLines: 1, NoHeader: true, Label: "3"})
	require.NoError(t, err)
	var names []string
	_, err = h.MetaValue("features", &names)
	require.NoError(t, err)
	assert.Equal(t, []string{"1", "2"}, names)
	e, err := r.Next()
	require.NoError(t, err)
	assert.Equal(t, stream.InsertEvent(1, []float64{17.99, 10.38}, -1), e, "the first data row is not lost")
	e, err = r.Next()
	require.NoError(t, err)
	assert.Equal(t, stream.InsertEvent(2, []float64{20.57, 17.77}, 1), e)
	_, err = r.Next()
	var pe *PosError
	require.ErrorAs(t, err, &pe)
	assert.Equal(t, PosError{Line: 4, Column: 7, ColumnName: "2"}, PosError{Line: pe.Line, Column: pe.Column, ColumnName: pe.ColumnName},
		"line numbers count the skipped line")

	// An error in the first data row of a headerless file is located too.
	err = readErr(writeTemp(t, "h.csv", "skip me\n1,,1\n"), Options{SkipLines: 1, NoHeader: true, Label: "3"})
	require.ErrorAs(t, err, &pe)
	assert.Equal(t, [2]int{2, 3}, [2]int{pe.Line, pe.Column})

	// With a header after the skipped lines (scikit-learn's Boston CSV).
	_, evs, _ := readAll(t, writeTemp(t, "b.csv", "2,1,,\nA,MEDV\n0.5,24\n1.5,21.6\n"), Options{SkipLines: 1, Label: "MEDV", Kind: stream.KindRegression})
	assert.Equal(t, []stream.Event{stream.InsertEvent(1, []float64{0.5}, 24), stream.InsertEvent(2, []float64{1.5}, 21.6)}, evs)
	err = readErr(writeTemp(t, "f.csv", "2,1,,\nA,MEDV\n0.5,24,3\n"), Options{SkipLines: 1, Label: "MEDV"})
	require.ErrorAs(t, err, &pe)
	assert.Equal(t, 3, pe.Line)
	assert.ErrorIs(t, err, ErrSyntax)
}

// TestCSVStringColumn: a word in a feature cell of the first data row
// marks the column as one of strings (names or ids); a bad cell further
// down, an empty or overflowing cell, or a label, does not.
func TestCSVStringColumn(t *testing.T) {
	for _, c := range []struct {
		name, content string
		field         int
		want          bool
	}{
		{"ids in the first row", "user,a,y\nu-7,1,0\n", 1, true},
		{"a word later", "a,b,y\n1,2,0\n1,two,1\n", 2, false},
		{"empty cell", "a,b,y\n1,,0\n", 2, false},
		{"overflow", "a,y\n1e999,1\n", 1, false},
		{"NaN", "a,y\nNaN,1\n", 1, false},
		{"label", "a,y\n1,yes\n", 2, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			err := readErr(writeTemp(t, "s.csv", c.content), Options{Label: "y"})
			var pe *PosError
			require.ErrorAs(t, err, &pe)
			assert.Equal(t, c.field, pe.Field)
			assert.Equal(t, c.want, pe.StringColumn)
		})
	}
}
