package store

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/require"
	"gonum.org/v1/gonum/floats"

	"unlearn/olbfgs"
	"unlearn/stream"
)

// TestIngestClipsToBound: a store created with ClipToBound logs and
// applies every payload above the sample bound scaled onto its ball
// (counted in IngestResult.Clipped), so that an exact replay reproduces
// the state bit for bit; the setting needs a bound, survives reopening
// and is covered by the configuration's sum (its row removed: the store
// is damaged).
func TestIngestClipsToBound(t *testing.T) {
	h := genHistory(t, stream.KindLogistic, 3, 80, 9)
	_, err := Create(t.TempDir(), Config{Header: h.Header, Learner: olbfgs.DefaultConfig(h.Header.D), ClipToBound: true})
	var oe *OptionError
	require.True(t, errors.As(err, &oe) && oe.Option == "ClipToBound", "%v", err)

	cfg := olbfgs.DefaultConfig(h.Header.D)
	cfg.SampleBound = 0.5
	cfg = cfg.CertifiableProfile(h.Header.Lambda)
	dir := t.TempDir()
	s, err := Create(dir, Config{Header: h.Header, Learner: cfg, CheckpointEvery: 20, ClipToBound: true})
	require.NoError(t, err)
	above := 0
	for _, e := range h.Events {
		if floats.Norm(e.Sample.V, 2) > cfg.SampleBound {
			above++
		}
	}
	require.Positive(t, above)
	res, err := s.IngestEvents(Events(h.Events), IngestOptions{})
	require.NoError(t, err)
	require.Equal(t, above, res.Clipped)
	n := 0
	for _, e := range h.Events {
		if floats.Norm(e.Sample.V, 2) > cfg.SampleBound {
			n++
		}
	}
	require.Equal(t, above, n, "the caller's payloads are not modified")
	// An exact forget replays the clipped log: the oracle on the clipped
	// rows without the forgotten one.
	_, err = s.Forget([]int64{h.Events[10].ID}, ForgetOptions{})
	require.NoError(t, err)
	clipped := make([]stream.Event, len(h.Events))
	for i, e := range h.Events {
		e.Sample.V = append([]float64(nil), e.Sample.V...)
		cfg.ClipToBound(e.Sample.V)
		clipped[i] = e
	}
	want := oracle(t, cfg, h.Loss, clipped, stream.NewIDSet(h.Events[10].ID))
	got, err := s.State()
	require.NoError(t, err)
	require.True(t, got.Equal(want), "the replayed state differs from training on the clipped rows")
	st, err := s.Status()
	require.NoError(t, err)
	require.True(t, st.ClipToBound)
	require.NoError(t, s.Close())

	s, err = Open(dir)
	require.NoError(t, err)
	st, err = s.Status()
	require.NoError(t, err)
	require.True(t, st.ClipToBound)
	require.Empty(t, st.Damage)
	require.NoError(t, s.Close())
	execRaw(t, dir, `DELETE FROM meta WHERE key = 'clip_to_bound'`)
	s, err = Open(dir)
	require.NoError(t, err)
	defer s.Close()
	st, err = s.Status()
	require.NoError(t, err)
	require.Contains(t, st.Damage, "configuration")
}
