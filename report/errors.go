package report

import "errors"

// Errors returned by this package; test for them with errors.Is. Each is
// wrapped with the context (file, figure, field) that caused it.
var (
	// ErrRecords: the records cannot be drawn (none, no methods, or
	// methods that differ between records of one experiment).
	ErrRecords = errors.New("report: records cannot be drawn")
	// ErrFigure: a Figure's data is malformed (series of unequal lengths,
	// a value ≤ 0 on a log axis, a ragged heat map, no panels).
	ErrFigure = errors.New("report: malformed figure")
)
