package stream

import (
	"bufio"
	"errors"
	"fmt"
	"io"
)

// Writer writes a stream file one event at a time, for producers that
// stream their events (a converter reading a large data set) instead of
// holding a [History]. The output is byte for byte what [Write] writes for
// the same header and events, and every event is validated as [NewHistory]
// validates it, so whatever a Writer accepts, [Read] reads back. Create one
// with [NewWriter]; call Flush at the end.
type Writer struct {
	bw  *bufio.Writer
	hdr Header
	val *Validator
	buf []byte
	n   int
}

// NewWriter checks the header (its loss must build: see [Header.Loss]),
// writes it as the first line and returns the writer.
func NewWriter(w io.Writer, h Header) (*Writer, error) {
	loss, err := h.Loss()
	if err != nil {
		return nil, fmt.Errorf("stream header: %w", err)
	}
	b, err := appendHeader(make([]byte, 0, 4096), h)
	if err != nil {
		return nil, fmt.Errorf("stream: header: %w", err)
	}
	bw := bufio.NewWriterSize(w, 64<<10)
	if _, err := bw.Write(append(b, '\n')); err != nil {
		return nil, fmt.Errorf("stream: write: %w", err)
	}
	return &Writer{bw: bw, hdr: h, val: NewValidator(loss), buf: b[:0]}, nil
}

// Write validates the next event and writes it. Errors are *EventError
// values (the event's 0-based index among those written) wrapping the
// package's sentinels, or write errors.
func (w *Writer) Write(e Event) error {
	if err := w.val.Check(e); err != nil {
		return err
	}
	b, err := appendEvent(w.buf[:0], w.hdr, e)
	if err != nil {
		var fe *FieldError
		field := ""
		if errors.As(err, &fe) {
			field, err = fe.Field, fe.Err
		}
		return &EventError{Index: w.n, ID: e.ID, Field: field, Err: err}
	}
	w.buf = append(b, '\n')
	if _, err := w.bw.Write(w.buf); err != nil {
		return fmt.Errorf("stream: write: %w", err)
	}
	w.n++
	return nil
}

// Count returns the number of events written.
func (w *Writer) Count() int { return w.n }

// Flush writes any buffered data to the underlying writer.
func (w *Writer) Flush() error {
	if err := w.bw.Flush(); err != nil {
		return fmt.Errorf("stream: write: %w", err)
	}
	return nil
}
