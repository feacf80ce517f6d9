package stream

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// sentinels are the errors Read may wrap.
var sentinels = []error{
	ErrFormat, ErrInvalidValue, ErrNonFinite, ErrDimension, ErrNotSPD,
	ErrUnknownDeletion, ErrRepeatedDeletion, ErrDuplicateID,
}

// FuzzRead checks the stream reader on arbitrary input. The seed corpus is
// in testdata/fuzz/FuzzRead (valid and invalid files); run the fuzzer with
//
//	go test -run='^$' -fuzz=FuzzRead ./stream
//
// Properties: Read never panics; a rejection is a *LineError at a line of
// the input wrapping one of the package's sentinels; an accepted input has
// only lines that encoding/json also accepts, with the same values, and
// Write then Read gives back an identical history (bit for bit), whose
// rewrite is byte-identical.
func FuzzRead(f *testing.F) {
	f.Add([]byte(lines(qHeader, qInsert, `{"op":"delete","id":1}`)))
	f.Add([]byte(lines(lHeader, lInsert)))
	f.Add([]byte(lines(hdr(`"kind":"logistic","d":2,"lambda":0.05,"m":{"a":[1,2.5e3,-7]}`), lInsert, `{"op":"delete","id":1}`)))
	f.Fuzz(func(t *testing.T, data []byte) {
		h, err := Read(bytes.NewReader(data))
		if err != nil {
			var le *LineError
			require.ErrorAs(t, err, &le)
			n := bytes.Count(data, []byte("\n")) + 1
			require.GreaterOrEqual(t, le.Line, 1, "error line outside [1, %d]: %v", n, err)
			require.LessOrEqual(t, le.Line, n, "error line outside [1, %d]: %v", n, err)
			for _, s := range sentinels {
				if errors.Is(err, s) {
					return
				}
			}
			t.Fatalf("error %v wraps none of the sentinels", err)
		}
		checkAgainstEncodingJSON(t, data, h)
		h2, raw := roundTrip(t, h)
		if diff := diffHistory(h, h2); diff != "" {
			t.Fatalf("Read(Write(h)) ≠ h: %s", diff)
		}
		_, raw2 := roundTrip(t, h2)
		require.Equal(t, string(raw), string(raw2), "Write is not stable")
	})
}

// checkAgainstEncodingJSON checks that every line of an accepted input is
// valid JSON for encoding/json and that encoding/json decodes every event
// to the values Read produced (a differential test of the scanner).
func checkAgainstEncodingJSON(t *testing.T, data []byte, h *History) {
	t.Helper()
	ls := bytes.Split(data, []byte("\n"))
	if len(ls[len(ls)-1]) == 0 {
		ls = ls[:len(ls)-1]
	}
	require.Equal(t, len(h.Events)+1, len(ls), "lines, want the header and one per event")
	for i, line := range ls {
		require.True(t, json.Valid(line), "line %d accepted by Read but not valid JSON: %q", i+1, line)
	}
	var hdr Header
	require.NoError(t, hdr.UnmarshalJSON(ls[0]), "Header.UnmarshalJSON rejects an accepted header")
	checkHeaderAgainstEncodingJSON(t, ls[0], h.Header)
	for i, line := range ls[1:] {
		var ev struct {
			Op    string
			ID    int64
			A, X  []float64
			Alpha *float64
			Y     *float64
		}
		require.NoError(t, json.Unmarshal(line, &ev), "encoding/json rejects accepted event line %d", i+2)
		e := h.Events[i]
		v, s := ev.A, ev.Alpha
		if h.Header.Kind == KindLogistic {
			v, s = ev.X, ev.Y
		}
		ok := ev.Op == e.Op.String() && ev.ID == e.ID && sameFloats(v, e.Sample.V)
		if e.Op == Insert {
			ok = ok && s != nil && sameFloat(*s, e.Sample.S)
		} else {
			ok = ok && v == nil && s == nil
		}
		if !ok {
			t.Fatalf("line %d: encoding/json reads %+v, Read gave %+v", i+2, ev, e)
		}
	}
}

// checkHeaderAgainstEncodingJSON decodes the header line with
// encoding/json into generic values and checks that it holds exactly the
// values Read produced: the known fields bit for bit, and every metadata
// field decoding (with encoding/json, numbers as float64) to the same value
// as the header line's field. A metadata number that overflows float64 makes
// encoding/json fail, so this also checks that Read refused it.
func checkHeaderAgainstEncodingJSON(t *testing.T, line []byte, h Header) {
	t.Helper()
	var m map[string]any
	require.NoError(t, json.Unmarshal(line, &m), "encoding/json rejects the accepted header %q", line)
	require.Equal(t, h.Format, m["format"], "format")
	require.Equal(t, string(h.Kind), m["kind"], "kind")
	require.Equal(t, float64(h.D), m["d"], "d")
	matrix := func(name string, want [][]float64) {
		v, ok := m[name]
		if want == nil {
			require.False(t, ok, "%s: encoding/json finds it, Read does not", name)
			return
		}
		rows, ok := v.([]any)
		require.True(t, ok && len(rows) == len(want), "%s: encoding/json reads %v", name, v)
		for i, r := range rows {
			row, ok := r.([]any)
			require.True(t, ok && len(row) == len(want[i]), "%s[%d]: encoding/json reads %v", name, i, r)
			for j, x := range row {
				f, ok := x.(float64)
				require.True(t, ok && sameFloat(f, want[i][j]), "%s[%d][%d]: encoding/json reads %v, Read %v", name, i, j, x, want[i][j])
			}
		}
	}
	matrix("H0", h.H0)
	matrix("H1", h.H1)
	if h.Kind == KindLogistic {
		f, ok := m["lambda"].(float64)
		require.True(t, ok && sameFloat(f, h.Lambda), "lambda: encoding/json reads %v, Read %v", m["lambda"], h.Lambda)
	}
	known := 0
	for k := range m {
		if isKnownHeaderKey(k) {
			known++
		}
	}
	require.Equal(t, len(m)-known, len(h.Meta), "metadata fields: encoding/json finds %v", m)
	for k, raw := range h.Meta {
		var got any
		require.NoError(t, json.Unmarshal(raw, &got), "metadata %q = %s does not decode", k, raw)
		require.Equal(t, m[k], got, "metadata %q: encoding/json reads %v from the line, %v from Meta", k, m[k], got)
	}
}

// TestFuzzCorpus checks that the seed corpus means what its file names say:
// every valid-* file is accepted and every invalid-* file rejected.
func TestFuzzCorpus(t *testing.T) {
	dir := filepath.Join("testdata", "fuzz", "FuzzRead")
	ents, err := os.ReadDir(dir)
	require.NoError(t, err)
	var valid, invalid int
	for _, e := range ents {
		name := e.Name()
		isValid := strings.HasPrefix(name, "valid-")
		if !isValid && !strings.HasPrefix(name, "invalid-") {
			continue // entries added by the fuzzer (crashers) are checked by FuzzRead itself
		}
		t.Run(name, func(t *testing.T) {
			raw, err := os.ReadFile(filepath.Join(dir, name))
			require.NoError(t, err)
			body, ok := strings.CutPrefix(string(raw), "go test fuzz v1\n[]byte(")
			body, ok2 := strings.CutSuffix(body, ")\n")
			require.True(t, ok && ok2, "not a one-value corpus file: %q", raw)
			data, err := strconv.Unquote(body)
			require.NoError(t, err)
			_, err = Read(strings.NewReader(data))
			if isValid {
				assert.NoError(t, err, "valid seed rejected")
			} else {
				assert.Error(t, err, "invalid seed accepted")
			}
		})
		if isValid {
			valid++
		} else {
			invalid++
		}
	}
	assert.GreaterOrEqual(t, valid, 3, "valid seeds in the corpus")
	assert.GreaterOrEqual(t, invalid, 10, "invalid seeds in the corpus")
}
