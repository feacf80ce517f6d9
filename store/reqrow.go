package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"math"
)

// Every forget_requests row carries the SHA-256 of all its columns
// (schema version 8; checksum.go has the construction). The store reads
// these rows to decide what it publishes: an approximate forget chooses
// between the derived α and the diameter bound from the pending requests'
// head, noised and u_size (pendingBefore), a release counts their
// deletions, the resolution policy reads their time and head, and status
// reports their α and σ. The sum is rewritten, in the writer's
// transaction, whenever a row changes (recordRequest, resolvePending): the
// row is read back and summed as stored, after the cheap check of that
// same transaction verified every row it did not write.

// sumRequestDomain is the domain label of a forget_requests row's sum
// (never change it: stored sums use it).
const sumRequestDomain = "unlearn-store/v8/forget-request"

// requestCols are the columns of a forget_requests row, in the order of
// requestRow.scan and of the sum.
const requestCols = `request, time, ids, path, reason, from_seq, events_replayed, wall_ns, intervention, ages,
	u_size, needs_noise, resolved_by, releases_erased, erased_releases, noised, release, alpha_source, alpha, sigma,
	epsilon, delta, disclosed_ages, head`

// requestRow is a forget_requests row as stored.
type requestRow struct {
	request                         int64
	time, ids, path, reason         string
	fromSeq, eventsReplayed, wallNS int64
	intervention, ages              sql.NullString
	uSize, needsNoise               int64
	resolvedBy                      sql.NullInt64
	releasesErased                  int64
	erasedReleases                  sql.NullString
	noised                          int64
	release                         sql.NullInt64
	alphaSource                     sql.NullString
	alpha, sigma, epsilon, delta    sql.NullFloat64
	disclosedAges                   sql.NullString
	head                            sql.NullInt64
	sum                             []byte
}

// scan reads requestCols followed by sha256.
func (r *requestRow) scan(rows interface{ Scan(...any) error }) error {
	return rows.Scan(&r.request, &r.time, &r.ids, &r.path, &r.reason, &r.fromSeq, &r.eventsReplayed, &r.wallNS,
		&r.intervention, &r.ages, &r.uSize, &r.needsNoise, &r.resolvedBy, &r.releasesErased, &r.erasedReleases,
		&r.noised, &r.release, &r.alphaSource, &r.alpha, &r.sigma, &r.epsilon, &r.delta, &r.disclosedAges, &r.head, &r.sum)
}

func (s *summer) nullFloat(v sql.NullFloat64) *summer {
	if !v.Valid {
		return s.null()
	}
	return s.float(v.Float64)
}

// sumRequest is the sum of a forget_requests row: every column but the
// sum, in the order of requestCols.
func sumRequest(r *requestRow) []byte {
	return newSummer(sumRequestDomain).int(r.request).str(r.time).str(r.ids).str(r.path).str(r.reason).
		int(r.fromSeq).int(r.eventsReplayed).int(r.wallNS).nullStr(r.intervention).nullStr(r.ages).
		int(r.uSize).int(r.needsNoise).nullInt(r.resolvedBy).int(r.releasesErased).nullStr(r.erasedReleases).
		int(r.noised).nullInt(r.release).nullStr(r.alphaSource).nullFloat(r.alpha).nullFloat(r.sigma).
		nullFloat(r.epsilon).nullFloat(r.delta).nullStr(r.disclosedAges).nullInt(r.head).sum()
}

// resumRequests stores the sum of each request row of ids as it now is in
// tx (the writer's transaction, after its cheap check).
func resumRequests(ctx context.Context, tx *sql.Tx, ids []int64) error {
	for _, id := range ids {
		var r requestRow
		if err := r.scan(tx.QueryRowContext(ctx, `SELECT `+requestCols+`, sha256 FROM forget_requests WHERE request = ?`, id)); err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, `UPDATE forget_requests SET sha256 = ? WHERE request = ?`, sumRequest(&r), id); err != nil {
			return err
		}
	}
	return nil
}

// fillRequestSums is the Go part of the migration to schema version 8: it
// stores the sum of every request row already in the store, as it is (the
// rule of fillSums: a row damaged before the upgrade is not repaired by
// it; the invariants of verifyRequests still apply to it).
func fillRequestSums(ctx context.Context, tx *sql.Tx) error {
	rows, err := tx.QueryContext(ctx, `SELECT request FROM forget_requests`)
	if err != nil {
		return err
	}
	var ids []int64
	for rows.Next() {
		var id int64
		if err := rows.Scan(&id); err != nil {
			rows.Close()
			return err
		}
		ids = append(ids, id)
	}
	if err := rows.Close(); err != nil {
		return err
	}
	return resumRequests(ctx, tx, ids)
}

// alphaSources are the sources of α a certificate may name
// (certify.Sensitivity.Source).
var alphaSources = map[string]bool{"derived": true, "diameter": true, "exact": true, "assumed": true}

// verifyRequests checks every forget_requests row's sum and the
// invariants of a row against the others and the log:
//
//   - path exact ⇔ needs_noise = 0; an exact request has no intervention,
//     ages or noised release; an approximate one has ages, one per
//     deleted id;
//   - u_size is the length of its id list and the number of tombstones
//     that name it (with verifyTombstones, every tombstone is listed);
//   - head (NULL only before schema 6, never with noised = 1) and from_seq
//     lie at or below the log head; head is at or after every event the
//     request erased that is still in the log, and the heads of
//     successive requests never decrease;
//   - resolved_by names a later exact request, and only an approximate
//     request is resolved;
//   - a noised request names its kept release, which is kept or listed as
//     erased by a request, an α source in certify's domain, α ≥ 0, σ > 0,
//     ε > 0 and 0 < δ < 1, all finite; a request not noised has none of
//     them.
func (s *Store) verifyRequests(ctx context.Context, q querier) error {
	tombs, err := tombstonesPerRequest(ctx, q)
	if err != nil {
		return err
	}
	newest, err := newestLoggedPerRequest(ctx, q)
	if err != nil {
		return err
	}
	kept, err := keptReleaseIDs(ctx, q)
	if err != nil {
		return err
	}
	rows, err := q.QueryContext(ctx, `SELECT `+requestCols+`, sha256 FROM forget_requests ORDER BY request`)
	if err != nil {
		return err
	}
	var all []requestRow
	paths := map[int64]string{}
	for rows.Next() {
		var r requestRow
		if err := r.scan(rows); err != nil {
			rows.Close()
			return corrupt(fmt.Sprintf("deletion request %d", r.request), "unreadable: %v", err)
		}
		if !sameSum(r.sum, sumRequest(&r)) {
			rows.Close()
			return corrupt(fmt.Sprintf("deletion request %d", r.request), "its checksum does not match its content")
		}
		all = append(all, r)
		paths[r.request] = r.path
	}
	if err := rows.Close(); err != nil {
		return err
	}
	erased := map[int64]bool{}
	for _, r := range all {
		if !r.erasedReleases.Valid {
			continue
		}
		var es []ErasedRelease
		if err := json.Unmarshal([]byte(r.erasedReleases.String), &es); err != nil {
			return corrupt(fmt.Sprintf("deletion request %d", r.request), "its list of erased releases is not JSON")
		}
		for _, e := range es {
			erased[e.Release] = true
		}
	}
	prevHead := int64(0)
	for i := range all {
		r := &all[i]
		why := s.requestInvariant(r, tombs, kept, erased, paths)
		if why == "" && r.head.Valid {
			switch seq, ok := newest[r.request]; {
			case ok && r.head.Int64 < seq:
				why = fmt.Sprintf("its log head %d lies before the event at seq %d it forgot", r.head.Int64, seq)
			case r.head.Int64 < prevHead:
				why = fmt.Sprintf("its log head %d lies before an earlier request's, %d", r.head.Int64, prevHead)
			}
			prevHead = r.head.Int64
		}
		if why != "" {
			return corrupt(fmt.Sprintf("deletion request %d", r.request), "%s", why)
		}
	}
	return nil
}

// requestInvariant returns the first invariant of verifyRequests that r
// breaks, in words, or "".
func (s *Store) requestInvariant(r *requestRow, tombs map[int64]int64, kept, erased map[int64]bool, paths map[int64]string) string {
	approx := r.path == string(PathApproximate)
	var ids []int64
	if err := json.Unmarshal([]byte(r.ids), &ids); err != nil {
		return "its id list is not JSON"
	}
	switch {
	case (r.needsNoise == 1) != approx:
		return fmt.Sprintf("its path is %s, but needs_noise is %d", r.path, r.needsNoise)
	case int64(len(ids)) != r.uSize || tombs[r.request] != r.uSize:
		return fmt.Sprintf("it forgot %d ids, lists %d and %d tombstones name it", r.uSize, len(ids), tombs[r.request])
	case r.head.Valid && (r.head.Int64 < 0 || r.head.Int64 > s.head):
		return fmt.Sprintf("its log head %d is not in [0, %d]", r.head.Int64, s.head)
	case !r.head.Valid && r.noised == 1:
		return "it is noised (schema 6 or later) but has no log head"
	case r.fromSeq < 0 || r.fromSeq > s.head:
		return fmt.Sprintf("its replay start %d is not in [0, %d]", r.fromSeq, s.head)
	case r.resolvedBy.Valid && (!approx || r.resolvedBy.Int64 <= r.request || paths[r.resolvedBy.Int64] != string(PathExact)):
		return fmt.Sprintf("it is marked resolved by request %d, which is not a later exact request of an approximate one", r.resolvedBy.Int64)
	case approx != r.ages.Valid || approx != r.intervention.Valid:
		return "its intervention and ages do not match its path"
	}
	if approx {
		var ages []int
		if err := json.Unmarshal([]byte(r.ages.String), &ages); err != nil || int64(len(ages)) != r.uSize {
			return "its ages are not one per deleted id"
		}
	}
	noisedCols := []bool{r.release.Valid, r.alphaSource.Valid, r.alpha.Valid, r.sigma.Valid, r.epsilon.Valid, r.delta.Valid}
	for _, v := range noisedCols {
		if v != (r.noised == 1) {
			return "its release, α, σ, ε and δ do not match its noised flag"
		}
	}
	if r.noised == 0 {
		if r.disclosedAges.Valid {
			return "it discloses ages but kept no noised release"
		}
		return ""
	}
	finite := func(v float64) bool { return !math.IsNaN(v) && !math.IsInf(v, 0) }
	switch {
	case !approx:
		return "an exact request is marked noised"
	case !kept[r.release.Int64] && !erased[r.release.Int64]:
		return fmt.Sprintf("its release %d is neither kept nor recorded as erased", r.release.Int64)
	case !alphaSources[r.alphaSource.String]:
		return fmt.Sprintf("its α source %q is not one a certificate names", r.alphaSource.String)
	case !finite(r.alpha.Float64) || r.alpha.Float64 < 0:
		return "its α is not a finite number ≥ 0"
	case !finite(r.sigma.Float64) || r.sigma.Float64 <= 0:
		return "its σ is not a finite number > 0"
	case !finite(r.epsilon.Float64) || r.epsilon.Float64 <= 0:
		return "its ε is not a finite number > 0"
	case !(r.delta.Float64 > 0 && r.delta.Float64 < 1):
		return "its δ is not in (0, 1)"
	}
	return ""
}

// tombstonesPerRequest counts the tombstones that name each request.
func tombstonesPerRequest(ctx context.Context, q querier) (map[int64]int64, error) {
	rows, err := q.QueryContext(ctx, `SELECT request, count(*) FROM forgotten GROUP BY request`)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := map[int64]int64{}
	for rows.Next() {
		var req, n int64
		if err := rows.Scan(&req, &n); err != nil {
			return nil, err
		}
		out[req] = n
	}
	return out, rows.Err()
}

// newestLoggedPerRequest returns, for each request whose forgotten ids
// still have an event row (erased, pending), the newest such seq: the log
// head when the request was served was at or after it.
func newestLoggedPerRequest(ctx context.Context, q querier) (map[int64]int64, error) {
	rows, err := q.QueryContext(ctx, `SELECT f.request, max(e.seq) FROM forgotten f JOIN events e ON e.id = f.id GROUP BY f.request`)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := map[int64]int64{}
	for rows.Next() {
		var req, seq int64
		if err := rows.Scan(&req, &seq); err != nil {
			return nil, err
		}
		out[req] = seq
	}
	return out, rows.Err()
}

// keptReleaseIDs returns the ids of the kept releases.
func keptReleaseIDs(ctx context.Context, q querier) (map[int64]bool, error) {
	rows, err := q.QueryContext(ctx, `SELECT release FROM releases`)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := map[int64]bool{}
	for rows.Next() {
		var id int64
		if err := rows.Scan(&id); err != nil {
			return nil, err
		}
		out[id] = true
	}
	return out, rows.Err()
}
