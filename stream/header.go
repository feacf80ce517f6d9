package stream

import (
	"encoding/json"
	"fmt"
	"unicode/utf8"

	"unlearn/internal/strictjson"
)

// FormatV1 is the format tag of the stream file header (spec §1.1).
const FormatV1 = "olbfgs-stream/v1"

// Header is the first line of a stream file: the loss kind, the feature
// dimension d (the length of a dense payload vector) and the loss constants
// shared by every event. The parameter dimension of the loss it defines is
// [ParamDim] of [Header.Loss]: K·d for a multinomial stream, d otherwise.
type Header struct {
	// Format is the format tag. Required when reading; must be FormatV1.
	// When writing, an empty Format is written as FormatV1.
	Format string
	// Kind is the loss kind. Required.
	Kind Kind
	// D is the feature dimension d ≥ 1. Required.
	D int
	// H0 and H1 are the SPD d×d matrices of a quadratic stream; required for
	// KindQuadratic, absent otherwise.
	H0, H1 [][]float64
	// K is the number of classes K ≥ 2 of a multinomial stream (header
	// field "k"); required for KindMultinomial and any registered kind
	// whose [LossSpec] has Classes, absent (0) otherwise.
	K int
	// Lambda is the ridge λ ≥ 0 of a logistic, regression or multinomial
	// stream; required for KindLogistic, KindRegression, KindMultinomial
	// and any registered kind whose [LossSpec] has Lambda, absent
	// otherwise.
	Lambda float64
	// Meta holds the header's other fields verbatim (generator name, seed,
	// κ, drift parameters, …). They are preserved by a read/write round trip
	// and written in ascending key order.
	Meta map[string]json.RawMessage
}

// Loss validates the header and returns its loss, built by the registered
// spec of its kind ([RegisterLoss]; the built-in kinds are quadratic,
// logistic, regression and multinomial). Errors are *FieldError values
// naming the offending header field.
func (h Header) Loss() (Loss, error) {
	if h.D < 1 {
		return nil, fieldErrorf("d", "d = %d must be at least 1: %w", h.D, ErrInvalidValue)
	}
	spec, ok := LookupLoss(h.Kind)
	if !ok {
		return nil, fieldErrorf("kind", "unknown kind %q: %w", h.Kind, ErrInvalidValue)
	}
	if spec.Matrices && len(h.H0) != h.D {
		return nil, fieldErrorf("H0", "%d rows, want d = %d: %w", len(h.H0), h.D, ErrDimension)
	}
	loss, err := spec.New(h)
	if err != nil {
		return nil, err
	}
	if loss == nil || loss.Kind() != h.Kind || loss.Dim() != h.D {
		return nil, fieldErrorf("kind", "the registered loss of kind %q does not match its header (kind %q, d = %d): %w",
			h.Kind, h.Kind, h.D, ErrInvalidValue)
	}
	return loss, nil
}

// MetaValue decodes the metadata field key into v by the rules of the
// toolkit's other documents (internal/strictjson: exact member names, no
// duplicates, no unknown members). It reports false when the
// field is absent and an error when it does not decode into v.
func (h Header) MetaValue(key string, v any) (bool, error) {
	raw, ok := h.Meta[key]
	if !ok {
		return false, nil
	}
	if err := strictjson.Unmarshal(raw, v); err != nil {
		return true, fmt.Errorf("header field %q: %w", key, err)
	}
	return true, nil
}

// SetMeta stores v, encoded as JSON, as the metadata field key.
func (h *Header) SetMeta(key string, v any) error {
	raw, err := json.Marshal(v)
	if err != nil {
		return fmt.Errorf("header field %q: %w", key, err)
	}
	if h.Meta == nil {
		h.Meta = map[string]json.RawMessage{}
	}
	h.Meta[key] = raw
	return nil
}

// MarshalJSON encodes the header as the first line of a stream file (see
// [Write]): the known fields (format, kind, d, then H0 and H1, or k and
// lambda)
// followed by the Meta fields in ascending key order, with floats in the
// shortest representation that round-trips. It fails on NaN or Inf, on fields
// of the other kind, and on Meta keys that shadow known fields.
func (h Header) MarshalJSON() ([]byte, error) {
	return appendHeader(nil, h)
}

// UnmarshalJSON decodes a header object with the rules of [Read]: format,
// kind and d are required; H0 and H1 (with d×d shapes) for a quadratic
// stream, lambda for a logistic one; fields of the other kind, duplicate
// fields, null in place of a value and invalid UTF-8 are errors; every other
// field is kept in Meta (compacted). It does not check the loss constants:
// call [Header.Loss] for that. Errors are *FieldError values or wrap the
// package's sentinels.
func (h *Header) UnmarshalJSON(data []byte) error {
	if !utf8.Valid(data) {
		return fmt.Errorf("header: invalid UTF-8: %w", ErrFormat)
	}
	out, err := parseHeaderLine(data)
	if err != nil {
		return err
	}
	*h = out
	return nil
}
