package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io"
	"slices"

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
	// LastID is the id of the last committed event.
	LastID int64
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
// (ErrEvent). Errors name the event (*EventError, with its line when src is
// a *stream.Reader).
//
// If src is a KeySource, the string key of each event (if any) is stored
// with its id in the same transaction; a key already in the store is
// refused (ErrEvent): a key stands for one id, so that ForgetKeys knows
// what to erase.
func (s *Store) IngestEvents(src EventSource, o IngestOptions) (IngestResult, error) {
	if o.BatchSize < 0 {
		return IngestResult{}, &OptionError{Option: "BatchSize", Value: o.BatchSize, Want: "must be non-negative (0: one transaction)"}
	}
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
		var n, ckpts int
		var last int64
		err := s.inTx(ctx, func(tx *sql.Tx) error {
			ins, err := tx.Prepare(`INSERT INTO events (seq, id, payload)
	SELECT ?1, ?2, ?3 WHERE NOT EXISTS (SELECT 1 FROM forgotten WHERE id = ?2)
	ON CONFLICT (id) DO NOTHING`)
			if err != nil {
				return err
			}
			defer ins.Close()
			insKey, err := tx.Prepare(`INSERT INTO keys (key, id) VALUES (?, ?) ON CONFLICT (key) DO NOTHING`)
			if err != nil {
				return err
			}
			defer insKey.Close()
			for o.BatchSize == 0 || n < o.BatchSize {
				e, err := src.Next()
				if err == io.EOF {
					done = true
					break
				}
				if err != nil {
					return err
				}
				fail := func(err error) error { return &EventError{Line: lineOf(), ID: e.ID, Err: err} }
				if e.Op != stream.Insert {
					return fail(fmt.Errorf("%w: a delete event is not ingested; serve a deletion request with Forget (unlearn forget --ids %d), which erases the data", ErrEvent, e.ID))
				}
				if field, err := s.loss.CheckSample(e.Sample); err != nil {
					return fail(fmt.Errorf("%w: field %q: %w", ErrEvent, field, err))
				}
				if e.Sample.IsSparse() {
					// Stored and stepped dense (ADV2-04): the log's payload
					// is S then the d-vector, and the learner's step on the
					// dense form is the sparse one's, bit for bit.
					e.Sample = stream.Sample{V: e.Sample.Dense(s.cfg.Dim), S: e.Sample.S}
				}
				seq := s.head + 1
				r, err := ins.Exec(seq, e.ID, encodePayload(e.Sample))
				if err != nil {
					return err
				}
				if k, err := r.RowsAffected(); err != nil {
					return err
				} else if k == 0 {
					return fail(s.whyRefused(tx, e.ID))
				}
				if key := keyOf(); key != "" {
					if err := insertKey(tx, insKey, key, e.ID); err != nil {
						return fail(err)
					}
				}
				if err := s.state.Step(e); err != nil {
					return fail(err)
				}
				s.head = seq
				n++
				last = e.ID
				if seq%s.k == 0 {
					snap, err := s.encodeState(s.state)
					if err != nil {
						return err
					}
					if err := writeCheckpoint(tx, seq, s.exact, s.state.T(), "ingest", snap); err != nil {
						return err
					}
					ckpts++
				}
			}
			if n == 0 {
				return nil
			}
			snap, err := s.encodeState(s.state)
			if err != nil {
				return err
			}
			if err := writeState(tx, s.exact, snap); err != nil {
				return err
			}
			return setHead(tx, s.head)
		})
		if err != nil {
			if res.Events > 0 {
				err = fmt.Errorf("%w (%d events in %d batches were committed before this batch)", err, res.Events, res.Batches)
			}
			return res, err
		}
		if n > 0 {
			res.Events += n
			res.Batches++
			res.Checkpoints += ckpts
			res.Head, res.LastID = s.head, last
			if o.OnCommit != nil {
				o.OnCommit(res)
			}
		}
	}
	return res, nil
}

// whyRefused explains why the insert of id was not stored.
func (s *Store) whyRefused(tx *sql.Tx, id int64) error {
	var req int64
	err := tx.QueryRow(`SELECT request FROM forgotten WHERE id = ?`, id).Scan(&req)
	switch {
	case err == nil:
		return fmt.Errorf("%w: id %d was forgotten (request %d); a forgotten id is never ingested again", ErrEvent, id, req)
	case !errors.Is(err, sql.ErrNoRows):
		return err
	}
	return fmt.Errorf("%w: id %d is already in the log (ids are unique)", ErrEvent, id)
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
