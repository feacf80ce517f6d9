package experiment

import "errors"

// Errors returned by this package; test for them with errors.Is. Every error
// wraps one of these sentinels with the context (field, file, configuration)
// that caused it.
var (
	// ErrConfig: a configuration field is out of range or inconsistent with
	// the stream (t_del + H > T, a deleted id that is not an insert of the
	// prefix, …). The message names the field.
	ErrConfig = errors.New("invalid experiment configuration")
	// ErrShard: a shard specification k/n that is malformed or out of range.
	ErrShard = errors.New("invalid shard")
	// ErrRecord: a run record or results folder that cannot be read or is
	// inconsistent (unknown format, missing files, malformed JSON).
	ErrRecord = errors.New("invalid run record")
	// ErrIncompatible: results that cannot be merged because they come from
	// different grids, methods or record formats.
	ErrIncompatible = errors.New("incompatible results")
	// ErrOverlap: two shard outputs hold the same configuration.
	ErrOverlap = errors.New("overlapping shards")
	// ErrIncomplete: merged shards do not cover the whole grid.
	ErrIncomplete = errors.New("incomplete grid")
	// ErrRun: a configuration failed to run (the learner diverged, an
	// operator failed, …); the message names the configuration.
	ErrRun = errors.New("experiment run failed")
)

// ConfigError reports a configuration field out of range or inconsistent
// with the stream. It matches ErrConfig with errors.Is, so a command-line
// front end can map Field to the flag that sets it.
type ConfigError struct {
	// Field is the Config field ("TDel", "Horizon", "Tau", "Stream.Kappa",
	// "ProbeVectors[3]", …).
	Field string
	Value any
	// Want says what the field must be.
	Want string
}

func (e *ConfigError) Error() string {
	return ErrConfig.Error() + ": " + e.Field + " = " + fmtValue(e.Value) + ": " + e.Want
}

// Is makes errors.Is(err, ErrConfig) true.
func (e *ConfigError) Is(target error) bool { return target == ErrConfig }
