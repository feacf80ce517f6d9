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
