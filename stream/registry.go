package stream

import (
	"fmt"
	"slices"
	"sync"
)

// LossSpec describes a loss kind of the stream format: the names of its
// payload fields, which of the header's constant fields it carries, and how
// a header builds the loss. Register one with [RegisterLoss].
//
// A loss kind's constants are the header's "lambda" (Header.Lambda),
// "H0"/"H1" (Header.H0, Header.H1) and "k" (Header.K) if the spec declares
// them, and any
// further fields the kind wants in Header.Meta (read them in New with
// [Header.MetaValue]; a loss's Header method writes them with
// [Header.SetMeta]). Metadata round-trips verbatim through stream files and
// snapshots.
type LossSpec struct {
	// Vector and Scalar name the insert payload's fields, Sample.V and
	// Sample.S: "a" and "alpha" for quadratic, "x" and "y" for logistic and
	// regression. Required: distinct names of lower-case letters, digits,
	// '_', '-' or '.', starting with a letter, other than "op" and "id".
	Vector, Scalar string
	// Lambda makes the header field "lambda" required; without it the
	// field is an error in a stream of this kind.
	Lambda bool
	// Matrices makes the header fields "H0" and "H1" (d×d matrices)
	// required; without it they are errors in a stream of this kind.
	Matrices bool
	// Classes makes the header field "k" (Header.K, the number of classes,
	// an integer in [2, MaxClasses]) required; without it the field is an
	// error in a stream of this kind.
	Classes bool
	// Sparse allows sparse payloads: the event field Vector+"_index" (for
	// example "x_index") lists the 0-based indices of the values in Vector
	// (Sample.Idx). The loss must then handle Sample.Idx.
	Sparse bool
	// New builds the loss of a header of this kind, checking its constants
	// (return a *FieldError naming the header field at fault). The loss's
	// Kind and Dim must be the header's. Required.
	New func(h Header) (Loss, error)
}

// HeaderProvider is implemented by losses that can describe themselves as
// a stream header: every built-in loss, and any loss a user registers with
// [RegisterLoss] and wants to save in a snapshot or hash into a certificate.
// Header returns the header whose [Header.Loss] rebuilds an equivalent loss
// (same kind, dimension and constants).
type HeaderProvider interface {
	Header() Header
}

var registry = struct {
	sync.RWMutex
	specs map[Kind]LossSpec
}{specs: map[Kind]LossSpec{
	KindQuadratic: {Vector: "a", Scalar: "alpha", Matrices: true,
		New: func(h Header) (Loss, error) { return NewQuadratic(h.H0, h.H1) }},
	KindLogistic: {Vector: "x", Scalar: "y", Lambda: true, Sparse: true,
		New: func(h Header) (Loss, error) { return NewLogistic(h.D, h.Lambda) }},
	KindRegression: {Vector: "x", Scalar: "y", Lambda: true, Sparse: true,
		New: func(h Header) (Loss, error) { return NewRegression(h.D, h.Lambda) }},
	KindMultinomial: {Vector: "x", Scalar: "y", Lambda: true, Classes: true, Sparse: true,
		New: func(h Header) (Loss, error) { return NewMultinomial(h.D, h.K, h.Lambda) }},
}}

// RegisterLoss adds a loss kind to the stream format, so that streams of
// that kind are read and written ([Read], [Write], [Header.Loss]) and
// learner snapshots of a loss of that kind are saved and loaded (package
// olbfgs encodes the header of [HeaderOf]). The built-in kinds quadratic,
// logistic, regression and multinomial are registered already.
//
// kind must be lower-case letters, digits, '_', '-' or '.', starting with a
// letter, and not registered yet; spec must name its payload fields and
// have New. Errors wrap ErrInvalidValue. Register from an init function
// or before the first read: a stream file of an unregistered kind is an
// error.
func RegisterLoss(kind Kind, spec LossSpec) error {
	switch {
	case !isName(string(kind)):
		return fmt.Errorf("stream: RegisterLoss: kind %q: want a lower-case name such as \"poisson\": %w", kind, ErrInvalidValue)
	case !isName(spec.Vector) || !isName(spec.Scalar) || spec.Vector == spec.Scalar:
		return fmt.Errorf("stream: RegisterLoss: kind %q: payload fields %q and %q must be distinct lower-case names: %w",
			kind, spec.Vector, spec.Scalar, ErrInvalidValue)
	case spec.Vector == "op" || spec.Vector == "id" || spec.Scalar == "op" || spec.Scalar == "id":
		return fmt.Errorf("stream: RegisterLoss: kind %q: payload fields may not be named \"op\" or \"id\": %w", kind, ErrInvalidValue)
	case spec.Sparse && spec.Vector+indexSuffix == spec.Scalar:
		return fmt.Errorf("stream: RegisterLoss: kind %q: scalar field %q is the sparse index field's name: %w", kind, spec.Scalar, ErrInvalidValue)
	case spec.New == nil:
		return fmt.Errorf("stream: RegisterLoss: kind %q: New is nil: %w", kind, ErrInvalidValue)
	}
	registry.Lock()
	defer registry.Unlock()
	if _, ok := registry.specs[kind]; ok {
		return fmt.Errorf("stream: RegisterLoss: kind %q is already registered: %w", kind, ErrInvalidValue)
	}
	registry.specs[kind] = spec
	return nil
}

// LookupLoss returns the spec of a registered loss kind.
func LookupLoss(kind Kind) (LossSpec, bool) {
	registry.RLock()
	defer registry.RUnlock()
	s, ok := registry.specs[kind]
	return s, ok
}

// Kinds returns the registered loss kinds in ascending order.
func Kinds() []Kind {
	registry.RLock()
	defer registry.RUnlock()
	out := make([]Kind, 0, len(registry.specs))
	for k := range registry.specs {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

// HeaderOf returns the stream header that describes loss: its
// [HeaderProvider] header with Format set to FormatV1. It fails (wrapping
// ErrInvalidValue) if the loss does not implement HeaderProvider, if its
// kind is not registered, or if the header's kind or d disagree with the
// loss's Kind and Dim. Every built-in loss has a header; a state whose loss
// has none cannot be saved as a snapshot.
func HeaderOf(loss Loss) (Header, error) {
	p, ok := loss.(HeaderProvider)
	if !ok {
		return Header{}, fmt.Errorf("stream: loss %T of kind %q has no Header method (stream.HeaderProvider): %w",
			loss, loss.Kind(), ErrInvalidValue)
	}
	h := p.Header()
	h.Format = FormatV1
	if h.Kind != loss.Kind() || h.D != loss.Dim() {
		return Header{}, fmt.Errorf("stream: loss %T: header (kind %q, d = %d) disagrees with the loss (kind %q, d = %d): %w",
			loss, h.Kind, h.D, loss.Kind(), loss.Dim(), ErrInvalidValue)
	}
	if _, ok := LookupLoss(h.Kind); !ok {
		return Header{}, fmt.Errorf("stream: loss kind %q is not registered (stream.RegisterLoss): %w", h.Kind, ErrInvalidValue)
	}
	return h, nil
}

// isName reports whether s is a lower-case name: a letter, then letters,
// digits, '_', '-' or '.'.
func isName(s string) bool {
	if s == "" || s[0] < 'a' || s[0] > 'z' {
		return false
	}
	for i := 1; i < len(s); i++ {
		c := s[i]
		if (c < 'a' || c > 'z') && (c < '0' || c > '9') && c != '_' && c != '-' && c != '.' {
			return false
		}
	}
	return true
}
