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
	// ErrCorrupt: a stored row fails its checksum, SQLite's integrity
	// check fails, or the tables break an invariant that ties them
	// together (a *CorruptError names what). Nothing is restored, replayed
	// over or released from a store in that state.
	ErrCorrupt = errors.New("store is damaged")
	// ErrNotCertifiable: the approximate path was asked of a store whose
	// learner is not certifiable (no radius and sample bound), which cannot
	// noise the state it would keep.
	ErrNotCertifiable = errors.New("the store's learner is not certifiable")
	// ErrPending: a release of the state was asked for while approximate
	// forgets are pending; the releases those forgets published are the
	// ones to serve (Store.Release).
	ErrPending = errors.New("approximate forgets are pending")
)

// CorruptError says which stored thing is damaged and how. It matches
// ErrCorrupt with errors.Is, and ErrInconsistent too (a damaged store is an
// inconsistent one; callers that test for ErrInconsistent keep working). Its text names tables, rows and sequence
// numbers only: never a stored value (which may depend on deleted data).
type CorruptError struct {
	// Where names the row or table: "the state", "checkpoint at seq 40",
	// "event seq 17 (id 17)", "kept release 3", "the log", …
	Where string
	// Why says what is wrong with it.
	Why string
}

func (e *CorruptError) Error() string {
	return fmt.Sprintf("%v: %s: %s (run 'unlearn status --check'; docs/deployment.md, \"Integrity\")", ErrCorrupt, e.Where, e.Why)
}

// Is makes errors.Is(err, ErrCorrupt) and errors.Is(err, ErrInconsistent)
// true.
func (e *CorruptError) Is(target error) bool {
	return target == ErrCorrupt || target == ErrInconsistent
}

func corrupt(where, format string, args ...any) error {
	return &CorruptError{Where: where, Why: fmt.Sprintf(format, args...)}
}

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
