package dataset

import (
	"errors"
	"fmt"
	"strings"
)

// Sentinel errors. Every error about the data wraps one of these and is a
// *PosError naming where in the file it is.
var (
	// ErrSyntax: a malformed file — a CSV row with the wrong number of
	// fields or a stray quote, a LIBSVM token that is not label, qid:n or
	// index:value, a blank line, a bad IDX magic number, a truncated file.
	ErrSyntax = errors.New("malformed data file")
	// ErrValue: a cell or value that is empty, not a number, or not
	// finite (NaN, ±Inf, or a literal such as 1e999 that overflows); a
	// LIBSVM index that is not a positive integer, repeats, decreases or
	// exceeds d.
	ErrValue = errors.New("invalid value")
	// ErrIndexRange: a LIBSVM index above the reader's d (Options.D, or
	// the model's d when the caller fixes it). It wraps ErrValue, whose
	// message it has.
	ErrIndexRange = fmt.Errorf("%w", ErrValue)
	// ErrLabel: a label outside the allowed set (0/1 or ±1 for a logistic
	// stream without Classes; a finite number for regression).
	ErrLabel = errors.New("label outside the allowed set")
	// ErrDuplicateID: two rows with the same id.
	ErrDuplicateID = errors.New("duplicate id")
	// ErrOptions: an Options field out of range or inconsistent with the
	// file (an unknown column, Classes with a regression stream, …). These
	// errors are *OptionError values naming the field.
	ErrOptions = errors.New("invalid option")
)

// PosError locates an error in a data file: by line and column (CSV and
// LIBSVM, both 1-based; Column 0 when the line as a whole is at fault) or
// by byte offset (IDX, 0-based, with Line 0). An error in a CSV cell also
// names its field (1-based, as --label and --exclude count columns) and
// the header's name of it; the message then says "line 3, field 2 ("a")",
// which is what a user finds in a spreadsheet, not the byte column.
type PosError struct {
	// File is the path of the file as given.
	File string
	// Line and Column are 1-based; Line is 0 for a byte-offset position.
	Line, Column int
	// Field is the 1-based CSV field (column of the table) of the cell at
	// fault, or 0 when the error is not in one cell.
	Field int
	// ColumnName is the CSV header's name of the column, if known.
	ColumnName string
	// StringColumn is set for a CSV feature cell of the first data row
	// that is a word, not a number: the column most likely holds names or
	// string ids, which are not features (Options.ID or Options.Exclude).
	// The message does not say so; a front end names its own options.
	StringColumn bool
	// Offset is the 0-based byte offset in an IDX file (after
	// decompression, for a gzipped one).
	Offset int64
	Err    error
}

func (e *PosError) Error() string {
	var b strings.Builder
	b.WriteString(e.File)
	b.WriteString(": ")
	switch {
	case e.Line == 0:
		fmt.Fprintf(&b, "byte %d", e.Offset)
	case e.Field > 0:
		fmt.Fprintf(&b, "line %d, field %d", e.Line, e.Field)
	case e.Column == 0:
		fmt.Fprintf(&b, "line %d", e.Line)
	default:
		fmt.Fprintf(&b, "line %d, column %d", e.Line, e.Column)
	}
	if e.ColumnName != "" {
		fmt.Fprintf(&b, " (%q)", e.ColumnName)
	}
	b.WriteString(": ")
	b.WriteString(e.Err.Error())
	return b.String()
}

func (e *PosError) Unwrap() error { return e.Err }

// OptionError names the Options field at fault.
type OptionError struct {
	// Field is the Options field ("Label", "Classes", …).
	Field string
	// Msg says what is wrong.
	Msg string
}

func (e *OptionError) Error() string { return fmt.Sprintf("dataset: option %s: %s", e.Field, e.Msg) }

// Is makes errors.Is(err, ErrOptions) true.
func (e *OptionError) Is(target error) bool { return target == ErrOptions }

func optErr(field, format string, args ...any) error {
	return &OptionError{Field: field, Msg: fmt.Sprintf(format, args...)}
}
