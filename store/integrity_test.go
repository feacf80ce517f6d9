package store

import (
	"bytes"
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/binary"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"unlearn/certify"
	"unlearn/noise"
	"unlearn/sign"
	"unlearn/stream"
)

// The corruption tests damage a closed store as a reliability harness or a
// careless operator would — an UPDATE or DELETE through the SQLite driver
// (the file stays valid SQLite), or bytes of the file flipped or replaced —
// reopen it, and require every operation that would trust the damaged part
// (an exact forget, which restores and replays over the log; an
// approximate forget; a resolution; a release; status --check) to refuse
// with ErrCorrupt, and the database to be byte for byte what it was before
// the attempt (nothing restored, replayed over, kept or released).

// rawDB opens the store's database file with the driver alone: none of the
// store's pragmas (foreign keys are not enforced), as a tool would.
func rawDB(t *testing.T, dir string) *sql.DB {
	t.Helper()
	u := url.URL{Scheme: "file", Path: filepath.ToSlash(filepath.Join(dir, FileName))}
	db, err := sql.Open("sqlite", u.String())
	require.NoError(t, err)
	db.SetMaxOpenConns(1)
	return db
}

func execRaw(t *testing.T, dir string, q string, args ...any) {
	t.Helper()
	db := rawDB(t, dir)
	defer db.Close()
	_, err := db.Exec(q, args...)
	require.NoError(t, err, q)
}

// fingerprint is the SHA-256 of every row of every table but the
// generation counter: what an operation that refuses must leave alone.
func fingerprint(t *testing.T, dir string) [32]byte {
	t.Helper()
	db := rawDB(t, dir)
	defer db.Close()
	h := sha256.New()
	for _, q := range []string{
		`SELECT seq, id, payload, sha256 FROM events ORDER BY seq`,
		`SELECT seq, exact, t, origin, snapshot, sha256 FROM checkpoints ORDER BY seq`,
		`SELECT exact, snapshot, sha256 FROM state`,
		`SELECT * FROM forget_requests ORDER BY request`,
		`SELECT * FROM forgotten ORDER BY id`,
		`SELECT * FROM releases ORDER BY release`,
		`SELECT * FROM keys ORDER BY key`,
		`SELECT key, value FROM meta WHERE key != 'generation' ORDER BY key`,
		`SELECT * FROM forget_queue ORDER BY seq`,
		`SELECT * FROM tokens ORDER BY token`,
	} {
		rows, err := db.Query(q)
		require.NoError(t, err, q)
		cols, err := rows.Columns()
		require.NoError(t, err)
		for rows.Next() {
			v := make([]any, len(cols))
			p := make([]any, len(cols))
			for i := range v {
				p[i] = &v[i]
			}
			require.NoError(t, rows.Scan(p...))
			fmt.Fprintf(h, "%v\x00", v)
		}
		require.NoError(t, rows.Close())
	}
	var out [32]byte
	copy(out[:], h.Sum(nil))
	return out
}

// integrityStore is the store the corruption tests damage: a certifiable
// logistic learner, 60 keyed events, checkpoints every 10, an exact
// forget of id 7 (a tombstone, a deleted event row), a release kept at
// log position 60, and the service's tables: a token, a deletion request
// served from the queue (id 11) and one still queued (ids 20 and 21). It is
// closed. The store is built once per test binary
// and copied (its one file) into a fresh directory for each caller.
func integrityStore(t *testing.T) (dir string, h *stream.History) {
	t.Helper()
	h = genHistory(t, stream.KindLogistic, 3, 60, 31)
	integrityOnce.Do(func() { integrityTemplate, integrityErr = buildIntegrityStore(h) })
	require.NoError(t, integrityErr)
	dir = t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, FileName), integrityTemplate, 0o600))
	return dir, h
}

var (
	integrityOnce     sync.Once
	integrityTemplate []byte
	integrityErr      error
	integrityQueued   string // the template's queued request
)

func buildIntegrityStore(h *stream.History) ([]byte, error) {
	dir, err := os.MkdirTemp("", "store-integrity-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	cfg := learnerConfig(3, 3)
	cfg.Radius, cfg.SampleBound = 4, 20
	s, err := Create(dir, Config{Header: h.Header, Learner: cfg, CheckpointEvery: 10})
	if err != nil {
		return nil, err
	}
	defer s.Close()
	if _, err := s.IngestEvents(keyedFile(h.Events), IngestOptions{BatchSize: 20}); err != nil {
		return nil, err
	}
	if _, err := s.Forget([]int64{7}, ForgetOptions{}); err != nil {
		return nil, err
	}
	if _, _, err := s.CreateToken("app", []string{"forget", "read"}); err != nil {
		return nil, err
	}
	key, err := sign.Generate()
	if err != nil {
		return nil, err
	}
	c := certify.ForgetCommitment(make([]byte, certify.NonceSize), []int64{11}, nil)
	served, err := s.EnqueueForget([]int64{11}, nil, c, time.Hour)
	if err != nil {
		return nil, err
	}
	if _, err := s.ServeForgets(context.Background(), []string{served.Request}, ServeOptions{Sign: signer(key)}); err != nil {
		return nil, err
	}
	r, err := s.Release(certify.Spec{Epsilon: 1, Delta: 1e-5, Sampler: noise.NewSeededSampler(3, noise.SamplerOptions{})})
	if err != nil {
		return nil, err
	}
	if _, err := s.Keep(r); err != nil {
		return nil, err
	}
	queued, err := s.EnqueueForget([]int64{20, 21}, nil, c, time.Hour)
	if err != nil {
		return nil, err
	}
	integrityQueued = queued.Request
	if _, err := s.Check(); err != nil {
		return nil, fmt.Errorf("the undamaged store fails its check: %w", err)
	}
	if err := s.Close(); err != nil {
		return nil, err
	}
	return os.ReadFile(filepath.Join(dir, FileName))
}

// oneDigit returns b with its first digit after the first occurrence of
// field changed (the JSON stays valid: a different number).
func oneDigit(t *testing.T, b []byte, field string) []byte {
	t.Helper()
	i := bytes.Index(b, []byte(field))
	require.GreaterOrEqual(t, i, 0, "field %s", field)
	for j := i + len(field); j < len(b); j++ {
		if c := b[j]; c >= '1' && c <= '8' {
			out := bytes.Clone(b)
			out[j] = c + 1
			return out
		}
	}
	t.Fatalf("no digit after %s", field)
	return nil
}

// resumQueued sets columns of the request of the queue in state (set is
// the SET clause) and writes its sum again: a change a checksum cannot
// catch, left to the invariants.
func resumQueued(t *testing.T, dir, state, set string) {
	t.Helper()
	execRaw(t, dir, `UPDATE forget_queue SET `+set+` WHERE state = ?`, state)
	db := rawDB(t, dir)
	defer db.Close()
	var r queuedRequest
	c := &r.rec
	require.NoError(t, db.QueryRow(`SELECT `+queueColumns+` FROM forget_queue WHERE state = ?`, state).Scan(
		&c.request, &c.received, &c.deadline, &c.ids, &c.records, &c.commitment, &c.state, &c.served, &c.batch, &c.receipt, &c.reason, &c.sum))
	_, err := db.Exec(`UPDATE forget_queue SET sha256 = ? WHERE request = ?`, sumQueued(c), c.request)
	require.NoError(t, err)
}

func editBlob(t *testing.T, dir, sel, upd, field string) {
	t.Helper()
	db := rawDB(t, dir)
	defer db.Close()
	var b []byte
	require.NoError(t, db.QueryRow(sel).Scan(&b))
	_, err := db.Exec(upd, oneDigit(t, b, field))
	require.NoError(t, err)
}

// flipInFile changes, in the database file itself, one digit of the first
// occurrence of pat: a byte flip of the storage, below SQLite.
func flipInFile(t *testing.T, dir string, pat []byte) {
	t.Helper()
	p := filepath.Join(dir, FileName)
	b, err := os.ReadFile(p)
	require.NoError(t, err)
	i := bytes.Index(b, pat)
	require.GreaterOrEqual(t, i, 0, "pattern not in the file")
	for j := i; j < i+len(pat); j++ {
		if c := b[j]; c >= '1' && c <= '8' {
			b[j] = c + 1
			require.NoError(t, os.WriteFile(p, b, 0o600))
			return
		}
	}
	t.Fatalf("no digit in the pattern")
}

// revertIndexPage replaces the pages of the log's index on id with their
// content at an earlier moment (captured by the returned function's first
// call): what a crash whose rollback journal was lost leaves, a b-tree
// that misses the rows written since.
func revertIndexPage(t *testing.T, dir string) (capture, revert func()) {
	var saved []byte
	var off int64
	page := func() (int64, int64) {
		db := rawDB(t, dir)
		defer db.Close()
		var root, size int64
		require.NoError(t, db.QueryRow(`SELECT rootpage FROM sqlite_master WHERE name = 'sqlite_autoindex_events_1'`).Scan(&root))
		require.NoError(t, db.QueryRow(`PRAGMA page_size`).Scan(&size))
		return root, size
	}
	capture = func() {
		root, size := page()
		b, err := os.ReadFile(filepath.Join(dir, FileName))
		require.NoError(t, err)
		off = (root - 1) * size
		saved = bytes.Clone(b[off : off+size])
	}
	revert = func() {
		root, size := page()
		require.Equal(t, off, (root-1)*size, "the index moved")
		p := filepath.Join(dir, FileName)
		b, err := os.ReadFile(p)
		require.NoError(t, err)
		copy(b[off:off+size], saved)
		require.NoError(t, os.WriteFile(p, b, 0o600))
	}
	return capture, revert
}

// damage is a case of TestCorruptionRefused.
type damage struct {
	name string
	do   func(t *testing.T, dir string, h *stream.History)
	// skipOps lists operations that legitimately do not read the
	// damaged part (and say why in the case).
	skipOps map[string]bool
	// pending: the damage is done to pendingIntegrityStore (a noised
	// approximate request pending), not integrityStore.
	pending bool
}

func TestCorruptionRefused(t *testing.T) {
	t.Parallel() // every case damages a copy of its own: they run beside each other and the other tests
	cases := []damage{
		{name: "a checkpoint with one changed digit", do: func(t *testing.T, dir string, _ *stream.History) {
			editBlob(t, dir, `SELECT snapshot FROM checkpoints WHERE seq = 20`, `UPDATE checkpoints SET snapshot = ? WHERE seq = 20`, `"w":`)
		}},
		{name: "θ0 with one changed digit", do: func(t *testing.T, dir string, _ *stream.History) {
			editBlob(t, dir, `SELECT snapshot FROM checkpoints WHERE seq = 0`, `UPDATE checkpoints SET snapshot = ? WHERE seq = 0`, `"eta":`)
		}},
		{name: "the state with one changed digit", do: func(t *testing.T, dir string, _ *stream.History) {
			editBlob(t, dir, `SELECT snapshot FROM state`, `UPDATE state SET snapshot = ?`, `"w":`)
		}},
		{name: "a checkpoint's exact flag cleared", do: func(t *testing.T, dir string, _ *stream.History) {
			execRaw(t, dir, `UPDATE checkpoints SET exact = 0 WHERE seq = 30`)
		}},
		{name: "an event row deleted from the log", do: func(t *testing.T, dir string, _ *stream.History) {
			execRaw(t, dir, `DELETE FROM events WHERE seq = 25`)
		}},
		{name: "the newest event row deleted", do: func(t *testing.T, dir string, _ *stream.History) {
			execRaw(t, dir, `DELETE FROM events WHERE seq = 60`)
		}},
		{name: "a NULL payload outside any request (re-summed)", do: func(t *testing.T, dir string, _ *stream.History) {
			execRaw(t, dir, `UPDATE events SET payload = NULL, sha256 = ? WHERE seq = 25`, sumEvent(25, 25, nil, true))
		}},
		{name: "a payload with one changed digit", do: func(t *testing.T, dir string, h *stream.History) {
			db := rawDB(t, dir)
			defer db.Close()
			var p []byte
			require.NoError(t, db.QueryRow(`SELECT payload FROM events WHERE seq = 25`).Scan(&p))
			p[len(p)-1] ^= 1
			_, err := db.Exec(`UPDATE events SET payload = ? WHERE seq = 25`, p)
			require.NoError(t, err)
		}, skipOps: map[string]bool{
			// A release publishes the state, which the payload of a
			// past event does not change; the replays and the check read it.
			"release": true, "forget approximate": true,
		}},
		{name: "the tombstones deleted", do: func(t *testing.T, dir string, _ *stream.History) {
			execRaw(t, dir, `DELETE FROM forgotten`)
		}},
		{name: "forget_requests emptied", do: func(t *testing.T, dir string, _ *stream.History) {
			execRaw(t, dir, `DELETE FROM forget_requests`)
		}},
		{name: "the head lowered", do: func(t *testing.T, dir string, _ *stream.History) {
			execRaw(t, dir, `UPDATE meta SET value = '59' WHERE key = 'head'`)
		}},
		{name: "the head lowered and the state re-summed", do: func(t *testing.T, dir string, _ *stream.History) {
			db := rawDB(t, dir)
			defer db.Close()
			var snap []byte
			require.NoError(t, db.QueryRow(`SELECT snapshot FROM state`).Scan(&snap))
			_, err := db.Exec(`UPDATE meta SET value = '58' WHERE key = 'head'`)
			require.NoError(t, err)
			_, err = db.Exec(`UPDATE state SET sha256 = ?`, sumState(true, 58, snap))
			require.NoError(t, err)
		}},
		{name: "a kept release with one changed digit", do: func(t *testing.T, dir string, _ *stream.History) {
			editBlob(t, dir, `SELECT file FROM releases`, `UPDATE releases SET file = ?`, `"w":`)
		}},
		{name: "a key moved to another id", do: func(t *testing.T, dir string, _ *stream.History) {
			execRaw(t, dir, `UPDATE keys SET id = 61 WHERE id = 8`) // no sum matches; id 61 does not exist either
		}},
		{name: "a configuration digit changed", do: func(t *testing.T, dir string, _ *stream.History) {
			execRaw(t, dir, `UPDATE meta SET value = '11' WHERE key = 'checkpoint_every'`)
		}},
		{name: "a byte of a checkpoint flipped in the file", do: func(t *testing.T, dir string, _ *stream.History) {
			db := rawDB(t, dir)
			var snap []byte
			require.NoError(t, db.QueryRow(`SELECT snapshot FROM checkpoints WHERE seq = 40`).Scan(&snap))
			db.Close()
			i := bytes.Index(snap, []byte(`"w":`))
			flipInFile(t, dir, snap[i:i+40])
		}},
		{name: "a queued request's ids with one changed digit", do: func(t *testing.T, dir string, _ *stream.History) {
			execRaw(t, dir, `UPDATE forget_queue SET ids = '[20,31]' WHERE state = 'queued'`) // id 31 is someone else's
		}},
		{name: "a queued request's ids re-summed, one of them never ingested", do: func(t *testing.T, dir string, _ *stream.History) {
			resumQueued(t, dir, "queued", `ids = '[20,99]'`)
		}},
		{name: "a queued request deleted", do: func(t *testing.T, dir string, _ *stream.History) {
			execRaw(t, dir, `DELETE FROM forget_queue WHERE state = 'queued'`)
		}, skipOps: map[string]bool{
			// The request is gone: serving it is refused as unknown
			// (ErrUnknownRequest); every other use refuses the store.
			"serve the queue": true,
		}},
		{name: "a served request's receipt with one changed digit", do: func(t *testing.T, dir string, _ *stream.History) {
			editBlob(t, dir, `SELECT receipt FROM forget_queue WHERE state = 'served'`, `UPDATE forget_queue SET receipt = ? WHERE state = 'served'`, `"head`)
		}},
		{name: "a served request's store request changed (re-summed)", do: func(t *testing.T, dir string, _ *stream.History) {
			resumQueued(t, dir, "served", `batch = 99`)
		}},
		{name: "a token's scopes widened", do: func(t *testing.T, dir string, _ *stream.History) {
			execRaw(t, dir, `UPDATE tokens SET scopes = 'admin,forget,ingest,read'`)
		}},
		{name: "a revoked token's revocation cleared", do: func(t *testing.T, dir string, _ *stream.History) {
			// Revoked (re-summed), then the revocation cleared as a
			// restore of an old backup page would.
			s, err := Open(dir)
			require.NoError(t, err)
			_, err = s.RevokeToken(1)
			require.NoError(t, err)
			require.NoError(t, s.Close())
			execRaw(t, dir, `UPDATE tokens SET revoked = NULL`)
		}},
		{name: "the log's index on id reverted (a lost hot journal)", do: nil, // set below
			skipOps: map[string]bool{"serve the queue": true}}, // a store of its own, without a queue
	}
	cases[len(cases)-1].do = func(t *testing.T, dir string, h *stream.History) {}
	cases = append(cases, requestDamages()...)

	ops := []struct {
		name string
		run  func(s *Store) error
	}{
		{"forget exact", func(s *Store) error { _, err := s.Forget([]int64{3}, ForgetOptions{SkipVacuum: true}); return err }},
		{"forget approximate", func(s *Store) error {
			_, err := s.Forget([]int64{50}, ForgetOptions{SkipVacuum: true, Noise: testNoise(), MaxReplay: 1, Intervention: "noop",
				OnRelease: func(*Released) error { return fmt.Errorf("the ledger was charged for a damaged store") }})
			return err
		}},
		{"release", func(s *Store) error {
			_, err := s.Release(certify.Spec{Epsilon: 1, Delta: 1e-5, Sampler: noise.NewSeededSampler(1, noise.SamplerOptions{})})
			return err
		}},
		{"check", func(s *Store) error { _, err := s.Check(); return err }},
		{"serve the queue", func(s *Store) error {
			_, err := s.ServeForgets(context.Background(), []string{integrityQueued}, ServeOptions{Sign: func(*certify.Receipt) ([]byte, error) {
				return nil, fmt.Errorf("a receipt was signed for a damaged store")
			}, Forget: ForgetOptions{SkipVacuum: true}})
			return err
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			dir, h := integrityStore(t)
			if c.pending {
				dir = pendingIntegrityStore(t)
			}
			if c.name == "the log's index on id reverted (a lost hot journal)" {
				// The index as it was after 50 events, the table with 60.
				dir = t.TempDir()
				cfg := learnerConfig(3, 3)
				s, err := Create(dir, Config{Header: h.Header, Learner: cfg, CheckpointEvery: 10})
				require.NoError(t, err)
				_, err = s.IngestEvents(Events(h.Events[:50]), IngestOptions{})
				require.NoError(t, err)
				require.NoError(t, s.Close())
				capture, revert := revertIndexPage(t, dir)
				capture()
				s, err = Open(dir)
				require.NoError(t, err)
				_, err = s.IngestEvents(Events(h.Events[50:]), IngestOptions{})
				require.NoError(t, err)
				require.NoError(t, s.Close())
				revert()
			} else {
				c.do(t, dir, h)
			}
			before := fingerprint(t, dir)
			s, err := Open(dir)
			require.NoError(t, err, "a damaged store opens (and says what is wrong)")
			defer s.Close()
			st, err := s.Status()
			require.NoError(t, err, "status runs on a damaged store")
			for _, op := range ops {
				if c.skipOps[op.name] {
					continue
				}
				err := op.run(s)
				require.ErrorIs(t, err, ErrCorrupt, "%s on a store with %s", op.name, c.name)
				require.Equal(t, before, fingerprint(t, dir), "%s changed the damaged store", op.name)
			}
			if c.name == "the log's index on id reverted (a lost hot journal)" {
				// The id the index lost is not "never ingested".
				_, err := s.Forget([]int64{55}, ForgetOptions{SkipVacuum: true})
				require.ErrorIs(t, err, ErrCorrupt)
				require.NotErrorIs(t, err, ErrUnknownID)
			}
			if c.name == "a token's scopes widened" || c.name == "a revoked token's revocation cleared" {
				_, err := s.Tokens()
				require.ErrorIs(t, err, ErrCorrupt, "a damaged token is never read")
				r, err := OpenReader(dir)
				require.NoError(t, err)
				_, err = r.Tokens()
				require.ErrorIs(t, err, ErrCorrupt, "the service's reader reads no damaged token")
				require.NoError(t, r.Close())
			}
			if c.name == "a served request's receipt with one changed digit" {
				rows, err := queueRows(context.Background(), s.db, `WHERE state = 'served'`)
				require.ErrorIs(t, err, ErrCorrupt, "no damaged receipt is handed out")
				require.Empty(t, rows)
			}
			if c.name == "a kept release with one changed digit" {
				_, err := s.GetRelease(1)
				require.ErrorIs(t, err, ErrCorrupt, "releases --get hands out no damaged release")
				rs, err := s.Releases()
				require.NoError(t, err)
				require.True(t, rs[0].Damaged)
			}
			_ = st
		})
	}
}

// TestDamagedStateOpensAndResolves: a state that fails its checksum, or
// does not decode (a pre-version-6 parameter-only forget left w outside the
// learner's radius), does not brick the store: it opens, Status says what
// is wrong without printing any value of the state, every other use is
// refused, and Resolve rebuilds it by exact replay from a verified
// checkpoint and the log.
func TestDamagedStateOpensAndResolves(t *testing.T) {
	for _, how := range []string{"checksum", "outside the radius"} {
		t.Run(how, func(t *testing.T) {
			dir, h := integrityStore(t)
			db := rawDB(t, dir)
			var snap []byte
			require.NoError(t, db.QueryRow(`SELECT snapshot FROM state`).Scan(&snap))
			var w string
			if how == "checksum" {
				bad := oneDigit(t, snap, `"w":`)
				_, err := db.Exec(`UPDATE state SET snapshot = ?`, bad)
				require.NoError(t, err)
				w = string(regexp.MustCompile(`"w":\[[^\]]*\]`).Find(bad))
			} else {
				// w scaled far out of the ball of radius 4, re-summed as
				// a version-6 migration of such a store would have.
				bad := regexp.MustCompile(`"w":\[[^\]]*\]`).ReplaceAll(snap, []byte(`"w":[7.123456789012345,-8.23456789012345,9.3456789012345]`))
				_, err := db.Exec(`UPDATE state SET snapshot = ?, sha256 = ?`, bad, sumState(true, 60, bad))
				require.NoError(t, err)
				w = "7.123456789012345"
			}
			db.Close()
			s, err := Open(dir)
			require.NoError(t, err, "the store opens")
			defer s.Close()
			st, err := s.Status()
			require.NoError(t, err)
			require.Contains(t, st.Damage, "the state")
			require.NotContains(t, st.Damage, w, "a value of the state is printed")
			require.NotRegexp(t, `\d\.\d{6}`, st.Damage, "a number with many digits is printed")
			_, err = s.State()
			require.ErrorIs(t, err, ErrCorrupt)
			_, err = s.IngestEvents(Events(nil), IngestOptions{})
			require.ErrorIs(t, err, ErrCorrupt)
			_, err = s.Release(certify.Spec{Epsilon: 1, Delta: 1e-5})
			require.ErrorIs(t, err, ErrCorrupt)
			_, err = s.Forget([]int64{3}, ForgetOptions{})
			require.ErrorIs(t, err, ErrCorrupt)
			rep, err := s.Resolve(ForgetOptions{SkipVacuum: true})
			require.NoError(t, err)
			require.Equal(t, PathExact, rep.Path)
			require.Contains(t, rep.Reason, "rebuild of the damaged state")
			requireSameState(t, s, oracle(t, s.LearnerConfig(), h.Loss, h.Events, stream.NewIDSet(7, 11)), "rebuilt")
			_, err = s.Check()
			require.NoError(t, err)
		})
	}
}

// TestSumEncoding pins the sum's length-prefixed encoding (a stored sum is
// never recomputed differently) and that each field, the domain and the
// erasure marker change it.
func TestSumEncoding(t *testing.T) {
	a := sumEvent(1, 2, []byte{3}, false)
	require.Len(t, a, 32)
	for _, b := range [][]byte{sumEvent(2, 2, []byte{3}, false), sumEvent(1, 3, []byte{3}, false), sumEvent(1, 2, []byte{4}, false),
		sumEvent(1, 2, nil, true), sumEvent(1, 2, []byte{}, false), sumKey("a", 1)} {
		require.NotEqual(t, a, b)
	}
	var dst [32]byte
	sumEventInto(&dst, nil, 1, 2, []byte{3})
	require.Equal(t, a, dst[:], "the reader's allocation-free sum")
	buf := binary.LittleEndian.AppendUint64(nil, uint64(len(sumEventDomain)))
	buf = append(buf, sumEventDomain...)
	buf = binary.LittleEndian.AppendUint64(buf, 1)
	buf = binary.LittleEndian.AppendUint64(buf, 2)
	buf = binary.LittleEndian.AppendUint64(buf, 1)
	buf = append(buf, 3)
	want := sha256.Sum256(buf)
	require.Equal(t, want[:], a)
}

// TestRefusedChargeChangesNothing: an approximate forget whose release the
// ledger refuses (OnRelease fails) is rolled back whole: no request, no
// tombstone, no kept release, the payload and every checkpoint in place.
func TestRefusedChargeChangesNothing(t *testing.T) {
	dir, _ := integrityStore(t)
	before := fingerprint(t, dir)
	s, err := Open(dir)
	require.NoError(t, err)
	defer s.Close()
	called := false
	_, err = s.Forget([]int64{50}, ForgetOptions{SkipVacuum: true, Noise: testNoise(), MaxReplay: 1, Intervention: "pair-drop",
		OnRelease: func(r *Released) error {
			called = true
			require.NotNil(t, r.Certificate)
			return fmt.Errorf("budget exceeded")
		}})
	require.True(t, called)
	require.ErrorContains(t, err, "budget exceeded")
	require.ErrorContains(t, err, "nothing changed")
	require.Equal(t, before, fingerprint(t, dir))
	_, err = s.Check()
	require.NoError(t, err)
}
