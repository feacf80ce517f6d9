package store

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"unlearn/stream"
)

// TestOpenSchema5PendingApproximate: a store of schema version 5 with a
// pending approximate request (a noop forget of id 20 at head 40: the
// payload NULL, the checkpoints from seq 20 on inexact, the state and an
// intervention checkpoint at the head un-noised) is migrated by Open: every
// row gets its sum, the store checks, and the request reads as not noised.
// An approximate forget then derives no α from the trajectory the old
// request left (the diameter) and deletes every checkpoint from the
// oldest erased insert on, so that no un-noised residue of either request
// stays; a resolution makes the state exact.
func TestOpenSchema5PendingApproximate(t *testing.T) {
	h := genHistory(t, stream.KindLogistic, 3, 60, 12)
	dir := t.TempDir()
	s := createStore(t, dir, h.Header, 3, 10)
	_, err := s.IngestEvents(Events(h.Events[:40]), IngestOptions{})
	require.NoError(t, err)
	dropTo5(t, s.db)
	for _, q := range []string{
		`UPDATE events SET payload = NULL WHERE id = 20`,
		`UPDATE checkpoints SET exact = 0 WHERE seq >= 20`,
		`INSERT OR REPLACE INTO checkpoints (seq, exact, t, origin, created, snapshot) SELECT 40, 0, 40, 'intervention', '2026-01-01T00:00:00Z', snapshot FROM state`,
		`UPDATE state SET exact = 0`,
		`INSERT INTO forget_requests (time, ids, path, reason, from_seq, events_replayed, wall_ns, intervention, ages, u_size, needs_noise, erased_releases)
			VALUES ('2026-01-01T00:00:00Z', '[20]', 'approximate', 'capped', 0, 0, 0, 'noop', '[20]', 1, 1, '[]')`,
		`INSERT INTO forgotten (id, request) VALUES (20, 1)`,
	} {
		_, err := s.db.Exec(q)
		require.NoError(t, err, q)
	}
	require.NoError(t, s.Close())

	s, err = Open(dir)
	require.NoError(t, err)
	defer s.Close()
	_, err = s.Check()
	require.NoError(t, err, "the migrated store checks")
	st, err := s.Status()
	require.NoError(t, err)
	require.True(t, st.NeedsNoise)
	require.Len(t, st.Pending, 1)
	require.False(t, st.Pending[0].Noised, "a request from before version 6 left an un-noised state")

	rep, err := s.Forget([]int64{35}, ForgetOptions{Noise: testNoise(), MaxReplay: 1, Intervention: "noop", SkipVacuum: true})
	require.NoError(t, err)
	require.Equal(t, PathApproximate, rep.Path)
	require.Equal(t, "diameter", rep.Released.Path, "no α is derived through the old request's un-noised trajectory")
	var n int
	require.NoError(t, s.db.QueryRow(`SELECT count(*) FROM checkpoints WHERE seq >= 20 AND seq < 40`).Scan(&n))
	require.Zero(t, n, "the old request's inexact checkpoints are deleted too")
	_, err = s.Check()
	require.NoError(t, err)
	rep, err = s.Resolve(ForgetOptions{SkipVacuum: true})
	require.NoError(t, err)
	require.Len(t, rep.Resolved, 2)
	requireSameState(t, s, oracle(t, s.LearnerConfig(), h.Loss, h.Events[:40], stream.NewIDSet(20, 35)), "resolved")
}

// TestOpenDevelopmentSchema6Refused: a store of the development build that
// numbered the service's tables as version 6 (version 5 plus forget_queue
// and tokens, without the row sums) is refused with ErrSchema, naming it,
// rather than failing half-way through a migration; the file is unchanged.
func TestOpenDevelopmentSchema6Refused(t *testing.T) {
	h := genHistory(t, stream.KindLogistic, 3, 20, 12)
	dir := t.TempDir()
	s := createStore(t, dir, h.Header, 3, 10)
	_, err := s.IngestEvents(Events(h.Events[:10]), IngestOptions{})
	require.NoError(t, err)
	dropTo5(t, s.db)
	for _, q := range []string{
		`CREATE TABLE forget_queue (seq INTEGER PRIMARY KEY AUTOINCREMENT, request TEXT NOT NULL UNIQUE) STRICT`,
		`CREATE TABLE tokens (token INTEGER PRIMARY KEY AUTOINCREMENT, hash BLOB NOT NULL) STRICT`,
		`INSERT INTO schema_migrations (version, applied_at) VALUES (6, '2026-01-01T00:00:00Z')`,
	} {
		_, err := s.db.Exec(q)
		require.NoError(t, err, q)
	}
	require.NoError(t, s.Close())
	before, err := os.ReadFile(filepath.Join(dir, FileName))
	require.NoError(t, err)
	_, err = Open(dir)
	require.ErrorIs(t, err, ErrSchema)
	require.ErrorContains(t, err, "development build")
	after, err := os.ReadFile(filepath.Join(dir, FileName))
	require.NoError(t, err)
	require.Equal(t, before, after, "a refused store is not written")
}
