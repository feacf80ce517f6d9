package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"unlearn/certify"
	"unlearn/olbfgs"
	"unlearn/stream"
	"unlearn/unlearn"
)

// Path is the way a deletion request was served.
type Path string

const (
	// PathExact: the state was rebuilt by replay from a checkpoint and is
	// bit-identical to training from θ0 on the deletion-edited log.
	PathExact Path = "exact"
	// PathApproximate: an unlearning intervention was applied to the state;
	// the state still carries the deleted data's influence, and a release
	// needs noise.
	PathApproximate Path = "approximate"
	// PathNone: every id of the request was already forgotten.
	PathNone Path = "none"
)

// Interventions returns the names of the unlearn operators the approximate
// path accepts, in the order of the paper's tables: those that act on the
// current state and the deletion set alone ("noop", "param-only",
// "pair-drop", "memory-reset", "drop-refill"). Oracle and window replay are
// what the exact path already does; retain fine-tuning re-applies retained
// events, which the log could not then account for.
func Interventions() []string {
	return []string{"noop", "param-only", "pair-drop", "memory-reset", "drop-refill"}
}

// ForgetOptions are the options of Forget. The zero value serves every
// request exactly.
type ForgetOptions struct {
	// MaxReplay caps the events an exact forget may replay. If 0, there is
	// no cap: every request is served exactly. If the exact replay would
	// apply more than MaxReplay events, the request is served by
	// Intervention instead.
	MaxReplay int
	// Intervention names the unlearn operator of the approximate path (one
	// of Interventions). Required when MaxReplay > 0.
	Intervention string
	// SkipVacuum skips the VACUUM after the commit. Erasure then rests on
	// secure_delete alone (deleted cells and freed pages are overwritten
	// with zeros; TestErasure passes with it alone), and the file keeps its
	// size; a service that batches requests can call Vacuum once after
	// several. VACUUM rewrites the whole file: it is the largest cost of a
	// forget in a large store (docs/performance.md).
	SkipVacuum bool

	resolve bool // Resolve: no ids; replay exactly from before every pending approximate request
	// record, if not nil, is called at the end of the forget's
	// transaction, with the report so far: what it writes commits with the
	// forget or not at all (ServeForgets records the receipts of a batch).
	record func(tx *sql.Tx, rep *ForgetReport) error
}

// recordIn calls o.record, if any, inside the forget's transaction.
func (o ForgetOptions) recordIn(tx *sql.Tx, rep *ForgetReport) error {
	if o.record == nil {
		return nil
	}
	return o.record(tx, rep)
}

func (o ForgetOptions) validate() error {
	switch {
	case o.resolve && (o.MaxReplay != 0 || o.Intervention != ""):
		return &OptionError{Option: "MaxReplay", Value: o.MaxReplay, Want: "0 and no Intervention for Resolve (a resolution is an exact replay)"}
	case o.MaxReplay < 0:
		return &OptionError{Option: "MaxReplay", Value: o.MaxReplay, Want: "must be non-negative (0: no cap, always exact)"}
	case o.MaxReplay > 0 && o.Intervention == "":
		return &OptionError{Option: "Intervention", Value: `""`, Want: "required with MaxReplay > 0: one of " + strings.Join(Interventions(), ", ")}
	case o.Intervention != "" && !slices.Contains(Interventions(), o.Intervention):
		return &OptionError{Option: "Intervention", Value: o.Intervention, Want: "one of " + strings.Join(Interventions(), ", ")}
	}
	return nil
}

// ForgetReport says how a deletion request was served and what it cost.
type ForgetReport struct {
	// Request is the request's number in the store (0 for PathNone).
	Request int64
	// IDs are the ids forgotten by this request, ascending.
	IDs []int64
	// AlreadyForgotten are requested ids that an earlier request forgot.
	AlreadyForgotten []int64
	// Path is the way the request was served, and Reason says why.
	Path   Path
	Reason string
	// FromSeq is the sequence number of the checkpoint the exact path
	// replayed from (0 is θ0).
	FromSeq int64
	// ExactReplay is the number of events exact replay needs (or needed).
	ExactReplay int
	// EventsReplayed is the number of events applied again: ExactReplay on
	// the exact path, the intervention's own replay on the approximate one.
	EventsReplayed int
	// CheckpointsRewritten counts the checkpoints regenerated (exact path).
	CheckpointsRewritten int
	// Intervention is the operator's name (approximate path).
	Intervention string
	// Ages are, for the approximate path, the ages in update steps of the
	// deleted inserts when the request was served (certify.AgesOf), in
	// stream order: with Intervention and |U| = len(IDs), what a later
	// noised release must cover.
	Ages []int
	// NeedsNoise reports whether the store's state now carries the
	// influence of forgotten data (this request's or an earlier
	// approximate one's), so that only a noised release may be published.
	NeedsNoise bool
	// Wall is the wall time of the forget's transaction (commit included;
	// the stored request record has it up to the commit),
	// Replay the part of it spent replaying the log and writing
	// checkpoints (exact path), and Vacuum the time of the VACUUM that
	// follows the commit.
	Wall, Replay, Vacuum time.Duration
	// ReleasesErased is the number of releases kept in the store (Keep)
	// that this request erased: those made from a state that included one of
	// the deleted inserts (Released.Head ≥ its seq). Copies published
	// elsewhere cannot be recalled.
	ReleasesErased int
	// Resolved are the pending approximate requests (Request.ResolvedBy)
	// whose influence this exact request removed from the state: after it,
	// the state is exact again (exact path only), ascending.
	Resolved []int64
	// ErasedReleases are those releases, by id, oldest first, each with the
	// deleted insert that made its state uncertified (ReleasesErased =
	// len(ErasedReleases)).
	ErasedReleases []ErasedRelease
	// KeysErased is the number of string keys (KeySource) of the forgotten
	// ids that this request erased from the store.
	KeysErased int
}

// Forget serves a deletion request for ids: afterwards the ids' events are
// gone from the log and every checkpoint and state derived from them is
// rebuilt (exact path) or marked as carrying their influence (approximate
// path), the ids are recorded as forgotten (a tombstone: the id, never the
// payload) so that they are never ingested again, and the database is
// vacuumed so that no byte of the deleted payloads remains in the store
// directory. Every release kept in the store (Keep) that was made from a
// state including one of the deleted inserts is deleted in the same
// transaction (ReleasesErased) and vacuumed with them; releases made before
// the oldest deleted insert stay. The string keys of the ids (KeySource)
// are deleted in the same transaction (KeysErased); ForgetKeys names a
// request by its keys.
//
// Exact path (the default): restore the newest exact checkpoint θ_c with c
// before the oldest deleted insert, replay the log after c without the
// deleted events, and regenerate every later checkpoint. The state is then
// bit-identical to olbfgs.Replay on the deletion-edited log
// (stream.Counterfactual: the paper's oracle replay; Definition
// "Deletion-edited counterfactual history"). Replaying from a checkpoint is
// window replay over a window that covers every deleted insert, which is
// exactly oracle replay.
//
// Approximate path: when o.MaxReplay > 0 and exact replay would apply more
// than o.MaxReplay events, o.Intervention is applied to the current state
// (unlearn.Run) instead; the payloads are still erased from the log, but the
// checkpoints from the oldest deleted insert on, and the state, carry their
// influence, and NeedsNoise is set. A later exact forget replays from a
// checkpoint before all of them and removes that influence.
//
// Ids never ingested are an error wrapping ErrUnknownID and nothing
// changes; ids already forgotten are reported in AlreadyForgotten (a retried
// request is harmless). The request is one transaction: it commits whole or
// not at all. If the VACUUM after the commit fails, the report is returned
// with the error. A request whose ids were all forgotten already (PathNone)
// commits nothing but still vacuums unless o.SkipVacuum: retrying a request
// whose VACUUM crashed or failed completes its erasure.
func (s *Store) Forget(ids []int64, o ForgetOptions) (ForgetReport, error) {
	if len(ids) == 0 {
		return ForgetReport{}, &OptionError{Option: "IDs", Value: "[]", Want: "at least one id"}
	}
	return s.forget(context.Background(), ids, nil, o)
}

// forget is Forget of ids and of the ids of keys (resolved in the forget's
// transaction) under ctx: cancelling it rolls the request's transaction
// back (PrepareAudit's copy is interrupted this way).
func (s *Store) forget(ctx context.Context, ids []int64, keys []string, o ForgetOptions) (ForgetReport, error) {
	if err := o.validate(); err != nil {
		return ForgetReport{}, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.db == nil {
		return ForgetReport{}, ErrClosed
	}
	start := time.Now()
	var rep ForgetReport
	err := s.inTx(ctx, func(tx *sql.Tx) error {
		rep = ForgetReport{}
		ids := slices.Clone(ids)
		if len(keys) > 0 {
			kids, err := resolveKeys(tx, keys)
			if err != nil {
				return err
			}
			ids = append(ids, kids...)
		}
		slices.Sort(ids)
		ids = slices.Compact(ids)
		var u []int64
		minSeq, minID := int64(-1), int64(0)
		for _, id := range ids {
			var seq int64
			err := tx.QueryRow(`SELECT seq FROM events WHERE id = ? AND payload IS NOT NULL`, id).Scan(&seq)
			if err == nil {
				u = append(u, id)
				if minSeq < 0 || seq < minSeq {
					minSeq, minID = seq, id
				}
				continue
			}
			if !errors.Is(err, sql.ErrNoRows) {
				return err
			}
			var one int
			if err := tx.QueryRow(`SELECT 1 FROM forgotten WHERE id = ?`, id).Scan(&one); err == nil {
				rep.AlreadyForgotten = append(rep.AlreadyForgotten, id)
				continue
			} else if !errors.Is(err, sql.ErrNoRows) {
				return err
			}
			return fmt.Errorf("%w: id %d was never ingested", ErrUnknownID, id)
		}
		if len(u) == 0 && !(o.resolve && !s.exact) {
			rep.Path, rep.Reason = PathNone, "every id was already forgotten"
			if o.resolve {
				rep.Reason = "no approximate request is pending: the state is exact"
			}
			rep.NeedsNoise = !s.exact
			return o.recordIn(tx, &rep)
		}
		if o.resolve {
			u = []int64{}
			// The oldest insert whose payload an approximate request erased:
			// every checkpoint from it on carries forgotten influence.
			if err := tx.QueryRow(`SELECT COALESCE(MIN(seq), -1) FROM events WHERE payload IS NULL`).Scan(&minSeq); err != nil {
				return err
			}
			if minSeq < 0 {
				return fmt.Errorf("%w: the state is not exact, but no event of the log was erased by an approximate request", ErrInconsistent)
			}
		}
		rep.IDs = u
		var c int64
		if err := tx.QueryRow(`SELECT seq FROM checkpoints WHERE exact = 1 AND seq < ? ORDER BY seq DESC LIMIT 1`, minSeq).Scan(&c); err != nil {
			return fmt.Errorf("%w: no exact checkpoint before seq %d: %w", ErrInconsistent, minSeq, err)
		}
		var after int
		if err := tx.QueryRow(`SELECT count(*) FROM events WHERE seq > ? AND payload IS NOT NULL`, c).Scan(&after); err != nil {
			return err
		}
		rep.FromSeq, rep.ExactReplay = c, after-len(u)
		res, err := tx.Exec(`INSERT INTO forget_requests (time, ids, path, reason, from_seq, events_replayed, wall_ns, u_size, needs_noise)
			VALUES (?, ?, 'exact', '', ?, 0, 0, ?, 0)`, now(), idsJSON(u), c, len(u))
		if err != nil {
			return err
		}
		if rep.Request, err = res.LastInsertId(); err != nil {
			return err
		}
		// A resolution forgets no insert: no kept release is made from a
		// state that includes one (the pending requests erased theirs).
		if !o.resolve {
			if rep.ErasedReleases, err = eraseReleases(tx, minSeq, minID); err != nil {
				return err
			}
		}
		rep.ReleasesErased = len(rep.ErasedReleases)
		// Before the events: ON DELETE CASCADE would take them uncounted.
		if rep.KeysErased, err = eraseKeys(tx, u); err != nil {
			return err
		}
		uset := stream.NewIDSet(u...)
		if o.MaxReplay == 0 || rep.ExactReplay <= o.MaxReplay {
			rep.Path = PathExact
			if o.MaxReplay == 0 {
				rep.Reason = fmt.Sprintf("exact replay of %d events from the checkpoint at seq %d (no replay cap)", rep.ExactReplay, c)
			} else {
				rep.Reason = fmt.Sprintf("exact replay of %d events from the checkpoint at seq %d is within the cap of %d", rep.ExactReplay, c, o.MaxReplay)
			}
			err = s.forgetExact(tx, &rep, uset, c)
			if o.resolve && err == nil { // rep.Resolved: the requests forgetExact resolved
				rep.Reason = fmt.Sprintf("resolution of pending approximate %s %s: exact replay of %d events from the checkpoint at seq %d, before the oldest erased insert (seq %d)",
					map[bool]string{true: "request", false: "requests"}[len(rep.Resolved) == 1], joinIDs(rep.Resolved), rep.ExactReplay, c, minSeq)
			}
		} else {
			rep.Path = PathApproximate
			rep.Reason = fmt.Sprintf("exact replay would apply %d events from the checkpoint at seq %d, more than the cap of %d: applied %s; the state keeps the deleted data's influence, so a release needs noise",
				rep.ExactReplay, c, o.MaxReplay, o.Intervention)
			err = s.forgetApproximate(tx, &rep, uset, minSeq, o.Intervention)
		}
		if err != nil {
			return err
		}
		for _, id := range u {
			if _, err := tx.Exec(`INSERT INTO forgotten (id, request) VALUES (?, ?)`, id, rep.Request); err != nil {
				return err
			}
		}
		rep.NeedsNoise = !s.exact
		rep.Wall = time.Since(start) // recorded without the commit; the report's includes it
		var ages, interv any
		if rep.Path == PathApproximate {
			b, _ := json.Marshal(rep.Ages)
			ages, interv = string(b), rep.Intervention
		}
		erased, err := json.Marshal(rep.ErasedReleases)
		if err != nil {
			return err
		}
		if rep.ErasedReleases == nil {
			erased = []byte("[]")
		}
		_, err = tx.Exec(`UPDATE forget_requests SET path = ?, reason = ?, events_replayed = ?, wall_ns = ?, intervention = ?, ages = ?, needs_noise = ?, releases_erased = ?, erased_releases = ? WHERE request = ?`,
			string(rep.Path), rep.Reason, rep.EventsReplayed, rep.Wall.Nanoseconds(), interv, ages, b2i(rep.Path == PathApproximate), rep.ReleasesErased, string(erased), rep.Request)
		if err != nil {
			return err
		}
		return o.recordIn(tx, &rep)
	})
	if err != nil {
		return ForgetReport{}, fmt.Errorf("store: forget: %w", err)
	}
	rep.Wall = time.Since(start)
	// A repeated request (PathNone) vacuums too: after a crash or a
	// failure in the VACUUM of the first, running the forget again is how
	// the deleted pages' bytes are removed (ADV2-06).
	if o.SkipVacuum {
		return rep, nil
	}
	vstart := time.Now()
	if _, err := s.db.ExecContext(ctx, `VACUUM`); err != nil {
		if rep.Path == PathNone {
			return rep, fmt.Errorf("store: forget: every id was already forgotten, but VACUUM failed (run the forget again, or Vacuum): %w", err)
		}
		return rep, fmt.Errorf("store: forget request %d committed, but VACUUM failed (run it again with Vacuum): %w", rep.Request, err)
	}
	rep.Vacuum = time.Since(vstart)
	return rep, nil
}

// Resolve serves every pending approximate request exactly, without a new
// deletion: it restores the newest exact checkpoint before the oldest insert
// an approximate request erased, replays the log after it (the erased
// inserts dropped, as stream.Counterfactual does) and regenerates every
// later checkpoint, as an exact Forget would. Afterwards the state is
// bit-identical to training on the deletion-edited log, the pending
// requests are resolved (Request.ResolvedBy, ForgetReport.Resolved) and an
// exact release may be published again. It is recorded as a request with no
// ids (path exact). With nothing pending it returns PathNone and only
// vacuums (unless o.SkipVacuum). o.MaxReplay and o.Intervention must be
// zero.
func (s *Store) Resolve(o ForgetOptions) (ForgetReport, error) {
	o.resolve = true
	return s.forget(context.Background(), nil, nil, o)
}

func joinIDs(v []int64) string {
	s := make([]string, len(v))
	for i, x := range v {
		s[i] = strconv.FormatInt(x, 10)
	}
	return strings.Join(s, ", ")
}

// Vacuum rebuilds the database file, leaving no free page. Forget does it
// after every request; call it again if that VACUUM failed.
func (s *Store) Vacuum() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.db == nil {
		return ErrClosed
	}
	_, err := s.db.Exec(`VACUUM`)
	return err
}

func idsJSON(ids []int64) string {
	b, _ := json.Marshal(ids)
	return string(b)
}

// forgetExact deletes U's events, restores the checkpoint at c and replays
// the log after it, regenerating every checkpoint after c.
func (s *Store) forgetExact(tx *sql.Tx, rep *ForgetReport, u stream.IDSet, c int64) error {
	var snap []byte
	if err := tx.QueryRow(`SELECT snapshot FROM checkpoints WHERE seq = ?`, c).Scan(&snap); err != nil {
		return err
	}
	l, err := s.decodeState(snap)
	if err != nil {
		return fmt.Errorf("%w: checkpoint at seq %d: %w", ErrInconsistent, c, err)
	}
	for id := range u {
		if _, err := tx.Exec(`DELETE FROM events WHERE id = ?`, id); err != nil {
			return err
		}
	}
	// Erased events of earlier approximate requests after c: the replay
	// drops them, as the counterfactual does.
	if _, err := tx.Exec(`DELETE FROM events WHERE seq > ? AND payload IS NULL`, c); err != nil {
		return err
	}
	if _, err := tx.Exec(`DELETE FROM checkpoints WHERE seq > ?`, c); err != nil {
		return err
	}
	rstart := time.Now()
	n, ck, err := s.replay(tx, l, c, true)
	if err != nil {
		return err
	}
	rep.Replay = time.Since(rstart)
	rep.EventsReplayed, rep.CheckpointsRewritten = n, ck
	if snap, err = s.encodeState(l); err != nil {
		return err
	}
	if err := writeState(tx, true, snap); err != nil {
		return err
	}
	rows, err := tx.Query(`UPDATE forget_requests SET resolved_by = ? WHERE needs_noise = 1 AND resolved_by IS NULL RETURNING request`, rep.Request)
	if err != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
		var r int64
		if err := rows.Scan(&r); err != nil {
			return err
		}
		rep.Resolved = append(rep.Resolved, r)
	}
	if err := rows.Err(); err != nil {
		return err
	}
	slices.Sort(rep.Resolved)
	s.state, s.exact = l, true
	return nil
}

// replay applies the log rows after seq c to l, which holds the state at c,
// and, if write, stores a checkpoint at every multiple of K in (c, head]:
// the state after every row up to it. It returns the rows applied and the
// checkpoints written. Rows are read and decoded by a logReader on a second
// goroutine, in pages of up to pageRows rows (pageBytes of payloads), into a
// fixed pool of reused pages, so memory does not grow with the log and
// reading overlaps with stepping.
func (s *Store) replay(tx *sql.Tx, l *olbfgs.Learner, c int64, write bool) (n, ckpts int, err error) {
	next := (c/s.k + 1) * s.k // the next checkpoint boundary
	var cw *ckptWriter        // checkpoints are encoded and stored on a third goroutine
	if write {
		cw = newCkptWriter(s, tx, "replay")
		defer func() {
			k, werr := cw.wait()
			ckpts = k
			if err == nil {
				err = werr
			}
		}()
	}
	emit := func(limit int64, inclusive bool) error {
		for next < limit || (inclusive && next == limit) {
			if write {
				if err := cw.put(next, true, l); err != nil {
					return err
				}
			}
			next += s.k
		}
		return nil
	}
	d := s.cfg.Dim
	r := readLog(tx, c, -1, d)
	defer r.Close()
	for {
		p := r.Next()
		if p == nil {
			break
		}
		for i := range p.n {
			seq, id := p.seq[i], p.id[i]
			if p.erased[i] {
				return n, ckpts, fmt.Errorf("%w: erased event (id %d, seq %d) after the exact checkpoint at seq %d", ErrInconsistent, id, seq, c)
			}
			if err := emit(seq, false); err != nil {
				return n, ckpts, err
			}
			if err := l.Step(stream.Event{Op: stream.Insert, ID: id, Sample: p.sample(i, d)}); err != nil {
				return n, ckpts, fmt.Errorf("replay of seq %d: %w", seq, err)
			}
			n++
			if err := emit(seq, true); err != nil {
				return n, ckpts, err
			}
		}
		if p.err != nil {
			return n, ckpts, p.err
		}
		r.Release(p)
	}
	r.Close()
	return n, ckpts, emit(s.head, true)
}

// forgetApproximate applies the intervention to the current state, erases
// U's payloads and marks the checkpoints from minSeq on as inexact.
func (s *Store) forgetApproximate(tx *sql.Tx, rep *ForgetReport, u stream.IDSet, minSeq int64, name string) error {
	var op unlearn.Operator
	for _, c := range unlearn.Paper(s.cfg.Memory) {
		if c.Name() == name {
			op = c
		}
	}
	if op == nil {
		return &OptionError{Option: "Intervention", Value: name, Want: "one of " + strings.Join(Interventions(), ", ")}
	}
	// The operators see the history as a slice: every log row, as an insert
	// (erased rows of earlier requests included: they were steps of this
	// state), with payloads for U only — the operators accepted here read
	// no other payload.
	prefix := make([]stream.Event, 0, s.state.T())
	rows, err := tx.Query(`SELECT events.id, u.value IS NOT NULL, CASE WHEN u.value IS NOT NULL THEN payload END
		FROM events LEFT JOIN json_each(?) AS u ON u.value = events.id ORDER BY seq`, idsJSON(u.Sorted()))
	if err != nil {
		return err
	}
	for rows.Next() {
		var e stream.Event
		var p []byte
		var inU bool
		if err := rows.Scan(&e.ID, &inU, &p); err != nil {
			rows.Close()
			return err
		}
		e.Op = stream.Insert
		if inU { // U's payloads are not NULL (Forget checked); an empty one is an error, never an empty sample
			if p == nil {
				p = []byte{}
			}
			if e.Sample, err = decodePayload(p, s.cfg.Dim); err != nil {
				rows.Close()
				return err
			}
		}
		prefix = append(prefix, e)
	}
	if err := rows.Close(); err != nil {
		return err
	}
	if len(prefix) != s.state.T() {
		return fmt.Errorf("%w: the log holds %d events, the state has applied %d", ErrInconsistent, len(prefix), s.state.T())
	}
	l, cost, err := unlearn.Run(op, unlearn.Request{Actual: s.state, Prefix: prefix, U: u})
	if err != nil {
		return err
	}
	rep.Intervention = name
	rep.EventsReplayed = cost.EventsReplayed
	rep.Ages = certify.AgesOf(prefix, u)
	for id := range u {
		if _, err := tx.Exec(`UPDATE events SET payload = NULL WHERE id = ?`, id); err != nil {
			return err
		}
	}
	if _, err := tx.Exec(`UPDATE checkpoints SET exact = 0 WHERE seq >= ?`, minSeq); err != nil {
		return err
	}
	snap, err := s.encodeState(l)
	if err != nil {
		return err
	}
	if err := writeCheckpoint(tx, s.head, false, l.T(), "intervention", snap); err != nil {
		return err
	}
	if err := writeState(tx, false, snap); err != nil {
		return err
	}
	s.state, s.exact = l, false
	return nil
}
