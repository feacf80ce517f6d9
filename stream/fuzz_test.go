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
			if !errors.As(err, &le) {
				t.Fatalf("error %v is not a *LineError", err)
			}
			if n := bytes.Count(data, []byte("\n")) + 1; le.Line < 1 || le.Line > n {
				t.Fatalf("error line %d outside [1, %d]: %v", le.Line, n, err)
			}
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
		if !bytes.Equal(raw, raw2) {
			t.Fatalf("Write is not stable:\n%s\n%s", raw, raw2)
		}
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
	if len(ls) != len(h.Events)+1 {
		t.Fatalf("%d lines but %d events", len(ls), len(h.Events))
	}
	for i, line := range ls {
		if !json.Valid(line) {
			t.Fatalf("line %d accepted by Read but not valid JSON: %q", i+1, line)
		}
	}
	var hdr Header
	if err := hdr.UnmarshalJSON(ls[0]); err != nil {
		t.Fatalf("Header.UnmarshalJSON rejects an accepted header: %v", err)
	}
	for i, line := range ls[1:] {
		var ev struct {
			Op    string
			ID    int64
			A, X  []float64
			Alpha *float64
			Y     *float64
		}
		if err := json.Unmarshal(line, &ev); err != nil {
			t.Fatalf("encoding/json rejects accepted event line %d: %v", i+2, err)
		}
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
	if err != nil {
		t.Fatal(err)
	}
	var valid, invalid int
	for _, e := range ents {
		name := e.Name()
		isValid := strings.HasPrefix(name, "valid-")
		if !isValid && !strings.HasPrefix(name, "invalid-") {
			continue // entries added by the fuzzer (crashers) are checked by FuzzRead itself
		}
		t.Run(name, func(t *testing.T) {
			raw, err := os.ReadFile(filepath.Join(dir, name))
			if err != nil {
				t.Fatal(err)
			}
			body, ok := strings.CutPrefix(string(raw), "go test fuzz v1\n[]byte(")
			body, ok2 := strings.CutSuffix(body, ")\n")
			if !ok || !ok2 {
				t.Fatalf("not a one-value corpus file: %q", raw)
			}
			data, err := strconv.Unquote(body)
			if err != nil {
				t.Fatal(err)
			}
			_, err = Read(strings.NewReader(data))
			if isValid && err != nil {
				t.Errorf("valid seed rejected: %v", err)
			}
			if !isValid && err == nil {
				t.Errorf("invalid seed accepted")
			}
		})
		if isValid {
			valid++
		} else {
			invalid++
		}
	}
	if valid < 3 || invalid < 10 {
		t.Errorf("corpus has %d valid and %d invalid seeds; want at least 3 and 10", valid, invalid)
	}
}
