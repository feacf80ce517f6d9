package unlearn

import "errors"

// Errors returned by this package; test for them with errors.Is. Window
// replay without a usable checkpoint also wraps olbfgs.ErrNoCheckpoint.
var (
	// ErrRequest: a Request that no operator can serve — no learner, a
	// learner that has not seen exactly the prefix, a deletion set naming an
	// id that is not an insert of the prefix, or a delete event of the prefix
	// whose id is missing from the deletion set.
	ErrRequest = errors.New("invalid unlearning request")
	// ErrOperator: an operator broke its contract (returned nil, or the very
	// learner it was given); reported by Run.
	ErrOperator = errors.New("unlearning operator broke its contract")
)
