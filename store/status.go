package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"time"

	"unlearn/olbfgs"
	"unlearn/stream"
)

// Status summarizes a store.
type Status struct {
	Dir           string
	SchemaVersion int
	Kind          stream.Kind
	Learner       olbfgs.Config
	// CheckpointEvery is K.
	CheckpointEvery int
	// Events is the number of events in the log (erased ones included);
	// Erased counts those whose payload an approximate forget erased.
	Events, Erased int
	// Head is the largest sequence number ever assigned.
	Head int64
	// T is the number of events the current state has applied.
	T int
	// Progress holds the current state's progressive statistics, and
	// HasProgress whether the learner keeps them (olbfgs.Config.Progress).
	Progress    olbfgs.Progress
	HasProgress bool
	// Checkpoints and InexactCheckpoints count the stored checkpoints and
	// those carrying forgotten data's influence.
	Checkpoints, InexactCheckpoints int
	// Forgotten is the number of tombstones; Requests the number of
	// deletion requests served; Releases the number of releases kept
	// (Keep) and not erased since.
	Forgotten, Requests, Releases int
	// NeedsNoise reports whether the state carries forgotten data's
	// influence (an approximate forget not yet resolved by an exact one):
	// only a noised release may then be published. Pending lists those
	// requests.
	NeedsNoise bool
	Pending    []Request
	// Damage, if not empty, says what is wrong with the store: a state or
	// configuration that fails its checksum or does not decode
	// (*CorruptError's text). Status is then all that runs, with Resolve
	// (which rebuilds a damaged state); Check finds everything else.
	Damage string
	// ClipToBound reports whether ingest clips payloads to the sample
	// bound (Config.ClipToBound).
	ClipToBound bool
	// Policy is the store's resolution policy, and Due what it says now.
	Policy ResolvePolicy
	Due    Due
	// Bytes is the total size of the files in the store directory.
	Bytes int64
	// LogBytes, CheckpointBytes, StateBytes and ReleaseBytes are the bytes
	// of the stored payloads, checkpoint snapshots, the current state's
	// snapshot and the kept releases with their certificates (the data,
	// without SQLite's page and index overhead, which Bytes includes).
	LogBytes, CheckpointBytes, StateBytes, ReleaseBytes int64
}

// Request is the record of one served deletion request.
type Request struct {
	Request        int64
	Time           time.Time
	IDs            []int64
	Path           Path
	Reason         string
	FromSeq        int64
	EventsReplayed int
	Wall           time.Duration
	// Intervention, Ages and USize are what a noised release must cover
	// (approximate path only; see ForgetReport).
	Intervention string
	Ages         []int
	USize        int
	NeedsNoise   bool
	// ResolvedBy is the exact request that later removed this approximate
	// request's influence from the state (0 if none).
	ResolvedBy int64
	// ReleasesErased is the number of kept releases the request erased.
	ReleasesErased int
	// ErasedReleases are those releases by id (ForgetReport.ErasedReleases);
	// nil for a request served before schema version 4, which recorded only
	// the count.
	ErasedReleases []ErasedRelease
	// Noised reports an approximate request served from schema version 6
	// on: the store kept only the noised output of its intervention, the
	// certified release Release (0 once a later forget erased it), with
	// its certificate's α (AlphaSource "derived" or "diameter"), σ, ε, δ
	// and the ages it discloses (DisclosedAges). An approximate request
	// that is not Noised left the deleted data's influence un-noised in the
	// state until it is resolved.
	Noised        bool
	Release       int64
	AlphaSource   string
	Alpha, Sigma  float64
	Epsilon       float64
	Delta         float64
	DisclosedAges []int
	// Head is the log head when the request was served (0 before schema
	// version 6).
	Head int64
	// Damaged is set, and nothing else but Request, for a record whose
	// checksum does not match its content (the listing goes on; every
	// forget, resolution and release refuses the store).
	Damaged bool
}

// Status returns a summary of the store.
func (s *Store) Status() (Status, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.db == nil {
		return Status{}, ErrClosed
	}
	var st Status
	// One read transaction: the counts, the head and the state are of one
	// commit (another process may commit between two autocommit queries).
	err := s.readTx(context.Background(), func(ctx context.Context, tx *sql.Tx) error {
		st = Status{Dir: s.dir, Kind: s.hdr.Kind, Learner: s.cfg, CheckpointEvery: int(s.k), Head: s.head, NeedsNoise: !s.exact, Policy: s.policy, ClipToBound: s.clip}
		if err := s.usable(); err != nil {
			st.Damage = err.Error()
		} else {
			st.T = s.state.T()
			st.Progress, st.HasProgress = s.state.Progress()
		}
		var err error
		if st.SchemaVersion, err = schemaVersion(ctx, tx); err != nil {
			return err
		}
		for _, q := range []struct {
			dst *int
			sql string
		}{
			{&st.Events, `SELECT count(*) FROM events`},
			{&st.Erased, `SELECT count(*) FROM events WHERE payload IS NULL`},
			{&st.Checkpoints, `SELECT count(*) FROM checkpoints`},
			{&st.InexactCheckpoints, `SELECT count(*) FROM checkpoints WHERE exact = 0`},
			{&st.Forgotten, `SELECT count(*) FROM forgotten`},
			{&st.Requests, `SELECT count(*) FROM forget_requests`},
			{&st.Releases, `SELECT count(*) FROM releases`},
		} {
			if err := tx.QueryRowContext(ctx, q.sql).Scan(q.dst); err != nil {
				return err
			}
		}
		for _, q := range []struct {
			dst *int64
			sql string
		}{
			{&st.LogBytes, `SELECT COALESCE(SUM(length(payload)), 0) FROM events`},
			{&st.CheckpointBytes, `SELECT COALESCE(SUM(length(snapshot)), 0) FROM checkpoints`},
			{&st.StateBytes, `SELECT COALESCE(SUM(length(snapshot)), 0) FROM state`},
			{&st.ReleaseBytes, `SELECT COALESCE(SUM(length(file) + length(certificate)), 0) FROM releases`},
		} {
			if err := tx.QueryRowContext(ctx, q.sql).Scan(q.dst); err != nil {
				return err
			}
		}
		if st.Pending, err = s.requests(ctx, tx, `WHERE needs_noise = 1 AND resolved_by IS NULL`); err != nil {
			return err
		}
		st.Due, err = s.due(ctx, tx, time.Now())
		return err
	})
	if err != nil {
		return st, err
	}
	entries, err := os.ReadDir(s.dir)
	if err != nil {
		return st, err
	}
	for _, e := range entries {
		if fi, err := e.Info(); err == nil && fi.Mode().IsRegular() {
			st.Bytes += fi.Size()
		}
	}
	return st, nil
}

// Requests returns the record of every deletion request, oldest first.
func (s *Store) Requests() ([]Request, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.db == nil {
		return nil, ErrClosed
	}
	return s.requests(context.Background(), s.db, "")
}

func (s *Store) requests(ctx context.Context, q querier, where string) ([]Request, error) {
	kept, err := keptReleaseIDs(ctx, q)
	if err != nil {
		return nil, err
	}
	rows, err := q.QueryContext(ctx, `SELECT `+requestCols+`, sha256 FROM forget_requests `+where+` ORDER BY request`)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []Request
	for rows.Next() {
		var row requestRow
		if err := row.scan(rows); err != nil {
			return nil, err
		}
		if !sameSum(row.sum, sumRequest(&row)) {
			// Nothing of a damaged record is reported as a fact.
			out = append(out, Request{Request: row.request, Damaged: true})
			continue
		}
		r, err := row.toRequest(kept)
		if err != nil {
			return nil, err
		}
		out = append(out, r)
	}
	return out, rows.Err()
}

// toRequest is the Request of a row whose sum was verified; Release is 0
// when the kept release is no longer kept.
func (row *requestRow) toRequest(kept map[int64]bool) (Request, error) {
	r := Request{Request: row.request, Path: Path(row.path), Reason: row.reason, FromSeq: row.fromSeq,
		EventsReplayed: int(row.eventsReplayed), Wall: time.Duration(row.wallNS), Intervention: row.intervention.String,
		USize: int(row.uSize), NeedsNoise: row.needsNoise == 1, ResolvedBy: row.resolvedBy.Int64,
		ReleasesErased: int(row.releasesErased), Noised: row.noised == 1, AlphaSource: row.alphaSource.String,
		Alpha: row.alpha.Float64, Sigma: row.sigma.Float64, Epsilon: row.epsilon.Float64, Delta: row.delta.Float64,
		Head: row.head.Int64}
	if kept[row.release.Int64] {
		r.Release = row.release.Int64
	}
	r.Time, _ = time.Parse(time.RFC3339Nano, row.time)
	for _, f := range []struct {
		name string
		v    sql.NullString
		dst  any
	}{
		{"ids", sql.NullString{String: row.ids, Valid: true}, &r.IDs},
		{"ages", row.ages, &r.Ages},
		{"erased_releases", row.erasedReleases, &r.ErasedReleases},
		{"disclosed_ages", row.disclosedAges, &r.DisclosedAges},
	} {
		if !f.v.Valid {
			continue
		}
		if err := json.Unmarshal([]byte(f.v.String), f.dst); err != nil {
			return r, fmt.Errorf("%w: request %d: %s: %w", ErrSchema, row.request, f.name, err)
		}
	}
	return r, nil
}

// Export writes the current, un-noised state as an olbfgs-state/v1
// snapshot (olbfgs.WriteSnapshot, with the store's stream header) to w,
// streamed: on an error w may hold a prefix, so write to a temporary file.
// It is for inspection and tests: it is NOT a release — it holds every
// ingested sample's influence and, after an approximate forget, forgotten
// samples' influence too. Publish only a certified release.
func (s *Store) Export(w io.Writer) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.db == nil {
		return ErrClosed
	}
	if err := s.readTx(context.Background(), nil); err != nil {
		return err
	}
	if err := s.usable(); err != nil {
		return err
	}
	return olbfgs.WriteSnapshot(w, s.state, s.hdr)
}

// Counterfactual returns the exact counterfactual state: the replay from θ0
// of every event in the log that was not forgotten (olbfgs.Replay on the
// deletion-edited stream). When NeedsNoise is false this is the current
// state; otherwise it is computed by replay from the newest exact
// checkpoint, reading the log in chunks, and nothing is written. (Erased
// events are skipped: they are the forgotten ones.)
func (s *Store) Counterfactual() (*olbfgs.Learner, error) {
	return s.counterfactual(context.Background())
}

// counterfactual is Counterfactual under ctx: cancelling it ends the read
// transaction, and the replay stops at its next read of the log.
func (s *Store) counterfactual(ctx context.Context) (*olbfgs.Learner, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.db == nil {
		return nil, ErrClosed
	}
	tx, err := s.db.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
	if err != nil {
		return nil, err
	}
	defer tx.Rollback()
	if err := s.refresh(ctx, tx); err != nil {
		return nil, err
	}
	if err := s.usable(); err == nil && s.exact {
		return s.state.Clone(), nil
	} else if s.cfgDamage != nil {
		return nil, s.cfgDamage
	}
	var c int64
	if err := tx.QueryRow(`SELECT seq FROM checkpoints WHERE exact = 1 ORDER BY seq DESC LIMIT 1`).Scan(&c); err != nil {
		return nil, corrupt("the checkpoints", "no exact checkpoint: %v", err)
	}
	l, _, err := s.readCheckpoint(ctx, tx, c)
	if err != nil {
		return nil, err
	}
	if err := s.replaySkippingErased(tx, l, c); err != nil {
		return nil, err
	}
	return l, nil
}

// replaySkippingErased applies the non-erased rows after c to l, reading
// them through a logReader.
func (s *Store) replaySkippingErased(tx *sql.Tx, l *olbfgs.Learner, c int64) error {
	d := s.cfg.Dim
	r := readLog(tx, c, -1, d)
	defer r.Close()
	for p := r.Next(); p != nil; p = r.Next() {
		for i := range p.n {
			if p.erased[i] {
				continue
			}
			if err := l.Step(stream.Event{Op: stream.Insert, ID: p.id[i], Sample: p.sample(i, d)}); err != nil {
				return err
			}
		}
		if p.err != nil {
			return p.err
		}
		r.Release(p)
	}
	return nil
}
