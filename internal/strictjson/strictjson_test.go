package strictjson

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestDecode(t *testing.T) {
	type doc struct {
		A int `json:"a"`
	}
	for _, in := range []string{`{"a":1}`, "{\"a\":1}\n", " \t{\"a\": 1}\r\n\n  "} {
		var d doc
		require.NoError(t, Decode(strings.NewReader(in), &d), "%q", in)
		require.Equal(t, 1, d.A)
	}
	for _, in := range []string{`{"a":1}]`, `{"a":1}}`, `{"a":1}{}`, "{\"a\":1}\nx", `{"a":1} 2`} {
		var d doc
		require.ErrorIs(t, Decode(strings.NewReader(in), &d), ErrTrailing, "%q", in)
	}
	// Junk far past the decoder's buffer is still found.
	var d doc
	require.ErrorIs(t, Decode(strings.NewReader(`{"a":1}`+strings.Repeat(" ", 100000)+"]"), &d), ErrTrailing)
	require.Error(t, Decode(strings.NewReader(`{"a":1,"b":2}`), &d), "unknown field")
	require.Error(t, Decode(strings.NewReader(`{"a":`), &d), "truncated")
}

// TestOneReading: a document that another JSON reader could read with other
// values — a member named twice (encoding/json keeps the last), a member
// spelled in another case (encoding/json matches it), a null where a value
// is due (encoding/json leaves the field as it was) — is refused, naming
// the member as the file writes it.
func TestOneReading(t *testing.T) {
	type inner struct {
		N int `json:"n"`
	}
	type doc struct {
		Payload   string    `json:"payload"`
		Signature string    `json:"signature"`
		In        inner     `json:"in"`
		W         []float64 `json:"w"`
		P         *string   `json:"p"`
	}
	good := `{"payload":"x","signature":"ab","in":{"n":1},"w":[1,2],"p":null}`
	var d doc
	require.NoError(t, Decode(strings.NewReader(good), &d))
	require.Equal(t, doc{Payload: "x", Signature: "ab", In: inner{N: 1}, W: []float64{1, 2}}, d)
	for _, c := range []struct{ in, is, names string }{
		{`{"Payload":"x"}`, "unknown", `"Payload"`},
		{`{"payload":"x","SIGNATURE":"cd"}`, "unknown", `"SIGNATURE"`},
		{`{"in":{"N":1}}`, "unknown", `"in.N"`},
		{`{"payload":"x","payload":"y"}`, "duplicate", `"payload"`},
		{`{"in":{"n":1,"n":2}}`, "duplicate", `"in.n"`},
		{`{"payload":null}`, "null", `"payload"`},
		{`{"w":[1,null]}`, "null", `"w[1]"`},
		{`{"in":{"n":null}}`, "null", `"in.n"`},
		{`{"in":{"n":1.5}}`, "type", `"in.n"`},
		{`{"w":[1e999]}`, "type", `"w[0]"`},
		{"\ufeff" + good, "syntax", "byte 0"},
		{`{"payload":"\ud800"}`, "syntax", "payload"},
		{"{\"payload\":\"\xff\"}", "syntax", "payload"},
		{`{"payload":NaN}`, "syntax", "payload"},
	} {
		var d doc
		err := Decode(strings.NewReader(c.in), &d)
		require.Error(t, err, "%q", c.in)
		require.Contains(t, err.Error(), c.names, "%q", c.in)
		switch c.is {
		case "unknown":
			require.ErrorIs(t, err, ErrUnknown, "%q", c.in)
		case "duplicate":
			require.ErrorIs(t, err, ErrDuplicate, "%q", c.in)
		case "null":
			require.ErrorIs(t, err, ErrNull, "%q", c.in)
		}
	}
}
