package store

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"unlearn/stream"
)

var (
	pendingOnce     sync.Once
	pendingTemplate []byte
	pendingErr      error
)

// pendingIntegrityStore is a copy of integrityStore after one more
// forget: an approximate one of id 55 (noop, capped at one replayed
// event), kept noised and pending as request pendingRequest.
func pendingIntegrityStore(t *testing.T) string {
	t.Helper()
	dir, _ := integrityStore(t)
	pendingOnce.Do(func() {
		s, err := Open(dir)
		if err != nil {
			pendingErr = err
			return
		}
		rep, err := s.Forget([]int64{55}, ForgetOptions{SkipVacuum: true, Noise: testNoise(), MaxReplay: 1, Intervention: "noop"})
		if err == nil && (rep.Path != PathApproximate || rep.Request != pendingRequest) {
			err = fmt.Errorf("the template's forget of id 55 is %s request %d", rep.Path, rep.Request)
		}
		if err == nil {
			_, err = s.Check()
		}
		if cerr := s.Close(); err == nil {
			err = cerr
		}
		if pendingErr = err; err == nil {
			pendingTemplate, pendingErr = os.ReadFile(filepath.Join(dir, FileName))
		}
	})
	require.NoError(t, pendingErr)
	dir = t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, FileName), pendingTemplate, 0o600))
	return dir
}

// pendingRequest is the template's pending approximate request (after
// the exact forget of id 7 and the served queue request for id 11).
const pendingRequest = 3

// requestEdits are, for each column of forget_requests, another value an
// attacker could write into the pending noised request (an SQL
// expression), and whether the column accepts NULL.
var requestEdits = []struct {
	col, value string
	nullable   bool
}{
	{"request", "request + 10", false},
	{"time", "'2020-01-01T00:00:00Z'", false},
	{"ids", "'[56]'", false},
	{"path", "'exact'", false},
	{"reason", "reason || ' (edited)'", false},
	{"from_seq", "from_seq + 1", false},
	{"events_replayed", "events_replayed + 1", false},
	{"wall_ns", "wall_ns + 1", false},
	{"intervention", "'param-only'", true},
	{"ages", "'[1000]'", true},
	{"u_size", "u_size + 1", false},
	{"needs_noise", "0", false},
	{"resolved_by", "1", true},
	{"releases_erased", "releases_erased + 1", false},
	{"erased_releases", "'[]'", true},
	{"noised", "0", false},
	{"release", "release + 1", true},
	{"alpha_source", "'exact'", true},
	{"alpha", "0", true},
	{"sigma", "0", true},
	{"epsilon", "epsilon * 2", true},
	{"delta", "delta * 2", true},
	{"disclosed_ages", "'[7]'", true},
	{"head", "1", true},
	{"sha256", "zeroblob(32)", true},
}

// requestDamages are TestCorruptionRefused's cases on the deletion
// requests: every column of the pending noised request edited, and NULLed
// where SQLite allows it (a byte flipped in the file is one of these); the
// attacker's edits that keep the sum right (re-summed) and break an
// invariant; a tombstone moved to another request.
func requestDamages() []damage {
	var out []damage
	edit := func(set string) func(t *testing.T, dir string, _ *stream.History) {
		return func(t *testing.T, dir string, _ *stream.History) {
			execRaw(t, dir, `UPDATE forget_requests SET `+set+` WHERE request = ?`, pendingRequest)
		}
	}
	for _, e := range requestEdits {
		out = append(out, damage{name: "the pending request's " + e.col + " edited", do: edit(e.col + " = " + e.value), pending: true})
		if e.nullable && e.col != "resolved_by" { // NULL already: the request is pending
			out = append(out, damage{name: "the pending request's " + e.col + " NULLed", do: edit(e.col + " = NULL"), pending: true})
		}
	}
	for _, c := range []struct{ name, set string }{
		{"head above the log head", "head = 1000"},
		{"head before the insert it erased", "head = 1"},
		{"size without its tombstones", "u_size = 2, ids = '[55,56]', ages = '[3,2]'"},
		{"α source outside the domain", "alpha_source = 'measured'"},
		{"σ zero", "sigma = 0"},
		{"exact path kept noised", "path = 'exact', needs_noise = 0"},
		{"resolved by itself", "resolved_by = request"},
	} {
		out = append(out, damage{name: "the pending request's " + c.name + " (re-summed)", pending: true,
			do: func(t *testing.T, dir string, _ *stream.History) { resumRequestRaw(t, dir, pendingRequest, c.set) }})
	}
	out = append(out,
		damage{name: "the pending request's kept release deleted", pending: true, do: func(t *testing.T, dir string, _ *stream.History) {
			execRaw(t, dir, `DELETE FROM releases WHERE release = (SELECT release FROM forget_requests WHERE request = ?)`, pendingRequest)
		}},
		damage{name: "an exact request's time edited", do: func(t *testing.T, dir string, _ *stream.History) {
			execRaw(t, dir, `UPDATE forget_requests SET time = '2020-01-01T00:00:00Z' WHERE request = 1`)
		}},
		damage{name: "a tombstone moved to another request", do: func(t *testing.T, dir string, _ *stream.History) {
			execRaw(t, dir, `UPDATE forgotten SET request = 2 WHERE id = 7`)
		}},
	)
	return out
}

// resumRequestRaw edits a request row as an attacker who knows the sums
// would: the row changed, then its sum recomputed.
func resumRequestRaw(t *testing.T, dir string, request int64, set string) {
	t.Helper()
	execRaw(t, dir, `UPDATE forget_requests SET `+set+` WHERE request = ?`, request)
	db := rawDB(t, dir)
	defer db.Close()
	var r requestRow
	require.NoError(t, r.scan(db.QueryRow(`SELECT `+requestCols+`, sha256 FROM forget_requests WHERE request = ?`, request)))
	_, err := db.Exec(`UPDATE forget_requests SET sha256 = ? WHERE request = ?`, sumRequest(&r), request)
	require.NoError(t, err)
}

// TestRequestEditsCoverEveryColumn: requestEdits lists every column of
// forget_requests (a column added without a case fails here), and a
// damaged request is listed as damaged, with none of its values.
func TestRequestEditsCoverEveryColumn(t *testing.T) {
	t.Parallel()
	dir := pendingIntegrityStore(t)
	db := rawDB(t, dir)
	rows, err := db.Query(`SELECT name, "notnull" FROM pragma_table_info('forget_requests')`)
	require.NoError(t, err)
	cols := map[string]bool{}
	for rows.Next() {
		var name string
		var notNull bool
		require.NoError(t, rows.Scan(&name, &notNull))
		cols[name] = !notNull && name != "request"
	}
	require.NoError(t, rows.Err())
	require.NoError(t, db.Close())
	listed := map[string]bool{}
	for _, e := range requestEdits {
		listed[e.col] = e.nullable
	}
	require.Equal(t, cols, listed, "every column of forget_requests has an edit, and a NULL where SQLite accepts one")

	execRaw(t, dir, `UPDATE forget_requests SET alpha = 0, sigma = 0, alpha_source = 'exact' WHERE request = ?`, pendingRequest)
	s, err := Open(dir)
	require.NoError(t, err)
	defer s.Close()
	st, err := s.Status()
	require.NoError(t, err)
	require.Len(t, st.Pending, 1)
	require.Equal(t, Request{Request: pendingRequest, Damaged: true}, st.Pending[0], "nothing of a damaged request is reported")
	d, err := s.ResolutionDue(time.Now())
	require.NoError(t, err)
	require.True(t, d.Due, "a damaged pending request is due for resolution")
	_, err = s.Resolve(ForgetOptions{SkipVacuum: true})
	require.ErrorIs(t, err, ErrCorrupt, "and its resolution reports the damage")
}

// TestOpenSchema7RequestSums: a store of schema version 7 (no request
// sums) is migrated by Open: every request row gets its sum, computed
// over the row as it is, and the store checks.
func TestOpenSchema7RequestSums(t *testing.T) {
	t.Parallel()
	dir := pendingIntegrityStore(t)
	execRaw(t, dir, `ALTER TABLE forget_requests DROP COLUMN sha256`)
	execRaw(t, dir, `DELETE FROM schema_migrations WHERE version = 8`)
	s, err := Open(dir)
	require.NoError(t, err)
	defer s.Close()
	_, err = s.Check()
	require.NoError(t, err, "the migrated store checks")
	rows, err := s.db.QueryContext(context.Background(), `SELECT `+requestCols+`, sha256 FROM forget_requests`)
	require.NoError(t, err)
	defer rows.Close()
	n := 0
	for rows.Next() {
		var r requestRow
		require.NoError(t, r.scan(rows))
		require.Equal(t, sumRequest(&r), r.sum, "request %d", r.request)
		n++
	}
	require.NoError(t, rows.Err())
	require.Equal(t, pendingRequest, n)
	v, err := schemaVersion(context.Background(), s.db)
	require.NoError(t, err)
	require.Equal(t, 8, v)
}
