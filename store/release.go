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
	// approximate forget pending: α from its public description) or
	// "diameter" (several approximate forgets pending, or one whose
	// description the store cannot reconstruct).
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
//   - Otherwise α is the diameter 2W' of the learner's ball, proved
//     whatever happened (certify.Spec without Deletion).
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
	ctx := context.Background()
	// The newest request is read before the state: a forget committed by
	// another process in between makes Keep refuse the release (safe),
	// never accept a state older than the requests it was checked against.
	var lastRequest int64
	if err := s.db.QueryRowContext(ctx, `SELECT COALESCE(MAX(request), 0) FROM forget_requests`).Scan(&lastRequest); err != nil {
		return nil, fmt.Errorf("store: release: %w", err)
	}
	if err := s.refresh(ctx, s.db); err != nil {
		return nil, err
	}
	state := s.state.Clone()
	h := s.hdr
	spec.Header = &h
	head := s.head
	if s.exact {
		var n int
		if err := s.db.QueryRowContext(ctx, `SELECT count(*) FROM forgotten`).Scan(&n); err != nil {
			return nil, fmt.Errorf("store: release: %w", err)
		}
		spec.Deletions = n
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
	pending, err := s.requests(ctx, `WHERE needs_noise = 1 AND resolved_by IS NULL`)
	if err != nil {
		return nil, err
	}
	out := &Released{Path: "diameter", Head: head, lastRequest: lastRequest}
	if len(pending) == 1 {
		if del, ok, err := s.pendingDeletion(ctx, pending[0], state); err != nil {
			return nil, err
		} else if ok {
			spec.Deletion, out.Path = del, "derived"
			spec.Established = established.New("the model store served the request with the intervention and counted the steps since")
		}
	}
	if spec.Memory == certify.Rebuild {
		if spec.Retained, err = s.lastRetained(ctx, state.Config().Memory); err != nil {
			return nil, err
		}
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
// or the checkpoint gone): the caller then uses the diameter bound.
func (s *Store) pendingDeletion(ctx context.Context, r Request, state *olbfgs.Learner) (*certify.Deletion, bool, error) {
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
	err := s.db.QueryRowContext(ctx, `SELECT t FROM checkpoints WHERE origin = 'intervention' ORDER BY seq DESC LIMIT 1`).Scan(&t)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, fmt.Errorf("store: release: %w", err)
	}
	if t > state.T() {
		return nil, false, nil
	}
	return &certify.Deletion{Ages: slices.Clone(r.Ages), Horizon: state.T() - t, Intervention: b}, true, nil
}

// lastRetained returns the last n inserts of the log whose payload is not
// erased (forgotten inserts are removed or erased), in log order.
func (s *Store) lastRetained(ctx context.Context, n int) ([]stream.Event, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT id, payload FROM events WHERE payload IS NOT NULL ORDER BY seq DESC LIMIT ?`, n)
	if err != nil {
		return nil, fmt.Errorf("store: release: %w", err)
	}
	defer rows.Close()
	var out []stream.Event
	for rows.Next() {
		var id int64
		var p []byte
		if err := rows.Scan(&id, &p); err != nil {
			return nil, fmt.Errorf("store: release: %w", err)
		}
		z, err := decodePayload(p, s.cfg.Dim)
		if err != nil {
			return nil, err
		}
		out = append(out, stream.Event{Op: stream.Insert, ID: id, Sample: z})
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("store: release: %w", err)
	}
	slices.Reverse(out)
	if out == nil {
		out = []stream.Event{}
	}
	return out, nil
}
