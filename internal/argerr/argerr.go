// Package argerr holds the bad-argument error shared by packages bound and
// noise, which both report a refused argument as its function, name and
// numeric value wrapping a sentinel.
//
// Each package instantiates [Error] with a type of its own (an empty struct
// whose Prefix method returns the package name), so *bound.ArgError and
// *noise.ArgError stay distinct types for errors.As, and each message keeps
// its package prefix.
package argerr

import (
	"fmt"
	"strconv"
)

// Prefixer names the package an [Error] belongs to. Implementations are
// empty structs; Prefix returns the message prefix, e.g. "bound".
type Prefixer interface{ Prefix() string }

// Error reports a bad argument. Its message is
// "<prefix>: <Arg> = <Value>: <Err>" (Func is for programs; the message
// names the argument, not the Go function), Value printed in the shortest
// 'g' form that reads back exactly; Unwrap returns Err.
type Error[P Prefixer] struct {
	// Func is the function that refused the argument.
	Func string
	// Arg names the argument.
	Arg string
	// Value is the refused value (integers converted to float64).
	Value float64
	// Err is the sentinel describing the violated condition.
	Err error
}

func (e *Error[P]) Error() string {
	var p P
	return fmt.Sprintf("%s: %s = %s: %v", p.Prefix(), e.Arg,
		strconv.FormatFloat(e.Value, 'g', -1, 64), e.Err)
}

func (e *Error[P]) Unwrap() error { return e.Err }

// New returns an *Error[P] for function fn refusing argument arg = v, as an
// error wrapping err.
func New[P Prefixer](fn, arg string, v float64, err error) error {
	return &Error[P]{Func: fn, Arg: arg, Value: v, Err: err}
}
