package store

import (
	"encoding/json"
	"slices"
	"testing"

	"github.com/stretchr/testify/require"
	"gonum.org/v1/gonum/floats"

	"unlearn/olbfgs"
	"unlearn/stream"
)

// TestNoisedStateHoldsOnlyPublic: after an approximate forget of a
// certifiable store with progressive statistics, every field of the
// stored state — and of the checkpoint written with it — is what a state
// built from the noised release and public counts alone holds: w and the
// average the released vector (projected), an empty memory, no skip
// count, progressive statistics zero (the un-noised trajectory's loss
// sums and recent predictions scored the deleted row), the event and
// insert counts of the log, the number of iterates averaged as the
// insert count gives it, the tombstones; any other field fails the test.
// Inserts after the forget are scored from zero.
func TestNoisedStateHoldsOnlyPublic(t *testing.T) {
	const n = 120
	h := genHistory(t, stream.KindLogistic, 3, n, 5)
	cfg := olbfgs.DefaultConfig(h.Header.D)
	cfg.SampleBound = 20
	cfg = cfg.CertifiableProfile(h.Header.Lambda)
	cfg.Progress = true
	s, err := Create(t.TempDir(), Config{Header: h.Header, Learner: cfg, CheckpointEvery: 1000})
	require.NoError(t, err)
	defer s.Close()
	_, err = s.IngestEvents(Events(h.Events[:n-20]), IngestOptions{})
	require.NoError(t, err)
	before, _ := s.state.Progress()
	require.Equal(t, n-20, before.N)
	require.Positive(t, before.LossSum, "the un-noised statistics scored every insert")

	deleted := h.Events[40].ID
	rep, err := s.Forget([]int64{deleted}, ForgetOptions{Noise: testNoise(), MaxReplay: 1, Intervention: "noop"})
	require.NoError(t, err)
	require.Equal(t, PathApproximate, rep.Path)
	st, err := s.Status()
	require.NoError(t, err)

	w := slices.Clone(rep.Released.Release.W)
	if nw := floats.Norm(w, 2); nw > cfg.Radius {
		floats.Scale(cfg.Radius/nw, w)
	}
	inserts := n - 20 // the log's rows, the erased one included
	fresh, err := olbfgs.New(cfg, h.Loss)
	require.NoError(t, err)
	freshSnap, err := s.encodeState(fresh)
	require.NoError(t, err)
	var public map[string]json.RawMessage
	require.NoError(t, json.Unmarshal(freshSnap, &public))
	raw := func(v any) json.RawMessage {
		b, err := json.Marshal(v)
		require.NoError(t, err)
		return b
	}
	fp, _ := fresh.Progress()
	public["t"], public["skipped"], public["inserts"] = raw(st.T), raw(0), raw(inserts)
	public["w"], public["memory"], public["deleted"] = raw(w), raw([]any{}), raw([]int64{deleted})
	public["average"] = raw(map[string]any{"n": max(inserts-cfg.AverageStart, 0), "w": w})
	public["progress"] = raw(map[string]any{"n": 0, "loss_sum": 0, "correct": 0, "recent_loss": 0, "recent_zero_loss": 0,
		"recent_accuracy": 0, "recent_predicted": fp.RecentPredicted, "recent_labels": fp.RecentLabels})
	require.Equal(t, inserts, st.T, "an approximate forget adds no event to the learner's count")

	check := func(what string, snap []byte) {
		var got map[string]json.RawMessage
		require.NoError(t, json.Unmarshal(snap, &got))
		for k := range got {
			_, ok := public[k]
			require.True(t, ok, "%s: field %q is not one a state of the release and public counts holds", what, k)
		}
		for k, want := range public {
			var a, b any
			require.NoError(t, json.Unmarshal(want, &a))
			require.NoError(t, json.Unmarshal(got[k], &b), "%s: field %q", what, k)
			require.Equal(t, a, b, "%s: field %q", what, k)
		}
	}
	var snap []byte
	require.NoError(t, s.db.QueryRow(`SELECT snapshot FROM state`).Scan(&snap))
	check("state", snap)
	rows, err := s.db.Query(`SELECT snapshot FROM checkpoints WHERE seq >= ?`, 41)
	require.NoError(t, err)
	k := 0
	for rows.Next() {
		require.NoError(t, rows.Scan(&snap))
		check("checkpoint", snap)
		k++
	}
	require.NoError(t, rows.Err())
	require.Equal(t, 1, k, "the noised state's checkpoint")

	// Inserts after the forget are scored from zero.
	_, err = s.IngestEvents(Events(h.Events[n-20:]), IngestOptions{})
	require.NoError(t, err)
	st, err = s.Status()
	require.NoError(t, err)
	require.Equal(t, 20, st.Progress.N)
}
