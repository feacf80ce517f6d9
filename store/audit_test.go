package store

import (
	"context"
	"database/sql"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"unlearn/certify"
	"unlearn/noise"
	"unlearn/stream"
)

// auditStore makes a certifiable logistic store (radius 4, sample bound 20:
// the values of TestReleasePaths) with 300 inserts, ids 1..300, and closes
// it: the directory is then what a user hands to an audit.
func auditStore(t *testing.T) (dir string, h *stream.History) {
	t.Helper()
	h = genHistory(t, stream.KindLogistic, 3, 300, 5)
	cfg := learnerConfig(h.Header.D, 4)
	cfg.Radius, cfg.SampleBound = 4, 20
	dir = t.TempDir()
	s, err := Create(dir, Config{Header: h.Header, Learner: cfg, CheckpointEvery: 50})
	require.NoError(t, err)
	_, err = s.IngestEvents(Events(h.Events), IngestOptions{})
	require.NoError(t, err)
	require.NoError(t, s.Close())
	return dir, h
}

// readDir returns every file of dir by name, with its bytes.
func readDir(t *testing.T, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	for _, e := range entries {
		b, err := os.ReadFile(filepath.Join(dir, e.Name()))
		require.NoError(t, err)
		out[e.Name()] = string(b)
	}
	return out
}

// PrepareAudit takes the exact and the approximate path as the store's
// Forget would, gives world B the oracle (the replay of the deletion-edited
// stream), gives both worlds the store's σ, and leaves the user's store
// byte for byte as it was.
func TestPrepareAudit(t *testing.T) {
	dir, h := auditStore(t)
	before := readDir(t, dir)
	cfg := learnerConfig(h.Header.D, 4)
	cfg.Radius, cfg.SampleBound = 4, 20
	u := stream.NewIDSet(40, 41)
	oracleB := oracle(t, cfg, h.Loss, h.Events, u)
	for _, tc := range []struct {
		name   string
		forget ForgetOptions
		memory certify.MemoryPolicy
		path   Path
		rel    string
	}{
		{"exact", ForgetOptions{}, certify.Reset, PathExact, "exact"},
		{"approximate/reset", ForgetOptions{Noise: testNoise(), MaxReplay: 1, Intervention: "memory-reset"}, certify.Reset, PathApproximate, "derived"},
		{"approximate/rebuild", ForgetOptions{Noise: testNoise(), MaxReplay: 1, Intervention: "noop"}, certify.Rebuild, PathApproximate, "derived"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w, err := PrepareAudit(context.Background(), dir, u.Sorted(), AuditOptions{Forget: tc.forget, Spec: certify.Spec{Epsilon: 1, Delta: 1e-5, Memory: tc.memory}})
			require.NoError(t, err)
			require.Equal(t, tc.path, w.Forget.Path, w.Forget.Reason)
			require.NotEmpty(t, w.Forget.Reason)
			require.Equal(t, tc.rel, w.ReleasePath)
			require.True(t, w.StateB.Equal(oracleB), "world B is the oracle")
			if tc.path == PathExact {
				require.True(t, w.Exact)
				require.True(t, w.StateA.Equal(oracleB), "the exact path is the oracle")
				return
			}
			require.False(t, w.Exact)
			require.False(t, w.StateA.Equal(oracleB))
			require.Equal(t, w.A.Sigma(), w.B.Sigma())
			require.Equal(t, w.Certificate.Sigma, w.A.Sigma())
			require.Equal(t, tc.memory, w.B.Memory())
			rb, err := w.B.Release(noise.NewSeededSampler(3, noise.SamplerOptions{}))
			require.NoError(t, err)
			require.Len(t, rb.W, h.Header.D)
		})
	}
	require.Equal(t, before, readDir(t, dir), "the user's store changed")
}

// Bad requests are refused with an error naming what is wrong, and the
// store is untouched.
func TestPrepareAuditErrors(t *testing.T) {
	dir, _ := auditStore(t)
	before := readDir(t, dir)
	spec := certify.Spec{Epsilon: 1, Delta: 1e-5}
	_, err := PrepareAudit(context.Background(), dir, []int64{9999}, AuditOptions{Spec: spec})
	require.ErrorIs(t, err, ErrUnknownID)
	_, err = PrepareAudit(context.Background(), dir, nil, AuditOptions{Spec: spec})
	require.ErrorIs(t, err, ErrOptions)
	_, err = PrepareAudit(context.Background(), dir, []int64{3}, AuditOptions{Spec: certify.Spec{Epsilon: 1, Delta: 1e-5, Alpha: &certify.Given{Alpha: 1}}})
	require.ErrorIs(t, err, ErrOptions)
	_, err = PrepareAudit(context.Background(), dir, []int64{3}, AuditOptions{Forget: ForgetOptions{Noise: testNoise(), MaxReplay: 1, Intervention: "bogus"}, Spec: spec})
	require.ErrorIs(t, err, ErrOptions)
	_, err = PrepareAudit(context.Background(), t.TempDir(), []int64{3}, AuditOptions{Spec: spec})
	require.ErrorIs(t, err, os.ErrNotExist)
	require.Equal(t, before, readDir(t, dir), "the user's store changed")
}

// TestSnapshotStoreIsConsistent checks that the audit's copy is one
// committed state of the store: a write transaction left open by another
// connection (as a concurrent ingest would hold it) is not in the copy, and
// the source's bytes are unchanged.
func TestSnapshotStoreIsConsistent(t *testing.T) {
	dir, _ := auditStore(t)
	name, err := dsn(dir)
	require.NoError(t, err)
	writer, err := sql.Open("sqlite", name)
	require.NoError(t, err)
	defer writer.Close()
	writer.SetMaxOpenConns(1)
	tx, err := writer.Begin()
	require.NoError(t, err)
	_, err = tx.Exec(`INSERT INTO meta(key, value) VALUES ('uncommitted', 'x')`)
	require.NoError(t, err)

	dst := t.TempDir()
	require.NoError(t, snapshotStore(context.Background(), dir, dst))
	require.NoError(t, tx.Rollback())

	cp, err := sql.Open("sqlite", "file:"+filepath.Join(dst, FileName)+"?mode=ro")
	require.NoError(t, err)
	defer cp.Close()
	var n int
	require.NoError(t, cp.QueryRow(`SELECT count(*) FROM meta WHERE key = 'uncommitted'`).Scan(&n))
	require.Zero(t, n, "the copy holds an uncommitted row")
	require.NoError(t, cp.QueryRow(`SELECT count(*) FROM events`).Scan(&n))
	require.Positive(t, n)

	err = snapshotStore(context.Background(), t.TempDir(), t.TempDir())
	require.ErrorContains(t, err, "holds no store")
}

// TestPrepareAuditCancelled (ADV2-01): a cancelled context interrupts
// PrepareAudit, which returns an error wrapping the cancellation and leaves
// no copy of the store (the audited ids' payloads) in the temporary
// directory, whichever step it was in; a context cancelled before the call
// makes no copy that survives it. Deadlines from 0 to 40 ms land in the copy,
// the forget or the replay of the 20000-event store (or after it: then the
// audit succeeds, and still leaves nothing).
func TestPrepareAuditCancelled(t *testing.T) {
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp)
	h := genHistory(t, stream.KindLogistic, 20, 20000, 8)
	cfg := learnerConfig(h.Header.D, 4)
	cfg.Radius, cfg.SampleBound = 4, 20
	dir := t.TempDir()
	s, err := Create(dir, Config{Header: h.Header, Learner: cfg, CheckpointEvery: 20000})
	require.NoError(t, err)
	_, err = s.IngestEvents(Events(h.Events), IngestOptions{})
	require.NoError(t, err)
	require.NoError(t, s.Close())
	spec := certify.Spec{Epsilon: 1, Delta: 1e-5, Memory: certify.Reset}

	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	w, err := PrepareAudit(ctx, dir, []int64{7}, AuditOptions{Spec: spec})
	require.ErrorIs(t, err, context.Canceled)
	require.Nil(t, w)
	left, err := os.ReadDir(tmp)
	require.NoError(t, err)
	require.Empty(t, left, "a copy of the store was left in TMPDIR")

	interrupted := 0
	for _, d := range []time.Duration{time.Millisecond, 5 * time.Millisecond, 10 * time.Millisecond, 20 * time.Millisecond, 40 * time.Millisecond} {
		ctx, cancel := context.WithTimeout(context.Background(), d)
		w, err := PrepareAudit(ctx, dir, []int64{7}, AuditOptions{Spec: spec})
		cancel()
		if err != nil {
			require.ErrorIs(t, err, context.DeadlineExceeded, "deadline %v", d)
			require.Nil(t, w)
			interrupted++
		}
		left, err := os.ReadDir(tmp)
		require.NoError(t, err)
		require.Empty(t, left, "deadline %v: a copy of the store was left in TMPDIR", d)
	}
	t.Logf("%d of 5 deadlines interrupted the audit", interrupted)
	require.Positive(t, interrupted, "no deadline interrupted the audit")
}
