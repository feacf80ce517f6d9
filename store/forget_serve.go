package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"
)

// serve carries out plan for the batch f in tx and records it: the request
// rows, the kept releases and keys it erases, the exact replay or the
// noised intervention, the tombstones. It returns one report per request.
func (s *Store) serve(ctx context.Context, tx *sql.Tx, f forgetFacts, plan forgetPlan, o ForgetOptions, start time.Time) ([]ForgetReport, error) {
	reps := make([]ForgetReport, len(f.requests))
	for i, rf := range f.requests {
		reps[i] = ForgetReport{IDs: rf.targets, AlreadyForgotten: rf.already, Path: plan.path, Reason: plan.reason,
			FromSeq: f.restore, ExactReplay: plan.exactReplay}
		if reps[i].IDs == nil && plan.path != PathNone {
			reps[i].IDs = []int64{}
		}
	}
	if plan.path == PathNone {
		for i := range reps {
			reps[i].NeedsNoise = !f.exact
		}
		return reps, nil
	}
	if err := s.insertRequests(tx, f, reps); err != nil {
		return nil, err
	}
	// A resolution forgets no insert: no kept release is made from a state
	// that includes one (the pending requests erased theirs).
	if !f.resolve {
		owner := ownerOf(f, f.minID)
		erased, err := eraseReleases(tx, f.minSeq, f.minID)
		if err != nil {
			return nil, err
		}
		reps[owner].ErasedReleases, reps[owner].ReleasesErased = erased, len(erased)
	}
	// Before the events: ON DELETE CASCADE would take them uncounted.
	for i, rf := range f.requests {
		n, err := eraseKeys(tx, rf.targets)
		if err != nil {
			return nil, err
		}
		reps[i].KeysErased = n
	}
	var err error
	if plan.path == PathExact {
		err = s.serveExact(ctx, tx, f, reps)
	} else {
		err = s.serveApproximate(ctx, tx, f, o, reps)
	}
	if err != nil {
		return nil, err
	}
	for i, rf := range f.requests {
		for _, id := range rf.targets {
			if _, err := tx.Exec(`INSERT INTO forgotten (id, request) VALUES (?, ?)`, id, reps[i].Request); err != nil {
				return nil, err
			}
		}
		reps[i].NeedsNoise = !s.exact
		reps[i].Wall = time.Since(start) // recorded without the commit; the report's includes it
		if err := recordRequest(tx, &reps[i]); err != nil {
			return nil, err
		}
	}
	// Every row the batch wrote or resolved, summed as it now is.
	changed := slices.Clone(resolvedOf(reps))
	for _, r := range reps {
		changed = append(changed, r.Request)
	}
	if err := resumRequests(ctx, tx, changed); err != nil {
		return nil, err
	}
	return reps, nil
}

// resolvedOf is the requests the batch resolved (its first report lists
// them).
func resolvedOf(reps []ForgetReport) []int64 {
	if len(reps) == 0 {
		return nil
	}
	return reps[0].Resolved
}

// ownerOf is the index of the request of f whose targets hold id.
func ownerOf(f forgetFacts, id int64) int {
	for i, rf := range f.requests {
		if slices.Contains(rf.targets, id) {
			return i
		}
	}
	return 0
}

// insertRequests inserts a provisional row per request (completed by
// recordRequest), so that tombstones and resolutions can name it.
func (s *Store) insertRequests(tx *sql.Tx, f forgetFacts, reps []ForgetReport) error {
	for i := range reps {
		res, err := tx.Exec(`INSERT INTO forget_requests (time, ids, path, reason, from_seq, events_replayed, wall_ns, u_size, needs_noise, head)
			VALUES (?, ?, 'exact', '', ?, 0, 0, ?, 0, ?)`, now(), idsJSON(reps[i].IDs), f.restore, len(reps[i].IDs), s.head)
		if err != nil {
			return err
		}
		if reps[i].Request, err = res.LastInsertId(); err != nil {
			return err
		}
	}
	return nil
}

// recordRequest completes a request's row from its report.
func recordRequest(tx *sql.Tx, rep *ForgetReport) error {
	var ages, interv, disclosed, source any
	var alpha, sigma, eps, delta, release any
	noised := 0
	if rep.Path == PathApproximate {
		b, _ := json.Marshal(rep.Ages)
		ages, interv = string(b), rep.Intervention
		if r := rep.Released; r != nil {
			c := r.Certificate
			noised, release, source, alpha, sigma, eps, delta = 1, rep.ReleaseID, c.Sensitivity.Source, c.Sensitivity.Alpha, c.Sigma, c.Epsilon, c.Delta
			if d := c.Sensitivity.Deletion; d != nil {
				b, _ := json.Marshal(d.Ages)
				disclosed = string(b)
			}
		}
	}
	erased, err := json.Marshal(rep.ErasedReleases)
	if err != nil {
		return err
	}
	if rep.ErasedReleases == nil {
		erased = []byte("[]")
	}
	_, err = tx.Exec(`UPDATE forget_requests SET path = ?, reason = ?, events_replayed = ?, wall_ns = ?, intervention = ?, ages = ?, needs_noise = ?,
		releases_erased = ?, erased_releases = ?, noised = ?, release = ?, alpha_source = ?, alpha = ?, sigma = ?, epsilon = ?, delta = ?, disclosed_ages = ?
		WHERE request = ?`,
		string(rep.Path), rep.Reason, rep.EventsReplayed, rep.Wall.Nanoseconds(), interv, ages, b2i(rep.Path == PathApproximate),
		rep.ReleasesErased, string(erased), noised, release, source, alpha, sigma, eps, delta, disclosed, rep.Request)
	return err
}

func idsJSON(ids []int64) string {
	if ids == nil {
		ids = []int64{}
	}
	b, _ := json.Marshal(ids)
	return string(b)
}

// serveExact deletes the batch's events, restores the checkpoint at
// f.restore and replays the log after it, regenerating every checkpoint
// after it; the pending approximate requests are resolved by the batch's
// first request.
func (s *Store) serveExact(ctx context.Context, tx *sql.Tx, f forgetFacts, reps []ForgetReport) error {
	l, _, err := s.readCheckpoint(ctx, tx, f.restore)
	if err != nil {
		return err
	}
	for _, id := range f.u {
		if _, err := tx.Exec(`DELETE FROM events WHERE id = ?`, id); err != nil {
			return err
		}
	}
	// Erased events of earlier approximate requests after c: the replay
	// drops them, as the counterfactual does.
	if _, err := tx.Exec(`DELETE FROM events WHERE seq > ? AND payload IS NULL`, f.restore); err != nil {
		return err
	}
	if _, err := tx.Exec(`DELETE FROM checkpoints WHERE seq > ?`, f.restore); err != nil {
		return err
	}
	rstart := time.Now()
	n, ck, err := s.replay(tx, l, f.restore, true)
	if err != nil {
		return err
	}
	snap, err := s.encodeState(l)
	if err != nil {
		return err
	}
	if err := writeState(tx, true, s.head, snap); err != nil {
		return err
	}
	resolved, err := resolvePending(tx, reps[0].Request)
	if err != nil {
		return err
	}
	for i := range reps {
		reps[i].Replay = time.Since(rstart)
		reps[i].EventsReplayed, reps[i].CheckpointsRewritten = n, ck
		reps[i].Resolved = resolved
	}
	if f.resolve {
		reps[0].Reason = resolutionReason(f, resolved, reps[0].ExactReplay)
	}
	s.state, s.exact, s.damage = l, true, nil
	return nil
}

// resolvePending marks every pending approximate request resolved by
// request by, and returns them, ascending.
func resolvePending(tx *sql.Tx, by int64) ([]int64, error) {
	rows, err := tx.Query(`UPDATE forget_requests SET resolved_by = ? WHERE needs_noise = 1 AND resolved_by IS NULL RETURNING request`, by)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []int64
	for rows.Next() {
		var r int64
		if err := rows.Scan(&r); err != nil {
			return nil, err
		}
		out = append(out, r)
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	slices.Sort(out)
	return out, nil
}

// resolutionReason says what a resolution did: the pending requests it
// resolved, and the damaged state it rebuilt.
func resolutionReason(f forgetFacts, resolved []int64, replayed int) string {
	var parts []string
	if f.damaged {
		parts = append(parts, "rebuild of the damaged state")
	}
	if len(resolved) > 0 {
		parts = append(parts, fmt.Sprintf("resolution of pending approximate %s %s",
			map[bool]string{true: "request", false: "requests"}[len(resolved) == 1], joinIDs(resolved)))
	}
	why := fmt.Sprintf("exact replay of %d events from the checkpoint at seq %d", replayed, f.restore)
	if len(resolved) > 0 {
		why += fmt.Sprintf(", before the oldest erased insert (seq %d)", f.minSeq)
	}
	return strings.Join(parts, " and ") + ": " + why
}
