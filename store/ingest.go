package store

import (
	"bytes"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io"
	"slices"
	"time"

	"unlearn/internal/floatbits"
	"unlearn/stream"
)

// EventSource yields events one at a time; Next returns io.EOF after the
// last one. *stream.Reader is an EventSource; a source that also has a
// Line() int method (as *stream.Reader does) gets its line numbers into
// errors.
type EventSource interface {
	Next() (stream.Event, error)
}

// IngestOptions are the options of Ingest. The zero value is ready to use.
type IngestOptions struct {
	// BatchSize is the number of events per transaction. If 0, every event
	// of the call is one transaction (all or nothing).
	BatchSize int
	// OnCommit, if not nil, is called after each committed batch with the
	// totals so far. A service acknowledges events here: once it is called,
	// they survive a crash.
	OnCommit func(IngestResult)
	// SkipIdentical makes a rerun of an interrupted ingest resume it: an
	// event whose id is already in the log with the same payload bytes
	// (as stored: the shorter of the dense and sparse encodings of its
	// dense form) and the same key (none, or the same string) is skipped
	// and counted in IngestResult.Skipped; one whose payload or key
	// differs is refused (ErrEvent), naming the id and the line. An event
	// of a forgotten id is skipped too (IngestResult.SkippedForgotten:
	// its payload was erased, so it cannot be compared, and a forgotten
	// id is never ingested again); without SkipIdentical it is refused.
	SkipIdentical bool
	// SkipResolve leaves the store's resolution policy (ResolvePolicy) to
	// the caller: IngestEvents does not resolve after the last batch. A
	// service that applies the policy on its own schedule (ResolutionDue,
	// ResolveIfDueContext) sets it, so that an ingest is never answered
	// with a resolution's replay, or its failure.
	SkipResolve bool
}

// IngestResult counts what Ingest committed.
type IngestResult struct {
	// Events is the number of events committed.
	Events int
	// Batches is the number of transactions committed.
	Batches int
	// Checkpoints is the number of checkpoints written.
	Checkpoints int
	// Head is the sequence number of the last committed event.
	Head int64
	// LastID is the id of the last committed event, and LastLine its line
	// in the source (0 when the source has no Line method).
	LastID   int64
	LastLine int
	// Skipped counts the events skipped as already in the log, and
	// SkippedForgotten those skipped as of forgotten ids
	// (IngestOptions.SkipIdentical).
	Skipped, SkippedForgotten int
	// Clipped counts the committed events whose payload was scaled onto
	// the sample bound's ball (Config.ClipToBound).
	Clipped int
	// Resolved is the resolution the store's policy (ResolvePolicy) made
	// after the last batch, or nil.
	Resolved *ForgetReport
}

// Ingest reads a stream file (spec §1.1) from r, checks that its header
// defines the store's loss (kind, d and constants; metadata may differ,
// ErrHeader otherwise), and ingests its events; see IngestEvents. The file
// is read one line at a time: memory does not grow with its length.
func (s *Store) Ingest(r io.Reader, o IngestOptions) (IngestResult, error) {
	rd, err := stream.NewReader(r)
	if err != nil {
		return IngestResult{}, err
	}
	if err := s.matchHeader(rd.Header()); err != nil {
		return IngestResult{}, err
	}
	return s.IngestEvents(rd, o)
}

// matchHeader reports whether h defines the store's loss.
func (s *Store) matchHeader(h stream.Header) error {
	a := s.hdr
	switch {
	case h.Kind != a.Kind:
		return fmt.Errorf("%w: header field \"kind\" is %q, the store's is %q", ErrHeader, h.Kind, a.Kind)
	case h.D != a.D:
		return fmt.Errorf("%w: header field \"d\" is %d, the store's is %d", ErrHeader, h.D, a.D)
	case h.K != a.K:
		return fmt.Errorf("%w: header field \"k\" is %d, the store's is %d", ErrHeader, h.K, a.K)
	case !sameMatrix(h.H0, a.H0):
		return fmt.Errorf("%w: header field \"H0\" differs from the store's", ErrHeader)
	case !sameMatrix(h.H1, a.H1):
		return fmt.Errorf("%w: header field \"H1\" differs from the store's", ErrHeader)
	case !floatbits.Equal([]float64{h.Lambda}, []float64{a.Lambda}):
		return fmt.Errorf("%w: header field \"lambda\" is %v, the store's is %v", ErrHeader, h.Lambda, a.Lambda)
	}
	return nil
}

func sameMatrix(a, b [][]float64) bool {
	return slices.EqualFunc(a, b, func(x, y []float64) bool { return floatbits.Equal(x, y) })
}

// IngestEvents appends the events of src to the log and trains the learner
// on them (one o-LBFGS step each, spec §2), storing a checkpoint after every
// event whose sequence number is a multiple of K. Every BatchSize events
// (all of them if 0) are one transaction; a failed batch is rolled back
// whole and the batches before it stay committed (the result counts them).
//
// Only inserts are ingested. A delete event is refused (ErrEvent): a
// deletion request is served by Forget, which erases the data; a delete
// event would only mark the id (spec §2) and leave its payload in the log.
// An id already in the log, or forgotten (the tombstones), is refused
// (ErrEvent), unless o.SkipIdentical and the stored event is this one.
// Errors name the event (*EventError, with its line when src is a
// *stream.Reader).
//
// If src is a KeySource, the string key of each event (if any) is stored
// with its id in the same transaction; a key already in the store is
// refused (ErrEvent): a key stands for one id, so that ForgetKeys knows
// what to erase.
//
// After the last batch, the store's resolution policy (ResolvePolicy) is
// applied (unless o.SkipResolve): a resolution it makes is
// IngestResult.Resolved (run without the
// VACUUM: it deletes no payload, and secure_delete zeroes what it frees).
// A store whose state is damaged (Status.Damage) refuses to ingest.
func (s *Store) IngestEvents(src EventSource, o IngestOptions) (IngestResult, error) {
	if o.BatchSize < 0 {
		return IngestResult{}, &OptionError{Option: "BatchSize", Value: o.BatchSize, Want: "must be non-negative (0: one transaction)"}
	}
	res, err := s.ingest(src, o)
	if err != nil || o.SkipResolve || s.policy.IsZero() || res.Events == 0 {
		return res, err
	}
	rep, did, err := s.ResolveIfDue(time.Now(), ForgetOptions{SkipVacuum: true})
	if did {
		res.Resolved = &rep
	}
	if err != nil {
		return res, fmt.Errorf("store: ingest: every batch was committed, but the resolution the policy asks for failed: %w", err)
	}
	return res, nil
}

// ingestBatch is one batch's progress.
type ingestBatch struct {
	n, ckpts, skipped, forgotten, line int
	clipped                            int
	last                               int64
}

func (s *Store) ingest(src EventSource, o IngestOptions) (IngestResult, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.db == nil {
		return IngestResult{}, ErrClosed
	}
	lineOf := func() int { return 0 }
	if ls, ok := src.(interface{ Line() int }); ok {
		lineOf = ls.Line
	}
	keyOf := keyOf(src)
	var res IngestResult
	ctx := context.Background()
	for done := false; !done; {
		var b ingestBatch
		err := s.inTx(ctx, func(tx *sql.Tx) error {
			if err := s.usable(); err != nil {
				return err
			}
			b = ingestBatch{}
			var err error
			done, err = s.ingestBatch(tx, src, o, lineOf, keyOf, &b)
			return err
		})
		if err != nil {
			if res.Events > 0 {
				err = fmt.Errorf("%w (%d events in %d batches were committed before this batch, through line %d; rerun to resume: identical events already in the log are skipped)", err, res.Events, res.Batches, res.LastLine)
			}
			return res, err
		}
		res.Skipped += b.skipped
		res.Clipped += b.clipped
		res.SkippedForgotten += b.forgotten
		if b.n > 0 {
			res.Events += b.n
			res.Batches++
			res.Checkpoints += b.ckpts
			res.Head, res.LastID, res.LastLine = s.head, b.last, b.line
			if o.OnCommit != nil {
				o.OnCommit(res)
			}
		}
	}
	return res, nil
}

// ingestBatch ingests up to o.BatchSize events of src in tx (all if 0),
// recording its progress in b; done reports the end of src.
func (s *Store) ingestBatch(tx *sql.Tx, src EventSource, o IngestOptions, lineOf func() int, keyOf func() string, b *ingestBatch) (done bool, err error) {
	ins, err := tx.Prepare(`INSERT INTO events (seq, id, payload, sha256)
	SELECT ?1, ?2, ?3, ?4 WHERE NOT EXISTS (SELECT 1 FROM forgotten WHERE id = ?2)
	ON CONFLICT (id) DO NOTHING`)
	if err != nil {
		return false, err
	}
	defer ins.Close()
	insKey, err := tx.Prepare(`INSERT INTO keys (key, id, sha256) VALUES (?, ?, ?) ON CONFLICT (key) DO NOTHING`)
	if err != nil {
		return false, err
	}
	defer insKey.Close()
	for o.BatchSize == 0 || b.n < o.BatchSize {
		e, err := src.Next()
		if err == io.EOF {
			done = true
			break
		}
		if err != nil {
			return false, err
		}
		fail := func(err error) error { return &EventError{Line: lineOf(), ID: e.ID, Err: err} }
		if e.Op != stream.Insert {
			return false, fail(fmt.Errorf("%w: a delete event is not ingested; serve a deletion request with Forget (unlearn forget --ids %d), which erases the data", ErrEvent, e.ID))
		}
		if field, err := s.loss.CheckSample(e.Sample); err != nil {
			return false, fail(fmt.Errorf("%w: field %q: %w", ErrEvent, field, err))
		}
		if e.Sample.IsSparse() {
			// Stored and stepped dense (ADV2-04): the log's payload
			// is S then the d-vector, and the learner's step on the
			// dense form is the sparse one's, bit for bit.
			e.Sample = stream.Sample{V: e.Sample.Dense(s.cfg.Dim), S: e.Sample.S}
		}
		clipped := false
		if s.clip {
			s.clipBuf = append(s.clipBuf[:0], e.Sample.V...)
			if clipped = s.cfg.ClipToBound(s.clipBuf); clipped {
				e.Sample.V = s.clipBuf
			}
		}
		seq := s.head + 1
		payload := encodePayload(e.Sample)
		r, err := ins.Exec(seq, e.ID, payload, sumEvent(seq, e.ID, payload, false))
		if err != nil {
			return false, err
		}
		key := keyOf()
		if k, err := r.RowsAffected(); err != nil {
			return false, err
		} else if k == 0 {
			same, err := s.sameEvent(tx, e.ID, payload, key, o.SkipIdentical)
			switch {
			case errors.Is(err, errForgottenSkipped):
				b.forgotten++
				continue
			case err != nil:
				return false, fail(err)
			case same:
				b.skipped++
				continue
			}
		}
		if key != "" {
			if err := insertKey(tx, insKey, key, e.ID); err != nil {
				return false, fail(err)
			}
		}
		if err := s.state.Step(e); err != nil {
			return false, fail(err)
		}
		s.head = seq
		b.n++
		if clipped {
			b.clipped++
		}
		b.last, b.line = e.ID, lineOf()
		if seq%s.k == 0 {
			snap, err := s.encodeState(s.state)
			if err != nil {
				return false, err
			}
			if err := writeCheckpoint(tx, seq, s.exact, s.state.T(), "ingest", snap); err != nil {
				return false, err
			}
			b.ckpts++
		}
	}
	if b.n == 0 {
		return done, nil
	}
	snap, err := s.encodeState(s.state)
	if err != nil {
		return false, err
	}
	if err := writeState(tx, s.exact, s.head, snap); err != nil {
		return false, err
	}
	return done, setHead(tx, s.head)
}

// sameEvent reports, for an insert of id that the log refused, whether
// the log already holds this very event (payload bytes and key) and skip
// allows skipping it; otherwise it returns why the insert is refused.
func (s *Store) sameEvent(tx *sql.Tx, id int64, payload []byte, key string, skip bool) (bool, error) {
	var seq int64
	var stored, sum []byte
	var erased bool
	err := tx.QueryRow(`SELECT seq, payload IS NULL, payload, sha256 FROM events WHERE id = ?`, id).Scan(&seq, &erased, &stored, &sum)
	if errors.Is(err, sql.ErrNoRows) || (err == nil && erased) {
		forgotten, why := s.whyRefused(tx, id)
		if skip && forgotten {
			return false, errForgottenSkipped
		}
		return false, why
	}
	if err != nil {
		return false, err
	}
	if !skip {
		return false, fmt.Errorf("%w: id %d is already in the log (ids are unique; a rerun of the same file skips identical events: unlearn ingest does)", ErrEvent, id)
	}
	if !sameSum(sum, sumEvent(seq, id, stored, false)) {
		return false, corrupt(fmt.Sprintf("event seq %d (id %d)", seq, id), "its checksum does not match its payload")
	}
	if !bytes.Equal(stored, payload) {
		return false, fmt.Errorf("%w: id %d is already in the log (seq %d) with a different payload: not the event ingested before (ids are unique)", ErrEvent, id, seq)
	}
	var storedKey string
	if err := tx.QueryRow(`SELECT key FROM keys WHERE id = ?`, id).Scan(&storedKey); err != nil && !errors.Is(err, sql.ErrNoRows) {
		return false, err
	}
	if storedKey != key {
		return false, fmt.Errorf("%w: id %d is already in the log (seq %d) with a different key: not the event ingested before (ids are unique)", ErrEvent, id, seq)
	}
	return true, nil
}

// whyRefused reports whether id is forgotten and explains why its insert
// was not stored (why is never nil).
func (s *Store) whyRefused(tx *sql.Tx, id int64) (forgotten bool, why error) {
	var req int64
	err := tx.QueryRow(`SELECT request FROM forgotten WHERE id = ?`, id).Scan(&req)
	switch {
	case err == nil:
		return true, fmt.Errorf("%w: id %d was forgotten (request %d); a forgotten id is never ingested again", ErrEvent, id, req)
	case !errors.Is(err, sql.ErrNoRows):
		return false, err
	}
	return false, fmt.Errorf("%w: id %d is already in the log (ids are unique)", ErrEvent, id)
}

// Events returns an EventSource over a slice of events (for callers that
// hold events in memory, and tests).
func Events(events []stream.Event) EventSource { return &sliceSource{events: events} }

type sliceSource struct {
	events []stream.Event
	i      int
}

func (s *sliceSource) Next() (stream.Event, error) {
	if s.i == len(s.events) {
		return stream.Event{}, io.EOF
	}
	s.i++
	return s.events[s.i-1], nil
}

// errForgottenSkipped marks an event of a forgotten id that a resumed
// ingest skips (never returned to a caller).
var errForgottenSkipped = errors.New("store: an event of a forgotten id, skipped")
