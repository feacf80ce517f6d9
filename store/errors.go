package store

import (
	"errors"
	"fmt"
)

// Errors returned by this package; test for them with errors.Is.
var (
	// ErrExists: Create was pointed at a directory that already holds a store.
	ErrExists = errors.New("a store already exists")
	// ErrNotStore: Open found no store (or a file that is not one).
	ErrNotStore = errors.New("not a model store")
	// ErrSchema: the store was written by a newer schema version than this
	// package knows, or its metadata is damaged.
	ErrSchema = errors.New("unsupported or damaged store schema")
	// ErrHeader: a stream's header does not describe the store's loss.
	ErrHeader = errors.New("stream header does not match the store")
	// ErrEvent: an event the store refuses (duplicate or forgotten id, a
	// delete event, a payload the learner cannot apply).
	ErrEvent = errors.New("event refused by the store")
	// ErrUnknownID: a forget request names an id the store never ingested.
	ErrUnknownID = errors.New("id not in the store")
	// ErrUnknownKey: a forget request or lookup names a string key the
	// store does not hold (never ingested, or erased by a forget).
	ErrUnknownKey = errors.New("key not in the store")
	// ErrOptions: an option of Create, Ingest or Forget is out of range.
	ErrOptions = errors.New("invalid store option")
	// ErrInconsistent: Check found a stored state that is not the replay of
	// the stored log.
	ErrInconsistent = errors.New("store is inconsistent")
	// ErrClosed: the store was used after Close.
	ErrClosed = errors.New("store is closed")
	// ErrUnknownRelease: GetRelease was asked for a release the store does
	// not hold (never kept, or erased by a forget).
	ErrUnknownRelease = errors.New("release not in the store")
	// ErrStaleRelease: Keep was given a release computed before a forget
	// request that has committed since.
	ErrStaleRelease = errors.New("release computed before a later forget")
)

// OptionError names the option at fault. It matches ErrOptions with
// errors.Is.
type OptionError struct {
	// Option is the field name of the options struct ("CheckpointEvery",
	// "MaxReplay", "Intervention", …).
	Option string
	Value  any
	// Want says what the option must be.
	Want string
}

func (e *OptionError) Error() string {
	return fmt.Sprintf("%v: %s = %v: %s", ErrOptions, e.Option, e.Value, e.Want)
}

// Is makes errors.Is(err, ErrOptions) true.
func (e *OptionError) Is(target error) bool { return target == ErrOptions }

// EventError reports a refused event of an ingested stream, with the line of
// the stream file it came from (0 when the events do not come from a file).
// It wraps the cause (ErrEvent, or an olbfgs error such as
// olbfgs.ErrDiverged).
type EventError struct {
	Line int
	ID   int64
	Err  error
}

func (e *EventError) Error() string {
	if e.Line > 0 {
		return fmt.Sprintf("line %d (id %d): %v", e.Line, e.ID, e.Err)
	}
	return fmt.Sprintf("event id %d: %v", e.ID, e.Err)
}

func (e *EventError) Unwrap() error { return e.Err }
