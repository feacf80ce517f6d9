package store

import (
	"encoding/hex"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/stretchr/testify/require"
	"pgregory.net/rapid"

	"unlearn/stream"
)

// TestPayloadEncodingBytes pins both encodings against bytes written out by
// hand: a mostly-zero vector is stored sparse (tag, S, then index/value
// entries, −0.0 kept), a full one dense.
func TestPayloadEncodingBytes(t *testing.T) {
	// S = 1 (0x3ff0000000000000), V = (0, 1.5, 0, −0, 0, 0): entries 1 and 3.
	z := stream.Sample{S: 1, V: []float64{0, 1.5, 0, math.Copysign(0, -1), 0, 0}}
	want := "53" + "000000000000f03f" +
		"01000000" + "000000000000f83f" +
		"03000000" + "0000000000000080"
	require.Equal(t, want, hex.EncodeToString(encodePayload(z)))

	// S = −1, V = (2, 0.5): 9 + 24 bytes sparse is longer than 24 dense.
	z = stream.Sample{S: -1, V: []float64{2, 0.5}}
	want = "000000000000f0bf" + "0000000000000040" + "000000000000e03f"
	require.Equal(t, want, hex.EncodeToString(encodePayload(z)))
}

// drawVector draws a vector whose components are often +0.0 and otherwise
// −0.0, subnormal, tiny, huge or ordinary, so that both encodings and every
// bit pattern the sparse form must keep are drawn.
func drawVector(t *rapid.T, d int, label string) []float64 {
	v := make([]float64, d)
	for i := range v {
		switch rapid.IntRange(0, 9).Draw(t, label+"kind") {
		case 0, 1, 2, 3, 4:
			v[i] = 0
		case 5:
			v[i] = math.Copysign(0, -1)
		case 6:
			v[i] = math.Float64frombits(rapid.Uint64Range(1, 1<<52-1).Draw(t, label+"sub")) // subnormal
		case 7:
			v[i] = math.Float64frombits(rapid.Uint64().Draw(t, label+"bits"))
			if math.IsNaN(v[i]) || math.IsInf(v[i], 0) {
				v[i] = math.MaxFloat64
			}
		default:
			v[i] = rapid.Float64Range(-10, 10).Draw(t, label+"x")
		}
	}
	return v
}

// TestPayloadRoundTrip: for random vectors, decode(encode(z)) is z bit for
// bit (V and S), the encoding is the shorter of the two, and the dense and
// sparse lengths never coincide.
func TestPayloadRoundTrip(t *testing.T) {
	rapid.Check(t, func(rt *rapid.T) {
		d := rapid.IntRange(1, 64).Draw(rt, "d")
		z := stream.Sample{V: drawVector(rt, d, "v"), S: rapid.SampledFrom([]float64{-1, 1, 0.25}).Draw(rt, "s")}
		b := encodePayload(z)
		nnz := 0
		for _, x := range z.V {
			if math.Float64bits(x) != 0 {
				nnz++
			}
		}
		dense, sparse := 8*(1+d), 9+12*nnz
		require.Equal(rt, min(dense, sparse), len(b), "the shorter encoding (dense %d, sparse %d)", dense, sparse)
		require.NotEqual(rt, dense, sparse)
		got, err := decodePayload(b, d)
		require.NoError(rt, err)
		require.Equal(rt, math.Float64bits(z.S), math.Float64bits(got.S))
		for i := range z.V {
			if math.Float64bits(z.V[i]) != math.Float64bits(got.V[i]) {
				rt.Fatalf("V[%d] = %x after the round trip, want %x", i, math.Float64bits(got.V[i]), math.Float64bits(z.V[i]))
			}
		}
		// decodePayloadInto overwrites whatever the page held before.
		s, v := []float64{7}, slices.Repeat([]float64{3}, d)
		require.NoError(rt, decodePayloadInto(s, v, b))
		for i := range v {
			require.Equal(rt, math.Float64bits(z.V[i]), math.Float64bits(v[i]), "reused buffer, V[%d]", i)
		}
	})
}

// TestPayloadDecodeRejects: a blob that is neither encoding for the
// dimension is an ErrInconsistent error and never a panic, whatever its
// bytes.
func TestPayloadDecodeRejects(t *testing.T) {
	good := encodePayload(stream.Sample{S: 1, V: []float64{0, 0, 2, 0, 0, 0, 0, 0, 3, 0}})
	require.Equal(t, 9+24, len(good))
	bad := map[string][]byte{
		"empty":         {},
		"short":         good[:8],
		"cut entry":     good[:len(good)-1],
		"wrong tag":     append([]byte{'X'}, good[1:]...),
		"index too big": append(slices.Clone(good[:9]), 10, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xf0, 0x3f),
		"out of order":  append(slices.Clone(good[:9]), append(slices.Clone(good[21:33]), good[9:21]...)...),
		"stored zero":   append(slices.Clone(good[:9]), 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0),
	}
	for name, b := range bad {
		_, err := decodePayload(b, 10)
		require.ErrorIs(t, err, ErrInconsistent, name)
	}
	rapid.Check(t, func(rt *rapid.T) {
		d := rapid.IntRange(1, 20).Draw(rt, "d")
		b := rapid.SliceOfN(rapid.Byte(), 0, 300).Draw(rt, "blob")
		if _, err := decodePayload(b, d); err != nil {
			require.ErrorIs(rt, err, ErrInconsistent)
		}
	})
}

// sparseHistory returns a logistic stream of n inserts at dimension d, with
// dense payloads, and the same stream with sparse payloads: nnz non-zeros
// at random indices, whose values are a paper stream's at dimension nnz (so
// distinct and non-zero).
func sparseHistory(t tb, d, n, nnz int, seed uint64) (h *stream.History, sparse []stream.Event) {
	t.Helper()
	h = genHistory(t, stream.KindLogistic, nnz, n, seed) // the generators stop at d = 2048
	h.Header.D = d
	loss, err := h.Header.Loss()
	require.NoError(t, err)
	h.Loss = loss
	rng := rand.New(rand.NewPCG(seed, 99))
	for i, e := range h.Events {
		idx := make([]int32, 0, nnz)
		for _, j := range rng.Perm(d)[:nnz] {
			idx = append(idx, int32(j))
		}
		slices.Sort(idx)
		z := stream.SparseSample(idx, e.Sample.V, e.Sample.S)
		sparse = append(sparse, stream.Event{Op: e.Op, ID: e.ID, Sample: z})
		h.Events[i].Sample.V = z.Dense(d)
	}
	return h, sparse
}

// TestSparseStoreSizeAndExactness: sparse payloads are stored sparse (the
// issue's 1 KB LIBSVM file at d = 2·10⁵ made a 90 MB store), and the store
// stays exact: after forgets the state is train on the deletion-edited
// stream bit for bit, Check replays the stored log, and a reopened store
// reads the blobs back. d = 4000 is large enough for the size check (a
// dense payload is 8(d+1) bytes against 9 + 12·nnz sparse, and the store's
// other contents grow with d as the dense log does) and small enough for
// the replays and snapshots under the race detector.
func TestSparseStoreSizeAndExactness(t *testing.T) {
	const d, n, nnz = 4_000, 120, 5
	h, sp := sparseHistory(t, d, n, nnz, 4)
	dir := t.TempDir()
	s := createStore(t, dir, h.Header, 3, 40)
	res, err := s.IngestEvents(Events(sp), IngestOptions{})
	require.NoError(t, err)
	require.Equal(t, n, res.Events)

	var lengths []int
	rows, err := s.db.Query(`SELECT length(payload) FROM events ORDER BY seq`)
	require.NoError(t, err)
	for rows.Next() {
		var l int
		require.NoError(t, rows.Scan(&l))
		lengths = append(lengths, l)
	}
	require.NoError(t, rows.Err())
	require.NoError(t, rows.Close())
	require.Len(t, lengths, n)
	for i, l := range lengths {
		require.Equal(t, 9+12*nnz, l, "payload of seq %d", i+1)
	}

	cfg := s.LearnerConfig()
	forgotten := stream.NewIDSet()
	for _, ids := range [][]int64{{2}, {57, 90}, {120}} { // before the first checkpoint, inside, the last
		rep, err := s.Forget(ids, ForgetOptions{})
		require.NoError(t, err)
		require.Equal(t, PathExact, rep.Path)
		for _, id := range ids {
			forgotten.Add(id)
		}
		requireSameState(t, s, oracle(t, cfg, h.Loss, h.Events, forgotten), fmt.Sprintf("after forgetting %v", ids))
	}
	_, err = s.Check()
	require.NoError(t, err)
	require.NoError(t, s.Close())

	// The log of 116 payloads at d = 4·10³ would be 3.7 MB dense; the
	// checkpoints and the state are JSON snapshots of w and the pairs
	// (O(τd) each), the same either way.
	st, err := os.Stat(filepath.Join(dir, FileName))
	require.NoError(t, err)
	logDense := int64(n-4) * 8 * (d + 1)
	require.Less(t, st.Size(), logDense/2, "store file of %d bytes", st.Size())

	s, err = Open(dir)
	require.NoError(t, err)
	defer s.Close()
	_, err = s.Check()
	require.NoError(t, err)
	requireSameState(t, s, oracle(t, cfg, h.Loss, h.Events, forgotten), "after reopening")
}

// TestEmptyPayloadIsAnError (ADV4-F1): a payload edited by hand to an empty
// BLOB (which the driver returns as nil, like NULL) is an ErrInconsistent
// error on every path that reads it — an approximate forget of it with each
// intervention, an exact forget replaying over it, Check — never an erased
// event or an empty sample (a panic in the loss).
func TestEmptyPayloadIsAnError(t *testing.T) {
	const d = 16
	h := genHistory(t, stream.KindLogistic, d, 60, 5)
	mk := func(t *testing.T) *Store {
		s := createStore(t, t.TempDir(), h.Header, 3, 10)
		_, err := s.IngestEvents(Events(h.Events), IngestOptions{})
		require.NoError(t, err)
		_, err = s.db.Exec(`UPDATE events SET payload = x'' WHERE id = 30`)
		require.NoError(t, err)
		return s
	}
	for _, iv := range Interventions() {
		t.Run("approximate/"+iv, func(t *testing.T) {
			s := mk(t)
			defer s.Close()
			_, err := s.Forget([]int64{30}, ForgetOptions{SkipVacuum: true, Noise: testNoise(), MaxReplay: 1, Intervention: iv})
			require.ErrorIs(t, err, ErrInconsistent)
		})
	}
	t.Run("exact replay over it", func(t *testing.T) {
		s := mk(t)
		defer s.Close()
		_, err := s.Forget([]int64{25}, ForgetOptions{SkipVacuum: true})
		require.ErrorIs(t, err, ErrInconsistent)
		_, err = s.Check()
		require.ErrorIs(t, err, ErrInconsistent)
	})
}
