package store

import (
	"context"
	"database/sql"
	"fmt"
	"net/url"
	"path/filepath"
	"time"

	_ "modernc.org/sqlite" // the pure-Go SQLite driver, registered as "sqlite"
)

// FileName is the database file inside a store directory.
const FileName = "store.db"

// SchemaVersion is the newest schema this package writes and reads. Open
// applies the missing migrations of an older store in one transaction and
// refuses a newer one (ErrSchema).
const SchemaVersion = 8

// Pragmas are the per-connection SQLite settings of every store connection,
// in the order they are applied (https://sqlite.org/pragma.html):
//
//   - page_size=16384: set when the store is created (and kept by VACUUM).
//     Against the default 4096, a forget's replay reads the log in a quarter
//     of the page reads and its VACUUM ran 3–4 times faster at d = 100
//     (docs/performance.md).
//   - journal_mode=DELETE: a rollback journal that is unlinked at every
//     commit. With WAL, the pages a forget deletes would live on as frames of
//     the -wal file until a checkpoint; with a rollback journal the old pages
//     exist only in the journal of the forget's own transaction, which is
//     deleted when it commits, so no file of the store directory holds them
//     afterwards. A store has one writer, so WAL's concurrent readers buy
//     nothing here.
//   - synchronous=FULL: with a rollback journal, the setting that makes a
//     committed transaction survive power loss (NORMAL is only safe with WAL).
//     Its fsyncs are paid once per ingest batch and per forget.
//   - secure_delete=ON: deleted content is overwritten with zeros in the
//     database file, so an erased payload is not left in a free page or in
//     the unused part of a page.
//   - foreign_keys=ON: SQLite does not enforce REFERENCES clauses otherwise.
//   - temp_store=FILE: VACUUM builds its copy of the database in a
//     temporary file (SQLite unlinks it as soon as it is opened, so it is in
//     no directory, and it holds only data not deleted). In memory, that copy
//     made a forget's peak memory grow with the store (1.1 GB at 5·10⁵
//     events of d = 100), against a constant ≈ 40 MB with a file.
//   - busy_timeout=10000: a second process waits up to 10 s for the lock
//     rather than failing at once.
var Pragmas = []string{
	"page_size(16384)",
	"journal_mode(DELETE)",
	"synchronous(FULL)",
	"secure_delete(ON)",
	"foreign_keys(ON)",
	"temp_store(FILE)",
	"busy_timeout(10000)",
	"cache_spill(4096)",
}

// dsn returns the driver's data source name for the database in dir.
func dsn(dir string) (string, error) {
	abs, err := filepath.Abs(filepath.Join(dir, FileName))
	if err != nil {
		return "", err
	}
	u := url.URL{Scheme: "file", Path: filepath.ToSlash(abs)}
	q := url.Values{}
	for _, p := range Pragmas {
		q.Add("_pragma", p)
	}
	q.Set("_txlock", "immediate") // writers take the lock at BEGIN, not at the first write
	return u.String() + "?" + q.Encode(), nil
}

// migrations[v-1] takes a store from schema version v−1 to v. A migration
// is never edited once released; a change of schema is a new entry.
var migrations = []string{
	// Version 1.
	`
CREATE TABLE meta (
	key   TEXT PRIMARY KEY,
	value TEXT NOT NULL
) STRICT;

-- The event log: every ingested insert, in stream order. seq is assigned at
-- ingest and never reused. payload is the sample (S then V, float64
-- little-endian; from version 5 also the shorter sparse form of
-- store/payload.go); NULL marks an insert whose payload an approximate forget
-- erased (the event stays so that the log still counts the learner's steps).
CREATE TABLE events (
	seq     INTEGER PRIMARY KEY,
	id      INTEGER NOT NULL UNIQUE,
	payload BLOB
) STRICT;

-- Learner snapshots (olbfgs-state/v1): the state after every event with
-- seq <= checkpoints.seq. exact = 1 when it is the replay from θ0 of the
-- stored log up to seq; 0 when an approximate forget left deleted data's
-- influence in it.
CREATE TABLE checkpoints (
	seq      INTEGER PRIMARY KEY,
	exact    INTEGER NOT NULL CHECK (exact IN (0, 1)),
	t        INTEGER NOT NULL,
	origin   TEXT NOT NULL CHECK (origin IN ('init', 'ingest', 'replay', 'intervention')),
	created  TEXT NOT NULL,
	snapshot BLOB NOT NULL
) STRICT;

-- The current state: the replay of the log after the newest checkpoint.
CREATE TABLE state (
	one      INTEGER PRIMARY KEY CHECK (one = 1),
	exact    INTEGER NOT NULL CHECK (exact IN (0, 1)),
	snapshot BLOB NOT NULL
) STRICT;

-- Deletion requests and what serving them cost.
CREATE TABLE forget_requests (
	request         INTEGER PRIMARY KEY,
	time            TEXT NOT NULL,
	ids             TEXT NOT NULL,  -- JSON array, ascending
	path            TEXT NOT NULL CHECK (path IN ('exact', 'approximate')),
	reason          TEXT NOT NULL,
	from_seq        INTEGER NOT NULL, -- exact: the checkpoint replayed from
	events_replayed INTEGER NOT NULL,
	wall_ns         INTEGER NOT NULL,
	intervention    TEXT,           -- approximate: the unlearn operator's name
	ages            TEXT,           -- approximate: JSON, update steps since each deleted insert (certify.AgesOf)
	u_size          INTEGER NOT NULL,
	needs_noise     INTEGER NOT NULL CHECK (needs_noise IN (0, 1)),
	resolved_by     INTEGER REFERENCES forget_requests(request) -- a later exact forget that removed its influence
) STRICT;

-- Tombstones: ids forgotten, without payload; a re-insert is refused.
CREATE TABLE forgotten (
	id      INTEGER PRIMARY KEY,
	request INTEGER NOT NULL REFERENCES forget_requests(request)
) STRICT;
`,
	// Version 2: stored releases.
	`
-- Certified releases of the store's state, as published (the release file
-- and its certificate, byte for byte). head is the log position of the
-- released state: it depended on every insert with seq <= head. A forget
-- that deletes an insert with seq <= head deletes the row in its own
-- transaction (the release would carry that sample's influence, uncertified);
-- a release made after an approximate forget of an id covers that deletion
-- with its noise, and the id is never deleted again.
CREATE TABLE releases (
	release     INTEGER PRIMARY KEY,
	time        TEXT NOT NULL,
	head        INTEGER NOT NULL,
	path        TEXT NOT NULL,
	exact       INTEGER NOT NULL CHECK (exact IN (0, 1)),
	epsilon     REAL NOT NULL,
	delta       REAL NOT NULL,
	file        BLOB NOT NULL,
	certificate BLOB NOT NULL
) STRICT;
CREATE INDEX releases_head ON releases(head);

-- How many stored releases each request erased (0 for the requests of
-- schema version 1, which stored none).
ALTER TABLE forget_requests ADD COLUMN releases_erased INTEGER NOT NULL DEFAULT 0;
`,
	// Version 3: string keys (keys.go).
	`
-- The string keys of ingested events (a CSV file's string id column, such
-- as an e-mail address), one per id and one id per key. Written in the
-- transaction of the ingest batch that introduces the id; deleted in the
-- transaction of the forget that erases the id (secure_delete, then the
-- forget's VACUUM), so that a forgotten key is nowhere in the store. ON
-- DELETE CASCADE is a second line: an event row deleted by any path takes
-- its key with it. WITHOUT ROWID: the key is stored once, in the primary
-- key's b-tree (a rowid table would hold it twice, in the table and in its
-- index): 66 bytes per keyed event of 20-byte keys against 77
-- (docs/performance.md).
CREATE TABLE keys (
	key TEXT PRIMARY KEY,
	id  INTEGER NOT NULL UNIQUE REFERENCES events(id) ON DELETE CASCADE
) STRICT, WITHOUT ROWID;
`,
	// Version 4: release ids are never reused (issue #11); a request
	// records which releases it erased.
	`
-- Before version 4, releases.release was an INTEGER PRIMARY KEY without
-- AUTOINCREMENT: SQLite gives a new row max(rowid) + 1, so after a forget
-- erased the newest kept release its id was given to the next one
-- (https://sqlite.org/autoinc.html). With AUTOINCREMENT the next id is
-- above every id the table ever held (kept in sqlite_sequence). The table
-- is rebuilt (SQLite cannot add AUTOINCREMENT to a column) and the
-- sequence seeded with an upper bound on every id given out before: each
-- id was at most the number of rows inserted until then, and every row
-- ever inserted is either still kept or counted in a request's
-- releases_erased (forget is the only path that deletes a release).
CREATE TABLE releases_v4 (
	release     INTEGER PRIMARY KEY AUTOINCREMENT,
	time        TEXT NOT NULL,
	head        INTEGER NOT NULL,
	path        TEXT NOT NULL,
	exact       INTEGER NOT NULL CHECK (exact IN (0, 1)),
	epsilon     REAL NOT NULL,
	delta       REAL NOT NULL,
	file        BLOB NOT NULL,
	certificate BLOB NOT NULL
) STRICT;
INSERT INTO releases_v4 (release, time, head, path, exact, epsilon, delta, file, certificate)
	SELECT release, time, head, path, exact, epsilon, delta, file, certificate FROM releases;
DROP TABLE releases;
ALTER TABLE releases_v4 RENAME TO releases;
CREATE INDEX releases_head ON releases(head);
DELETE FROM sqlite_sequence WHERE name IN ('releases', 'releases_v4');
INSERT INTO sqlite_sequence (name, seq) VALUES ('releases', max(
	(SELECT COALESCE(max(release), 0) FROM releases),
	(SELECT count(*) FROM releases) + (SELECT COALESCE(sum(releases_erased), 0) FROM forget_requests)));

-- The releases a request erased: a JSON array of {"release", "head",
-- "seq", "id"} (ErasedRelease); NULL for requests served before version 4,
-- which kept only the count.
ALTER TABLE forget_requests ADD COLUMN erased_releases TEXT;
`,
	// Version 5: payloads may be stored sparse (store/payload.go). The
	// tables do not change: version 4 blobs are all dense and read as
	// they are; the version tells a build that knows only the dense form
	// to refuse the store (ErrSchema) instead of failing on a blob.
	`
-- Version 5: events.payload holds the dense or, when shorter, the sparse
-- encoding of the sample (store/payload.go); no table changes.
SELECT 1;
`,
	// Version 6: integrity (checksum.go, integrity.go) and noised
	// approximate forgets (forget.go). The sums of the rows already stored
	// are computed by fillSums, in the migration's transaction.
	`
-- The SHA-256 of each row's content (store/checksum.go), written with the
-- row and verified by every reader that trusts it. NULL only between this
-- statement and fillSums, in the migration's own transaction.
ALTER TABLE events ADD COLUMN sha256 BLOB;
ALTER TABLE checkpoints ADD COLUMN sha256 BLOB;
ALTER TABLE state ADD COLUMN sha256 BLOB;
ALTER TABLE releases ADD COLUMN sha256 BLOB;
ALTER TABLE keys ADD COLUMN sha256 BLOB;

-- An approximate request from version 6 on keeps only a noised state: the
-- intervention's output plus Gaussian noise, a certified release (kept in
-- releases, charged by the caller) from which the store continues. noised =
-- 0 marks a request served before version 6, whose state and checkpoints
-- kept the deleted data's un-noised influence until it is resolved.
-- release is the kept release it published (a later forget may have
-- erased it from releases since); alpha_source, alpha, sigma, epsilon and delta are its
-- certificate's; disclosed_ages the ages its certificate discloses
-- (rounded: docs/trust.md), while ages keeps the exact ones for the
-- operator.
ALTER TABLE forget_requests ADD COLUMN noised INTEGER NOT NULL DEFAULT 0 CHECK (noised IN (0, 1));
ALTER TABLE forget_requests ADD COLUMN release INTEGER;
ALTER TABLE forget_requests ADD COLUMN alpha_source TEXT;
ALTER TABLE forget_requests ADD COLUMN alpha REAL;
ALTER TABLE forget_requests ADD COLUMN sigma REAL;
ALTER TABLE forget_requests ADD COLUMN epsilon REAL;
ALTER TABLE forget_requests ADD COLUMN delta REAL;
ALTER TABLE forget_requests ADD COLUMN disclosed_ages TEXT;
-- The log head when the request was served (NULL before version 6): the
-- resolution policy counts the events ingested since.
ALTER TABLE forget_requests ADD COLUMN head INTEGER;
`,
	// Version 7: the service's deletion queue and access tokens
	// (queue.go, tokens.go), each row with its sum (checksum.go) from the
	// start. (These tables were never released under another version
	// number: the last released schema before them is 5.)
	`
-- Deletion requests acknowledged by the service (serve), served in batches
-- by one forget each. ids (a JSON array, ascending: the request's ids with
-- its keys resolved when it was queued; keys are never stored here) is
-- held only while the request is queued: the transaction of the forget
-- that serves it, or the one that refuses it, sets it to NULL (with
-- secure_delete, then the forget's VACUUM). What stays is what the
-- receipt says: no id, key or payload. commitment binds the request's ids
-- and keys under a nonce only the requester holds (certify.ForgetCommitment).
-- batch is the forget_requests row that recorded it (each request of a
-- batch has its own, sharing one replay: Store.ForgetBatch; NULL when
-- every record of the batch had been forgotten before). receipt is the signed receipt file
-- (certify.SignReceipt). sha256 is the row's sum (sumQueued), rewritten
-- with every change of the row.
CREATE TABLE forget_queue (
	seq        INTEGER PRIMARY KEY AUTOINCREMENT,
	request    TEXT NOT NULL UNIQUE,
	received   TEXT NOT NULL,
	deadline   TEXT NOT NULL,
	ids        TEXT,
	records    INTEGER NOT NULL CHECK (records >= 1),
	commitment TEXT NOT NULL,
	state      TEXT NOT NULL CHECK (state IN ('queued', 'served', 'refused')),
	served     TEXT,
	batch      INTEGER REFERENCES forget_requests(request),
	receipt    BLOB,
	reason     TEXT,
	sha256     BLOB NOT NULL CHECK (length(sha256) = 32),
	CHECK ((state = 'queued') = (ids IS NOT NULL)),
	CHECK ((state = 'served') = (receipt IS NOT NULL))
) STRICT;
CREATE INDEX forget_queue_queued ON forget_queue(state) WHERE state = 'queued';

-- Bearer tokens of the service: only the SHA-256 of each token is stored
-- (the token is shown once, when created). scopes is a comma-separated
-- list; revoked is the time of revocation (NULL: active); sha256 the
-- row's sum (sumToken), not to be confused with hash, the token's.
CREATE TABLE tokens (
	token   INTEGER PRIMARY KEY AUTOINCREMENT,
	name    TEXT NOT NULL,
	hash    BLOB NOT NULL UNIQUE CHECK (length(hash) = 32),
	scopes  TEXT NOT NULL,
	created TEXT NOT NULL,
	revoked TEXT,
	sha256  BLOB NOT NULL CHECK (length(sha256) = 32)
) STRICT;
`,
	// Version 8: the sum of every deletion request row (reqrow.go),
	// computed for the rows already stored by fillRequestSums.
	`
-- The SHA-256 of each forget_requests row (store/reqrow.go: sumRequest),
-- rewritten with every change of the row and verified by every reader.
-- NULL only between this statement and fillRequestSums, and between a
-- request's provisional insert and its completion, in one transaction.
ALTER TABLE forget_requests ADD COLUMN sha256 BLOB CHECK (sha256 IS NULL OR length(sha256) = 32);
`,
}

// migrationHooks[v] runs after migrations[v-1], in the same transaction,
// for what SQL alone cannot do.
var migrationHooks = map[int]func(ctx context.Context, tx *sql.Tx) error{
	6: fillSums,
	8: fillRequestSums,
}

// migrate brings the schema of db up to SchemaVersion in one transaction.
// A store already at SchemaVersion is only read: its write transaction
// (BEGIN IMMEDIATE) would wait for another process's writer, so that
// opening a store to read it — unlearn status during a long ingest — would
// wait for the whole ingest.
func migrate(ctx context.Context, db *sql.DB) error {
	if v, err := schemaVersion(ctx, db); err == nil && v == SchemaVersion {
		return nil
	}
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	if _, err := tx.ExecContext(ctx, `CREATE TABLE IF NOT EXISTS schema_migrations (
	version    INTEGER PRIMARY KEY,
	applied_at TEXT NOT NULL
) STRICT`); err != nil {
		return err
	}
	var v int
	if err := tx.QueryRowContext(ctx, `SELECT COALESCE(MAX(version), 0) FROM schema_migrations`).Scan(&v); err != nil {
		return err
	}
	if v > SchemaVersion {
		return fmt.Errorf("%w: schema version %d, this build knows up to %d", ErrSchema, v, SchemaVersion)
	}
	if v == 6 {
		// A development build numbered the service's tables (now version
		// 7) as version 6, without the integrity sums of version 6.
		var n int
		if err := tx.QueryRowContext(ctx, `SELECT count(*) FROM pragma_table_info('events') WHERE name = 'sha256'`).Scan(&n); err != nil {
			return err
		}
		if n == 0 {
			return fmt.Errorf("%w: schema version 6 of a development build (the service's deletion queue and tokens without the row sums of version 6), which this build cannot upgrade: export the store with the build that wrote it and create it again", ErrSchema)
		}
	}
	for ; v < SchemaVersion; v++ {
		if _, err := tx.ExecContext(ctx, migrations[v]); err != nil {
			return fmt.Errorf("migration to version %d: %w", v+1, err)
		}
		if hook := migrationHooks[v+1]; hook != nil {
			if err := hook(ctx, tx); err != nil {
				return fmt.Errorf("migration to version %d: %w", v+1, err)
			}
		}
		if _, err := tx.ExecContext(ctx, `INSERT INTO schema_migrations (version, applied_at) VALUES (?, ?)`,
			v+1, time.Now().UTC().Format(time.RFC3339Nano)); err != nil {
			return err
		}
	}
	return tx.Commit()
}

// schemaVersion returns the store's schema version.
func schemaVersion(ctx context.Context, db querier) (int, error) {
	var v int
	err := db.QueryRowContext(ctx, `SELECT COALESCE(MAX(version), 0) FROM schema_migrations`).Scan(&v)
	return v, err
}
