package store

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"unlearn/certify"
)

// The deletion queue of a service (package serve): requests are
// acknowledged once a row of forget_queue is committed, and served later,
// in batches, by one Forget of the union of their ids (ServeForgets), whose
// transaction also records every request's signed receipt and erases its
// ids from the queue. See the forget_queue table of schema.go.

// Errors of the deletion queue.
var (
	// ErrUnknownRequest: no queued, served or refused request has this id.
	ErrUnknownRequest = errors.New("deletion request not in the queue")
	// ErrNotQueued: ServeForgets or RefuseForget was given a request that
	// is no longer queued (served or refused already).
	ErrNotQueued = errors.New("deletion request is not queued")
)

// QueueState is the state of a queued deletion request.
type QueueState string

const (
	// Queued: acknowledged (durable), not yet served.
	Queued QueueState = "queued"
	// Served: forgotten; the receipt is stored.
	Served QueueState = "served"
	// Refused: not performed, for the reason recorded; nothing of it was
	// forgotten by it.
	Refused QueueState = "refused"
)

// QueuedForget is a deletion request of the queue. It holds no id or key:
// those are kept only while the request is queued, and only inside the
// store.
type QueuedForget struct {
	// Request is the request's id, given to the requester.
	Request string
	// Received is when the request was committed to the queue; Deadline
	// the time it must be served by.
	Received, Deadline time.Time
	// Records is the number of distinct ids the request names (its keys
	// resolved).
	Records int
	// Commitment is certify.ForgetCommitment of the request's ids and keys.
	Commitment string
	State      QueueState
	// Served is when the request was served or refused (zero while
	// queued); Batch the store request that served it (0 when every record
	// had been forgotten before, or not served).
	Served time.Time
	Batch  int64
	// Receipt is the signed receipt file (certify.SignReceipt), once served.
	Receipt []byte
	// Reason says why a refused request was refused.
	Reason string
}

// EnqueueForget queues a deletion request for ids and for the ids of keys
// (resolved now: a key stands for one id, and only a forget removes it) and
// returns it, committed: once it returns, the request survives a crash. It
// is served later by ServeForgets, at the latest by received + within
// (the caller's promise; the store records it). commitment is
// certify.ForgetCommitment of the ids and keys under the requester's nonce.
//
// An id never ingested (ErrUnknownID) or a key not in the store
// (ErrUnknownKey: never ingested, or already forgotten) is an error and
// nothing is queued; an id already forgotten is accepted (its receipt says
// so).
func (s *Store) EnqueueForget(ids []int64, keys []string, commitment string, within time.Duration) (QueuedForget, error) {
	if len(ids)+len(keys) == 0 {
		return QueuedForget{}, &OptionError{Option: "IDs", Value: "[]", Want: "at least one id or key"}
	}
	if c, err := hex.DecodeString(commitment); err != nil || len(c) != 32 {
		return QueuedForget{}, &OptionError{Option: "Commitment", Value: commitment, Want: "64 hex digits (certify.ForgetCommitment)"}
	}
	if within <= 0 {
		return QueuedForget{}, &OptionError{Option: "Within", Value: within, Want: "must be positive"}
	}
	var id [16]byte
	if _, err := rand.Read(id[:]); err != nil {
		return QueuedForget{}, fmt.Errorf("store: enqueue: %w", err)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.db == nil {
		return QueuedForget{}, ErrClosed
	}
	q := QueuedForget{Request: hex.EncodeToString(id[:]), Commitment: commitment, State: Queued}
	err := s.inTx(context.Background(), func(tx *sql.Tx) error {
		all := slices.Clone(ids)
		if len(keys) > 0 {
			kids, err := resolveKeys(tx, keys)
			if err != nil {
				return err
			}
			all = append(all, kids...)
		}
		slices.Sort(all)
		all = slices.Compact(all)
		for _, id := range all {
			var one int
			err := tx.QueryRow(`SELECT 1 FROM events WHERE id = ?1 UNION ALL SELECT 1 FROM forgotten WHERE id = ?1 LIMIT 1`, id).Scan(&one)
			if errors.Is(err, sql.ErrNoRows) {
				return fmt.Errorf("%w: id %d was never ingested", ErrUnknownID, id)
			}
			if err != nil {
				return err
			}
		}
		q.Received = time.Now().UTC()
		q.Deadline, q.Records = q.Received.Add(within), len(all)
		_, err := tx.Exec(`INSERT INTO forget_queue (request, received, deadline, ids, records, commitment, state) VALUES (?, ?, ?, ?, ?, ?, 'queued')`,
			q.Request, q.Received.Format(time.RFC3339Nano), q.Deadline.Format(time.RFC3339Nano), idsJSON(all), q.Records, commitment)
		return err
	})
	if err != nil {
		return QueuedForget{}, fmt.Errorf("store: enqueue: %w", err)
	}
	return q, nil
}

// ServeOptions are the options of ServeForgets.
type ServeOptions struct {
	// Forget are the options of the batch's forget (a replay cap and its
	// intervention, SkipVacuum).
	Forget ForgetOptions
	// Sign signs a receipt (certify.SignReceipt with the certifier's key)
	// and returns the file to store. Required. It is called inside the
	// forget's transaction: a failure rolls the whole batch back.
	Sign func(*certify.Receipt) ([]byte, error)
	// Toolkit is the toolkit version written into the receipts.
	Toolkit string
}

// ServeReport is what ServeForgets did: the batch's forget and the
// requests it served, each with its receipt.
type ServeReport struct {
	Forget ForgetReport
	Served []QueuedForget
}

// ServeForgets serves the queued requests named by requests as ONE
// deletion: a Forget of the union of their ids (one replay, one VACUUM),
// whose transaction also signs and stores each request's receipt and sets
// its ids to NULL. Either all of it commits or nothing does, and the
// requests stay queued: a crash or an error (ctx cancelled included)
// loses no acknowledged request. A request no longer queued is an error
// wrapping ErrNotQueued (ErrUnknownRequest for an unknown one), and
// nothing changes. If the VACUUM after the commit fails, the report is
// returned with the error (run Vacuum again).
func (s *Store) ServeForgets(ctx context.Context, requests []string, o ServeOptions) (ServeReport, error) {
	if len(requests) == 0 {
		return ServeReport{}, &OptionError{Option: "Requests", Value: "[]", Want: "at least one request"}
	}
	if o.Sign == nil {
		return ServeReport{}, &OptionError{Option: "Sign", Value: "nil", Want: "a receipt signer (certify.SignReceipt)"}
	}
	batch, union, err := s.queuedIDs(ctx, requests)
	if err != nil {
		return ServeReport{}, fmt.Errorf("store: serve: %w", err)
	}
	var served []QueuedForget
	o.Forget.record = func(tx *sql.Tx, rep *ForgetReport) error {
		var rerr error
		served, rerr = s.recordServed(tx, batch, len(union), rep, o)
		return rerr
	}
	rep, err := s.forget(ctx, union, nil, o.Forget)
	if rep.Path == "" { // the transaction did not commit: every request is still queued
		return ServeReport{}, err
	}
	return ServeReport{Forget: rep, Served: served}, err
}

// queuedRequest is a queued request's row, ids included.
type queuedRequest struct {
	QueuedForget
	ids []int64
}

// queuedIDs reads the queued requests and the union of their ids.
func (s *Store) queuedIDs(ctx context.Context, requests []string) ([]queuedRequest, []int64, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.db == nil {
		return nil, nil, ErrClosed
	}
	var out []queuedRequest
	var union []int64
	for _, r := range requests {
		q, ids, err := queueRow(ctx, s.db, r)
		if err != nil {
			return nil, nil, err
		}
		if q.State != Queued {
			return nil, nil, fmt.Errorf("%w: request %s is %s", ErrNotQueued, r, q.State)
		}
		out = append(out, queuedRequest{q, ids})
		union = append(union, ids...)
	}
	slices.Sort(union)
	return out, slices.Compact(union), nil
}

// recordServed runs inside the batch's forget transaction: it signs each
// request's receipt and marks the request served, its ids erased.
func (s *Store) recordServed(tx *sql.Tx, batch []queuedRequest, records int, rep *ForgetReport, o ServeOptions) ([]QueuedForget, error) {
	servedAt := time.Now().UTC()
	erased := make([]int64, len(rep.ErasedReleases))
	for i, e := range rep.ErasedReleases {
		erased[i] = e.Release
	}
	slices.Sort(erased)
	before := map[int64]bool{}
	for _, id := range rep.AlreadyForgotten {
		before[id] = true
	}
	var out []QueuedForget
	for _, q := range batch {
		r := &certify.Receipt{
			Toolkit: o.Toolkit, Request: q.Request,
			Received: certify.ReceiptTime(q.Received), Deadline: certify.ReceiptTime(q.Deadline), Served: certify.ReceiptTime(servedAt),
			Path: string(rep.Path), Records: q.Records, Commitment: q.Commitment,
			Batch:          certify.ReceiptBatch{StoreRequest: rep.Request, Requests: len(batch), Records: records},
			ErasedReleases: erased, Head: s.head, NeedsNoise: rep.NeedsNoise, Pending: pendingText(rep),
		}
		for _, id := range q.ids {
			if before[id] {
				r.AlreadyForgotten++
			}
		}
		file, err := o.Sign(r)
		if err != nil {
			return nil, fmt.Errorf("receipt of request %s: %w", q.Request, err)
		}
		var batchRef any
		if rep.Request != 0 {
			batchRef = rep.Request
		}
		res, err := tx.Exec(`UPDATE forget_queue SET state = 'served', ids = NULL, served = ?, batch = ?, receipt = ? WHERE request = ? AND state = 'queued'`,
			servedAt.Format(time.RFC3339Nano), batchRef, file, q.Request)
		if err != nil {
			return nil, err
		}
		if n, err := res.RowsAffected(); err != nil {
			return nil, err
		} else if n != 1 {
			return nil, fmt.Errorf("%w: request %s was served or refused meanwhile", ErrNotQueued, q.Request)
		}
		q.State, q.Served, q.Batch, q.Receipt = Served, servedAt, rep.Request, file
		out = append(out, q.QueuedForget)
	}
	return out, nil
}

// pendingText says what is still pending after a forget, for a receipt.
func pendingText(rep *ForgetReport) string {
	switch {
	case rep.Path == PathApproximate:
		return fmt.Sprintf("the records' payloads and keys are erased, but the model's state and its checkpoints still carry their influence (intervention %s): only noised, certified releases are published until an exact replay resolves store request %d", rep.Intervention, rep.Request)
	case rep.NeedsNoise:
		return "the model's state carries the influence of records forgotten by an approximate request not yet resolved (these records may be among them): only noised, certified releases are published until an exact replay resolves it"
	}
	return ""
}

// RefuseForget marks a queued request refused, for reason, and erases its
// ids: the request is not performed. A request no longer queued is an
// error wrapping ErrNotQueued (ErrUnknownRequest for an unknown one).
func (s *Store) RefuseForget(request, reason string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.db == nil {
		return ErrClosed
	}
	return s.inTx(context.Background(), func(tx *sql.Tx) error {
		res, err := tx.Exec(`UPDATE forget_queue SET state = 'refused', ids = NULL, served = ?, reason = ? WHERE request = ? AND state = 'queued'`,
			now(), reason, request)
		if err != nil {
			return err
		}
		if n, err := res.RowsAffected(); err != nil || n == 1 {
			return err
		}
		if _, _, err := queueRow(context.Background(), tx, request); err != nil {
			return err
		}
		return fmt.Errorf("%w: request %s", ErrNotQueued, request)
	})
}

// QueuedForgets returns the requests still queued, oldest first.
func (s *Store) QueuedForgets() ([]QueuedForget, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.db == nil {
		return nil, ErrClosed
	}
	return queueRows(context.Background(), s.db, `WHERE state = 'queued'`)
}

// ForgetRequest returns the request with that id in any state. An unknown
// id is an error wrapping ErrUnknownRequest.
func (s *Store) ForgetRequest(request string) (QueuedForget, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.db == nil {
		return QueuedForget{}, ErrClosed
	}
	q, _, err := queueRow(context.Background(), s.db, request)
	return q, err
}

// NextID returns an id above every id the store ever held (ingested or
// forgotten), for a caller that numbers new events itself; 1 for an empty
// store.
func (s *Store) NextID() (int64, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.db == nil {
		return 0, ErrClosed
	}
	var m int64
	err := s.db.QueryRow(`SELECT max(coalesce((SELECT max(id) FROM events), 0), coalesce((SELECT max(id) FROM forgotten), 0))`).Scan(&m)
	if err != nil {
		return 0, err
	}
	if m == 1<<63-1 {
		return 0, fmt.Errorf("%w: the store holds the largest id, 2⁶³−1: number new events yourself", ErrOptions)
	}
	return max(m, 0) + 1, nil
}

const queueColumns = `request, received, deadline, records, commitment, state, served, batch, receipt, reason, ids`

// queueRow reads one request, with its ids while queued.
func queueRow(ctx context.Context, q querier, request string) (QueuedForget, []int64, error) {
	rows, err := queueRowsIDs(ctx, q, `WHERE request = ?`, request)
	if err != nil {
		return QueuedForget{}, nil, err
	}
	if len(rows) == 0 {
		return QueuedForget{}, nil, fmt.Errorf("%w: %q", ErrUnknownRequest, request)
	}
	return rows[0].QueuedForget, rows[0].ids, nil
}

func queueRows(ctx context.Context, q querier, where string, args ...any) ([]QueuedForget, error) {
	rows, err := queueRowsIDs(ctx, q, where, args...)
	if err != nil {
		return nil, err
	}
	out := make([]QueuedForget, len(rows))
	for i, r := range rows {
		out[i] = r.QueuedForget
	}
	return out, nil
}

func queueRowsIDs(ctx context.Context, q querier, where string, args ...any) ([]queuedRequest, error) {
	rows, err := q.QueryContext(ctx, `SELECT `+queueColumns+` FROM forget_queue `+where+` ORDER BY seq`, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []queuedRequest
	for rows.Next() {
		var r queuedRequest
		var received, deadline, state string
		var served, reason, ids sql.NullString
		var batch sql.NullInt64
		if err := rows.Scan(&r.Request, &received, &deadline, &r.Records, &r.Commitment, &state, &served, &batch, &r.Receipt, &reason, &ids); err != nil {
			return nil, err
		}
		bad := func(field string, err error) error {
			return fmt.Errorf("%w: forget_queue request %s: %s: %w", ErrInconsistent, r.Request, field, err)
		}
		if r.Received, err = time.Parse(time.RFC3339Nano, received); err != nil {
			return nil, bad("received", err)
		}
		if r.Deadline, err = time.Parse(time.RFC3339Nano, deadline); err != nil {
			return nil, bad("deadline", err)
		}
		if served.Valid {
			if r.Served, err = time.Parse(time.RFC3339Nano, served.String); err != nil {
				return nil, bad("served", err)
			}
		}
		if ids.Valid {
			if err := json.Unmarshal([]byte(ids.String), &r.ids); err != nil {
				return nil, bad("ids", err)
			}
		}
		r.State, r.Batch, r.Reason = QueueState(state), batch.Int64, reason.String
		out = append(out, r)
	}
	return out, rows.Err()
}

// checkQueue verifies the queue's invariants inside Check's read
// transaction: a queued request names ids (as many as its records count,
// ascending, distinct) each of which is in the log or forgotten; a served
// or refused request keeps none (the table's CHECK constraints), and a
// served one's receipt is a receipt of that request.
func checkQueue(ctx context.Context, tx *sql.Tx) error {
	rows, err := queueRowsIDs(ctx, tx, "")
	if err != nil {
		return err
	}
	bad := func(r queuedRequest, format string, args ...any) error {
		return fmt.Errorf("%w: forget_queue request %s: %s", ErrInconsistent, r.Request, fmt.Sprintf(format, args...))
	}
	for _, r := range rows {
		switch r.State {
		case Queued:
			if len(r.ids) != r.Records || !slices.IsSorted(r.ids) || len(slices.Compact(slices.Clone(r.ids))) != len(r.ids) {
				return bad(r, "%d ids for %d records, or not ascending and distinct", len(r.ids), r.Records)
			}
			for _, id := range r.ids {
				var one int
				err := tx.QueryRowContext(ctx, `SELECT 1 FROM events WHERE id = ?1 UNION ALL SELECT 1 FROM forgotten WHERE id = ?1 LIMIT 1`, id).Scan(&one)
				if err != nil {
					return bad(r, "a queued id is neither in the log nor forgotten: %v", err)
				}
			}
		case Served:
			var env struct {
				Payload string `json:"payload"`
			}
			var rc certify.Receipt
			if json.Unmarshal(r.Receipt, &env) != nil || json.Unmarshal([]byte(env.Payload), &rc) != nil {
				return bad(r, "the stored receipt is not a receipt file")
			}
			if rc.Request != r.Request || rc.Records != r.Records || rc.Commitment != r.Commitment {
				return bad(r, "the stored receipt is of request %s (%d records), not of this one", rc.Request, rc.Records)
			}
		case Refused:
			if strings.TrimSpace(r.Reason) == "" {
				return bad(r, "refused without a reason")
			}
		default:
			return bad(r, "state %q", r.State)
		}
	}
	return nil
}
