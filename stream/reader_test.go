package stream

import (
	"bytes"
	"errors"
	"io"
	"strings"
	"testing"
)

// TestReaderMatchesRead: reading event by event gives the events Read
// returns, bit for bit, and the same header.
func TestReaderMatchesRead(t *testing.T) {
	o := DefaultLogisticOptions()
	o.D, o.T = 3, 40
	h, err := GenerateLogistic(o)
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := Write(&buf, h); err != nil {
		t.Fatal(err)
	}
	want, err := Read(bytes.NewReader(buf.Bytes()))
	if err != nil {
		t.Fatal(err)
	}
	r, err := NewReader(bytes.NewReader(buf.Bytes()))
	if err != nil {
		t.Fatal(err)
	}
	if r.Header().D != 3 || r.Loss().Kind() != KindLogistic {
		t.Fatalf("header %+v", r.Header())
	}
	var got []Event
	for {
		e, err := r.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, e)
	}
	if len(got) != len(want.Events) {
		t.Fatalf("%d events, want %d", len(got), len(want.Events))
	}
	for i := range got {
		a, b := got[i], want.Events[i]
		if a.Op != b.Op || a.ID != b.ID || a.Sample.S != b.Sample.S || len(a.Sample.V) != len(b.Sample.V) {
			t.Fatalf("event %d: %+v, want %+v", i, a, b)
		}
		for j := range a.Sample.V {
			if a.Sample.V[j] != b.Sample.V[j] {
				t.Fatalf("event %d: %+v, want %+v", i, a, b)
			}
		}
	}
	if r.Line() != 41 {
		t.Fatalf("Line() = %d after 40 events, want 41", r.Line())
	}
}

func TestReaderErrors(t *testing.T) {
	hdr := `{"format":"olbfgs-stream/v1","kind":"logistic","d":2,"lambda":0.05}` + "\n"
	for _, c := range []struct {
		name, in string
		line     int
		field    string
		sentinel error
	}{
		{"empty", "", 1, "", ErrFormat},
		{"bad header", `{"format":"x"}` + "\n", 1, "format", ErrFormat},
		{"bad label", hdr + `{"op":"insert","id":1,"x":[1,2],"y":0}` + "\n", 2, "y", ErrInvalidValue},
		{"dimension", hdr + `{"op":"insert","id":1,"x":[1],"y":1}` + "\n", 2, "x", ErrDimension},
		{"blank", hdr + "\n" + `{"op":"delete","id":1}`, 2, "", ErrFormat},
	} {
		t.Run(c.name, func(t *testing.T) {
			r, err := NewReader(strings.NewReader(c.in))
			if err == nil {
				_, err = r.Next()
			}
			var le *LineError
			if !errors.As(err, &le) || le.Line != c.line || le.Field != c.field || !errors.Is(err, c.sentinel) {
				t.Fatalf("error %v, want line %d field %q wrapping %v", err, c.line, c.field, c.sentinel)
			}
		})
	}
	// The id rules are the caller's: a delete of an unknown id reads fine.
	r, err := NewReader(strings.NewReader(hdr + `{"op":"delete","id":9}`))
	if err != nil {
		t.Fatal(err)
	}
	if e, err := r.Next(); err != nil || e.Op != Delete || e.ID != 9 {
		t.Fatalf("Next = %+v, %v", e, err)
	}
}
