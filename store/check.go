package store

import (
	"context"
	"database/sql"
	"fmt"

	"unlearn/olbfgs"
	"unlearn/stream"
)

// CheckReport says what Check verified.
type CheckReport struct {
	// EventsReplayed is the number of log events replayed from θ0.
	EventsReplayed int
	// CheckpointsVerified counts the exact checkpoints found equal to the
	// replay of the log up to them; InexactSkipped those carrying forgotten
	// data's influence, which no replay of the log can reproduce.
	CheckpointsVerified, InexactSkipped int
	// StateFromScratch reports whether the state was compared with the
	// replay of the whole log from θ0 (true unless NeedsNoise).
	StateFromScratch bool
}

// Check verifies the store's integrity and its invariants bit for bit, and
// returns an error at the first violation: a *CorruptError (ErrCorrupt)
// for a failed SQLite integrity_check, a row whose sum does not match, or
// a broken invariant between the tables (integrity.go: the full check),
// and an error wrapping ErrInconsistent for a replay that does not give a
// stored state:
//
//   - θ0 is the checkpoint at seq 0;
//   - every exact checkpoint is the replay from θ0 of the log up to it;
//   - the stored state is the newest checkpoint followed by the replay of
//     the log after it, and equals the state held in memory;
//   - unless NeedsNoise, the state is the replay of the whole log from θ0
//     (olbfgs.Replay of the deletion-edited stream).
//   - every string key (KeySource) belongs to an id whose payload is in
//     the log (none of a forgotten id is left).
//
// It replays the whole log, reading it in chunks: it costs one pass of
// training.
func (s *Store) Check() (CheckReport, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.db == nil {
		return CheckReport{}, ErrClosed
	}
	var rep CheckReport
	ctx := context.Background()
	tx, err := s.db.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
	if err != nil {
		return rep, err
	}
	defer tx.Rollback()
	if err := s.refresh(ctx, tx); err != nil {
		return rep, err
	}
	if err := s.verify(ctx, tx, checkFull, false); err != nil {
		return rep, err
	}
	bad := func(format string, args ...any) error {
		return fmt.Errorf("%w: %s", ErrInconsistent, fmt.Sprintf(format, args...))
	}
	type ckpt struct {
		seq   int64
		exact bool
	}
	var cks []ckpt
	rows, err := tx.Query(`SELECT seq, exact FROM checkpoints ORDER BY seq`)
	if err != nil {
		return rep, err
	}
	for rows.Next() {
		var c ckpt
		if err := rows.Scan(&c.seq, &c.exact); err != nil {
			rows.Close()
			return rep, err
		}
		cks = append(cks, c)
	}
	if err := rows.Close(); err != nil {
		return rep, err
	}
	if len(cks) == 0 || cks[0].seq != 0 || !cks[0].exact {
		return rep, bad("no exact checkpoint θ0 at seq 0")
	}
	load := func(seq int64) (*olbfgs.Learner, error) {
		l, _, err := s.readCheckpoint(ctx, tx, seq)
		return l, err
	}
	l, err := load(0)
	if err != nil {
		return rep, err
	}
	theta0, err := olbfgs.New(s.cfg, s.loss)
	if err != nil {
		return rep, err
	}
	if !l.Equal(theta0) {
		return rep, bad("the checkpoint at seq 0 is not θ0")
	}
	// Walk the log from θ0, comparing every exact checkpoint.
	var at int64
	for _, c := range cks[1:] {
		if !c.exact {
			rep.InexactSkipped++
			continue
		}
		n, err := s.applyRange(tx, l, at, c.seq)
		rep.EventsReplayed += n
		if err != nil {
			return rep, err
		}
		at = c.seq
		want, err := load(c.seq)
		if err != nil {
			return rep, err
		}
		if !l.Equal(want) {
			return rep, bad("the checkpoint at seq %d differs from the replay of the log from θ0", c.seq)
		}
		rep.CheckpointsVerified++
	}
	// The state was read, its sum verified and decoded in this
	// transaction (refresh); verify refused a damaged one.
	stored, exact := s.state, s.exact
	if exact {
		n, err := s.applyRange(tx, l, at, s.head)
		rep.EventsReplayed += n
		if err != nil {
			return rep, err
		}
		if !l.Equal(stored) {
			return rep, bad("the state differs from the replay of the log from θ0")
		}
		rep.StateFromScratch = true
	}
	// The state is the newest checkpoint plus the log after it.
	last := cks[len(cks)-1].seq
	nl, err := load(last)
	if err != nil {
		return rep, err
	}
	if _, err := s.applyRange(tx, nl, last, s.head); err != nil {
		return rep, err
	}
	if !nl.Equal(stored) {
		return rep, bad("the state differs from the checkpoint at seq %d followed by the log after it", last)
	}
	return rep, nil
}

// applyRange applies the log rows with from < seq ≤ to to l, reading them
// through a logReader; an erased row is an inconsistency (exact replays never meet one).
func (s *Store) applyRange(tx *sql.Tx, l *olbfgs.Learner, from, to int64) (int, error) {
	n, d := 0, s.cfg.Dim
	r := readLog(tx, from, to, d)
	defer r.Close()
	for p := r.Next(); p != nil; p = r.Next() {
		for i := range p.n {
			if p.erased[i] {
				return n, fmt.Errorf("%w: erased event (id %d, seq %d) inside an exact replay", ErrInconsistent, p.id[i], p.seq[i])
			}
			if err := l.Step(stream.Event{Op: stream.Insert, ID: p.id[i], Sample: p.sample(i, d)}); err != nil {
				return n, err
			}
			n++
		}
		if p.err != nil {
			return n, p.err
		}
		r.Release(p)
	}
	return n, nil
}
