package store

import (
	"os"
	"testing"

	"github.com/stretchr/testify/require"
	"pgregory.net/rapid"

	"unlearn/certify"
	"unlearn/internal/testutil"
	"unlearn/noise"
	"unlearn/stream"
)

// storeMachine is a rapid state machine over a store and a model of it: the
// events ingested, the ids forgotten, whether an approximate request is
// pending, and the releases kept. After every action the cheap check
// (quick_check, every sum but the payloads', every invariant) passes, the
// counts of Status are the model's, and the counterfactual is the oracle;
// after the last, the full check (integrity_check, the replay from θ0).
type storeMachine struct {
	s         *Store
	h         *stream.History
	ingested  int
	forgotten stream.IDSet
	pending   bool
	releases  int
	sampler   noise.Sampler
}

func (m *storeMachine) ingest(t *rapid.T) {
	if m.ingested == len(m.h.Events) {
		t.Skip("every event ingested")
	}
	n := rapid.IntRange(1, len(m.h.Events)-m.ingested).Draw(t, "n")
	// A rerun from an earlier point (resume): identical events skipped.
	from := rapid.IntRange(max(0, m.ingested-5), m.ingested).Draw(t, "from")
	res, err := m.s.IngestEvents(keyedFile(m.h.Events[from:m.ingested+n]), IngestOptions{BatchSize: rapid.IntRange(0, 4).Draw(t, "batch"), SkipIdentical: true})
	require.NoError(t, err)
	require.Equal(t, n, res.Events)
	require.Equal(t, m.ingested-from, res.Skipped+res.SkippedForgotten, "the events rerun are skipped")
	m.ingested += n
}

func (m *storeMachine) forget(t *rapid.T) {
	if m.ingested == 0 {
		t.Skip("nothing ingested")
	}
	var ids []int64
	for range rapid.IntRange(1, 3).Draw(t, "count") {
		ids = append(ids, int64(rapid.IntRange(1, m.ingested).Draw(t, "id")))
	}
	var o ForgetOptions
	o.SkipVacuum = rapid.Bool().Draw(t, "skipVacuum")
	if rapid.Bool().Draw(t, "capped") {
		o.MaxReplay = rapid.IntRange(1, 15).Draw(t, "cap")
		o.Intervention = rapid.SampledFrom(Interventions()).Draw(t, "intervention")
		o.Noise = certify.Spec{Epsilon: 1, Delta: 1e-5, Sampler: m.sampler, Memory: rapid.SampledFrom([]certify.MemoryPolicy{certify.Reset, certify.Rebuild}).Draw(t, "memory")}
		o.Ages = rapid.SampledFrom([]AgeDisclosure{AgesPow2, AgesNone}).Draw(t, "ages")
	}
	rep, err := m.s.Forget(ids, o)
	require.NoError(t, err)
	for _, id := range ids {
		m.forgotten.Add(id)
	}
	switch rep.Path {
	case PathExact:
		m.pending = false
	case PathApproximate:
		m.pending = true
		m.releases++ // its own release, kept
		require.NotNil(t, rep.Released)
		b, err := rep.Released.Release.Marshal()
		require.NoError(t, err)
		_, err = certify.Verify(rep.Released.Certificate, b, nil)
		require.NoError(t, err, "the approximate path's certificate verifies")
	}
	m.releases -= rep.ReleasesErased
	require.Equal(t, m.pending, rep.NeedsNoise)
}

func (m *storeMachine) resolve(t *rapid.T) {
	rep, err := m.s.Resolve(ForgetOptions{SkipVacuum: true})
	require.NoError(t, err)
	require.Equal(t, m.pending, rep.Path == PathExact)
	m.pending = false
}

func (m *storeMachine) release(t *rapid.T) {
	if m.ingested == 0 {
		t.Skip("nothing ingested")
	}
	r, err := m.s.Release(certify.Spec{Epsilon: 1, Delta: 1e-5, Sampler: m.sampler})
	if m.pending {
		// Refused, naming the release the approximate forget published.
		require.ErrorIs(t, err, ErrPending)
		require.Contains(t, err.Error(), "unlearn releases --get ")
		return
	}
	require.NoError(t, err)
	require.Equal(t, "exact", r.Path)
	_, err = m.s.Keep(r)
	require.NoError(t, err)
	m.releases++
}

// check runs the cheap check (the one every forget and release runs) and
// compares Status and the counterfactual with the model; full adds the full
// check (integrity_check, the replay from θ0).
func (m *storeMachine) check(t *rapid.T, full bool) {
	require.NoError(t, m.s.Verify())
	if full {
		_, err := m.s.Check()
		require.NoError(t, err)
	}
	st, err := m.s.Status()
	require.NoError(t, err)
	require.Empty(t, st.Damage)
	require.Equal(t, m.pending, st.NeedsNoise)
	require.Equal(t, m.releases, st.Releases)
	forgotten := 0
	for id := range m.forgotten {
		if id <= int64(m.ingested) {
			forgotten++
		}
	}
	require.Equal(t, forgotten, st.Forgotten)
	require.Equal(t, int64(m.ingested), st.Head)
	cf, err := m.s.Counterfactual()
	require.NoError(t, err)
	require.True(t, cf.Equal(oracle(t, m.s.LearnerConfig(), m.h.Loss, m.h.Events[:m.ingested], m.forgotten)), "Counterfactual")
	if !m.pending {
		requireSameState(t, m.s, cf, "no request pending")
	}
}

// TestStoreMachine runs the state machine on random streams, checkpoint
// intervals and memories: rapid's cases (100 by default), of which the
// first 8 under the race detector, which slows the pure-Go SQLite ~10×
// (testutil.FewerUnderRace; .ci/run runs all of them without it). It
// shares no file or variable with the other tests and runs beside them.
func TestStoreMachine(t *testing.T) {
	t.Parallel()
	rapid.Check(t, testutil.FewerUnderRace(8, func(t *rapid.T) {
		kind := rapid.SampledFrom([]stream.Kind{stream.KindQuadratic, stream.KindLogistic}).Draw(t, "kind")
		h := genHistory(t, kind, 2, 24, rapid.Uint64Range(0, 100).Draw(t, "seed"))
		dir, err := os.MkdirTemp("", "store-machine-")
		require.NoError(t, err)
		defer os.RemoveAll(dir)
		s, err := Create(dir, Config{Header: h.Header, Learner: learnerConfig(2, rapid.IntRange(0, 3).Draw(t, "tau")),
			CheckpointEvery: rapid.IntRange(1, 8).Draw(t, "K")})
		require.NoError(t, err)
		defer s.Close()
		m := &storeMachine{s: s, h: h, forgotten: stream.IDSet{}, sampler: noise.NewSeededSampler(5, noise.SamplerOptions{})}
		// A bounded number of actions (rapid's Repeat runs many more, at a
		// cost of one fsync'd transaction each).
		actions := []func(*rapid.T){m.ingest, m.forget, m.forget, m.resolve, m.release}
		m.ingest(t)
		m.check(t, false)
		for range rapid.IntRange(1, 8).Draw(t, "actions") {
			a := rapid.IntRange(0, len(actions)-1).Draw(t, "action")
			if a == 0 && m.ingested == len(m.h.Events) {
				continue
			}
			actions[a](t)
			m.check(t, false)
		}
		m.check(t, true)
	}))
}
