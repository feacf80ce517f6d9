package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"slices"
	"strings"

	"unlearn/certify"
	"unlearn/internal/established"
	"unlearn/olbfgs"
	"unlearn/stream"
)

// Released is a certified release of the store's state and how its
// sensitivity was established.
type Released struct {
	Release     *certify.Release
	Certificate *certify.Certificate
	// Path says how α was obtained: "exact" (every forget was served by
	// replay: the state is the counterfactual, no noise), "derived" (the
	// release of an approximate forget, α from its public description) or
	// "diameter" (α = 2W', whatever produced the state: an approximate
	// forget whose request the store cannot describe).
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
//   - When every forget so far was served by replay (or resolved), the
//     state is the replay from θ0 of the deletion-edited log, bit for bit
//     what training without the forgotten samples gives: it is released as
//     it is, memory included, with α = 0 (certify.CertifyExact, with the
//     store's own establishment of exactness).
//   - While an approximate request is pending, Release refuses
//     (ErrPending), naming the release that request's forget published.
//     The state is then that noised, certified release continued on
//     retained data (the store keeps nothing un-noised of it), so the
//     forget's release is the one to serve; a new noised release would be
//     a second guarantee at the diameter α, charged again, at chance level
//     for any useful ε (docs/trust.md).
//
// A memory Rebuild replays the last τ retained inserts of the log from the
// noised w. Before anything, the store checks itself (the cheap check of
// verify); a damaged store is refused (*CorruptError). Nothing is written
// to the store: charging a ledger, signing the certificate, keeping the
// release in the store (Keep) and saving the files are the caller's (the
// release command does all four, in that order). Errors: the certify errors
// (ErrNotCertifiable when the learner has no radius and a noised release is
// needed), *CorruptError, ErrClosed.
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
	// pending requests and the retained inserts — is read in ONE read
	// transaction, after the check, so it is one committed snapshot of the
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
	)
	err := s.readTx(context.Background(), func(ctx context.Context, tx *sql.Tx) error {
		if err := s.verify(ctx, tx, checkCheap, false); err != nil {
			return err
		}
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
	if len(pending) > 0 {
		return nil, pendingError(pending)
	}
	if spec.Intervention == "" {
		spec.Intervention = "model store"
		if len(pending) == 1 {
			spec.Intervention = pending[0].Intervention
		}
	}
	spec.Deletions = 0
	for _, p := range pending {
		spec.Deletions += p.USize
	}
	out := &Released{Path: "diameter", Head: head, lastRequest: lastRequest}
	out.Release, out.Certificate, err = certify.Certify(state, spec)
	if err != nil {
		return nil, err
	}
	return out, nil
}

// lastRetained returns the last n inserts of the log whose payload is not
// erased (forgotten inserts are removed or erased), in log order, read
// through q (the caller's read transaction).
func (s *Store) lastRetained(ctx context.Context, q querier, n int) ([]stream.Event, error) {
	rows, err := q.QueryContext(ctx, `SELECT seq, id, payload, sha256 FROM events WHERE payload IS NOT NULL ORDER BY seq DESC LIMIT ?`, n)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []stream.Event
	for rows.Next() {
		var seq, id int64
		var p, sum []byte
		if err := rows.Scan(&seq, &id, &p, &sum); err != nil {
			return nil, err
		}
		if !sameSum(sum, sumEvent(seq, id, p, false)) {
			return nil, corrupt(fmt.Sprintf("event seq %d (id %d)", seq, id), "its checksum does not match its payload")
		}
		z, err := decodePayload(p, s.cfg.Dim)
		if err != nil {
			return nil, corrupt(fmt.Sprintf("event seq %d (id %d)", seq, id), "its payload does not decode")
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

// pendingError is Release's refusal while approximate requests are
// pending: it names the releases their forgets published (the noised
// states, certified for those deletions), which are the ones to serve.
func pendingError(pending []Request) error {
	var ids, gone []string
	for _, r := range pending {
		if r.Release > 0 {
			ids = append(ids, fmt.Sprint(r.Release))
		} else {
			gone = append(gone, fmt.Sprint(r.Request))
		}
	}
	msg := "the state is the noised release an approximate forget published, continued on retained data; a new noised release of it would be a second guarantee charged again at the diameter α"
	if len(ids) > 0 {
		msg += fmt.Sprintf("; serve the release the forget published ('unlearn releases --get %s')", ids[len(ids)-1])
		if len(ids) > 1 {
			msg += fmt.Sprintf(" (releases of the pending forgets: %s)", strings.Join(ids, ", "))
		}
	}
	if len(gone) > 0 {
		msg += fmt.Sprintf("; the release of request %s was erased by a later forget", strings.Join(gone, ", "))
	}
	return fmt.Errorf("store: release: %w: %s, or resolve them ('unlearn forget --resolve') for an exact release", ErrPending, msg)
}
