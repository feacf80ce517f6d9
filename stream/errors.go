package stream

import (
	"errors"
	"fmt"
)

// Sentinel errors. Every error returned by this package for bad data wraps
// one of these, so callers can test the cause with errors.Is, and carries the
// position (event index or file line) and field in its message.
var (
	// ErrUnknownDeletion: a delete names an id that was never inserted
	// before it.
	ErrUnknownDeletion = errors.New("delete of an unknown id")
	// ErrRepeatedDeletion: a second delete of the same id.
	ErrRepeatedDeletion = errors.New("repeated delete of the same id")
	// ErrDuplicateID: a second insert with an id already used.
	ErrDuplicateID = errors.New("duplicate insert id")
	// ErrDimension: a payload whose length is not the stream dimension d.
	ErrDimension = errors.New("payload of wrong dimension")
	// ErrNonFinite: NaN or ±Inf in a payload, matrix or parameter.
	ErrNonFinite = errors.New("non-finite value")
	// ErrInvalidValue: a value outside its domain (α ∉ [0,1], y ∉ {−1,+1},
	// λ < 0, d < 1, an unknown op or kind).
	ErrInvalidValue = errors.New("invalid value")
	// ErrNotSPD: H0 or H1 is not symmetric positive definite.
	ErrNotSPD = errors.New("matrix is not symmetric positive definite")
	// ErrFormat: malformed JSON, a missing or unknown field, a blank line.
	ErrFormat = errors.New("malformed stream")
)

// EventError locates an error in a sequence of events.
type EventError struct {
	// Index is the 0-based position of the event in the sequence.
	Index int
	// ID is the event's id.
	ID int64
	// Field names the offending field ("id", "a", "x", "alpha", "y", …),
	// or is empty when the event as a whole is at fault.
	Field string
	Err   error
}

func (e *EventError) Error() string {
	if e.Field != "" {
		return fmt.Sprintf("event %d (id %d), field %q: %v", e.Index+1, e.ID, e.Field, e.Err)
	}
	return fmt.Sprintf("event %d (id %d): %v", e.Index+1, e.ID, e.Err)
}

func (e *EventError) Unwrap() error { return e.Err }

// LineError locates an error in a stream file.
type LineError struct {
	// Line is the 1-based line number in the file.
	Line int
	// Field names the offending field, or is empty.
	Field string
	// Path locates the offending value inside the field's value when it
	// is an array or object, as a suffix of Field: "[2]" (the third
	// entry of a payload), "[0][1]" (a matrix entry), ".a[2]" (inside
	// header metadata). It is empty when the field as a whole is at fault.
	Path string
	Err  error
}

func (e *LineError) Error() string {
	if e.Field != "" {
		return fmt.Sprintf("line %d, field %q: %v", e.Line, e.Field+e.Path, e.Err)
	}
	return fmt.Sprintf("line %d: %v", e.Line, e.Err)
}

func (e *LineError) Unwrap() error { return e.Err }

// FieldError names the offending field of a header or constructor argument
// (for example "H0" in [NewQuadratic] or "lambda" in [NewLogistic]). The
// stream reader turns it into a [LineError] with the same Field.
type FieldError struct {
	// Field is the name of the field, as spelled in the stream format.
	Field string
	Err   error
}

func (e *FieldError) Error() string { return fmt.Sprintf("field %q: %v", e.Field, e.Err) }

func (e *FieldError) Unwrap() error { return e.Err }

// fieldErrorf returns a *FieldError for field whose Err is
// fmt.Errorf(format, args...); end format with ": %w" and a sentinel.
func fieldErrorf(field, format string, args ...any) error {
	return &FieldError{Field: field, Err: fmt.Errorf(format, args...)}
}
