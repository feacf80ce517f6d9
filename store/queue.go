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
// in batches, by one ForgetBatch (ServeForgets: one replay, or one
// intervention and one noised release, for the whole batch; each request
// recorded as its own store request), whose transaction also records every
// request's signed receipt and erases its ids from the queue. Every row
// carries its sum (sumQueued), verified whenever the row is read. See the
// forget_queue table of schema.go.

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
	// queued); Batch the store request that recorded it (its own request
	// of the batch's ForgetBatch; 0 when every record of the batch had
	// been forgotten before, or not served).
	Served time.Time
	Batch  int64
	// Receipt is the signed receipt file (certify.SignReceipt), once served.
	Receipt []byte
	// Reason says why a refused request was refused.
	Reason string
	// Path is how the request was served (PathNone while queued or
	// refused, or when every record had been forgotten before).
	Path Path
	// ResolvedBy is, for a request served on the approximate path, the
	// exact store request that later resolved it (0 while it is pending),
	// and Resolved when. Filled by ForgetRequest and ServeForgets (the
	// queue's listings leave them zero).
	ResolvedBy int64
	Resolved   time.Time
}

// Pending reports whether q was served on the approximate path and is not
// yet resolved by an exact replay: the store then keeps what its receipt's
// Pending says.
func (q QueuedForget) Pending() bool { return q.Path == PathApproximate && q.ResolvedBy == 0 }

// resolution fills q's Path, ResolvedBy and Resolved from its store
// request (q.Batch).
func resolution(ctx context.Context, db querier, q *QueuedForget) error {
	if q.Batch == 0 {
		if q.State == Served {
			q.Path = PathNone
		}
		return nil
	}
	var path string
	var by sql.NullInt64
	var at sql.NullString
	err := db.QueryRowContext(ctx, `SELECT r.path, r.resolved_by, x.time FROM forget_requests r
		LEFT JOIN forget_requests x ON x.request = r.resolved_by WHERE r.request = ?`, q.Batch).Scan(&path, &by, &at)
	if errors.Is(err, sql.ErrNoRows) {
		return corrupt(fmt.Sprintf("deletion request %s of the queue", q.Request), "it names a store request that does not exist")
	} else if err != nil {
		return err
	}
	q.Path, q.ResolvedBy = Path(path), by.Int64
	if at.Valid {
		if q.Resolved, err = time.Parse(time.RFC3339Nano, at.String); err != nil {
			return corrupt(fmt.Sprintf("store request %d", by.Int64), "time: %v", err)
		}
	}
	return nil
}

// EnqueueForget queues a deletion request for ids and for the ids of keys
// (resolved now: a key stands for one id, and only a forget removes it) and
// returns it, committed: once it returns, the request survives a crash. It
// is served later by ServeForgets, at the latest by received + within
// (the caller's promise; the store records it). commitment is
// certify.ForgetCommitment of the ids and keys under the requester's nonce.
//
// An id or key not in the store — never ingested, or already forgotten:
// one answer for both, ErrUnknownID or ErrUnknownKey, whose text names no
// record — is an error and nothing is queued. (A request for an id that
// another queued request forgets first is still served, as path "none"
// for that record; its receipt counts it as already forgotten.)
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
			err := tx.QueryRow(`SELECT 1 FROM events WHERE id = ?1 AND NOT EXISTS (SELECT 1 FROM forgotten WHERE id = ?1) LIMIT 1`, id).Scan(&one)
			if errors.Is(err, sql.ErrNoRows) {
				return fmt.Errorf("%w: a record named is not in the store (never ingested, or already forgotten)", ErrUnknownID)
			}
			if err != nil {
				return err
			}
		}
		q.Received = time.Now().UTC()
		q.Deadline, q.Records = q.Received.Add(within), len(all)
		r := queueRecord{request: q.Request, received: q.Received.Format(time.RFC3339Nano), deadline: q.Deadline.Format(time.RFC3339Nano),
			ids: sql.NullString{String: idsJSON(all), Valid: true}, records: q.Records, commitment: commitment, state: string(Queued)}
		_, err := tx.Exec(`INSERT INTO forget_queue (request, received, deadline, ids, records, commitment, state, sha256) VALUES (?, ?, ?, ?, ?, ?, ?, ?)`,
			r.request, r.received, r.deadline, r.ids, r.records, r.commitment, r.state, sumQueued(&r))
		return err
	})
	if err != nil {
		return QueuedForget{}, fmt.Errorf("store: enqueue: %w", err)
	}
	return q, nil
}

// ServeOptions are the options of ServeForgets.
type ServeOptions struct {
	// Forget are the options of the batch's ForgetBatch: a replay cap and
	// its intervention, with the noise of the approximate path's certified
	// release (Noise, Ages) and OnRelease, which signs its certificate and
	// charges the ledger inside the batch's transaction.
	Forget ForgetOptions
	// Sign signs a receipt (certify.SignReceipt with the certifier's key)
	// and returns the file to store. Required. It is called inside the
	// forget's transaction: a failure rolls the whole batch back.
	Sign func(*certify.Receipt) ([]byte, error)
	// Toolkit is the toolkit version written into the receipts.
	Toolkit string
}

// ServeReport is what ServeForgets did: the store requests of the batch
// and the queued requests they served, each with its receipt.
type ServeReport struct {
	// Forgets are the batch's store requests, one per queued request, in
	// the order of Served (ForgetBatch: they share one replay, or one
	// intervention and its noised release, and its path and costs).
	Forgets []ForgetReport
	Served  []QueuedForget
}

// Path is the way the batch was served (PathNone for an empty report).
func (r ServeReport) Path() Path {
	if len(r.Forgets) == 0 {
		return PathNone
	}
	return r.Forgets[0].Path
}

// ServeForgets serves the queued requests named by requests as ONE
// deletion: a ForgetBatch of their ids (one replay and one VACUUM, or one
// intervention and one noised, certified release), in which each request is
// recorded as its own store request with its own tombstones, and whose
// transaction also signs and stores each request's receipt and sets its
// ids to NULL. Either all of it commits or nothing does, and the requests
// stay queued: a crash or an error (ctx cancelled, a refused charge of the
// approximate path's release included) loses no acknowledged request. A
// request no longer queued is an error wrapping ErrNotQueued
// (ErrUnknownRequest for an unknown one), and nothing changes. If the
// VACUUM after the commit fails, the report is returned with the error
// (run Vacuum again).
//
// A receipt of the approximate path says what is pending and what the
// store keeps of the request until an exact replay resolves it
// (ReceiptPending).
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
	dels := make([]Deletion, len(batch))
	for i, q := range batch {
		dels[i] = Deletion{IDs: q.ids}
	}
	var served []QueuedForget
	o.Forget.record = func(tx *sql.Tx, reps []ForgetReport) error {
		var rerr error
		served, rerr = s.recordServed(tx, batch, len(union), reps, o)
		return rerr
	}
	reps, err := s.forget(ctx, dels, o.Forget)
	if len(reps) == 0 { // the transaction did not commit: every request is still queued
		return ServeReport{}, err
	}
	return ServeReport{Forgets: reps, Served: served}, err
}

// queuedRequest is a queued request's row, ids included.
type queuedRequest struct {
	QueuedForget
	ids []int64
	rec queueRecord
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
		q, err := queueRow(ctx, s.db, r)
		if err != nil {
			return nil, nil, err
		}
		if q.State != Queued {
			return nil, nil, fmt.Errorf("%w: request %s is %s", ErrNotQueued, r, q.State)
		}
		out = append(out, q)
		union = append(union, q.ids...)
	}
	slices.Sort(union)
	return out, slices.Compact(union), nil
}

// recordServed runs inside the batch's forget transaction, after every
// store request of the batch is recorded (reps[i] is batch[i]'s): it signs
// each request's receipt and marks the request served, its ids erased.
func (s *Store) recordServed(tx *sql.Tx, batch []queuedRequest, records int, reps []ForgetReport, o ServeOptions) ([]QueuedForget, error) {
	if len(reps) != len(batch) {
		panic(fmt.Sprintf("store: recordServed: %d reports for %d requests", len(reps), len(batch)))
	}
	servedAt := time.Now().UTC()
	var erased []int64
	for _, rep := range reps {
		for _, e := range rep.ErasedReleases {
			erased = append(erased, e.Release)
		}
	}
	slices.Sort(erased)
	erased = slices.Compact(erased)
	if erased == nil {
		erased = []int64{}
	}
	// A receipt's AlreadyForgotten counts the records forgotten before the
	// batch: an id two requests of the batch name is forgotten by the
	// first (ForgetBatch), in this same transaction, for both.
	inBatch := map[int64]bool{}
	for _, rep := range reps {
		for _, id := range rep.IDs {
			inBatch[id] = true
		}
	}
	var out []QueuedForget
	for i, q := range batch {
		rep := &reps[i]
		before := 0
		for _, id := range rep.AlreadyForgotten {
			if !inBatch[id] {
				before++
			}
		}
		r := &certify.Receipt{
			Toolkit: o.Toolkit, Request: q.Request,
			Received: certify.ReceiptTime(q.Received), Deadline: certify.ReceiptTime(q.Deadline), Served: certify.ReceiptTime(servedAt),
			Path: string(rep.Path), Records: q.Records, AlreadyForgotten: before, Commitment: q.Commitment,
			Batch:          certify.ReceiptBatch{StoreRequest: rep.Request, Requests: len(batch), Records: records},
			ErasedReleases: erased, Head: s.head, NeedsNoise: rep.NeedsNoise, Pending: s.ReceiptPending(rep),
		}
		file, err := o.Sign(r)
		if err != nil {
			return nil, fmt.Errorf("receipt of request %s: %w", q.Request, err)
		}
		rec := q.rec
		rec.state, rec.ids, rec.receipt = string(Served), sql.NullString{}, file
		rec.served = sql.NullString{String: servedAt.Format(time.RFC3339Nano), Valid: true}
		if rep.Request != 0 {
			rec.batch = sql.NullInt64{Int64: rep.Request, Valid: true}
		}
		if err := updateQueued(tx, &rec); err != nil {
			return nil, err
		}
		q.State, q.Served, q.Batch, q.Receipt, q.Path = Served, servedAt, rep.Request, file, rep.Path
		out = append(out, q.QueuedForget)
	}
	return out, nil
}

// updateQueued writes r's state, served time, store request, receipt,
// reason and ids to its row, with the new sum, if the row is still queued;
// otherwise it is an error wrapping ErrNotQueued.
func updateQueued(tx *sql.Tx, r *queueRecord) error {
	res, err := tx.Exec(`UPDATE forget_queue SET state = ?, ids = ?, served = ?, batch = ?, receipt = ?, reason = ?, sha256 = ? WHERE request = ? AND state = 'queued'`,
		r.state, r.ids, r.served, r.batch, r.receipt, r.reason, sumQueued(r), r.request)
	if err != nil {
		return err
	}
	if n, err := res.RowsAffected(); err != nil {
		return err
	} else if n != 1 {
		return fmt.Errorf("%w: request %s was served or refused meanwhile", ErrNotQueued, r.request)
	}
	return nil
}

// ReceiptPending is the Pending text of a receipt for a request served as
// rep: what is still pending after it and what the store keeps of it
// meanwhile, or "" when nothing is (an exact request on an exact state).
// For the approximate path it names the noised release the store
// published, what the store keeps of the request until the exact replay
// that resolves it (as 'unlearn status' lists it), and when that replay
// runs: the store's resolution policy (ResolvePolicy), applied by ingest
// and by a service on its own, or else the next exact forget or an
// explicit resolution.
func (s *Store) ReceiptPending(rep *ForgetReport) string {
	switch {
	case rep.Path == PathApproximate && rep.Released != nil:
		c := rep.Released.Certificate
		return fmt.Sprintf("approximate: noised state published (release %d: the output of intervention %s plus Gaussian noise, α %.4g (%s), σ = %.4g at (ε, δ) = (%v, %v)), exact replay pending, resolved by %s. "+
			"Until then the store keeps of this request: the erased records' log positions and ids (no payload, no key), their tombstones, "+
			"the store request's record (time, ids, intervention, exact ages, α, σ), the noised state and its checkpoint, the kept release %d "+
			"and its budget ledger entry; %s. Only noised, certified releases are published until then, and predictions and evaluations answer from the noised state (the release's w, its average of the iterates too)",
			rep.ReleaseID, rep.Intervention, c.Sensitivity.Alpha, rep.Released.Path, c.Sigma, c.Epsilon, c.Delta,
			resolutionWords(s.policy, rep.Request, time.Now().UTC(), s.head), rep.ReleaseID, s.noisedStateWords())
	case rep.NeedsNoise:
		return "the model's state is the noised state of an approximate request not yet resolved (these records may have been erased by it): " +
			"only noised, certified releases are published until an exact replay resolves it, " + resolutionWords(s.policy, 0, time.Time{}, 0)
	}
	return ""
}

// noisedStateWords says what of the noised state carries the records'
// influence un-noised: nothing (the approximate forget rebuilt w, the
// average of the iterates and the progress statistics from its release).
func (s *Store) noisedStateWords() string {
	return "no un-noised state or checkpoint holds the records' influence"
}

// resolutionWords says what resolves a pending request: the policy (with,
// for request req served at served with the log at head, the latest time
// and log position by which it applies), an exact forget, or an explicit
// resolution.
func resolutionWords(p ResolvePolicy, req int64, served time.Time, head int64) string {
	if p.IsZero() {
		return "the next exact deletion or an explicit resolution (unlearn forget --resolve): the store has no resolution policy"
	}
	var parts []string
	if p.AfterEvents > 0 {
		if req != 0 {
			parts = append(parts, fmt.Sprintf("once %d more events are ingested (log position %d)", p.AfterEvents, head+p.AfterEvents))
		} else {
			parts = append(parts, fmt.Sprintf("once %d events are ingested after the oldest pending request", p.AfterEvents))
		}
	}
	if p.Within > 0 {
		if req != 0 {
			parts = append(parts, fmt.Sprintf("by %s (within %s)", certify.ReceiptTime(served.Add(p.Within)), p.Within))
		} else {
			parts = append(parts, fmt.Sprintf("within %s of the oldest pending request", p.Within))
		}
	}
	return "the store's resolution policy, " + strings.Join(parts, " or ") + ", or sooner by an exact deletion"
}

// RefuseForget marks a queued request refused, for reason, and erases its
// ids: the request is not performed. A request no longer queued is an
// error wrapping ErrNotQueued (ErrUnknownRequest for an unknown one).
func (s *Store) RefuseForget(request, reason string) error {
	if strings.TrimSpace(reason) == "" {
		return &OptionError{Option: "reason", Value: `""`, Want: "why the request is refused"}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.db == nil {
		return ErrClosed
	}
	return s.inTx(context.Background(), func(tx *sql.Tx) error {
		q, err := queueRow(context.Background(), tx, request)
		if err != nil {
			return err
		}
		if q.State != Queued {
			return fmt.Errorf("%w: request %s", ErrNotQueued, request)
		}
		rec := q.rec
		rec.state, rec.ids = string(Refused), sql.NullString{}
		rec.served = sql.NullString{String: now(), Valid: true}
		rec.reason = sql.NullString{String: reason, Valid: true}
		return updateQueued(tx, &rec)
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

// ForgetRequest returns the request with that id in any state, with its
// path and resolution (QueuedForget.Path, ResolvedBy). An unknown
// id is an error wrapping ErrUnknownRequest; a row that fails its sum, a
// *CorruptError (its receipt is not handed out).
func (s *Store) ForgetRequest(request string) (QueuedForget, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.db == nil {
		return QueuedForget{}, ErrClosed
	}
	q, err := queueRow(context.Background(), s.db, request)
	if err != nil {
		return QueuedForget{}, err
	}
	err = resolution(context.Background(), s.db, &q.QueuedForget)
	return q.QueuedForget, err
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

// queueRecord is a forget_queue row as stored (the columns its sum covers).
type queueRecord struct {
	request, received, deadline string
	ids                         sql.NullString
	records                     int
	commitment, state           string
	served                      sql.NullString
	batch                       sql.NullInt64
	receipt                     []byte
	reason                      sql.NullString
	sum                         []byte
}

const queueColumns = `request, received, deadline, ids, records, commitment, state, served, batch, receipt, reason, sha256`

// queueRow reads one request, with its ids while queued.
func queueRow(ctx context.Context, q querier, request string) (queuedRequest, error) {
	rows, err := queueRowsIDs(ctx, q, `WHERE request = ?`, request)
	if err != nil {
		return queuedRequest{}, err
	}
	if len(rows) == 0 {
		return queuedRequest{}, fmt.Errorf("%w: %q", ErrUnknownRequest, request)
	}
	return rows[0], nil
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

// queueRowsIDs reads the rows of forget_queue selected by where, oldest
// first, each verified against its sum (a *CorruptError otherwise: no id
// of a damaged row is forgotten, no receipt of one handed out).
func queueRowsIDs(ctx context.Context, q querier, where string, args ...any) ([]queuedRequest, error) {
	rows, err := q.QueryContext(ctx, `SELECT `+queueColumns+` FROM forget_queue `+where+` ORDER BY seq`, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []queuedRequest
	for rows.Next() {
		var r queuedRequest
		c := &r.rec
		if err := rows.Scan(&c.request, &c.received, &c.deadline, &c.ids, &c.records, &c.commitment, &c.state, &c.served, &c.batch, &c.receipt, &c.reason, &c.sum); err != nil {
			return nil, err
		}
		if err := r.decode(); err != nil {
			return nil, err
		}
		out = append(out, r)
	}
	return out, rows.Err()
}

// decode checks r.rec's sum and fills the request from it.
func (r *queuedRequest) decode() error {
	c := &r.rec
	where := fmt.Sprintf("deletion request %s of the queue", c.request)
	if !sameSum(c.sum, sumQueued(c)) {
		return corrupt(where, "its checksum does not match its content")
	}
	var err error
	r.Request, r.Records, r.Commitment, r.Receipt = c.request, c.records, c.commitment, c.receipt
	r.State, r.Batch, r.Reason = QueueState(c.state), c.batch.Int64, c.reason.String
	if r.Received, err = time.Parse(time.RFC3339Nano, c.received); err != nil {
		return corrupt(where, "received: %v", err)
	}
	if r.Deadline, err = time.Parse(time.RFC3339Nano, c.deadline); err != nil {
		return corrupt(where, "deadline: %v", err)
	}
	if c.served.Valid {
		if r.Served, err = time.Parse(time.RFC3339Nano, c.served.String); err != nil {
			return corrupt(where, "served: %v", err)
		}
	}
	if c.ids.Valid {
		if err := json.Unmarshal([]byte(c.ids.String), &r.ids); err != nil {
			return corrupt(where, "its ids do not decode")
		}
	}
	return nil
}

// verifyQueue checks the queue inside verify's transaction: every row's
// sum (queueRowsIDs), and the invariants: a queued request names ids (as
// many as its records count, ascending, distinct) each of which is in the
// log or forgotten; a served or refused request keeps none (the table's
// CHECK constraints); a refused one says why; a served one names a store
// request (or none: nothing was left to forget), and at the full level its
// receipt is a receipt of that request and of that store request.
func verifyQueue(ctx context.Context, q querier, level checkLevel) error {
	rows, err := queueRowsIDs(ctx, q, "")
	if err != nil {
		return err
	}
	for _, r := range rows {
		if err := r.check(ctx, q, level); err != nil {
			return err
		}
	}
	// Rows are never deleted: the queue holds as many as its AUTOINCREMENT
	// counter gave out (a deleted request would be a deletion silently not
	// performed), and so do the tokens.
	for _, table := range []string{"forget_queue", "tokens"} {
		var n, given int64
		if err := q.QueryRowContext(ctx, `SELECT (SELECT count(*) FROM `+table+`), COALESCE((SELECT seq FROM sqlite_sequence WHERE name = ?), 0)`, table).Scan(&n, &given); err != nil {
			return err
		}
		if n != given {
			return corrupt("the "+map[string]string{"forget_queue": "deletion queue", "tokens": "tokens"}[table], "it holds %d rows, but %d were written (none is ever deleted)", n, given)
		}
	}
	var orphan string
	err = q.QueryRowContext(ctx, `SELECT q.request FROM forget_queue q WHERE q.batch IS NOT NULL
		AND NOT EXISTS (SELECT 1 FROM forget_requests r WHERE r.request = q.batch) LIMIT 1`).Scan(&orphan)
	if err == nil {
		return corrupt(fmt.Sprintf("deletion request %s of the queue", orphan), "it names a store request that does not exist")
	} else if !errors.Is(err, sql.ErrNoRows) {
		return err
	}
	return nil
}

func (r *queuedRequest) check(ctx context.Context, q querier, level checkLevel) error {
	bad := func(format string, args ...any) error {
		return corrupt(fmt.Sprintf("deletion request %s of the queue", r.Request), format, args...)
	}
	switch r.State {
	case Queued:
		if len(r.ids) != r.Records || !slices.IsSorted(r.ids) || len(slices.Compact(slices.Clone(r.ids))) != len(r.ids) {
			return bad("%d ids for %d records, or not ascending and distinct", len(r.ids), r.Records)
		}
		for _, id := range r.ids {
			var one int
			err := q.QueryRowContext(ctx, `SELECT 1 FROM events WHERE id = ?1 UNION ALL SELECT 1 FROM forgotten WHERE id = ?1 LIMIT 1`, id).Scan(&one)
			if errors.Is(err, sql.ErrNoRows) {
				return bad("a queued id is neither in the log nor forgotten")
			} else if err != nil {
				return err
			}
		}
	case Served:
		if r.rec.ids.Valid || r.Served.IsZero() {
			return bad("served, but it keeps its ids or has no time served")
		}
		if level < checkFull {
			return nil
		}
		var env struct {
			Payload string `json:"payload"`
		}
		var rc certify.Receipt
		if json.Unmarshal(r.Receipt, &env) != nil || json.Unmarshal([]byte(env.Payload), &rc) != nil {
			return bad("the stored receipt is not a receipt file")
		}
		if rc.Request != r.Request || rc.Records != r.Records || rc.Commitment != r.Commitment || rc.Batch.StoreRequest != r.Batch {
			return bad("the stored receipt is of request %s (%d records, store request %d), not of this one", rc.Request, rc.Records, rc.Batch.StoreRequest)
		}
	case Refused:
		if strings.TrimSpace(r.Reason) == "" || r.rec.ids.Valid {
			return bad("refused without a reason, or it keeps its ids")
		}
	default:
		return bad("state %q", r.State)
	}
	return nil
}
