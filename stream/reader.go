package stream

import (
	"bufio"
	"fmt"
	"io"
)

// Reader reads a stream file (spec §1.1) one event at a time, so that a
// caller can consume a stream of any length in constant memory (the model
// store's ingest does). Create it with [NewReader].
//
// Unlike [Read], a Reader checks each event on its own — the JSON syntax, the
// fields of the header's kind and the payload's domain (Loss.CheckSample) —
// but not the rules that need the history: unique insert ids and deletes
// naming an earlier insert. Those need a record of every id seen, which is
// the caller's (for instance an index in a database, or a [Validator]).
// Errors are *LineError values, as for Read.
type Reader struct {
	br   *bufio.Reader
	buf  []byte
	line int
	hdr  Header
	loss Loss
}

// NewReader reads and validates the header line of r and returns a Reader
// positioned at the first event. Errors are *LineError values for line 1.
func NewReader(r io.Reader) (*Reader, error) {
	rd := &Reader{br: bufio.NewReaderSize(r, 64<<10)}
	b, err := ReadLine(rd.br, &rd.buf)
	rd.line = 1
	switch {
	case err == io.EOF:
		return nil, &LineError{Line: 1, Err: fmt.Errorf("empty input, want a header line: %w", ErrFormat)}
	case err != nil:
		return nil, &LineError{Line: 1, Err: fmt.Errorf("read: %w", err)}
	}
	if err := checkLine(b); err != nil {
		return nil, &LineError{Line: 1, Err: err}
	}
	if rd.hdr, err = parseHeaderLine(b); err != nil {
		return nil, lineError(1, err)
	}
	if rd.loss, err = rd.hdr.Loss(); err != nil {
		return nil, lineError(1, err)
	}
	return rd, nil
}

// Header returns the stream's header.
func (r *Reader) Header() Header { return r.hdr }

// Loss returns the loss the header defines.
func (r *Reader) Loss() Loss { return r.loss }

// Line returns the 1-based line number of the last line read (1 after
// NewReader, the event's line after Next).
func (r *Reader) Line() int { return r.line }

// Next returns the next event, or io.EOF after the last one. The event's
// payload is newly allocated and may be kept.
func (r *Reader) Next() (Event, error) {
	b, err := ReadLine(r.br, &r.buf)
	if err == io.EOF {
		return Event{}, io.EOF
	}
	r.line++
	if err != nil {
		return Event{}, &LineError{Line: r.line, Err: fmt.Errorf("read: %w", err)}
	}
	if err := checkLine(b); err != nil {
		return Event{}, &LineError{Line: r.line, Err: err}
	}
	s := scanner{b: b}
	e, err := parseEvent(&s, r.hdr.Kind, r.hdr.D)
	if err == nil {
		err = s.end()
	}
	if err != nil {
		return Event{}, lineError(r.line, err)
	}
	if e.Op == Insert {
		if field, err := r.loss.CheckSample(e.Sample); err != nil {
			return Event{}, &LineError{Line: r.line, Field: field, Err: err}
		}
	}
	return e, nil
}
