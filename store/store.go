package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"time"

	"unlearn/olbfgs"
	"unlearn/stream"
)

// DefaultCheckpointEvery is the checkpoint interval K used when
// Config.CheckpointEvery is 0.
const DefaultCheckpointEvery = 10000

// Config describes a new store (see [Create]).
type Config struct {
	// Header is the stream header that defines the loss (kind, d and the
	// loss constants). Required. Every ingested stream must have the same
	// kind, d and constants; its metadata may differ.
	Header stream.Header
	// Learner is the o-LBFGS configuration (τ, η, γ0, curvature tolerance,
	// and the options of docs/spec.md §2.1, each part of the state the
	// store's replay reproduces). Required; Learner.Dim must equal
	// Header.D (the feature dimension), and Learner.Outputs the header's
	// number of classes for a multinomial loss (olbfgs.Config.ForLoss).
	Learner olbfgs.Config
	// CheckpointEvery is K ≥ 1: a checkpoint is stored after every event
	// whose sequence number is a multiple of K. If 0, it defaults to
	// DefaultCheckpointEvery.
	CheckpointEvery int
	// Resolve is the resolution policy (ResolvePolicy; SetResolvePolicy
	// changes it later). The zero value resolves nothing on its own.
	Resolve ResolvePolicy
	// ClipToBound makes ingest scale every inserted payload whose norm
	// exceeds the learner's sample bound B onto the ball of radius B
	// (olbfgs.Config.ClipToBound) before it is logged and applied, instead
	// of refusing the row; the log holds the clipped row, so a replay
	// reproduces it. It needs Learner.SampleBound > 0. The certifiable
	// profile sets it (docs/theory.md §16.10): the clip is a map of the
	// row alone, so B stays a fact of every logged row.
	ClipToBound bool
}

// Store is a live o-LBFGS learner on disk: its event log, periodic
// checkpoints, the current state and the record of deletion requests, in one
// SQLite database in a directory. Methods are safe for concurrent use (they
// are serialized); two processes may open the same store, and SQLite's locks
// serialize their transactions.
type Store struct {
	mu   sync.Mutex
	db   *sql.DB
	dir  string
	hdr  stream.Header
	hraw json.RawMessage // the header's JSON, spliced into stored snapshots
	loss stream.Loss
	cfg  olbfgs.Config
	k    int64

	// Cached from the database; reloaded after a failed transaction and
	// when another process has committed since (meta "generation").
	gen    int64
	loaded bool  // the cache holds the database's state
	head   int64 // the largest seq ever assigned (never reused)
	state  *olbfgs.Learner
	exact  bool

	// damage is set when the state row fails its sum or does not decode
	// (state is then nil): the store opens, Status says what is wrong,
	// Resolve rebuilds the state from a checkpoint and the log, and every
	// other method that needs the state refuses with it. cfgDamage is set
	// when the configuration's sum fails: nothing but Status runs.
	damage    *CorruptError
	cfgDamage *CorruptError
	policy    ResolvePolicy
	clip      bool      // Config.ClipToBound
	clipBuf   []float64 // the clipped payload of the insert being ingested

	// skipCheck (tests only) skips the cheap check's scans on this handle;
	// the state is still re-read. TestReleaseHeadRace probes a race between
	// two handles that the check's read of the whole file would only slow.
	skipCheck bool

	// owner is this handle's lock on OwnerFile (owner.go): exclusive after
	// Own, shared after its first write otherwise; nil before.
	owner *ownerLock
}

// Create makes a new store in dir (created if missing, mode 0700) for the
// given configuration, holding θ0 as its first checkpoint. It returns an
// error wrapping ErrExists if dir already holds a store, and a
// *OptionError or *olbfgs.ConfigError for a bad configuration.
func Create(dir string, c Config) (*Store, error) {
	if c.CheckpointEvery == 0 {
		c.CheckpointEvery = DefaultCheckpointEvery
	}
	if c.CheckpointEvery < 1 {
		return nil, &OptionError{Option: "CheckpointEvery", Value: c.CheckpointEvery, Want: "must be at least 1"}
	}
	if err := c.Resolve.validate(); err != nil {
		return nil, err
	}
	if c.ClipToBound && !(c.Learner.SampleBound > 0) {
		return nil, &OptionError{Option: "ClipToBound", Value: true, Want: "needs a sample bound (Learner.SampleBound > 0) to clip to"}
	}
	loss, err := c.Header.Loss()
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrHeader, err)
	}
	if c.Learner.Dim != c.Header.D {
		return nil, &OptionError{Option: "Learner.Dim", Value: c.Learner.Dim, Want: fmt.Sprintf("must equal the header's d = %d", c.Header.D)}
	}
	l, err := olbfgs.New(c.Learner, loss)
	if err != nil {
		return nil, err
	}
	hraw, err := json.Marshal(c.Header)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrHeader, err)
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("store: %w", err)
	}
	if _, err := os.Stat(filepath.Join(dir, FileName)); err == nil {
		return nil, fmt.Errorf("store: %s: %w", dir, ErrExists)
	} else if !errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("store: %w", err)
	}
	db, err := openDB(dir)
	if err != nil {
		return nil, err
	}
	s := &Store{db: db, dir: dir, hdr: c.Header, hraw: hraw, loss: loss, cfg: c.Learner, k: int64(c.CheckpointEvery), state: l, exact: true, policy: c.Resolve, clip: c.ClipToBound}
	if err := s.initialize(); err != nil {
		db.Close()
		return nil, err
	}
	s.loaded = true
	return s, nil
}

// learnerJSON is the stored form of olbfgs.Config (meta "learner"): its
// fields in Config's order, the options omitted when off, so that the
// paper's learner is stored as before they existed.
type learnerJSON struct {
	Dim            int     `json:"d"`
	Outputs        int     `json:"outputs,omitempty"`
	Memory         int     `json:"tau"`
	StepSize       float64 `json:"eta"`
	InitialScale   float64 `json:"gamma0"`
	CurvatureTol   float64 `json:"curvature_tol"`
	Radius         float64 `json:"radius,omitempty"`
	SampleBound    float64 `json:"sample_bound,omitempty"`
	PairAngle      float64 `json:"pair_angle,omitempty"`
	PairMin        float64 `json:"pair_min,omitempty"`
	PairMax        float64 `json:"pair_max,omitempty"`
	Intercept      bool    `json:"intercept,omitempty"`
	RidgeIntercept bool    `json:"ridge_intercept,omitempty"`
	Standardize    bool    `json:"standardize,omitempty"`
	Average        bool    `json:"average,omitempty"`
	AverageStart   int     `json:"average_start,omitempty"`
	AveragePower   float64 `json:"average_power,omitempty"`
	Damping        float64 `json:"damping,omitempty"`
	StepDecay      float64 `json:"step_decay,omitempty"`
	StepPower      float64 `json:"step_power,omitempty"`
	Progress       bool    `json:"progress,omitempty"`
}

func (s *Store) initialize() error {
	ctx := context.Background()
	if err := migrate(ctx, s.db); err != nil {
		return fmt.Errorf("store: %w", err)
	}
	lj, err := json.Marshal(learnerJSON(s.cfg))
	if err != nil {
		return err
	}
	snap, err := s.encodeState(s.state)
	if err != nil {
		return err
	}
	meta := map[string]string{
		"header":           string(s.hraw),
		"learner":          string(lj),
		"checkpoint_every": strconv.FormatInt(s.k, 10),
		"head":             "0",
		"generation":       "0",
		"created":          now(),
	}
	s.policy.meta(meta)
	if s.clip {
		meta["clip_to_bound"] = "true"
	}
	meta["config_sha256"] = fmt.Sprintf("%x", sumConfig(meta))
	return s.inTxAnyWriter(ctx, func(tx *sql.Tx) error {
		for k, v := range meta {
			if _, err := tx.Exec(`INSERT INTO meta (key, value) VALUES (?, ?)`, k, v); err != nil {
				return err
			}
		}
		if err := writeCheckpoint(tx, 0, true, 0, "init", snap); err != nil {
			return err
		}
		_, err := tx.Exec(`INSERT INTO state (one, exact, snapshot, sha256) VALUES (1, 1, ?, ?)`, snap, sumState(true, 0, snap))
		return err
	})
}

// Open opens the store in dir. It returns an error wrapping ErrNotStore if
// dir holds none, and ErrSchema if the store's schema is newer than this
// package's or its metadata is damaged. An older schema is migrated.
func Open(dir string) (*Store, error) {
	if _, err := os.Stat(filepath.Join(dir, FileName)); err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, fmt.Errorf("store: %s: %w (it holds no %s)", dir, ErrNotStore, FileName)
		}
		return nil, fmt.Errorf("store: %w", err)
	}
	db, err := openDB(dir)
	if err != nil {
		return nil, err
	}
	s := &Store{db: db, dir: dir}
	if err := s.load(); err != nil {
		db.Close()
		return nil, fmt.Errorf("store: %s: %w", dir, err)
	}
	return s, nil
}

func openDB(dir string) (*sql.DB, error) {
	name, err := dsn(dir)
	if err != nil {
		return nil, fmt.Errorf("store: %w", err)
	}
	db, err := sql.Open("sqlite", name)
	if err != nil {
		return nil, fmt.Errorf("store: %w", err)
	}
	// One connection: the store is one writer, and the per-connection
	// PRAGMAs then hold for every statement.
	db.SetMaxOpenConns(1)
	db.SetMaxIdleConns(1)
	db.SetConnMaxLifetime(0)
	if err := db.Ping(); err != nil {
		db.Close()
		return nil, fmt.Errorf("store: %w: %w", ErrNotStore, err)
	}
	return db, nil
}

// load reads the metadata and the current state.
func (s *Store) load() error {
	ctx := context.Background()
	var n int
	if err := s.db.QueryRowContext(ctx, `SELECT count(*) FROM sqlite_master WHERE name = 'schema_migrations'`).Scan(&n); err != nil {
		return fmt.Errorf("%w: %w", ErrNotStore, err)
	}
	if n == 0 {
		return fmt.Errorf("%w: no schema", ErrNotStore)
	}
	if err := migrate(ctx, s.db); err != nil {
		return err
	}
	meta, err := readMeta(ctx, s.db)
	if err != nil {
		return err
	}
	for _, k := range []string{"header", "learner", "checkpoint_every", "head", "generation"} {
		if _, ok := meta[k]; !ok {
			return fmt.Errorf("%w: meta %q missing (an interrupted init? remove the directory and init again)", ErrSchema, k)
		}
	}
	if err := json.Unmarshal([]byte(meta["header"]), &s.hdr); err != nil {
		return fmt.Errorf("%w: meta \"header\": %w", ErrSchema, err)
	}
	s.hraw = json.RawMessage(meta["header"])
	if s.loss, err = s.hdr.Loss(); err != nil {
		return fmt.Errorf("%w: meta \"header\": %w", ErrSchema, err)
	}
	var lj learnerJSON
	if err := json.Unmarshal([]byte(meta["learner"]), &lj); err != nil {
		return fmt.Errorf("%w: meta \"learner\": %w", ErrSchema, err)
	}
	s.cfg = olbfgs.Config(lj)
	if err := s.cfg.Validate(); err != nil {
		return fmt.Errorf("%w: meta \"learner\": %w", ErrSchema, err)
	}
	if s.k, err = strconv.ParseInt(meta["checkpoint_every"], 10, 64); err != nil || s.k < 1 {
		return fmt.Errorf("%w: meta \"checkpoint_every\" = %q", ErrSchema, meta["checkpoint_every"])
	}
	if s.policy, err = policyFromMeta(meta); err != nil {
		return err
	}
	switch v, ok := meta["clip_to_bound"]; {
	case !ok:
	case v == "true" && s.cfg.SampleBound > 0:
		s.clip = true
	default:
		return fmt.Errorf("%w: meta \"clip_to_bound\" = %q (with sample bound %v)", ErrSchema, v, s.cfg.SampleBound)
	}
	// A configuration that parses but fails its sum opens (Status says
	// so) and refuses every other use.
	if err := checkConfigSum(meta); err != nil {
		s.cfgDamage = err.(*CorruptError)
	}
	if err := s.reload(ctx); err != nil {
		return err
	}
	s.loaded = true
	return nil
}

// refresh reloads the cache if another process has committed since it was
// read (for the methods that only read).
func (s *Store) refresh(ctx context.Context, q querier) error {
	gen, err := metaInt(ctx, q, "generation")
	if err != nil || gen == s.gen {
		return err
	}
	return s.reloadFrom(ctx, q)
}

// querier is what the readers need of *sql.DB and *sql.Tx.
type querier interface {
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
}

// readTx runs f in one read transaction, after refreshing the cache in it:
// the cache (state, head, exactness) and every query f makes through tx see
// the same committed snapshot of the database. With the rollback journal,
// SQLite takes the shared lock at the transaction's first read and holds it
// to the end, so no other process commits in between
// (https://sqlite.org/lockingv3.html, https://sqlite.org/isolation.html).
// A method that reads several things that must agree (the state and its
// head, the pending requests, the retained inserts) reads them here, never
// in separate autocommit queries.
func (s *Store) readTx(ctx context.Context, f func(ctx context.Context, tx *sql.Tx) error) error {
	tx, err := s.db.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
	if err != nil {
		return fmt.Errorf("store: begin: %w", err)
	}
	defer tx.Rollback()
	if err := s.refresh(ctx, tx); err != nil {
		return err
	}
	if f == nil {
		return nil
	}
	return f(ctx, tx)
}

// metaInt reads an integer from meta.
func metaInt(ctx context.Context, q querier, key string) (int64, error) {
	var v string
	if err := q.QueryRowContext(ctx, `SELECT value FROM meta WHERE key = ?`, key).Scan(&v); err != nil {
		return 0, fmt.Errorf("%w: meta %q: %w", ErrSchema, key, err)
	}
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil {
		return 0, fmt.Errorf("%w: meta %q = %q", ErrSchema, key, v)
	}
	return n, nil
}

// reload reads the generation, the head and the current state from the
// database (after Open, after a failed transaction to drop what it changed
// in memory, and when another process has committed since).
// The reads are one read transaction, so the generation, the head and the
// state are of the same commit.
func (s *Store) reload(ctx context.Context) error {
	tx, err := s.db.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
	if err != nil {
		return fmt.Errorf("store: begin: %w", err)
	}
	defer tx.Rollback()
	return s.reloadFrom(ctx, tx)
}

func (s *Store) reloadFrom(ctx context.Context, q querier) error {
	var err error
	if s.gen, err = metaInt(ctx, q, "generation"); err != nil {
		return err
	}
	if s.head, err = metaInt(ctx, q, "head"); err != nil {
		return err
	}
	s.state, s.damage = nil, nil
	var snap, sum []byte
	var exact int
	err = q.QueryRowContext(ctx, `SELECT exact, snapshot, sha256 FROM state WHERE one = 1`).Scan(&exact, &snap, &sum)
	if errors.Is(err, sql.ErrNoRows) {
		s.damage = &CorruptError{Where: "the state", Why: "the row is missing"}
		return nil
	}
	if err != nil {
		return fmt.Errorf("store: reading the state: %w", err)
	}
	s.exact = exact == 1
	if !sameSum(sum, sumState(s.exact, s.head, snap)) {
		s.damage = &CorruptError{Where: "the state", Why: "its checksum does not match its content and the log head"}
		return nil
	}
	l, err := s.decodeState(snap)
	if err != nil {
		// The decoder's message may hold a value of the state (its ‖w‖),
		// which may depend on deleted data: it is not repeated.
		s.damage = &CorruptError{Where: "the state", Why: "it does not decode as a learner state of this store (for example w outside the learner's radius)"}
		return nil
	}
	s.state = l
	return nil
}

// usable returns the damage that keeps the store from being used, if any.
func (s *Store) usable() error {
	if s.cfgDamage != nil {
		return s.cfgDamage
	}
	if s.damage != nil {
		return s.damage
	}
	return nil
}

// Close closes the database. The store must not be used afterwards.
func (s *Store) Close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.db == nil {
		return nil
	}
	err := s.db.Close()
	s.db = nil
	s.releaseOwner()
	return err
}

// Dir returns the store's directory.
func (s *Store) Dir() string { return s.dir }

// Header returns the stream header that defines the store's loss.
func (s *Store) Header() stream.Header { return s.hdr }

// LearnerConfig returns the learner's configuration.
func (s *Store) LearnerConfig() olbfgs.Config { return s.cfg }

// Loss returns the store's loss.
func (s *Store) Loss() stream.Loss { return s.loss }

// CheckpointEvery returns the checkpoint interval K.
func (s *Store) CheckpointEvery() int { return int(s.k) }

// State returns a copy of the current (un-noised) learner state.
func (s *Store) State() (*olbfgs.Learner, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.db == nil {
		return nil, ErrClosed
	}
	if err := s.readTx(context.Background(), nil); err != nil {
		return nil, err
	}
	if err := s.usable(); err != nil {
		return nil, err
	}
	return s.state.Clone(), nil
}

// inTx runs f in one write transaction and commits it. It first reloads
// the cached state if another process has committed since (the generation
// counter of meta, read under the transaction's lock), and counts its own
// commit in it; on any error the transaction is rolled back and the cached
// state reloaded.
//
// A handle that does not own the store (Own) may write only while no
// service owns it: its first write takes a shared lock on OwnerFile, kept
// until Close, and is refused with an *OwnedError while a service holds it.
func (s *Store) inTx(ctx context.Context, f func(tx *sql.Tx) error) (err error) {
	if err := s.checkWriter(); err != nil {
		return err
	}
	return s.inTxAnyWriter(ctx, f)
}

// inTxAnyWriter is inTx without the owner check: for the tokens, which a
// service reads again on its own, and for Create.
func (s *Store) inTxAnyWriter(ctx context.Context, f func(tx *sql.Tx) error) (err error) {
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("store: begin: %w", err)
	}
	if s.loaded {
		gen, err := metaInt(ctx, tx, "generation")
		if err != nil {
			tx.Rollback()
			return err
		}
		if gen != s.gen {
			if err := s.reloadFrom(ctx, tx); err != nil {
				tx.Rollback()
				return err
			}
		}
	}
	defer func() {
		if err != nil {
			tx.Rollback()
			if s.loaded {
				if rerr := s.reload(ctx); rerr != nil {
					err = errors.Join(err, fmt.Errorf("store: reload after rollback: %w", rerr))
				}
			}
		}
	}()
	if err = f(tx); err != nil {
		return err
	}
	if _, err = tx.Exec(`UPDATE meta SET value = ? WHERE key = 'generation'`, strconv.FormatInt(s.gen+1, 10)); err != nil {
		return err
	}
	if err = tx.Commit(); err != nil {
		return fmt.Errorf("store: commit: %w", err)
	}
	s.gen++
	return nil
}

// encodeState returns the stored form of a learner: its olbfgs-state/v1
// snapshot with the stream header left out (it is in meta; a quadratic
// header holds 2d² numbers).
func (s *Store) encodeState(l *olbfgs.Learner) ([]byte, error) {
	full, err := olbfgs.MarshalSnapshot(l, s.hdr)
	if err != nil {
		return nil, err
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(full, &m); err != nil {
		return nil, err
	}
	m["stream"] = json.RawMessage("null")
	return json.Marshal(m)
}

// decodeState is the inverse of encodeState.
func (s *Store) decodeState(b []byte) (*olbfgs.Learner, error) {
	var m map[string]json.RawMessage
	if err := json.Unmarshal(b, &m); err != nil {
		return nil, fmt.Errorf("%w: %w", olbfgs.ErrSnapshot, err)
	}
	m["stream"] = s.hraw
	full, err := json.Marshal(m)
	if err != nil {
		return nil, err
	}
	l, _, err := olbfgs.UnmarshalSnapshot(full)
	if err != nil {
		return nil, err
	}
	if l.Config() != s.cfg {
		return nil, fmt.Errorf("%w: configuration %+v differs from the store's %+v", olbfgs.ErrSnapshot, l.Config(), s.cfg)
	}
	return l, nil
}

func now() string { return time.Now().UTC().Format(time.RFC3339Nano) }

func setHead(tx *sql.Tx, head int64) error {
	_, err := tx.Exec(`UPDATE meta SET value = ? WHERE key = 'head'`, strconv.FormatInt(head, 10))
	return err
}

func writeCheckpoint(tx *sql.Tx, seq int64, exact bool, t int, origin string, snap []byte) error {
	_, err := tx.Exec(`INSERT OR REPLACE INTO checkpoints (seq, exact, t, origin, created, snapshot, sha256) VALUES (?, ?, ?, ?, ?, ?, ?)`,
		seq, b2i(exact), t, origin, now(), snap, sumCheckpoint(seq, exact, t, origin, snap))
	return err
}

// writeState stores the state after the event at seq head (the log head
// the same transaction leaves in meta).
func writeState(tx *sql.Tx, exact bool, head int64, snap []byte) error {
	_, err := tx.Exec(`UPDATE state SET exact = ?, snapshot = ?, sha256 = ? WHERE one = 1`, b2i(exact), snap, sumState(exact, head, snap))
	return err
}

// ckptRow is a checkpoints row as stored.
type ckptRow struct {
	seq    int64
	exact  bool
	t      int
	origin string
	snap   []byte
	sum    []byte
}

// check verifies the row's sum.
func (r *ckptRow) check() error {
	if !sameSum(r.sum, sumCheckpoint(r.seq, r.exact, r.t, r.origin, r.snap)) {
		return corrupt(fmt.Sprintf("checkpoint at seq %d", r.seq), "its checksum does not match its content")
	}
	return nil
}

// readCheckpoint reads the checkpoint at seq, verifies its sum and decodes
// it.
func (s *Store) readCheckpoint(ctx context.Context, q querier, seq int64) (*olbfgs.Learner, ckptRow, error) {
	r := ckptRow{seq: seq}
	err := q.QueryRowContext(ctx, `SELECT exact, t, origin, snapshot, sha256 FROM checkpoints WHERE seq = ?`, seq).Scan(&r.exact, &r.t, &r.origin, &r.snap, &r.sum)
	if err != nil {
		return nil, r, fmt.Errorf("store: checkpoint at seq %d: %w", seq, err)
	}
	if err := r.check(); err != nil {
		return nil, r, err
	}
	l, err := s.decodeState(r.snap)
	if err != nil {
		return nil, r, corrupt(fmt.Sprintf("checkpoint at seq %d", seq), "it does not decode as a learner state of this store")
	}
	if l.T() != r.t {
		return nil, r, corrupt(fmt.Sprintf("checkpoint at seq %d", seq), "its event count differs from its row's")
	}
	return l, r, nil
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}
