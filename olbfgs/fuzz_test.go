package olbfgs

import (
	"errors"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"unlearn/stream"
)

// FuzzUnmarshalSnapshot checks the snapshot reader on arbitrary input; run
// the fuzzer with
//
//	go test -run='^$' -fuzz=FuzzUnmarshalSnapshot -fuzzminimizetime=0 ./olbfgs
//
// (-fuzzminimizetime=0: see FuzzVerify in certify.)
//
// Properties: UnmarshalSnapshot never panics; a rejection wraps
// ErrSnapshot; an accepted snapshot saves back to one that loads as the
// same state, and saving is then stable byte for byte. A snapshot asking
// for a huge τ must not make the reader allocate it (the memory grows with
// the pairs stored; the fuzzer's memory limit would catch it).
func FuzzUnmarshalSnapshot(f *testing.F) {
	for _, seed := range snapshotSeeds(f) {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		l, h, err := UnmarshalSnapshot(data)
		if err != nil {
			require.Truef(t, errors.Is(err, ErrSnapshot), "error %v does not wrap ErrSnapshot", err)
			return
		}
		saved, err := MarshalSnapshot(l, h)
		require.NoError(t, err, "an accepted snapshot must save")
		l2, h2, err := UnmarshalSnapshot(saved)
		require.NoError(t, err, "a saved snapshot must load")
		require.True(t, l2.Equal(l), "save → load changed the state")
		again, err := MarshalSnapshot(l2, h2)
		require.NoError(t, err)
		require.Equal(t, string(saved), string(again), "saving is not stable")
	})
}

// snapshotSeeds returns valid snapshots of both loss kinds (with pairs,
// deletions and skipped counts) and a few near misses.
func snapshotSeeds(tb testing.TB) [][]byte {
	q, qh, qe := quadraticStream(tb, 5, 3, 30)
	lg, lh, le := logisticStream(tb, 5, 2, 30)
	cfg3, cfg2 := DefaultConfig(3), DefaultConfig(2)
	cfg2.Memory = 3
	var seeds [][]byte
	for _, c := range []struct {
		cfg    Config
		loss   stream.Loss
		h      stream.Header
		events []stream.Event
	}{
		{cfg3, q, qh, append(qe, stream.DeleteEvent(4))},
		{cfg2, lg, lh, le[:10]},
		{cfg3, q, qh, nil},
	} {
		data, err := MarshalSnapshot(mustReplay(tb, c.cfg, c.loss, c.events), c.h)
		require.NoError(tb, err)
		seeds = append(seeds, data)
	}
	good := string(seeds[0])
	for _, edit := range [][2]string{
		{`"tau": 10`, `"tau": 1000000000000`},
		{`"tau": 10`, `"tau": 60000000`}, // legal, huge, and never allocated
		{`"d": 3`, `"d": 100000000`},
		{`"deleted": [`, `"deleted": [4, `},
		{`"t": `, `"t": -`},
	} {
		seeds = append(seeds, []byte(strings.Replace(good, edit[0], edit[1], 1)))
	}
	return seeds
}
