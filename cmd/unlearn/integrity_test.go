package main

import (
	"bytes"
	"database/sql"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"unlearn/store"
)

// keyedStore makes a store from a CSV file of 30 rows whose string ids are
// e-mail-like keys — one holding a comma, one a quote, one that reads as
// an integer ("17") — and returns the store and the keys by row (id). The
// store is made once per test binary (unlearn init and ingest) and its
// files are copied into a fresh folder for each caller.
func keyedStore(t *testing.T) (st string, keys []string) {
	t.Helper()
	keyedOnce.Do(func() { keyedFiles, keyedKeys, keyedErr = buildKeyedStore() })
	require.NoError(t, keyedErr)
	st = filepath.Join(t.TempDir(), "model")
	require.NoError(t, os.Mkdir(st, 0o755))
	for name, b := range keyedFiles {
		require.NoError(t, os.WriteFile(filepath.Join(st, name), b, 0o600))
	}
	return st, slices.Clone(keyedKeys)
}

var (
	keyedOnce  sync.Once
	keyedFiles map[string][]byte // the store folder's files by name
	keyedKeys  []string
	keyedErr   error
)

func buildKeyedStore() (files map[string][]byte, keys []string, err error) {
	dir, err := os.MkdirTemp("", "unlearn-keyed-")
	if err != nil {
		return nil, nil, err
	}
	defer os.RemoveAll(dir)
	var b strings.Builder
	b.WriteString("user,a,b,y\n")
	keys = make([]string, 31)
	for i := 1; i <= 30; i++ {
		keys[i] = fmt.Sprintf("user%d@example.com", i)
	}
	keys[5], keys[6], keys[7] = "Doe, John", `Jane "JJ" Roe`, "17"
	for i := 1; i <= 30; i++ {
		k := keys[i]
		if strings.ContainsAny(k, `,"`) {
			k = `"` + strings.ReplaceAll(k, `"`, `""`) + `"`
		}
		fmt.Fprintf(&b, "%s,%d,%d,%d\n", k, i%7-3, i%5-2, i%2)
	}
	data := filepath.Join(dir, "rows.csv")
	if err := os.WriteFile(data, []byte(b.String()), 0o644); err != nil {
		return nil, nil, err
	}
	st := filepath.Join(dir, "model")
	for _, args := range [][]string{
		{"init", "--store", st, "--data", data, "--label", "y", "--id", "user", "--tau", "3", "--checkpoint-every", "5"},
		{"ingest", "--store", st, "--data", data, "--label", "y", "--id", "user"},
	} {
		root := newRootCmd()
		var out bytes.Buffer
		root.SetOut(&out)
		root.SetErr(&out)
		root.SetArgs(args)
		if err := root.Execute(); err != nil {
			return nil, nil, fmt.Errorf("unlearn %s: %w\n%s", args[0], err, out.String())
		}
	}
	entries, err := os.ReadDir(st)
	if err != nil {
		return nil, nil, err
	}
	files = map[string][]byte{}
	for _, e := range entries {
		if !e.Type().IsRegular() {
			return nil, nil, fmt.Errorf("%s in the store folder is not a file", e.Name())
		}
		if files[e.Name()], err = os.ReadFile(filepath.Join(st, e.Name())); err != nil {
			return nil, nil, err
		}
	}
	return files, keys, nil
}

// live returns the keys of keys[1..] still in the store.
func live(t *testing.T, st string, keys []string) []string {
	t.Helper()
	s, err := store.Open(st)
	require.NoError(t, err)
	defer s.Close()
	var out []string
	for _, k := range keys[1:] {
		if _, err := s.LookupKeys([]string{k}); err == nil {
			out = append(out, k)
		}
	}
	return out
}

// TestForgetNamesEveryKey attacks forget's input: every form that names
// several rows — a multi-line value (LF, CRLF, blank lines), a file and
// standard input, duplicates, CSV quoting — forgets every one of them or
// refuses, changing nothing; a key that reads as an integer is a key; an
// empty item or a key not in the store refuses the whole request.
func TestForgetNamesEveryKey(t *testing.T) {
	type tc struct {
		name  string
		args  []string
		stdin string
		gone  []int // rows forgotten; nil: refused
		err   string
	}
	cases := []tc{
		{"keys one per line (the $(cat keys.txt) of the issue)", []string{"--keys", "user1@example.com\nuser2@example.com\nuser3@example.com"}, "", []int{1, 2, 3}, ""},
		{"keys with CRLF and blank lines", []string{"--keys", "user1@example.com\r\n\r\nuser2@example.com\r\n  user3@example.com  \r\n"}, "", []int{1, 2, 3}, ""},
		{"keys comma-separated with a quoted comma", []string{"--keys", `user1@example.com,"Doe, John"`}, "", []int{1, 5}, ""},
		{"keys with a quoted quote", []string{"--keys", `"Jane ""JJ"" Roe"`}, "", []int{6}, ""},
		{"an unquoted comma splits a key: refused, nothing changes", []string{"--keys", "Doe, John"}, "", nil, `"Doe"`},
		{"duplicates name one row", []string{"--keys", "user1@example.com,user1@example.com", "--keys", "user1@example.com"}, "", []int{1}, ""},
		{"a key that reads as an integer is a key", []string{"--keys", "17"}, "", []int{7}, ""},
		{"an empty key is refused", []string{"--keys", "user1@example.com,,user2@example.com"}, "", nil, "is empty"},
		{"an unknown key among known ones refuses all", []string{"--keys", "user1@example.com\nnobody@example.com"}, "", nil, "nobody@example.com"},
		{"keys from a file, literal lines", []string{"--keys-from", "FILE"}, "", []int{4, 5, 6, 9}, ""},
		{"keys from standard input", []string{"--keys-from", "-"}, "user8@example.com\r\nuser9@example.com\n", []int{8, 9}, ""},
		{"keys from a file with a byte order mark", []string{"--keys-from", "-"}, "\ufeffuser8@example.com\n", []int{8}, ""},
		{"ids one per line", []string{"--ids", "1\n2\r\n\n3"}, "", []int{1, 2, 3}, ""},
		{"ids with blanks and commas, repeated", []string{"--ids", "1, 2 3", "--ids", "4"}, "", []int{1, 2, 3, 4}, ""},
		{"ids from standard input", []string{"--ids-from", "-"}, "10\n11\n\n", []int{10, 11}, ""},
		{"an empty id item is refused", []string{"--ids", "1,,2"}, "", nil, "item 2 is empty"},
		{"a non-integer id is refused", []string{"--ids", "1\nuser2@example.com"}, "", nil, `line 2: "user2@example.com" is not a whole number`},
		{"ids and keys together", []string{"--ids", "1", "--keys", "user2@example.com"}, "", []int{1, 2}, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			st, keys := keyedStore(t)
			args := append([]string{"forget", "--store", st, "--no-vacuum"}, c.args...)
			for i, a := range args {
				if a == "FILE" {
					f := filepath.Join(t.TempDir(), "keys.txt")
					require.NoError(t, os.WriteFile(f, []byte("user4@example.com\r\nDoe, John\n\nJane \"JJ\" Roe\n user9@example.com \n"), 0o644))
					args[i] = f
				}
			}
			root := newRootCmd()
			var out strings.Builder
			root.SetOut(&out)
			root.SetErr(&out)
			root.SetIn(strings.NewReader(c.stdin))
			root.SetArgs(args)
			err := root.Execute()
			left := live(t, st, keys)
			if c.gone == nil {
				require.ErrorContains(t, err, c.err)
				require.Len(t, left, 30, "a refused request changed the store")
				return
			}
			require.NoError(t, err, out.String())
			require.Len(t, left, 30-len(c.gone), "rows left: %v", left)
			for _, i := range c.gone {
				require.NotContains(t, left, keys[i], "row %d (key %q) was not forgotten", i, keys[i])
			}
		})
	}
}

// TestDamagedStoreCLI: a state row with one changed digit: status opens the
// store and says it is damaged without printing any value of the state;
// status --check fails; release and forget refuse; forget --resolve
// rebuilds the state, after which the check passes. A kept release with
// changed bytes is listed as DAMAGED, releases --get writes nothing, and
// status --check names it.
func TestDamagedStoreCLI(t *testing.T) {
	st, _ := keyedStore(t)
	out, err := runCLI(t, "release", "--store", st, "--epsilon", "1", "--delta", "1e-5", "--out", filepath.Join(t.TempDir(), "r.json"),
		"--certificate", filepath.Join(t.TempDir(), "c.json"))
	require.NoError(t, err, out)
	db := rawStore(t, st)
	var snap []byte
	require.NoError(t, db.QueryRow(`SELECT snapshot FROM state`).Scan(&snap))
	w := regexp.MustCompile(`"w":\[([^\]]*)\]`).FindSubmatch(snap)[1]
	bad := regexp.MustCompile(`"w":\[-?\d`).ReplaceAllFunc(snap, func(m []byte) []byte {
		m = append([]byte(nil), m...)
		if c := m[len(m)-1]; c < '9' {
			m[len(m)-1] = c + 1
		} else {
			m[len(m)-1] = '1'
		}
		return m
	})
	_, err = db.Exec(`UPDATE state SET snapshot = ?`, bad)
	require.NoError(t, err)
	require.NoError(t, db.Close())

	out, err = runCLI(t, "status", "--store", st)
	require.NoError(t, err, "status opens a damaged store")
	require.Contains(t, out, "DAMAGED: store is damaged: the state: its checksum does not match")
	for _, v := range strings.Split(string(w), ",") {
		require.NotContains(t, out, v, "status printed a value of the state")
	}
	_, err = runCLI(t, "status", "--store", st, "--check")
	require.ErrorContains(t, err, "the state")
	_, err = runCLI(t, "release", "--store", st, "--epsilon", "1", "--delta", "1e-5", "--out", filepath.Join(t.TempDir(), "r.json"),
		"--certificate", filepath.Join(t.TempDir(), "c.json"))
	require.ErrorContains(t, err, "store is damaged")
	_, err = runCLI(t, "forget", "--store", st, "--ids", "3")
	require.ErrorContains(t, err, "store is damaged")
	out, err = runCLI(t, "forget", "--store", st, "--resolve")
	require.NoError(t, err, out)
	require.Contains(t, out, "rebuild of the damaged state")
	out, err = runCLI(t, "status", "--store", st, "--check")
	require.NoError(t, err, out)
	require.Contains(t, out, "check: OK")

	db = rawStore(t, st)
	_, err = db.Exec(`UPDATE releases SET file = CAST(replace(file, '1', '2') AS BLOB)`)
	require.NoError(t, err)
	require.NoError(t, db.Close())
	out, err = runCLI(t, "releases", "--store", st)
	require.NoError(t, err)
	require.Contains(t, out, "DAMAGED")
	got := filepath.Join(t.TempDir(), "got.json")
	_, err = runCLI(t, "releases", "--store", st, "--get", "1", "--out", got)
	require.ErrorContains(t, err, "kept release 1: its checksum does not match")
	_, err = os.Stat(got)
	require.ErrorIs(t, err, os.ErrNotExist, "a damaged release was written")

	_, err = runCLI(t, "status", "--store", st, "--check")
	require.ErrorContains(t, err, "kept release 1")
}

// rawStore opens a store's database with the driver alone, as a tool
// would.
func rawStore(t *testing.T, st string) *sql.DB {
	t.Helper()
	u := url.URL{Scheme: "file", Path: filepath.ToSlash(filepath.Join(st, store.FileName))}
	db, err := sql.Open("sqlite", u.String())
	require.NoError(t, err)
	return db
}

// TestIngestResumesCLI: ingest reports every committed batch on standard
// error with its line and the log head; rerunning the same command after a
// partial ingest skips what the log holds and ingests the rest; the
// resolution policy set at init resolves a pending request once due.
func TestIngestResumesCLI(t *testing.T) {
	dir := t.TempDir()
	in := filepath.Join(dir, "l.jsonl")
	_, err := runCLI(t, "gen", "--kind", "logistic", "--events", "60", "--d", "3", "--seed", "2", "--out", in)
	require.NoError(t, err)
	st := filepath.Join(dir, "model")
	out, err := runCLI(t, "init", "--store", st, "--header", in, "--tau", "3", "--checkpoint-every", "10", "--radius", "5", "--sample-bound", "10",
		"--resolve-after-events", "10")
	require.NoError(t, err, out)
	require.Contains(t, out, "resolution policy: resolve pending approximate requests once 10 events were ingested after the oldest")
	// A partial file: its first 31 lines (the header and 30 events).
	lines := strings.SplitAfter(string(readFile(t, in)), "\n")
	part := filepath.Join(dir, "part.jsonl")
	require.NoError(t, os.WriteFile(part, []byte(strings.Join(lines[:31], "")), 0o644))
	out, err = runCLI(t, "ingest", "--store", st, "--batch", "12", part)
	require.NoError(t, err, out)
	require.Contains(t, out, "committed: 12 events of "+part+" through line 13, log head at seq 12")
	require.Contains(t, out, "committed: 30 events of "+part+" through line 31, log head at seq 30")

	out, err = runCLI(t, "forget", "--store", st, "--ids", "5", "--max-replay", "1", "--intervention", "noop", "--epsilon", "1", "--delta", "1e-5", "--no-ledger")
	require.NoError(t, err, out)
	out, err = runCLI(t, "status", "--store", st)
	require.NoError(t, err, out)
	require.Contains(t, out, "request 1 is pending: resolved after 10 more events")

	out, err = runCLI(t, "ingest", "--store", st, "--batch", "12", in)
	require.NoError(t, err, out)
	require.Contains(t, out, in+": 30 events in 3 transactions")
	require.Contains(t, out, "skipped 29 events already in the log")
	require.Contains(t, out, "skipped 1 event of forgotten ids")
	require.Contains(t, out, "resolution policy: request 2 resolved pending approximate request 1 by exact replay")
	out, err = runCLI(t, "status", "--store", st, "--check")
	require.NoError(t, err, out)
	require.Contains(t, out, "the state is exact")
	require.Contains(t, out, "check: OK")
}

// TestEvaluatePendingCLI: with a pending approximate request of schema 6
// the current state is the noised release continued, and evaluate says so;
// a store whose pending request predates schema 6 (its state holds the
// deleted sample's influence un-noised) is refused unless --operator-only,
// which labels the output.
func TestEvaluatePendingCLI(t *testing.T) {
	dir := t.TempDir()
	in := filepath.Join(dir, "l.jsonl")
	_, err := runCLI(t, "gen", "--kind", "logistic", "--events", "60", "--d", "3", "--seed", "2", "--out", in)
	require.NoError(t, err)
	for _, legacy := range []bool{false, true} {
		st := filepath.Join(dir, fmt.Sprintf("model-%v", legacy))
		_, err = runCLI(t, "init", "--store", st, "--header", in, "--tau", "3", "--checkpoint-every", "10", "--radius", "5", "--sample-bound", "10")
		require.NoError(t, err)
		_, err = runCLI(t, "ingest", "--store", st, in)
		require.NoError(t, err)
		if !legacy {
			_, err = runCLI(t, "forget", "--store", st, "--ids", "5", "--max-replay", "1", "--intervention", "noop", "--epsilon", "1", "--delta", "1e-5", "--no-ledger")
			require.NoError(t, err)
			out, err := runCLI(t, "evaluate", "--store", st, "--data", in)
			require.NoError(t, err, out)
			require.Contains(t, out, "current state (noised)")
			require.Contains(t, out, "depend on the deleted samples only through that certified release")
			continue
		}
		// A schema-5 noop forget of id 5: the payload NULL, the
		// checkpoints from seq 5 on inexact, the state as it was.
		db := rawStore(t, st)
		for _, q := range []string{
			`ALTER TABLE events DROP COLUMN sha256`, `ALTER TABLE checkpoints DROP COLUMN sha256`, `ALTER TABLE state DROP COLUMN sha256`,
			`ALTER TABLE releases DROP COLUMN sha256`, `ALTER TABLE keys DROP COLUMN sha256`, `ALTER TABLE forget_requests DROP COLUMN sha256`,
			`ALTER TABLE forget_requests DROP COLUMN noised`, `ALTER TABLE forget_requests DROP COLUMN release`, `ALTER TABLE forget_requests DROP COLUMN alpha_source`,
			`ALTER TABLE forget_requests DROP COLUMN alpha`, `ALTER TABLE forget_requests DROP COLUMN sigma`, `ALTER TABLE forget_requests DROP COLUMN epsilon`,
			`ALTER TABLE forget_requests DROP COLUMN delta`, `ALTER TABLE forget_requests DROP COLUMN disclosed_ages`, `ALTER TABLE forget_requests DROP COLUMN head`,
			`DROP TABLE forget_queue`, `DROP TABLE tokens`,
			`DELETE FROM meta WHERE key = 'config_sha256'`, `DELETE FROM schema_migrations WHERE version >= 6`,
			`UPDATE events SET payload = NULL WHERE id = 5`, `UPDATE checkpoints SET exact = 0 WHERE seq >= 5`, `UPDATE state SET exact = 0`,
			`INSERT INTO forget_requests (time, ids, path, reason, from_seq, events_replayed, wall_ns, intervention, ages, u_size, needs_noise, erased_releases)
				VALUES ('2026-01-01T00:00:00Z', '[5]', 'approximate', 'capped', 0, 0, 0, 'noop', '[55]', 1, 1, '[]')`,
			`INSERT INTO forgotten (id, request) VALUES (5, 1)`,
		} {
			_, err := db.Exec(q)
			require.NoError(t, err, q)
		}
		require.NoError(t, db.Close())
		out, err := runCLI(t, "status", "--store", st)
		require.NoError(t, err, out)
		require.Contains(t, out, "served before schema 6: the state and its checkpoints keep the deleted samples' influence UN-NOISED")
		_, err = runCLI(t, "evaluate", "--store", st, "--data", in)
		require.ErrorContains(t, err, "--operator-only")
		out, err = runCLI(t, "evaluate", "--store", st, "--data", in, "--operator-only")
		require.NoError(t, err, out)
		require.Contains(t, out, "OPERATOR ONLY")
		require.Contains(t, out, "current state (OPERATOR ONLY)")
	}
}

// TestLostJournalIndexCLI: the log's index on id as it was 10 events ago
// (a crash whose rollback journal was lost): forget of an id the index
// lost is refused as a damaged store, never answered "never ingested";
// ingest appends nothing; status --check runs SQLite's integrity check and
// fails.
func TestLostJournalIndexCLI(t *testing.T) {
	dir := t.TempDir()
	in := filepath.Join(dir, "l.jsonl")
	_, err := runCLI(t, "gen", "--kind", "logistic", "--events", "60", "--d", "3", "--seed", "2", "--out", in)
	require.NoError(t, err)
	lines := strings.SplitAfter(string(readFile(t, in)), "\n")
	first, second, more := filepath.Join(dir, "a.jsonl"), filepath.Join(dir, "b.jsonl"), filepath.Join(dir, "c.jsonl")
	require.NoError(t, os.WriteFile(first, []byte(strings.Join(lines[:51], "")), 0o644))
	require.NoError(t, os.WriteFile(second, []byte(lines[0]+strings.Join(lines[51:56], "")), 0o644))
	require.NoError(t, os.WriteFile(more, []byte(lines[0]+strings.Join(lines[56:], "")), 0o644))
	st := filepath.Join(dir, "model")
	_, err = runCLI(t, "init", "--store", st, "--header", in, "--tau", "3")
	require.NoError(t, err)
	_, err = runCLI(t, "ingest", "--store", st, first)
	require.NoError(t, err)
	page := func() (off, size int64) {
		db := rawStore(t, st)
		defer db.Close()
		var root int64
		require.NoError(t, db.QueryRow(`SELECT rootpage FROM sqlite_master WHERE name = 'sqlite_autoindex_events_1'`).Scan(&root))
		require.NoError(t, db.QueryRow(`PRAGMA page_size`).Scan(&size))
		return (root - 1) * size, size
	}
	off, size := page()
	file := filepath.Join(st, store.FileName)
	saved := append([]byte(nil), readFile(t, file)[off:off+size]...)
	_, err = runCLI(t, "ingest", "--store", st, second)
	require.NoError(t, err)
	b := readFile(t, file)
	copy(b[off:off+size], saved)
	require.NoError(t, os.WriteFile(file, b, 0o600))

	_, err = runCLI(t, "forget", "--store", st, "--ids", "53")
	require.ErrorContains(t, err, "store is damaged")
	require.ErrorContains(t, err, "index", "the damaged index is named")
	require.NotContains(t, err.Error(), "never ingested")
	_, err = runCLI(t, "ingest", "--store", st, more)
	require.ErrorContains(t, err, "store is damaged")
	_, err = runCLI(t, "status", "--store", st, "--check")
	require.ErrorContains(t, err, "SQLite's integrity_check")
}
