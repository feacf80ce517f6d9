package store

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/stretchr/testify/require"

	"unlearn/stream"
)

// encodings returns the byte strings that would betray sample z: the
// stored payload (S then V, float64 little-endian), V's little-endian bytes,
// each component's 8 bytes, the JSON text of V as a stream file writes it,
// and each component's shortest decimal text.
func encodings(t *testing.T, kind stream.Kind, z stream.Sample) map[string][]byte {
	t.Helper()
	out := map[string][]byte{"payload": encodePayload(z)}
	le := make([]byte, 8*len(z.V))
	for i, v := range z.V {
		binary.LittleEndian.PutUint64(le[8*i:], math.Float64bits(v))
		if v == 0 {
			continue // a zero component's bytes are everywhere (and betray nothing)
		}
		out["V["+strconv.Itoa(i)+"] LE"] = le[8*i : 8*i+8]
		out["V["+strconv.Itoa(i)+"] text"] = strconv.AppendFloat(nil, v, 'g', -1, 64)
	}
	out["V LE"] = le
	// The JSON line of the event as the stream format writes it.
	h := &stream.History{Header: stream.Header{Format: stream.FormatV1, Kind: kind, D: len(z.V), Lambda: 0.05},
		Events: []stream.Event{stream.InsertEvent(1, z.V, z.S)}}
	var buf bytes.Buffer
	require.NoError(t, stream.Write(&buf, h))
	line := buf.Bytes()[bytes.IndexByte(buf.Bytes(), '\n')+1:]
	i, j := bytes.IndexByte(line, '['), bytes.IndexByte(line, ']')
	out["V JSON"] = line[i : j+1]
	return out
}

// scanDir returns, for each file of dir, the names of the encodings found.
func scanDir(t *testing.T, dir string, enc map[string][]byte) map[string][]string {
	t.Helper()
	found := map[string][]string{}
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	for _, e := range entries {
		b, err := os.ReadFile(filepath.Join(dir, e.Name()))
		require.NoError(t, err)
		for name, pat := range enc {
			if bytes.Contains(b, pat) {
				found[e.Name()] = append(found[e.Name()], name)
			}
		}
	}
	return found
}

// TestErasure: after a forget commits — exact or approximate — no file of
// the store directory holds any encoding of a deleted payload, while it
// did before (so the search can fail).
func TestErasure(t *testing.T) {
	for _, sparse := range []bool{false, true} {
		for _, skip := range []bool{false, true} {
			t.Run(fmt.Sprintf("sparse=%v/SkipVacuum=%v", sparse, skip), func(t *testing.T) {
				h := genHistory(t, stream.KindLogistic, 5, 300, 11)
				if sparse { // payloads stored in the sparse encoding
					h, _ = sparseHistory(t, 64, 300, 3, 11)
				}
				testErasure(t, h, skip)
			})
		}
	}
}

func testErasure(t *testing.T, h *stream.History, skipVacuum bool) {
	path := filepath.Join(t.TempDir(), "l.jsonl")
	require.NoError(t, stream.WriteFile(path, h))
	dir := t.TempDir()
	s := createStore(t, dir, h.Header, 4, 25)
	f, err := os.Open(path)
	require.NoError(t, err)
	_, err = s.Ingest(f, IngestOptions{BatchSize: 50})
	f.Close()
	require.NoError(t, err)

	exactIDs := []int64{3, 120, 299}   // before the first checkpoint, inside, last
	approxIDs := []int64{10, 150, 151} // approximate path
	byID := map[int64]stream.Sample{}
	for _, e := range h.Events {
		byID[e.ID] = e.Sample
	}
	check := func(ids []int64, wantFound bool, when string) {
		t.Helper()
		for _, id := range ids {
			found := scanDir(t, dir, encodings(t, stream.KindLogistic, byID[id]))
			if wantFound {
				require.NotEmpty(t, found, "%s: id %d's payload not found before the forget (the search cannot fail)", when, id)
			} else {
				require.Empty(t, found, "%s: id %d's payload still in the store", when, id)
			}
		}
	}
	check(append(exactIDs, approxIDs...), true, "before")

	rep, err := s.Forget(exactIDs, ForgetOptions{SkipVacuum: skipVacuum})
	require.NoError(t, err)
	require.Equal(t, PathExact, rep.Path)
	check(exactIDs, false, "after the exact forget")
	check(approxIDs, true, "after the exact forget (others kept)")

	rep, err = s.Forget(approxIDs, ForgetOptions{Noise: testNoise(), MaxReplay: 5, Intervention: "pair-drop", SkipVacuum: skipVacuum})
	require.NoError(t, err)
	require.Equal(t, PathApproximate, rep.Path)
	check(approxIDs, false, "after the approximate forget")
	check(exactIDs, false, "after the approximate forget")
	require.NoError(t, s.Close())
	check(append(exactIDs, approxIDs...), false, "after Close")
}
