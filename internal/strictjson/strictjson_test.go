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
