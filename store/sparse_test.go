package store

import (
	"bytes"
	"context"
	"testing"

	"github.com/stretchr/testify/require"
	"pgregory.net/rapid"

	"unlearn/internal/floatbits"
	"unlearn/olbfgs"
	"unlearn/stream"
)

// sparsify returns the events with every insert's payload made sparse: the
// entries j with (id+j) % 3 == 0 are set to zero and left out of Idx (so
// the dense form of the sparse payload is the original with those zeros).
// dense is the same stream with the dense form of each sparse payload.
func sparsify(events []stream.Event, d int) (sparse, dense []stream.Event) {
	for _, e := range events {
		var idx []int32
		var v []float64
		for j, x := range e.Sample.V {
			if (int(e.ID)+j)%3 != 0 {
				idx = append(idx, int32(j))
				v = append(v, x)
			}
		}
		z := stream.SparseSample(idx, v, e.Sample.S)
		sparse = append(sparse, stream.Event{Op: e.Op, ID: e.ID, Sample: z})
		dense = append(dense, stream.Event{Op: e.Op, ID: e.ID, Sample: stream.Sample{V: z.Dense(d), S: z.S}})
	}
	return sparse, dense
}

// TestSparseStepIsDense: the learner's step on a sparse payload and on its
// dense form give the same bits (what lets IngestEvents store and step the
// dense form of a sparse payload), for random sparse logistic streams.
func TestSparseStepIsDense(t *testing.T) {
	rapid.Check(t, func(rt *rapid.T) {
		d := rapid.IntRange(1, 12).Draw(rt, "d")
		n := rapid.IntRange(1, 60).Draw(rt, "n")
		seed := rapid.Uint64().Draw(rt, "seed")
		h := genHistory(rt, stream.KindLogistic, d, n, seed)
		sp, de := sparsify(h.Events, d)
		cfg := learnerConfig(d, rapid.IntRange(1, 6).Draw(rt, "tau"))
		a, err := olbfgs.New(cfg, h.Loss)
		require.NoError(rt, err)
		b, err := olbfgs.New(cfg, h.Loss)
		require.NoError(rt, err)
		for i := range sp {
			require.NoError(rt, a.Step(sp[i]))
			require.NoError(rt, b.Step(de[i]))
			if !a.Equal(b) {
				rt.Fatalf("step %d (id %d): sparse and dense states differ", i, sp[i].ID)
			}
		}
	})
}

// TestIngestSparseStream (ADV2-04): a stream file with sparse payloads
// (x_index, as convert --sparse writes them) is ingested, forgotten from
// and released from; the state after each forget is bit for bit `train` on
// the sparse deletion-edited stream, and Check replays the stored log.
func TestIngestSparseStream(t *testing.T) {
	const d, n = 7, 240
	h := genHistory(t, stream.KindLogistic, d, n, 21)
	sp, _ := sparsify(h.Events, d)
	var file bytes.Buffer
	require.NoError(t, stream.Write(&file, &stream.History{Header: h.Header, Events: sp}))
	require.Contains(t, file.String(), `"x_index"`, "the stream file is sparse")

	s := createStore(t, t.TempDir(), h.Header, 4, 50)
	defer s.Close()
	res, err := s.Ingest(bytes.NewReader(file.Bytes()), IngestOptions{})
	require.NoError(t, err)
	require.Equal(t, n, res.Events)
	cfg := s.LearnerConfig()
	requireSameState(t, s, oracle(t, cfg, h.Loss, sp, stream.NewIDSet()), "after ingest")

	forgotten := stream.NewIDSet()
	for _, ids := range [][]int64{{120}, {3, 200}, {77}} {
		rep, err := s.Forget(ids, ForgetOptions{})
		require.NoError(t, err, "forget %v", ids)
		require.Equal(t, PathExact, rep.Path)
		for _, id := range ids {
			forgotten.Add(id)
		}
		requireSameState(t, s, oracle(t, cfg, h.Loss, sp, forgotten), "after forget")
	}
	_, err = s.Check()
	require.NoError(t, err, "Check replays the stored (densified) log")

	// After an approximate forget, a rebuild release (Release →
	// lastRetained) reads the last τ retained inserts back from the log:
	// they are the sparse stream's, densified. (This learner has no radius,
	// so Release itself refuses a noised release.)
	rep, err := s.Forget([]int64{10}, ForgetOptions{Noise: testNoise(), MaxReplay: 1, Intervention: "noop"})
	require.NoError(t, err)
	require.Equal(t, PathApproximate, rep.Path)
	got, err := s.lastRetained(context.Background(), s.db, cfg.Memory)
	require.NoError(t, err)
	require.Len(t, got, cfg.Memory)
	for k, e := range got {
		want := sp[n-cfg.Memory+k]
		require.Equal(t, want.ID, e.ID)
		require.Nil(t, e.Sample.Idx)
		require.True(t, floatbits.Equal(want.Sample.Dense(d), e.Sample.V), "id %d: payload", e.ID)
		require.True(t, floatbits.Equal([]float64{want.Sample.S}, []float64{e.Sample.S}), "id %d: label", e.ID)
	}
}

// TestRepeatedForgetVacuums (ADV2-06): a forget whose ids were all
// forgotten already (PathNone) still runs the VACUUM, so retrying a request
// whose VACUUM crashed completes its erasure; with SkipVacuum it does not.
func TestRepeatedForgetVacuums(t *testing.T) {
	h := genHistory(t, stream.KindLogistic, 20, 400, 5)
	s := createStore(t, t.TempDir(), h.Header, 4, 100)
	defer s.Close()
	_, err := s.IngestEvents(Events(h.Events), IngestOptions{})
	require.NoError(t, err)
	freePages := func() int {
		var n int
		require.NoError(t, s.db.QueryRow(`PRAGMA freelist_count`).Scan(&n))
		return n
	}
	ids := make([]int64, 0, 300)
	for id := int64(50); id < 350; id++ {
		ids = append(ids, id)
	}
	// The first forget "crashes" before its VACUUM: free pages remain.
	rep, err := s.Forget(ids, ForgetOptions{SkipVacuum: true})
	require.NoError(t, err)
	require.Equal(t, PathExact, rep.Path)
	require.Positive(t, freePages(), "the deleted rows left free pages")
	rep, err = s.Forget(ids, ForgetOptions{SkipVacuum: true})
	require.NoError(t, err)
	require.Equal(t, PathNone, rep.Path)
	require.Positive(t, freePages(), "SkipVacuum: no VACUUM")
	rep, err = s.Forget(ids, ForgetOptions{})
	require.NoError(t, err)
	require.Equal(t, PathNone, rep.Path)
	require.Equal(t, ids, rep.AlreadyForgotten)
	require.Zero(t, freePages(), "the repeated forget vacuumed")
}
