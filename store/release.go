package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"slices"

	"unlearn/certify"
	"unlearn/internal/established"
	"unlearn/olbfgs"
	"unlearn/stream"
	"unlearn/unlearn"
)

// Released is a certified release of the store's state and how its
// sensitivity was established.
type Released struct {
	Release     *certify.Release
	Certificate *certify.Certificate
	// Path says how α was obtained: "exact" (every forget was served by
	// replay: the state is the counterfactual, no noise), "derived" (one
	// approximate forget pending, or several on a learner without
	// curvature memory: α from their public description) or "diameter"
	// (several approximate forgets pending on a learner with a memory, or
	// one whose description the store cannot reconstruct).
	Path string
	// Head is the log position of the released state: it depended on every
	// insert of the log with seq ≤ Head (Keep records it).
	Head int64

	// lastRequest is the newest forget request when the state was read:
	// Keep refuses the release if a forget has committed since.
	lastRequest int64
}

// Release releases the current state through the toolkit's certified
// release (package certify) with the spec's privacy target, calibration,
// sampler and memory policy (spec.Alpha, Deletion, Retained and Header are
// set here and must be left unset):
//
//   - When every forget so far was served exactly, the state is the replay
//     from θ0 of the deletion-edited log, bit for bit what training without
//     the forgotten samples gives: it is released as it is, memory
//     included, with α = 0 (certify.CertifyExact, with the store's own
//     establishment of exactness).
//   - When exactly one approximate forget is pending, α is derived from its
//     public description — the deleted inserts' ages at the request, the
//     update steps both trajectories took since (the inserts ingested after
//     it), and its intervention's allowance (certify.Deletion) — provided
//     the learner is certifiable (olbfgs.Config.Radius) and the store can
//     find the request's state in its checkpoints.
//   - When several approximate forgets are pending and the learner keeps
//     no curvature memory (the scheduled bound, docs/theory.md §16.6), α
//     is derived from all of them at once (certify.Deletion.Earlier): each
//     request's ages, its step count and its intervention.
//   - Otherwise α is the diameter 2W' of the learner's ball, proved
//     whatever happened (certify.Spec without Deletion): several pending
//     requests on a learner with a curvature memory, or a request whose
//     description the store cannot reconstruct.
//
// A memory Rebuild replays the last τ retained inserts of the log from the
// noised w. Nothing is written to the store: charging a ledger, signing the
// certificate, keeping the release in the store (Keep) and saving the files
// are the caller's (the release command does all four, in that order). Errors: the
// certify errors (ErrNotCertifiable when the learner has no radius and a
// noised release is needed), ErrClosed.
func (s *Store) Release(spec certify.Spec) (*Released, error) {
	if spec.Alpha != nil || spec.Deletion != nil || spec.Retained != nil || spec.Header != nil || spec.Established != nil {
		return nil, errors.New("store: Release: leave Alpha, Deletion, Retained, Header and Established unset: the store derives them")
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.db == nil {
		return nil, ErrClosed
	}
	// Everything the release depends on — the newest request (Keep's
	// staleness check), the state, its head, the forgotten count, the
	// pending requests, their checkpoint and the retained inserts — is
	// read in ONE read transaction, so it is one committed snapshot of the
	// store: an ingest or forget committed by another process meanwhile is
	// either wholly seen or not at all (a Head older than the released
	// state would let a later forget miss the kept release).
	var (
		state       *olbfgs.Learner
		head        int64
		exact       bool
		lastRequest int64
		forgotten   int
		pending     []Request
		del         *certify.Deletion
	)
	err := s.readTx(context.Background(), func(ctx context.Context, tx *sql.Tx) error {
		if err := tx.QueryRowContext(ctx, `SELECT COALESCE(MAX(request), 0) FROM forget_requests`).Scan(&lastRequest); err != nil {
			return err
		}
		state, head, exact = s.state.Clone(), s.head, s.exact
		if exact {
			return tx.QueryRowContext(ctx, `SELECT count(*) FROM forgotten`).Scan(&forgotten)
		}
		var err error
		if pending, err = s.requests(ctx, tx, `WHERE needs_noise = 1 AND resolved_by IS NULL`); err != nil {
			return err
		}
		switch {
		case len(pending) == 1:
			if d, ok, err := s.pendingDeletion(ctx, tx, pending[0], state); err != nil {
				return err
			} else if ok {
				del = d
			}
		case len(pending) > 1 && state.Config().Memory == 0:
			if d, ok, err := s.pendingDeletions(ctx, tx, pending, state); err != nil {
				return err
			} else if ok {
				del = d
			}
		}
		if spec.Memory == certify.Rebuild {
			if spec.Retained, err = s.lastRetained(ctx, tx, state.Config().Memory); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("store: release: %w", err)
	}
	h := s.hdr
	spec.Header = &h
	if exact {
		spec.Deletions = forgotten
		if spec.Intervention == "" {
			spec.Intervention = "exact forget (replay from a checkpoint)"
		}
		spec.Established = established.New("the model store's state is the replay from θ0 of its log, from which every forgotten insert was removed (every forget served exactly)")
		rel, cert, err := certify.CertifyExact(state, spec)
		if err != nil {
			return nil, err
		}
		return &Released{Release: rel, Certificate: cert, Path: "exact", Head: head, lastRequest: lastRequest}, nil
	}
	out := &Released{Path: "diameter", Head: head, lastRequest: lastRequest}
	if del != nil {
		spec.Deletion, out.Path = del, "derived"
		spec.Established = established.New("the model store served the request with the intervention and counted the steps since")
	}
	if spec.Intervention == "" {
		spec.Intervention = "model store"
		if len(pending) == 1 {
			spec.Intervention = pending[0].Intervention
		}
	}
	spec.Deletions = 0
	if spec.Deletion == nil {
		for _, p := range pending {
			spec.Deletions += p.USize
		}
	}
	out.Release, out.Certificate, err = certify.Certify(state, spec)
	if err != nil {
		return nil, err
	}
	return out, nil
}

// pendingDeletion describes a pending approximate request for a derived α:
// its ages at the request, the steps taken since (the current state's event
// count minus that of the request's intervention checkpoint) and its
// operator. ok is false when the description cannot be reconstructed (the
// operator unknown, retain fine-tuning whose replay count is not recorded,
// or the checkpoint gone): the caller then uses the diameter bound. q is
// the caller's read transaction.
func (s *Store) pendingDeletion(ctx context.Context, q querier, r Request, state *olbfgs.Learner) (*certify.Deletion, bool, error) {
	var b unlearn.Builtin
	found := false
	for _, op := range unlearn.Paper(state.Config().Memory) {
		if op.Name() == r.Intervention {
			b, found = unlearn.BuiltinOf(op)
		}
	}
	if !found || b.Kind == unlearn.KindRetainFT || b.Kind == unlearn.KindWindowReplay {
		return nil, false, nil
	}
	var t int
	err := q.QueryRowContext(ctx, `SELECT t FROM checkpoints WHERE origin = 'intervention' ORDER BY seq DESC LIMIT 1`).Scan(&t)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, err
	}
	if t > state.T() {
		return nil, false, nil
	}
	d := &certify.Deletion{Ages: slices.Clone(r.Ages), Horizon: state.T() - t, Intervention: b}
	if state.Config().Memory == 0 {
		// Every event of the log is an insert: the count at the
		// intervention is the learner's T₀ (the scheduled bound's).
		d.Steps = t
	}
	return d, true, nil
}

// pendingDeletions describes several pending approximate requests of a
// learner without curvature memory for one derived α (certify.Deletion
// with Earlier, oldest first): each request's ages, operator and step
// count Tᵢ, the learner's count when its intervention acted. Every log
// event is an insert (erased ones stay in the log as steps), so an insert
// at log position p (1-based) deleted at age a was deleted at Tᵢ = p + a;
// Tᵢ is read from the log positions of the request's inserts and must be
// the same for every one of them. ok is false (the caller uses the
// diameter) when an operator is unknown or not covered, a position is
// missing, or the positions and ages disagree. q is the caller's read
// transaction.
func (s *Store) pendingDeletions(ctx context.Context, q querier, pending []Request, state *olbfgs.Learner) (*certify.Deletion, bool, error) {
	reqs := make([]certify.Request, 0, len(pending))
	for _, r := range pending {
		var b unlearn.Builtin
		found := false
		for _, op := range unlearn.Paper(0) {
			if op.Name() == r.Intervention {
				b, found = unlearn.BuiltinOf(op)
			}
		}
		if !found || b.Kind == unlearn.KindRetainFT || b.Kind == unlearn.KindWindowReplay || len(r.Ages) != len(r.IDs) || len(r.IDs) == 0 {
			return nil, false, nil
		}
		pos := make([]int, len(r.IDs))
		for i, id := range r.IDs {
			err := q.QueryRowContext(ctx, `SELECT count(*) FROM events WHERE seq <= (SELECT seq FROM events WHERE id = ?)`, id).Scan(&pos[i])
			if err != nil {
				return nil, false, err
			}
			if pos[i] == 0 {
				return nil, false, nil // not in the log
			}
		}
		slices.Sort(pos)
		ages := slices.Clone(r.Ages)
		slices.Sort(ages)
		slices.Reverse(ages) // the oldest insert has the largest age
		t := pos[0] + ages[0]
		for i := range pos {
			if pos[i]+ages[i] != t {
				return nil, false, nil
			}
		}
		if t > state.T() || (len(reqs) > 0 && t < reqs[len(reqs)-1].Steps) {
			return nil, false, nil
		}
		reqs = append(reqs, certify.Request{Ages: slices.Clone(r.Ages), Steps: t, Intervention: b})
	}
	last := reqs[len(reqs)-1]
	return &certify.Deletion{Ages: last.Ages, Steps: last.Steps, Horizon: state.T() - last.Steps, Intervention: last.Intervention, Earlier: reqs[:len(reqs)-1]}, true, nil
}

// lastRetained returns the last n inserts of the log whose payload is not
// erased (forgotten inserts are removed or erased), in log order, read
// through q (the caller's read transaction).
func (s *Store) lastRetained(ctx context.Context, q querier, n int) ([]stream.Event, error) {
	rows, err := q.QueryContext(ctx, `SELECT id, payload FROM events WHERE payload IS NOT NULL ORDER BY seq DESC LIMIT ?`, n)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []stream.Event
	for rows.Next() {
		var id int64
		var p []byte
		if err := rows.Scan(&id, &p); err != nil {
			return nil, err
		}
		z, err := decodePayload(p, s.cfg.Dim)
		if err != nil {
			return nil, err
		}
		out = append(out, stream.Event{Op: stream.Insert, ID: id, Sample: z})
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	slices.Reverse(out)
	if out == nil {
		out = []stream.Event{}
	}
	return out, nil
}
