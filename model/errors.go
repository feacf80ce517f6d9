package model

import (
	"errors"
	"fmt"
)

// Sentinel errors.
var (
	// ErrMismatch: data that does not fit the model's contract (another
	// format, other feature columns, other classes, another scale or image
	// shape). These errors are *MismatchError values naming the field.
	ErrMismatch = errors.New("data does not match the model's contract")
	// ErrContract: a contract that cannot describe its model (as many CSV
	// features as d, image rows·cols = d, two classes for a binary model,
	// none for regression, …). These errors are *ContractError values.
	ErrContract = errors.New("invalid contract")
	// ErrRow: a row that cannot be scored (wrong length, a value that is not
	// finite, an unknown or missing named feature, a score that overflows).
	ErrRow = errors.New("invalid row")
	// ErrEmpty: an evaluation without a single row.
	ErrEmpty = errors.New("no rows")
)

// MismatchError says which field of the contract the data does not match,
// what the model expects and what the data has, in the user's words.
type MismatchError struct {
	// Field is the contract's field: "format", "features", "classes",
	// "scale" or "shape".
	Field string
	// Want is what the model expects; Got is what the data has.
	Want, Got string
	// Detail, if not empty, says where the two differ (the first swapped,
	// renamed, missing or extra feature column).
	Detail string
}

func (e *MismatchError) Error() string {
	s := fmt.Sprintf("%s: the model expects %s, the data has %s", e.Field, e.Want, e.Got)
	if e.Detail != "" {
		s += " (" + e.Detail + ")"
	}
	return s
}

// Is makes errors.Is(err, ErrMismatch) true.
func (e *MismatchError) Is(target error) bool { return target == ErrMismatch }

// ContractError names the field of a contract that cannot describe its
// model.
type ContractError struct {
	// Field is the contract's JSON field ("features", "classes", …).
	Field string
	Msg   string
}

func (e *ContractError) Error() string { return fmt.Sprintf("model contract: %s: %s", e.Field, e.Msg) }

// Is makes errors.Is(err, ErrContract) true.
func (e *ContractError) Is(target error) bool { return target == ErrContract }

func contractErr(field, format string, args ...any) error {
	return &ContractError{Field: field, Msg: fmt.Sprintf(format, args...)}
}
