package store

import (
	"testing"

	"github.com/stretchr/testify/require"

	"unlearn/stream"
)

// TestCkptWriterStoresEncodeState checks that the checkpoint writer stores,
// in seq order, exactly the bytes encodeState gives for the state at each
// put, even though the learner goes on changing after put returns.
func TestCkptWriterStoresEncodeState(t *testing.T) {
	for _, direct := range []bool{false, true} {
		t.Run(map[bool]string{false: "goroutine", true: "direct"}[direct], func(t *testing.T) {
			if direct {
				saved := ckptAsyncMaxFloats
				ckptAsyncMaxFloats = 0
				defer func() { ckptAsyncMaxFloats = saved }()
			}
			testCkptWriterStoresEncodeState(t, direct)
		})
	}
}

func testCkptWriterStoresEncodeState(t *testing.T, direct bool) {
	h := genHistory(t, stream.KindLogistic, 6, 40, 3)
	s := createStore(t, t.TempDir(), h.Header, 3, 1000)
	defer s.Close()
	l := s.state.Clone()
	tx, err := s.db.Begin()
	require.NoError(t, err)
	defer tx.Rollback() //nolint:errcheck // the test reads inside the transaction only
	w := newCkptWriter(s, tx, "replay")
	require.Equal(t, direct, w.direct)
	var want [][]byte
	for i, e := range h.Events[:12] {
		require.NoError(t, l.Step(e))
		if i%3 == 2 {
			snap, err := s.encodeState(l)
			require.NoError(t, err)
			want = append(want, snap)
			require.NoError(t, w.put(int64(1000+i), true, l))
		}
	}
	n, err := w.wait()
	require.NoError(t, err)
	require.Equal(t, len(want), n)
	rows, err := tx.Query(`SELECT snapshot FROM checkpoints WHERE seq >= 1000 ORDER BY seq`)
	require.NoError(t, err)
	defer rows.Close()
	var got [][]byte
	for rows.Next() {
		var b []byte
		require.NoError(t, rows.Scan(&b))
		got = append(got, b)
	}
	require.NoError(t, rows.Err())
	require.Equal(t, want, got)
}

// TestCkptWriterError checks that a failed write is returned by wait and
// by every later put, so a replay abandons its transaction.
func TestCkptWriterError(t *testing.T) {
	h := genHistory(t, stream.KindLogistic, 6, 10, 3)
	s := createStore(t, t.TempDir(), h.Header, 3, 1000)
	defer s.Close()
	tx, err := s.db.Begin()
	require.NoError(t, err)
	require.NoError(t, tx.Rollback()) // every statement on tx now fails
	w := newCkptWriter(s, tx, "replay")
	require.NoError(t, w.put(1000, true, s.state)) // queued; fails on the writer
	n, err := w.wait()
	require.Error(t, err)
	require.Zero(t, n)

	// With two copies, the third put takes the copy of the first job back,
	// which the writer returns only after recording its error: the fourth
	// put sees it, whatever the scheduling.
	w = newCkptWriter(s, tx, "replay")
	require.NoError(t, w.put(1000, true, s.state))
	_ = w.put(2000, true, s.state)
	_ = w.put(3000, true, s.state)
	require.Error(t, w.put(4000, true, s.state), "put after a failed write")
	_, err = w.wait()
	require.Error(t, err)
}
