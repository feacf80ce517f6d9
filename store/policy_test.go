package store

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"unlearn/stream"
)

// TestResolvePolicyAfterEvents: with "resolve after N events", the ingest
// that brings the events since the oldest pending request to N resolves it
// (IngestResult.Resolved), and the state is the oracle again; before, the
// policy says how many events remain.
func TestResolvePolicyAfterEvents(t *testing.T) {
	h := genHistory(t, stream.KindLogistic, 3, 80, 4)
	s, err := Create(t.TempDir(), Config{Header: h.Header, Learner: learnerConfig(3, 3), CheckpointEvery: 10,
		Resolve: ResolvePolicy{AfterEvents: 15}})
	require.NoError(t, err)
	defer s.Close()
	_, err = s.IngestEvents(Events(h.Events[:40]), IngestOptions{})
	require.NoError(t, err)
	rep, err := s.Forget([]int64{12}, ForgetOptions{Noise: testNoise(), MaxReplay: 1, Intervention: "pair-drop"})
	require.NoError(t, err)
	require.Equal(t, PathApproximate, rep.Path)

	res, err := s.IngestEvents(Events(h.Events[40:50]), IngestOptions{})
	require.NoError(t, err)
	require.Nil(t, res.Resolved, "10 events since: not due")
	d, err := s.ResolutionDue(time.Now())
	require.NoError(t, err)
	require.False(t, d.Due)
	require.Equal(t, int64(10), d.EventsSince)
	require.Contains(t, d.Reason, "resolved after 5 more events")

	res, err = s.IngestEvents(Events(h.Events[50:55]), IngestOptions{})
	require.NoError(t, err)
	require.NotNil(t, res.Resolved, "15 events since: due, and resolved by the ingest")
	require.Equal(t, []int64{rep.Request}, res.Resolved.Resolved)
	requireSameState(t, s, oracle(t, s.LearnerConfig(), h.Loss, h.Events[:55], stream.NewIDSet(12)), "after the policy's resolution")
	st, err := s.Status()
	require.NoError(t, err)
	require.False(t, st.NeedsNoise)
}

// TestResolvePolicyWithin: a deadline; ResolveIfDue at a later clock
// resolves, and SetResolvePolicy persists the policy (a reopened store
// has it, its configuration sum covers it).
func TestResolvePolicyWithin(t *testing.T) {
	h := genHistory(t, stream.KindLogistic, 3, 60, 4)
	dir := t.TempDir()
	s := createStore(t, dir, h.Header, 3, 10)
	_, err := s.IngestEvents(Events(h.Events[:40]), IngestOptions{})
	require.NoError(t, err)
	require.ErrorIs(t, s.SetResolvePolicy(ResolvePolicy{Within: -time.Hour}), ErrOptions)
	require.NoError(t, s.SetResolvePolicy(ResolvePolicy{Within: 24 * time.Hour}))
	require.NoError(t, s.Close())
	s, err = Open(dir)
	require.NoError(t, err)
	defer s.Close()
	require.Equal(t, ResolvePolicy{Within: 24 * time.Hour}, s.ResolvePolicy())

	_, err = s.Forget([]int64{12}, ForgetOptions{Noise: testNoise(), MaxReplay: 1, Intervention: "noop"})
	require.NoError(t, err)
	_, did, err := s.ResolveIfDue(time.Now(), ForgetOptions{})
	require.NoError(t, err)
	require.False(t, did)
	rep, did, err := s.ResolveIfDue(time.Now().Add(25*time.Hour), ForgetOptions{})
	require.NoError(t, err)
	require.True(t, did)
	require.Equal(t, PathExact, rep.Path)
	_, err = s.Check()
	require.NoError(t, err)
}

// TestIngestResume: a rerun of the same file skips what the log holds
// (identical payload and key) and ingests the rest; a payload or key that
// differs is refused naming the id and its line, and nothing of its batch
// is kept.
func TestIngestResume(t *testing.T) {
	h := genHistory(t, stream.KindLogistic, 3, 50, 8)
	s := createStore(t, t.TempDir(), h.Header, 3, 10)
	defer s.Close()
	var commits []IngestResult
	// The first run "dies" after 30 events.
	_, err := s.IngestEvents(keyedFile(h.Events[:30]), IngestOptions{BatchSize: 7, OnCommit: func(r IngestResult) { commits = append(commits, r) }})
	require.NoError(t, err)
	require.Len(t, commits, 5)
	require.Equal(t, int64(30), commits[4].Head)

	_, err = s.IngestEvents(keyedFile(h.Events), IngestOptions{BatchSize: 7})
	require.ErrorIs(t, err, ErrEvent, "without SkipIdentical a rerun is refused")
	res, err := s.IngestEvents(keyedFile(h.Events), IngestOptions{BatchSize: 7, SkipIdentical: true})
	require.NoError(t, err)
	require.Equal(t, 30, res.Skipped)
	require.Equal(t, 20, res.Events)
	requireSameState(t, s, oracle(t, s.LearnerConfig(), h.Loss, h.Events, nil), "after the resumed ingest")

	changed := keyedFile(h.Events)
	changed.events = append([]stream.Event(nil), changed.events...)
	z := changed.events[20].Sample
	z.V = append([]float64(nil), z.V...)
	z.V[0] += 1e-9
	changed.events[20].Sample = z
	_, err = s.IngestEvents(changed, IngestOptions{SkipIdentical: true})
	require.ErrorIs(t, err, ErrEvent)
	require.ErrorContains(t, err, "id 21 is already in the log (seq 21) with a different payload")
	rekeyed := keyedFile(h.Events)
	rekeyed.keys[3] = "someone-else@example.com"
	_, err = s.IngestEvents(rekeyed, IngestOptions{SkipIdentical: true})
	require.ErrorContains(t, err, "id 4 is already in the log (seq 4) with a different key")
	_, err = s.Check()
	require.NoError(t, err)

	// A forgotten id is refused, and skipped on resume (never ingested
	// again either way).
	_, err = s.Forget([]int64{5}, ForgetOptions{SkipVacuum: true})
	require.NoError(t, err)
	_, err = s.IngestEvents(keyedFile(h.Events[4:5]), IngestOptions{})
	require.ErrorContains(t, err, "id 5 was forgotten")
	res, err = s.IngestEvents(keyedFile(h.Events), IngestOptions{SkipIdentical: true})
	require.NoError(t, err)
	require.Equal(t, 1, res.SkippedForgotten)
	require.Equal(t, 49, res.Skipped)
	require.Zero(t, res.Events)
}

// TestForgetBatch: a batch of requests is served by one replay and
// recorded request by request — each its own ids, tombstones and report —
// and gives the state the same requests served one by one give; an id two
// requests name is the first's; an unknown id refuses the whole batch.
func TestForgetBatch(t *testing.T) {
	h := genHistory(t, stream.KindLogistic, 3, 60, 4)
	s := createStore(t, t.TempDir(), h.Header, 3, 10)
	defer s.Close()
	_, err := s.IngestEvents(keyedFile(h.Events), IngestOptions{})
	require.NoError(t, err)
	_, err = s.ForgetBatch([]Deletion{{IDs: []int64{3}}, {IDs: []int64{999}}}, ForgetOptions{})
	require.ErrorIs(t, err, ErrUnknownID)
	reqs, err := s.Requests()
	require.NoError(t, err)
	require.Empty(t, reqs, "a refused batch records nothing")

	reps, err := s.ForgetBatch([]Deletion{{IDs: []int64{30, 12}}, {Keys: []string{userKey(45), userKey(12)}}, {IDs: []int64{50}}}, ForgetOptions{SkipVacuum: true})
	require.NoError(t, err)
	require.Len(t, reps, 3)
	require.Equal(t, []int64{12, 30}, reps[0].IDs)
	require.Equal(t, []int64{45}, reps[1].IDs)
	require.Equal(t, []int64{12}, reps[1].AlreadyForgotten, "named by the first request of the batch")
	require.Equal(t, []int64{50}, reps[2].IDs)
	for _, r := range reps {
		require.Equal(t, PathExact, r.Path)
		require.Equal(t, reps[0].EventsReplayed, r.EventsReplayed, "one replay")
	}
	require.Equal(t, int64(10), reps[0].FromSeq, "from before the oldest insert of the batch (seq 12)")
	require.Equal(t, 1, reps[1].KeysErased)
	requireSameState(t, s, oracle(t, s.LearnerConfig(), h.Loss, h.Events, stream.NewIDSet(12, 30, 45, 50)), "after the batch")
	reqs, err = s.Requests()
	require.NoError(t, err)
	require.Len(t, reqs, 3)
	require.Equal(t, []int64{45}, reqs[1].IDs)
	_, err = s.Check()
	require.NoError(t, err)
}
