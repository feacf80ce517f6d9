package olbfgs

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"unlearn/stream"
)

func TestSnapshotRoundTrip(t *testing.T) {
	for _, kind := range []string{"quadratic", "logistic"} {
		t.Run(kind, func(t *testing.T) {
			var loss stream.Loss
			var h stream.Header
			var events []stream.Event
			if kind == "quadratic" {
				loss, h, events = quadraticStream(t, 11, 5, 80)
			} else {
				loss, h, events = logisticStream(t, 11, 5, 80)
			}
			require.NoError(t, h.SetMeta("seed", 11))
			events = append(events, stream.DeleteEvent(4), stream.DeleteEvent(79))
			l := mustReplay(t, DefaultConfig(5), loss, events)
			data, err := MarshalSnapshot(l, h)
			require.NoError(t, err)
			got, gotH, err := UnmarshalSnapshot(data)
			require.NoError(t, err)
			if !got.Equal(l) {
				t.Fatal("loaded state differs from the saved one")
			}
			again, err := MarshalSnapshot(got, gotH)
			require.NoError(t, err)
			require.Equal(t, string(data), string(again), "save → load → save is not byte-identical")
			// The loaded learner continues exactly like the original.
			more := []stream.Event{events[0]}
			more[0].ID = 1000
			require.NoError(t, l.Run(more))
			require.NoError(t, got.Run(more))
			if !got.Equal(l) {
				t.Fatal("loaded learner diverges from the original on the next event")
			}
		})
	}
}

func TestSnapshotRejectsBadInput(t *testing.T) {
	loss, h, events := quadraticStream(t, 12, 2, 5)
	l := mustReplay(t, DefaultConfig(2), loss, events)
	good, err := MarshalSnapshot(l, h)
	require.NoError(t, err)
	tests := []struct {
		name, old, new, field string
	}{
		{"format", `"olbfgs-state/v1"`, `"olbfgs-state/v9"`, "format"},
		{"unknown field", `"skipped"`, `"skipped2"`, "skipped2"},
		{"tau", `"tau": 10`, `"tau": -1`, "config"},
		// Sizes a learner cannot hold are errors before anything is
		// allocated (a crash otherwise).
		{"huge tau", `"tau": 10`, `"tau": 1000000000000`, "config"},
		{"huge d", `"d": 2`, `"d": 10000000`, "w"},
		{"eta", `"eta": 0.1`, `"eta": 0`, "config"},
		{"counters", `"skipped": 0`, `"skipped": 99`, "t"},
		{"memory overflow", `"tau": 10`, `"tau": 2`, "memory"},
		{"stream", `"kind": "quadratic"`, `"kind": "cubic"`, "stream"},
		{"malformed", `"w": [`, `"w": [[`, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			require.Contains(t, string(good), tt.old, "test setup: the snapshot must contain the text to replace")
			bad := strings.Replace(string(good), tt.old, tt.new, 1)
			_, _, err := UnmarshalSnapshot([]byte(bad))
			require.ErrorIs(t, err, ErrSnapshot)
			require.ErrorContains(t, err, tt.field, "the error must name the field")
		})
	}
	// Anything after the object is an error, even the closing brackets that
	// json.Decoder.More does not count.
	for _, junk := range []string{"]", "}", "]]]garbage", "{}", "\n0"} {
		_, _, err := UnmarshalSnapshot(append(append([]byte(nil), good...), junk...))
		require.ErrorIsf(t, err, ErrSnapshot, "trailing %q accepted", junk)
	}
	_, err = MarshalSnapshot(l, stream.Header{Kind: stream.KindLogistic, D: 2, Lambda: 1})
	require.ErrorIs(t, err, ErrSnapshot, "mismatched header")
}
