package stream

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestReadHostile holds the regression tests of issue 14 ("Lost deletions
// and other input defects"): bytes the JSON grammar does not allow, and
// numbers that overflow float64, anywhere in a line, are errors naming the
// line, the field path and the column; none is silently dropped.
func TestReadHostile(t *testing.T) {
	insert3 := `{"op":"insert","id":3,"x":[0.1,-1.2],"y":-1}`
	tests := []struct {
		name     string
		in       string
		line     int
		field    string // Field + Path as the message shows it
		sentinel error
		msg      string // a substring the message must contain
	}{
		// A NUL ended the line silently: the delete after it was lost and
		// the file was accepted.
		{"NUL between two objects", lines(lHeader, insert3+"\x00"+`{"op":"delete","id":3}`), 2, "", ErrFormat,
			"found control character U+0000 at column 45"},
		{"NUL after the header", lHeader + "\x00 this is not json\n", 1, "", ErrFormat,
			"found control character U+0000 at column 68"},
		{"NUL inside an object", lines(lHeader, `{"op":"insert",`+"\x00"+`"id":1,"x":[1,2],"y":1}`), 2, "", ErrFormat,
			"want a field name, found control character U+0000 at column 16"},
		{"NUL in a value position", lines(lHeader, `{"op":"insert","id":`+"\x00"+`1,"x":[1,2],"y":1}`), 2, "id", ErrFormat,
			"control character U+0000"},
		{"NUL at the end of a line", lines(lHeader, lInsert+"\x00"), 2, "", ErrFormat, "U+0000"},
		{"NUL in metadata", hdr(`"kind":"logistic","d":2,"lambda":0.05,"m":[1,`+"\x00"+`]`) + "\n", 1, "m[1]", ErrFormat, "U+0000"},
		{"form feed between tokens", lines(lHeader, `{"op":"insert",`+"\f"+`"id":1,"x":[1,2],"y":1}`), 2, "", ErrFormat, "U+000C"},
		{"DEL between tokens", lines(lHeader, lInsert+"\x7f"), 2, "", ErrFormat, "U+007F"},
		{"non-breaking space between tokens", lines(lHeader, "{\u00a0"+`"op":"delete","id":1}`), 2, "", ErrFormat,
			`'\u00a0' (U+00A0) at column 2`},

		// Overflowing literals in metadata were kept and copied into
		// snapshots; Infinity in the same place was refused.
		{"1e999 in metadata", hdr(`"kind":"logistic","d":2,"lambda":0.05,"meta":1e999`) + "\n", 1, "meta", ErrNonFinite,
			"overflows float64"},
		{"-1e999 in metadata", hdr(`"kind":"logistic","d":2,"lambda":0.05,"meta":-1e999`) + "\n", 1, "meta", ErrNonFinite,
			"overflows float64"},
		{"1e400 in a metadata array", hdr(`"kind":"logistic","d":2,"lambda":0.05,"m":{"a":[1,2,1e400]}`) + "\n", 1, "m.a[2]",
			ErrNonFinite, "number 1e400 overflows float64"},
		{"overflow under an odd key", hdr(`"kind":"logistic","d":2,"lambda":0.05,"m":{"a b":[1e309]}`) + "\n", 1, `m["a b"][0]`,
			ErrNonFinite, "overflows"},
		{"400-digit integer in metadata", hdr(`"kind":"logistic","d":2,"lambda":0.05,"n":1`+strings.Repeat("0", 400)) + "\n", 1, "n",
			ErrNonFinite, "overflows"},
		{"Infinity in metadata", hdr(`"kind":"logistic","d":2,"lambda":0.05,"m":[Infinity]`) + "\n", 1, "m[0]", ErrNonFinite, "Infinity"},
		{"overflow in a payload entry", lines(lHeader, `{"op":"insert","id":1,"x":[1,-1e999],"y":1}`), 2, "x[1]", ErrNonFinite,
			"overflows"},
		{"overflow in a matrix entry", hdr(`"kind":"quadratic","d":2,"H0":[[1,0],[0,1e999]],"H1":[[1,0],[0,1]]`) + "\n", 1, "H0[1][1]",
			ErrNonFinite, "overflows"},

		// Errors that blamed what the user did not write.
		{"byte-order mark", "\uFEFF" + lines(lHeader, lInsert), 1, "", ErrFormat, "byte-order mark"},
		{"byte-order mark on a later line", lines(lHeader, "\uFEFF"+lInsert), 2, "", ErrFormat, "byte-order mark U+FEFF"},
		{"event on the first line", lines(lInsert), 1, "format", ErrFormat, "looks like an event"},
		{"no format", `{"kind":"logistic","d":2,"lambda":0.05}` + "\n", 1, "format", ErrFormat, "must be its header"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h, err := Read(strings.NewReader(tt.in))
			require.Error(t, err, "Read accepted %q: %d events", tt.in, eventsOf(h))
			var le *LineError
			require.ErrorAs(t, err, &le)
			assert.Equal(t, tt.line, le.Line, "LineError.Line; error: %v", err)
			assert.Equal(t, tt.field, le.Field+le.Path, "LineError.Field+Path; error: %v", err)
			assert.ErrorIs(t, err, tt.sentinel)
			assert.Contains(t, err.Error(), tt.msg)
			assert.NotContains(t, err.Error(), "found end of line", "a byte was described as the end of the line")
		})
	}
}

func eventsOf(h *History) int {
	if h == nil {
		return 0
	}
	return len(h.Events)
}

// TestHeaderUnmarshalHostile checks that Header.UnmarshalJSON, which
// snapshots use for their copy of the header, refuses what Read refuses.
func TestHeaderUnmarshalHostile(t *testing.T) {
	for _, in := range []string{
		hdr(`"kind":"logistic","d":2,"lambda":0.05,"meta":1e999`),
		hdr(`"kind":"logistic","d":2,"lambda":0.05,"meta":{"a":[1,2,1e400]}`),
		lHeader + "\x00",
		lHeader + "\x00 this is not json",
	} {
		var h Header
		err := h.UnmarshalJSON([]byte(in))
		require.Error(t, err, "accepted %q", in)
		assert.True(t, errors.Is(err, ErrFormat) || errors.Is(err, ErrNonFinite), "%v", err)
	}
	// A snapshot holds its stream header as a nested value decoded through
	// encoding/json (olbfgs.UnmarshalSnapshot): an overflowing metadata
	// number there was accepted, and certify then accepted the snapshot.
	var snap struct {
		Stream Header `json:"stream"`
	}
	err := json.Unmarshal([]byte(`{"stream":`+hdr(`"kind":"logistic","d":2,"lambda":0.05,"meta":1e999`)+`}`), &snap)
	require.ErrorIs(t, err, ErrNonFinite)
	assert.Contains(t, err.Error(), "meta")
}
