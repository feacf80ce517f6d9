package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
)

// The store checks itself before it trusts itself. Two levels:
//
//   - the cheap check (checkCheap), before every forget, resolution and
//     release: SQLite's PRAGMA quick_check (every page of the file is read
//     and its b-tree structure checked), the sums of the configuration,
//     the state, every checkpoint, every kept release, every key, every
//     deletion request (reqrow.go), every row of the service's deletion
//     queue and every token, and the invariants
//     below. Its cost is one read of the file (a forget's
//     VACUUM rewrites it anyway). The payloads' sums are verified where
//     the payloads are read (every replay, a rebuild's retained inserts,
//     an intervention's deleted samples).
//   - the full check (checkFull, Store.Check): PRAGMA integrity_check
//     (which also compares every index with its table), the same sums and
//     invariants, and the replay of the whole log from θ0, which reads —
//     and verifies the sum of — every payload.
//
// The invariants tie the tables together, so that a row deleted by hand
// or lost with a torn write is noticed although no sum covers a row that
// is not there:
//
//   - every sequence number up to the head was given to exactly one id:
//     head = #events + #tombstones whose event row an exact forget deleted
//     (a deleted event row, a deleted tombstone or a lowered head breaks
//     it), and no event lies above the head;
//   - the events index on id agrees with the table (count and a checksum
//     of ids and seqs through each), and so does the keys index;
//   - an event without payload (NULL) was erased by an approximate request
//     that is still pending; an event with a payload is not tombstoned;
//   - every tombstone belongs to a request that lists its id, and the
//     requests list exactly the tombstones (Σ u_size = #tombstones; each
//     request's u_size = the tombstones naming it); each request's own
//     invariants (path, log head, resolution, kept release, α source, α,
//     σ, ε, δ: verifyRequests);
//   - the state is exact exactly when no approximate request is pending,
//     and it has applied every event of the log (t = #events);
//   - θ0 is the checkpoint at seq 0; every checkpoint lies at or below the
//     head and has applied every event up to it (t = #events with seq ≤
//     its seq); every exact checkpoint lies before the oldest erased event;
//   - every kept release lies at or below the head; every key belongs to
//     an event whose payload is in the log;
//   - the service's deletion queue holds ids only for queued requests,
//     as many as each counts, each in the log or forgotten; a refused
//     request says why; a served one's receipt (full check) is its own
//     and names its store request; every token's scopes are words.

// Verify runs the cheap check (the one every forget, resolution and
// release runs first) in a read transaction and returns the first problem
// as a *CorruptError, or nil. A command that only appends — unlearn ingest
// runs it before a file — calls it so that a damaged log (for example an
// index on id that lost entries, which would let a duplicate id in) is not
// made worse. It reads the whole file once.
func (s *Store) Verify() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.db == nil {
		return ErrClosed
	}
	return s.readTx(context.Background(), func(ctx context.Context, tx *sql.Tx) error {
		return s.verify(ctx, tx, checkCheap, false)
	})
}

// checkLevel is how much verify checks.
type checkLevel int

const (
	checkCheap checkLevel = iota
	checkFull
)

// verify runs the checks of level in q (a transaction of the caller, so
// that what it checks is what the caller then uses). allowState tolerates
// a damaged state row (a resolution rebuilds it). It returns the first
// problem as a *CorruptError, or nil.
func (s *Store) verify(ctx context.Context, q querier, level checkLevel, allowState bool) error {
	// The head and the state are read again, not taken from the cache: a
	// change that did not go through the store (no new generation) is
	// checked too.
	if err := s.reloadFrom(ctx, q); err != nil {
		return err
	}
	if s.skipCheck && level == checkCheap {
		return nil
	}
	if err := sqliteCheck(ctx, q, level); err != nil {
		return err
	}
	if s.cfgDamage != nil {
		return s.cfgDamage
	}
	if err := s.verifyConfigSum(ctx, q); err != nil {
		return err
	}
	if s.damage != nil && !allowState {
		return s.damage
	}
	c, err := readLogCounts(ctx, q)
	if err != nil {
		return err
	}
	for _, check := range []func() error{
		func() error { return s.verifyLog(c) },
		func() error { return verifyIndexes(ctx, q, c) },
		func() error { return verifyErased(ctx, q, c) },
		func() error { return verifyTombstones(ctx, q) },
		func() error { return s.verifyRequests(ctx, q) },
		func() error { return s.verifyState(ctx, q, c) },
		func() error { return s.verifyCheckpoints(ctx, q, c, level) },
		func() error { return s.verifyReleases(ctx, q) },
		func() error { return verifyKeys(ctx, q) },
		func() error { return verifyQueue(ctx, q, level) },
		func() error { _, err := tokenRows(ctx, q); return err },
	} {
		if err := check(); err != nil {
			return err
		}
	}
	return nil
}

// sqliteCheck runs PRAGMA quick_check (cheap) or integrity_check (full).
// Their messages name pages, tables and indexes, never row content.
func sqliteCheck(ctx context.Context, q querier, level checkLevel) error {
	pragma := "quick_check"
	if level == checkFull {
		pragma = "integrity_check"
	}
	rows, err := q.QueryContext(ctx, `PRAGMA `+pragma)
	if err != nil {
		return corrupt("the database file", "SQLite's %s could not run: %v", pragma, err)
	}
	defer rows.Close()
	var msgs []string
	for rows.Next() {
		var m string
		if err := rows.Scan(&m); err != nil {
			return err
		}
		if m != "ok" && len(msgs) < 3 {
			msgs = append(msgs, m)
		}
	}
	if err := rows.Err(); err != nil {
		return corrupt("the database file", "SQLite's %s failed: %v", pragma, err)
	}
	if len(msgs) > 0 {
		return corrupt("the database file", "SQLite's %s: %s", pragma, strings.Join(msgs, "; "))
	}
	return nil
}

// readMeta reads every meta row.
func readMeta(ctx context.Context, q querier) (map[string]string, error) {
	rows, err := q.QueryContext(ctx, `SELECT key, value FROM meta`)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrSchema, err)
	}
	defer rows.Close()
	meta := map[string]string{}
	for rows.Next() {
		var k, v string
		if err := rows.Scan(&k, &v); err != nil {
			return nil, err
		}
		meta[k] = v
	}
	return meta, rows.Err()
}

// checkConfigSum compares the configuration's sum in meta with its rows.
func checkConfigSum(meta map[string]string) error {
	want := fmt.Sprintf("%x", sumConfig(meta))
	if got, ok := meta["config_sha256"]; !ok || got != want {
		return corrupt("the store's configuration (meta)", "its checksum does not match the header, learner and settings stored")
	}
	return nil
}

func (s *Store) verifyConfigSum(ctx context.Context, q querier) error {
	meta, err := readMeta(ctx, q)
	if err != nil {
		return err
	}
	return checkConfigSum(meta)
}

// logCounts are the aggregates of the events table the invariants use,
// read in one scan of the table (and one of its index on id).
type logCounts struct {
	events, live, deletedTombstones int64
	maxSeq, minErased               int64 // minErased −1: nothing erased
	// table and index are the count and two checksums of (id, seq) read
	// through the table and through its index on id.
	table, index [3]int64
}

func readLogCounts(ctx context.Context, q querier) (logCounts, error) {
	var c logCounts
	const agg = `count(*), COALESCE(sum(id % 1000000007), 0), COALESCE(sum((id % 1000003) * 31 + seq % 1000000007), 0)`
	err := q.QueryRowContext(ctx, `SELECT count(payload), COALESCE(max(seq), 0), COALESCE(min(CASE WHEN payload IS NULL THEN seq END), -1), `+agg+`
		FROM events NOT INDEXED`).Scan(&c.live, &c.maxSeq, &c.minErased, &c.table[0], &c.table[1], &c.table[2])
	if err != nil {
		return c, err
	}
	c.events = c.table[0]
	if err := q.QueryRowContext(ctx, `SELECT `+agg+` FROM events INDEXED BY sqlite_autoindex_events_1`).Scan(&c.index[0], &c.index[1], &c.index[2]); err != nil {
		return c, corrupt("the index of the log on id", "unreadable: %v", err)
	}
	err = q.QueryRowContext(ctx, `SELECT count(*) FROM forgotten f WHERE NOT EXISTS (SELECT 1 FROM events e WHERE e.id = f.id)`).Scan(&c.deletedTombstones)
	return c, err
}

// verifyLog checks the head against the log and the tombstones.
func (s *Store) verifyLog(c logCounts) error {
	switch {
	case c.maxSeq > s.head:
		return corrupt("the log", "an event has seq %d, above the log head %d", c.maxSeq, s.head)
	case c.events+c.deletedTombstones != s.head:
		return corrupt("the log", "the head is %d, but the log holds %d events and %d ids were deleted from it (an event row or a tombstone is missing, or the head was changed)",
			s.head, c.events, c.deletedTombstones)
	}
	return nil
}

// verifyIndexes compares the events and keys tables with their indexes on
// id: the count and a checksum of (id, seq) read through each.
func verifyIndexes(ctx context.Context, q querier, c logCounts) error {
	if c.table != c.index {
		return corrupt("the index of the log on id", "it does not agree with the log (%d entries, %d rows): rebuild it with REINDEX after a backup, then run 'unlearn status --check'", c.index[0], c.table[0])
	}
	// keys is WITHOUT ROWID: reading sha256 (not in the id index) scans
	// the table itself.
	const kagg = `count(*), COALESCE(sum(id % 1000000007), 0)`
	var ka, kb [2]int64
	if err := q.QueryRowContext(ctx, `SELECT `+kagg+`, COALESCE(sum(length(sha256)), 0) FROM keys`).Scan(&ka[0], &ka[1], new(int64)); err != nil {
		return err
	}
	if err := q.QueryRowContext(ctx, `SELECT `+kagg+` FROM keys INDEXED BY sqlite_autoindex_keys_2`).Scan(&kb[0], &kb[1]); err != nil {
		return corrupt("the index of the keys on id", "unreadable: %v", err)
	}
	if ka != kb {
		return corrupt("the index of the keys on id", "it does not agree with the keys table (%d entries, %d rows)", kb[0], ka[0])
	}
	return nil
}

// verifyErased checks that every erased payload was erased by a pending
// approximate request, and that no tombstoned id has a payload. Both are
// read from the tombstones' side (through the index on id), so that the
// log is not scanned again: the erased rows explained by a pending
// request must be all of them (their count is the scan's).
func verifyErased(ctx context.Context, q querier, c logCounts) error {
	var explained int64
	if err := q.QueryRowContext(ctx, `SELECT count(*) FROM forgotten f JOIN events e ON e.id = f.id JOIN forget_requests r ON r.request = f.request
		WHERE e.payload IS NULL AND r.path = 'approximate' AND r.resolved_by IS NULL`).Scan(&explained); err != nil {
		return err
	}
	if erased := c.events - c.live; explained != erased {
		var seq, id int64
		err := q.QueryRowContext(ctx, `SELECT e.seq, e.id FROM events e
			LEFT JOIN forgotten f ON f.id = e.id LEFT JOIN forget_requests r ON r.request = f.request
			WHERE e.payload IS NULL AND (r.request IS NULL OR r.path != 'approximate' OR r.resolved_by IS NOT NULL) LIMIT 1`).Scan(&seq, &id)
		if err != nil {
			return corrupt("the log", "%d payloads are NULL, but pending approximate requests erased %d", erased, explained)
		}
		return corrupt(fmt.Sprintf("event seq %d (id %d)", seq, id), "its payload is NULL, but no pending approximate request erased it")
	}
	var seq, id, req int64
	err := q.QueryRowContext(ctx, `SELECT e.seq, e.id, f.request FROM forgotten f JOIN events e ON e.id = f.id WHERE e.payload IS NOT NULL LIMIT 1`).Scan(&seq, &id, &req)
	if err == nil {
		return corrupt(fmt.Sprintf("event seq %d (id %d)", seq, id), "request %d forgot the id, but its payload is in the log", req)
	} else if !errors.Is(err, sql.ErrNoRows) {
		return err
	}
	return nil
}

// verifyTombstones checks that the requests list exactly the tombstones.
func verifyTombstones(ctx context.Context, q querier) error {
	var tomb, usize, listed int64
	if err := q.QueryRowContext(ctx, `SELECT (SELECT count(*) FROM forgotten), (SELECT COALESCE(sum(u_size), 0) FROM forget_requests),
		(SELECT count(*) FROM forget_requests r, json_each(r.ids) j JOIN forgotten f ON f.id = j.value AND f.request = r.request)`).Scan(&tomb, &usize, &listed); err != nil {
		return corrupt("the deletion requests", "unreadable: %v", err)
	}
	var req int64
	err := q.QueryRowContext(ctx, `SELECT request FROM forget_requests WHERE json_array_length(ids) != u_size LIMIT 1`).Scan(&req)
	if err == nil {
		return corrupt(fmt.Sprintf("deletion request %d", req), "its id list and its size disagree")
	} else if !errors.Is(err, sql.ErrNoRows) {
		return err
	}
	if tomb != usize || listed != tomb {
		return corrupt("the tombstones", "%d forgotten ids are recorded, the requests forgot %d and list %d of them (a tombstone or a request is missing)", tomb, usize, listed)
	}
	return nil
}

// pendingCount is the number of approximate requests not resolved.
func pendingCount(ctx context.Context, q querier) (int, error) {
	var n int
	err := q.QueryRowContext(ctx, `SELECT count(*) FROM forget_requests WHERE needs_noise = 1 AND resolved_by IS NULL`).Scan(&n)
	return n, err
}

// verifyState checks the state against the requests and the log (its sum
// was verified when it was read: s.damage).
func (s *Store) verifyState(ctx context.Context, q querier, c logCounts) error {
	if s.damage != nil {
		return nil // tolerated by the caller (a resolution rebuilds the state)
	}
	n, err := pendingCount(ctx, q)
	if err != nil {
		return err
	}
	if (n > 0) == s.exact {
		return corrupt("the state", "it is marked %s, but %d approximate requests are pending", map[bool]string{true: "exact", false: "inexact"}[s.exact], n)
	}
	if int64(s.state.T()) != c.events {
		return corrupt("the state", "it has applied %d events, the log holds %d", s.state.T(), c.events)
	}
	return nil
}

// verifyCheckpoints checks every checkpoint's sum and position; the full
// check also counts the events up to each (one more pass over the log).
func (s *Store) verifyCheckpoints(ctx context.Context, q querier, c logCounts, level checkLevel) error {
	count := `0`
	if level == checkFull {
		// The events between consecutive checkpoints, counted once each.
		count = `(SELECT count(*) FROM events e WHERE e.seq <= c.seq AND e.seq > COALESCE((SELECT max(p.seq) FROM checkpoints p WHERE p.seq < c.seq), -1))`
	}
	rows, err := q.QueryContext(ctx, `SELECT c.seq, c.exact, c.t, c.origin, c.snapshot, c.sha256, `+count+` FROM checkpoints c ORDER BY c.seq`)
	if err != nil {
		return err
	}
	defer rows.Close()
	var applied int64
	first := true
	for rows.Next() {
		var r ckptRow
		var between int64
		if err := rows.Scan(&r.seq, &r.exact, &r.t, &r.origin, &r.snap, &r.sum, &between); err != nil {
			return err
		}
		where := fmt.Sprintf("checkpoint at seq %d", r.seq)
		if err := r.check(); err != nil {
			return err
		}
		if first && (r.seq != 0 || !r.exact || r.origin != "init") {
			return corrupt("checkpoint θ0", "no exact checkpoint of origin init at seq 0")
		}
		first = false
		applied += between
		switch {
		case r.seq > s.head:
			return corrupt(where, "above the log head %d", s.head)
		case level == checkFull && int64(r.t) != applied:
			return corrupt(where, "it has applied %d events, the log holds %d up to it", r.t, applied)
		case int64(r.t) > c.events:
			return corrupt(where, "it has applied %d events, the log holds %d", r.t, c.events)
		case r.exact && c.minErased >= 0 && r.seq >= c.minErased:
			return corrupt(where, "it is marked exact, but the event at seq %d before it was erased", c.minErased)
		}
	}
	if first {
		return corrupt("checkpoint θ0", "the store holds no checkpoint")
	}
	return rows.Err()
}

// verifyReleases checks every kept release's sum and position.
func (s *Store) verifyReleases(ctx context.Context, q querier) error {
	rows, err := q.QueryContext(ctx, `SELECT release, time, head, path, exact, epsilon, delta, file, certificate, sha256 FROM releases`)
	if err != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
		var r StoredRelease
		var tm string
		var exact int
		var sum []byte
		if err := rows.Scan(&r.ID, &tm, &r.Head, &r.Path, &exact, &r.Epsilon, &r.Delta, &r.File, &r.Certificate, &sum); err != nil {
			return err
		}
		if !sameSum(sum, sumRelease(r.ID, tm, r.Head, r.Path, exact == 1, r.Epsilon, r.Delta, r.File, r.Certificate)) {
			return corrupt(fmt.Sprintf("kept release %d", r.ID), "its checksum does not match its content")
		}
		if r.Head > s.head {
			return corrupt(fmt.Sprintf("kept release %d", r.ID), "its log position %d is above the log head %d", r.Head, s.head)
		}
	}
	return rows.Err()
}

// verifyKeys checks every key's sum, and that it belongs to an event whose
// payload is in the log (none of a forgotten id is left).
func verifyKeys(ctx context.Context, q querier) error {
	rows, err := q.QueryContext(ctx, `SELECT k.key, k.id, k.sha256, e.payload IS NOT NULL FROM keys k LEFT JOIN events e ON e.id = k.id`)
	if err != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
		var key string
		var id int64
		var sum []byte
		var live sql.NullBool
		if err := rows.Scan(&key, &id, &sum, &live); err != nil {
			return err
		}
		if !sameSum(sum, sumKey(key, id)) {
			return corrupt(fmt.Sprintf("the key of id %d", id), "its checksum does not match its content")
		}
		if !live.Valid || !live.Bool {
			return corrupt(fmt.Sprintf("the key of id %d", id), "id %d has no payload in the log (a forgotten id's key would be left)", id)
		}
	}
	return rows.Err()
}
