package align

import "errors"

// Errors returned by this package; test for them with errors.Is.
var (
	// ErrConfig: an Options field is out of range.
	ErrConfig = errors.New("invalid alignment options")
	// ErrProbes: user-provided probe vectors are empty, of the wrong
	// dimension, not finite or not of unit norm.
	ErrProbes = errors.New("invalid probe vectors")
)
