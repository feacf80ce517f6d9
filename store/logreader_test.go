package store

import (
	"testing"

	"github.com/stretchr/testify/require"

	"unlearn/stream"
)

// TestLogReader: the reader yields every row of (from, to] exactly once, in
// seq order, with the payloads that were ingested, across page boundaries
// (more than two pages), marks erased rows, and can be closed before the
// log is drained without leaking its goroutine or holding the transaction.
func TestLogReader(t *testing.T) {
	const d = 2
	n := 2*pageRows + 17
	h := genHistory(t, stream.KindQuadratic, d, 50, 3)
	s := createStore(t, t.TempDir(), h.Header, 3, 1<<20)
	defer s.Close()
	_, err := s.IngestEvents(&cycleSource{pool: h.Events, n: n}, IngestOptions{BatchSize: n})
	require.NoError(t, err)
	const erasedID = pageRows + 3
	_, err = s.db.Exec(`UPDATE events SET payload = NULL, sha256 = ? WHERE id = ?`, sumEvent(erasedID, erasedID, nil, true), erasedID)
	require.NoError(t, err)

	read := func(from, to int64, stopAfter int) (seqs []int64) {
		tx, err := s.db.Begin()
		require.NoError(t, err)
		defer tx.Rollback()
		r := readLog(tx, from, to, d)
		defer r.Close()
		for p := r.Next(); p != nil; p = r.Next() {
			require.NoError(t, p.err)
			for i := range p.n {
				seqs = append(seqs, p.seq[i])
				id := p.id[i]
				require.Equal(t, id == erasedID, p.erased[i], "erased flag of id %d", id)
				if !p.erased[i] {
					want := h.Events[(id-1)%int64(len(h.Events))].Sample
					got := p.sample(i, d)
					require.Equal(t, want.S, got.S, "S of id %d", id)
					require.Equal(t, want.V, got.V, "V of id %d", id)
				}
			}
			r.Release(p)
			if stopAfter > 0 && len(seqs) >= stopAfter {
				r.Close()
				break
			}
		}
		return seqs
	}
	seqRange := func(lo, hi int64) (s []int64) {
		for q := lo; q <= hi; q++ {
			s = append(s, q)
		}
		return s
	}
	require.Equal(t, seqRange(1, int64(n)), read(0, -1, 0), "whole log")
	require.Equal(t, seqRange(11, int64(pageRows)+11), read(10, int64(pageRows)+11, 0), "bounded range")
	require.Empty(t, read(int64(n), -1, 0), "nothing after the head")
	require.Len(t, read(0, -1, 1), pageRows, "closed after the first page")
	// The transaction was released: a write goes through.
	_, err = s.db.Exec(`UPDATE meta SET value = value WHERE key = 'head'`)
	require.NoError(t, err)
}

func TestDecodePayloadInto(t *testing.T) {
	z := stream.Sample{S: -1.5, V: []float64{0.25, 3, -7e-300}}
	b := encodePayload(z)
	var s [1]float64
	v := make([]float64, 3)
	require.NoError(t, decodePayloadInto(s[:], v, b))
	require.Equal(t, z.S, s[0])
	require.Equal(t, z.V, v)
	require.ErrorIs(t, decodePayloadInto(s[:], v, b[:len(b)-1]), ErrInconsistent, "short payload")
	require.ErrorIs(t, decodePayloadInto(s[:], make([]float64, 4), b), ErrInconsistent, "payload of another dimension")
}

// TestRowsPerPage: a page holds pageRows rows at small d and never more
// than pageBytes of payloads at large d (at least one row).
func TestRowsPerPage(t *testing.T) {
	require.Equal(t, pageRows, rowsPerPage(100))
	require.Equal(t, 5, rowsPerPage(100_000))
	require.Equal(t, 1, rowsPerPage(10_000_000))
	for _, d := range []int{1, 100, 1000, 100_000, 1 << 20} {
		n := rowsPerPage(d)
		require.GreaterOrEqual(t, n, 1)
		require.LessOrEqual(t, n, pageRows)
		if n > 1 {
			require.LessOrEqual(t, n*8*(d+1), pageBytes, "d = %d", d)
		}
	}
}
