package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"slices"

	"unlearn/stream"
)

// forgetFacts is what a forget reads of the store, in its transaction,
// before it decides anything (forgetFacts); decideForget turns it into a
// plan without touching the database.
type forgetFacts struct {
	requests []requestFacts // the batch's requests, in order
	u        []int64        // every id the batch forgets now, ascending
	resolve  bool           // a resolution (Resolve): u is empty
	// minSeq and minID are the oldest insert the batch deletes (for a
	// resolution, the oldest erased insert); minSeq −1: none.
	minSeq, minID int64
	// restore is the newest exact checkpoint before minSeq, and live the
	// events with a payload after it.
	restore int64
	live    int
	// exact: the state is exact (no approximate request pending; the
	// state row's flag); damaged: the state row is damaged (a resolution
	// rebuilds it).
	exact, damaged bool
	// certifiable: the learner has the radius and sample bound a noised
	// state needs.
	certifiable bool
}

// requestFacts are one request's ids: those it forgets now (targets) and
// those an earlier request (or an earlier one of the batch) forgot.
type requestFacts struct {
	targets, already []int64
}

// forgetFacts reads the facts of a batch in tx: the ids of its keys, which
// ids are in the log, the oldest insert, and the checkpoint an exact
// replay would restore. An id never ingested is an error (ErrUnknownID), as
// is an unknown key (ErrUnknownKey); nothing is written.
func (s *Store) forgetFacts(ctx context.Context, tx *sql.Tx, batch []Deletion, resolve bool) (forgetFacts, error) {
	f := forgetFacts{resolve: resolve, minSeq: -1, exact: s.exact, damaged: s.damage != nil, certifiable: s.cfg.Radius > 0}
	seen := map[int64]bool{}
	for _, d := range batch {
		var rf requestFacts
		ids := slices.Clone(d.IDs)
		if len(d.Keys) > 0 {
			kids, err := resolveKeys(tx, d.Keys)
			if err != nil {
				return f, err
			}
			ids = append(ids, kids...)
		}
		slices.Sort(ids)
		for _, id := range slices.Compact(ids) {
			seq, live, err := s.lookupID(ctx, tx, id)
			switch {
			case err != nil:
				return f, err
			case !live || seen[id]:
				rf.already = append(rf.already, id)
				continue
			}
			seen[id] = true
			rf.targets = append(rf.targets, id)
			f.u = append(f.u, id)
			if f.minSeq < 0 || seq < f.minSeq {
				f.minSeq, f.minID = seq, id
			}
		}
		f.requests = append(f.requests, rf)
	}
	slices.Sort(f.u)
	if resolve {
		// The oldest insert an approximate request erased: no checkpoint
		// from it on is exact. A damaged state with nothing erased is
		// rebuilt from the newest exact checkpoint.
		if err := tx.QueryRowContext(ctx, `SELECT COALESCE(MIN(seq), -1) FROM events WHERE payload IS NULL`).Scan(&f.minSeq); err != nil {
			return f, err
		}
		if f.minSeq < 0 && f.damaged {
			f.minSeq = s.head + 1
		}
	}
	if f.minSeq < 0 {
		return f, nil
	}
	if err := tx.QueryRowContext(ctx, `SELECT seq FROM checkpoints WHERE exact = 1 AND seq < ? ORDER BY seq DESC LIMIT 1`, f.minSeq).Scan(&f.restore); err != nil {
		return f, corrupt("the checkpoints", "no exact checkpoint before seq %d: %v", f.minSeq, err)
	}
	err := tx.QueryRowContext(ctx, `SELECT count(*) FROM events WHERE seq > ? AND payload IS NOT NULL`, f.restore).Scan(&f.live)
	return f, err
}

// lookupID finds id in the log: its seq, and whether its payload is there
// (live); an id that is only tombstoned is not live. An id neither in the
// log nor tombstoned is ErrUnknownID — after the table itself, not only
// its index on id, was searched: an id the index lost (a torn write) is
// refused as a damaged store, never answered "never ingested" while its
// payload stays.
func (s *Store) lookupID(ctx context.Context, tx *sql.Tx, id int64) (seq int64, live bool, err error) {
	var erased bool
	var gotID int64
	err = tx.QueryRowContext(ctx, `SELECT seq, payload IS NULL FROM events WHERE id = ?`, id).Scan(&seq, &erased)
	switch {
	case err == nil:
		// The index's row must be the id's: a damaged index may point
		// elsewhere.
		if err := tx.QueryRowContext(ctx, `SELECT id FROM events WHERE seq = ?`, seq).Scan(&gotID); err != nil || gotID != id {
			return 0, false, corrupt("the index of the log on id", "it maps id %d to seq %d, which holds another id", id, seq)
		}
		if erased {
			return seq, false, nil // erased by an approximate request: tombstoned
		}
		return seq, true, nil
	case !errors.Is(err, sql.ErrNoRows):
		return 0, false, err
	}
	var one int
	if err := tx.QueryRowContext(ctx, `SELECT 1 FROM forgotten WHERE id = ?`, id).Scan(&one); err == nil {
		return 0, false, nil
	} else if !errors.Is(err, sql.ErrNoRows) {
		return 0, false, err
	}
	if err := tx.QueryRowContext(ctx, `SELECT seq FROM events NOT INDEXED WHERE id = ?`, id).Scan(&seq); err == nil {
		return 0, false, corrupt("the index of the log on id", "id %d is in the log at seq %d but not in the index", id, seq)
	} else if !errors.Is(err, sql.ErrNoRows) {
		return 0, false, err
	}
	return 0, false, fmt.Errorf("%w: id %d was never ingested", ErrUnknownID, id)
}

// forgetPlan is what decideForget decided: the path, why, and the replay
// it takes or avoided.
type forgetPlan struct {
	path        Path
	reason      string
	exactReplay int // the events an exact replay applies (or would have)
}

// decideForget decides how to serve a batch from its facts alone: nothing
// (every id already forgotten, or nothing pending for a resolution), exact
// replay (no cap, or within it), or the intervention (beyond the cap, on a
// certifiable learner). It reads nothing and writes nothing.
func decideForget(f forgetFacts, o ForgetOptions) (forgetPlan, error) {
	if len(f.u) == 0 && !(f.resolve && (!f.exact || f.damaged)) {
		p := forgetPlan{path: PathNone, reason: "every id was already forgotten"}
		if f.resolve {
			p.reason = "no approximate request is pending: the state is exact"
		}
		return p, nil
	}
	p := forgetPlan{exactReplay: f.live - len(f.u)}
	switch {
	case f.resolve:
		p.path = PathExact // the reason names the requests it resolves (serveExact)
	case o.MaxReplay == 0:
		p.path, p.reason = PathExact, fmt.Sprintf("exact replay of %d events from the checkpoint at seq %d (no replay cap)", p.exactReplay, f.restore)
	case p.exactReplay <= o.MaxReplay:
		p.path, p.reason = PathExact, fmt.Sprintf("exact replay of %d events from the checkpoint at seq %d is within the cap of %d", p.exactReplay, f.restore, o.MaxReplay)
	case !f.certifiable:
		return p, fmt.Errorf("%w: exact replay would apply %d events, more than the cap of %d, and the approximate path keeps only a noised, certified state, which needs a certifiable learner (a radius and a sample bound at Create; unlearn init --radius --sample-bound): serve the request exactly (MaxReplay 0 or larger)",
			ErrNotCertifiable, p.exactReplay, o.MaxReplay)
	default:
		p.path = PathApproximate
		p.reason = fmt.Sprintf("exact replay would apply %d events from the checkpoint at seq %d, more than the cap of %d: applied %s and kept its output only noised (a certified release); serve that release ('unlearn releases --get'); a release is refused until the request is resolved",
			p.exactReplay, f.restore, o.MaxReplay, o.Intervention)
	}
	return p, nil
}

// uSet is the batch's deletion set.
func (f forgetFacts) uSet() stream.IDSet { return stream.NewIDSet(f.u...) }
