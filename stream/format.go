package stream

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"slices"
	"strconv"
	"unicode/utf8"

	"unlearn/internal/atomicfile"
)

// Read reads a stream file (spec §1.1) and returns its validated history.
//
// Every error is a *LineError carrying the 1-based line number and, when one
// field is at fault, its name. It wraps ErrFormat (malformed JSON, a blank
// line, trailing data after the object, a missing, unknown or duplicate
// field, a field of the other kind such as "x" in a quadratic stream or a
// payload on a delete, a value of the wrong JSON type, a wrong format tag,
// invalid UTF-8), ErrInvalidValue (an unknown op or kind, a non-integer id,
// d < 1, λ < 0, α ∉ [0,1], y ∉ {−1,+1}), ErrNonFinite (NaN, Infinity, or a
// literal that overflows float64 such as 1e999: none is a JSON number),
// ErrDimension, ErrNotSPD (H0 or H1 not symmetric to 1e-12 relative, or not
// positive definite), or the validator's ErrUnknownDeletion,
// ErrRepeatedDeletion and ErrDuplicateID; an I/O error of r is wrapped as is.
// A final newline is optional; a CR before it is accepted.
//
// Lines may be of any length (the header of a d = 1000 quadratic stream holds
// two million numbers); the reader parses numbers without reflection and
// allocates one slice per payload.
func Read(r io.Reader) (*History, error) {
	br := bufio.NewReaderSize(r, 64<<10)
	var (
		buf  []byte
		line int
		hdr  Header
		loss Loss
		val  *Validator
		evs  []Event
	)
	for {
		b, err := ReadLine(br, &buf)
		if err == io.EOF {
			break
		}
		line++
		if err != nil {
			return nil, &LineError{Line: line, Err: fmt.Errorf("read: %w", err)}
		}
		if err := checkLine(b); err != nil {
			return nil, &LineError{Line: line, Err: err}
		}
		if line == 1 {
			if bytes.HasPrefix(b, []byte("\uFEFF")) {
				return nil, &LineError{Line: line, Err: fmt.Errorf("the file starts with a UTF-8 byte-order mark "+
					"(bytes EF BB BF), which JSON Lines does not allow: save it as UTF-8 without BOM: %w", ErrFormat)}
			}
			if hdr, err = parseHeaderLine(b); err != nil {
				return nil, lineError(line, err)
			}
			if loss, err = hdr.Loss(); err != nil {
				return nil, lineError(line, err)
			}
			val = NewValidator(loss)
			continue
		}
		s := scanner{b: b}
		e, err := parseEvent(&s, hdr.Kind, hdr.D)
		if err == nil {
			err = s.end()
		}
		if err != nil {
			return nil, lineError(line, err)
		}
		if err := val.Check(e); err != nil {
			var ee *EventError
			if errors.As(err, &ee) {
				return nil, &LineError{Line: line, Field: ee.Field, Err: ee.Err}
			}
			return nil, &LineError{Line: line, Err: err}
		}
		evs = append(evs, e)
	}
	if line == 0 {
		return nil, &LineError{Line: 1, Err: fmt.Errorf("empty input, want a header line: %w", ErrFormat)}
	}
	return &History{Header: hdr, Loss: loss, Events: evs}, nil
}

// ReadFile reads the stream file name; see [Read]. Errors from Read are
// wrapped with the file name (errors.As still finds the *LineError).
func ReadFile(name string) (*History, error) {
	f, err := os.Open(name)
	if err != nil {
		return nil, fmt.Errorf("stream: %w", err)
	}
	defer f.Close()
	h, err := Read(f)
	if err != nil {
		return nil, fmt.Errorf("stream: %s: %w", name, err)
	}
	return h, nil
}

// ReadLine returns the next line of br without its '\n', using *buf for
// lines longer than the reader's buffer (the result may alias *buf or br's
// buffer until the next call). It returns io.EOF when no line is left; a
// last line without a final newline is returned normally. The stream
// reader and package dataset's line-based readers share it.
func ReadLine(br *bufio.Reader, buf *[]byte) ([]byte, error) {
	b, err := br.ReadSlice('\n')
	if err == bufio.ErrBufferFull {
		*buf = append((*buf)[:0], b...)
		for err == bufio.ErrBufferFull {
			b, err = br.ReadSlice('\n')
			*buf = append(*buf, b...)
		}
		b = *buf
	}
	switch {
	case err == io.EOF && len(b) == 0:
		return nil, io.EOF
	case err == io.EOF:
		return b, nil
	case err != nil:
		return nil, err
	}
	return b[:len(b)-1], nil
}

// checkLine rejects blank lines and invalid UTF-8.
func checkLine(b []byte) error {
	if len(bytes.TrimLeft(b, " \t\r")) == 0 {
		return fmt.Errorf("blank line: %w", ErrFormat)
	}
	if !utf8.Valid(b) {
		return fmt.Errorf("invalid UTF-8: %w", ErrFormat)
	}
	return nil
}

// lineError turns a parse or validation error into a *LineError, moving the
// field name of a *FieldError into LineError.Field.
func lineError(line int, err error) *LineError {
	var fe *FieldError
	if errors.As(err, &fe) {
		le := &LineError{Line: line, Field: fe.Field, Err: fe.Err}
		var pe *pathError
		if errors.As(fe.Err, &pe) && pe == fe.Err {
			le.Path, le.Err = pe.path, pe.err
		}
		return le
	}
	return &LineError{Line: line, Err: err}
}

// Header field presence bits.
const (
	hasFormat = 1 << iota
	hasKind
	hasD
	hasH0
	hasH1
	hasLambda
	hasK
)

func isKnownHeaderKey(k string) bool {
	switch k {
	case "format", "kind", "d", "H0", "H1", "k", "lambda":
		return true
	}
	return false
}

// parseHeaderLine parses a complete header object (only whitespace may
// follow it).
func parseHeaderLine(b []byte) (Header, error) {
	s := scanner{b: b}
	h, err := parseHeader(&s)
	if err == nil {
		err = s.end()
	}
	return h, err
}

// parseHeader parses the header object and checks field presence and types,
// the format tag, d ≥ 1, and the shapes of H0 and H1. It does not check the
// loss constants; see [Header.Loss]. Errors are *FieldError values or
// scanner errors, wrapping the package's sentinels.
func parseHeader(s *scanner) (Header, error) {
	var h Header
	var has int
	err := s.object(func(key string) error {
		var err error
		switch key {
		case "format":
			has |= hasFormat
			if s.peek() != '"' {
				return &FieldError{Field: key, Err: s.fail(ErrFormat, "want a string, found %s", s.describe())}
			}
			h.Format, err = s.str()
			if err == nil && h.Format != FormatV1 {
				err = fmt.Errorf("format %q, want %q: %w", h.Format, FormatV1, ErrFormat)
			}
		case "kind":
			has |= hasKind
			if s.peek() != '"' {
				return &FieldError{Field: key, Err: s.fail(ErrFormat, "want a string, found %s", s.describe())}
			}
			var k string
			k, err = s.str()
			h.Kind = Kind(k)
			if _, ok := LookupLoss(h.Kind); err == nil && !ok {
				err = fmt.Errorf("unknown kind %q: %w", k, ErrInvalidValue)
			}
		case "d":
			has |= hasD
			var d int64
			d, err = s.int64()
			if err == nil && (d < 1 || d > math.MaxInt) {
				err = fmt.Errorf("d = %d must be at least 1: %w", d, ErrInvalidValue)
			}
			h.D = int(d)
		case "H0":
			has |= hasH0
			h.H0, err = s.matrix()
		case "H1":
			has |= hasH1
			h.H1, err = s.matrix()
		case "lambda":
			has |= hasLambda
			h.Lambda, err = s.float()
		case "k":
			has |= hasK
			var k int64
			k, err = s.int64()
			if err == nil && (k < 2 || k > MaxClasses) {
				err = fmt.Errorf("k = %d classes: want 2 to %d: %w", k, MaxClasses, ErrInvalidValue)
			}
			h.K = int(k)
		default:
			var raw []byte
			if raw, err = s.value(); err == nil {
				if h.Meta == nil {
					h.Meta = map[string]json.RawMessage{}
				}
				h.Meta[key], err = compact(raw)
			}
		}
		if err != nil {
			return &FieldError{Field: key, Err: err}
		}
		return nil
	})
	if err != nil {
		return Header{}, err
	}
	missing := func(f string) error {
		return fieldErrorf(f, "missing: %w", ErrFormat)
	}
	other := func(f string) error {
		return fieldErrorf(f, "not a field of a %s stream: %w", h.Kind, ErrFormat)
	}
	switch {
	case has&hasFormat == 0 && h.Meta["op"] != nil:
		return Header{}, fieldErrorf("format", "missing: the first line of a stream file must be its header "+
			"{\"format\":%q,\"kind\":…,\"d\":…}, and this line looks like an event (it has \"op\"): %w", FormatV1, ErrFormat)
	case has&hasFormat == 0:
		return Header{}, fieldErrorf("format", "missing: the first line of a stream file must be its header "+
			"{\"format\":%q,\"kind\":…,\"d\":…}: %w", FormatV1, ErrFormat)
	case has&hasKind == 0:
		return Header{}, missing("kind")
	case has&hasD == 0:
		return Header{}, missing("d")
	}
	// The kind's spec says which constant fields it carries (RegisterLoss):
	// missing fields first, then fields of other kinds.
	spec, _ := LookupLoss(h.Kind)
	switch {
	case spec.Matrices && has&hasH0 == 0:
		return Header{}, missing("H0")
	case spec.Matrices && has&hasH1 == 0:
		return Header{}, missing("H1")
	case spec.Classes && has&hasK == 0:
		return Header{}, missing("k")
	case spec.Lambda && has&hasLambda == 0:
		return Header{}, missing("lambda")
	case !spec.Classes && has&hasK != 0:
		return Header{}, other("k")
	case !spec.Lambda && has&hasLambda != 0:
		return Header{}, other("lambda")
	case !spec.Matrices && has&hasH0 != 0:
		return Header{}, other("H0")
	case !spec.Matrices && has&hasH1 != 0:
		return Header{}, other("H1")
	}
	if spec.Matrices {
		if err := checkShape("H0", h.H0, h.D); err != nil {
			return Header{}, err
		}
		if err := checkShape("H1", h.H1, h.D); err != nil {
			return Header{}, err
		}
	}
	return h, nil
}

// compact returns a compacted copy of the JSON value raw: metadata is kept
// verbatim up to insignificant whitespace, so it always fits on one line.
func compact(raw []byte) (json.RawMessage, error) {
	var b bytes.Buffer
	if err := json.Compact(&b, raw); err != nil {
		return nil, fmt.Errorf("%v: %w", err, ErrFormat)
	}
	return b.Bytes(), nil
}

// Event field presence bits.
const (
	hasOp = 1 << iota
	hasID
	hasVec
	hasScalar
)

// payloadNames returns the names of the vector and scalar payload fields of
// kind (its registered [LossSpec]; "a" and "alpha" for an unknown kind,
// which parseHeader and appendHeader reject before any event).
func payloadNames(kind Kind) (vec, scalar string) {
	if spec, ok := LookupLoss(kind); ok {
		return spec.Vector, spec.Scalar
	}
	return "a", "alpha"
}

// parseEvent parses one event object of a stream of the given kind and
// dimension. It checks the JSON structure and types only; the domain of the
// values (dimension, α, y, ids) is left to the [Validator].
func parseEvent(s *scanner, kind Kind, d int) (Event, error) {
	var e Event
	var has int
	vecName, scalarName := payloadNames(kind)
	idxName := sparseName(kind)
	err := s.object(func(key string) error {
		var err error
		switch key {
		case "op":
			has |= hasOp
			if s.peek() != '"' {
				return &FieldError{Field: key, Err: s.fail(ErrFormat, "want a string, found %s", s.describe())}
			}
			var op string
			op, err = s.str()
			switch {
			case err != nil:
			case op == "insert":
				e.Op = Insert
			case op == "delete":
				e.Op = Delete
			default:
				err = fmt.Errorf("unknown op %q: %w", op, ErrInvalidValue)
			}
		case "id":
			has |= hasID
			e.ID, err = s.int64()
		case vecName:
			has |= hasVec
			// One allocation of the right size; the capacity hint is capped by
			// what the rest of the line can hold (≥ 2 bytes per number), so a
			// huge d in a hostile header cannot make us allocate.
			e.Sample.V, err = s.floats(make([]float64, 0, min(d, (len(s.b)-s.i)/2+1)))
		case scalarName:
			has |= hasScalar
			e.Sample.S, err = s.float()
		default:
			if idxName == "" || key != idxName {
				return fieldErrorf(key, "unknown field in a %s stream: %w", kind, ErrFormat)
			}
			has |= hasIndex
			e.Sample.Idx, err = s.indices(make([]int32, 0, min(d, (len(s.b)-s.i)/2+1)))
		}
		if err != nil {
			return &FieldError{Field: key, Err: err}
		}
		return nil
	})
	switch {
	case err != nil:
		return Event{}, err
	case has&hasOp == 0:
		return Event{}, fieldErrorf("op", "missing: %w", ErrFormat)
	case has&hasID == 0:
		return Event{}, fieldErrorf("id", "missing: %w", ErrFormat)
	case e.Op == Delete && has&hasVec != 0:
		return Event{}, fieldErrorf(vecName, "a delete has no payload: %w", ErrFormat)
	case e.Op == Delete && has&hasScalar != 0:
		return Event{}, fieldErrorf(scalarName, "a delete has no payload: %w", ErrFormat)
	case e.Op == Delete && has&hasIndex != 0:
		return Event{}, fieldErrorf(idxName, "a delete has no payload: %w", ErrFormat)
	case e.Op == Insert && has&hasVec == 0:
		return Event{}, fieldErrorf(vecName, "missing: %w", ErrFormat)
	case e.Op == Insert && has&hasScalar == 0:
		return Event{}, fieldErrorf(scalarName, "missing: %w", ErrFormat)
	}
	return e, nil
}

// Write writes h in the stream file format (spec §1.1): the header with its
// known fields in the order format, kind, d, H0, H1 (quadratic) or lambda
// (logistic), then the Meta fields in ascending key order; then one line per
// event. Floats are written in the shortest form that parses back to the
// same float64 (encoding/json's format: strconv 'f' or, outside
// [1e-6, 1e21), 'e' with precision −1), so Read(Write(h)) reproduces h bit
// for bit.
//
// Write checks what it needs to produce a readable file — a known kind, the
// fields of that kind only (Lambda = 0 for a quadratic stream, no H0/H1 for a
// logistic one), Meta keys distinct from the known ones and Meta values valid
// JSON, finite numbers, payloads of length d and no payload on a delete —
// but it does not re-check the id rules or SPD-ness: a history from
// [NewHistory], [Read] or a generator is valid. Errors wrap the package's
// sentinels; event errors are *EventError values.
func Write(w io.Writer, h *History) error {
	bw := bufio.NewWriterSize(w, 64<<10)
	b, err := appendHeader(make([]byte, 0, 4096), h.Header)
	if err != nil {
		return fmt.Errorf("stream: header: %w", err)
	}
	b = append(b, '\n')
	if _, err := bw.Write(b); err != nil {
		return fmt.Errorf("stream: write: %w", err)
	}
	for i, e := range h.Events {
		b, err = appendEvent(b[:0], h.Header, e)
		if err != nil {
			var fe *FieldError
			field := ""
			if errors.As(err, &fe) {
				field, err = fe.Field, fe.Err
			}
			return &EventError{Index: i, ID: e.ID, Field: field, Err: err}
		}
		b = append(b, '\n')
		if _, err := bw.Write(b); err != nil {
			return fmt.Errorf("stream: write: %w", err)
		}
	}
	if err := bw.Flush(); err != nil {
		return fmt.Errorf("stream: write: %w", err)
	}
	return nil
}

// WriteFile writes h to the file name atomically: the content goes to a
// temporary file in the same directory, which is synced and renamed over
// name, so an interrupted write never leaves a partial file. The file gets
// permissions 0644.
func WriteFile(name string, h *History) error {
	return atomicfile.WriteFile(name, 0o644, func(w io.Writer) error { return Write(w, h) })
}

// appendHeader appends the header object (without a newline) to b.
func appendHeader(b []byte, h Header) ([]byte, error) {
	if h.Format != "" && h.Format != FormatV1 {
		return nil, fieldErrorf("format", "format %q, want %q: %w", h.Format, FormatV1, ErrFormat)
	}
	if h.D < 1 {
		return nil, fieldErrorf("d", "d = %d must be at least 1: %w", h.D, ErrInvalidValue)
	}
	spec, ok := LookupLoss(h.Kind)
	if !ok {
		return nil, fieldErrorf("kind", "unknown kind %q: %w", h.Kind, ErrInvalidValue)
	}
	b = append(b, `{"format":"`+FormatV1+`","kind":"`...)
	b = append(b, h.Kind...) // a registered kind is a plain name (RegisterLoss)
	b = append(b, `","d":`...)
	b = strconv.AppendInt(b, int64(h.D), 10)
	if spec.Matrices {
		if h.Lambda != 0 && !spec.Lambda {
			return nil, fieldErrorf("lambda", "lambda = %v set for a %s stream: %w", h.Lambda, h.Kind, ErrFormat)
		}
		for _, m := range []struct {
			name string
			rows [][]float64
		}{{"H0", h.H0}, {"H1", h.H1}} {
			if err := checkShape(m.name, m.rows, h.D); err != nil {
				return nil, err
			}
			b = append(b, `,"`+m.name+`":[`...)
			for i, row := range m.rows {
				if i > 0 {
					b = append(b, ',')
				}
				var err error
				if b, err = appendFloats(b, row); err != nil {
					return nil, &FieldError{Field: m.name, Err: fmt.Errorf("row %d: %w", i, err)}
				}
			}
			b = append(b, ']')
		}
	} else if h.H0 != nil || h.H1 != nil {
		return nil, fieldErrorf("H0", "H0/H1 set for a %s stream: %w", h.Kind, ErrFormat)
	}
	switch {
	case spec.Classes && (h.K < 2 || h.K > MaxClasses):
		return nil, fieldErrorf("k", "k = %d classes: want 2 to %d: %w", h.K, MaxClasses, ErrInvalidValue)
	case spec.Classes:
		b = append(b, `,"k":`...)
		b = strconv.AppendInt(b, int64(h.K), 10)
	case h.K != 0:
		return nil, fieldErrorf("k", "k = %d set for a %s stream: %w", h.K, h.Kind, ErrFormat)
	}
	if spec.Lambda {
		b = append(b, `,"lambda":`...)
		var err error
		if b, err = appendFloat(b, h.Lambda); err != nil {
			return nil, &FieldError{Field: "lambda", Err: err}
		}
	} else if h.Lambda != 0 {
		return nil, fieldErrorf("lambda", "lambda = %v set for a %s stream: %w", h.Lambda, h.Kind, ErrFormat)
	}
	keys := make([]string, 0, len(h.Meta))
	for k := range h.Meta {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		if isKnownHeaderKey(k) {
			return nil, fieldErrorf(k, "metadata shadows a known header field: %w", ErrFormat)
		}
		raw, err := compact(h.Meta[k])
		if err != nil {
			return nil, &FieldError{Field: k, Err: err}
		}
		kq, err := json.Marshal(k)
		if err != nil { // unreachable: every Go string marshals
			return nil, &FieldError{Field: k, Err: fmt.Errorf("%v: %w", err, ErrFormat)}
		}
		b = append(b, ',')
		b = append(b, kq...)
		b = append(b, ':')
		b = append(b, raw...)
	}
	return append(b, '}'), nil
}

// appendEvent appends the event object (without a newline) to b.
func appendEvent(b []byte, h Header, e Event) ([]byte, error) {
	vecName, scalarName := payloadNames(h.Kind)
	switch e.Op {
	case Insert:
		b = append(b, `{"op":"insert","id":`...)
	case Delete:
		if e.Sample.V != nil || e.Sample.S != 0 {
			return nil, fmt.Errorf("a delete carries a payload: %w", ErrInvalidValue)
		}
		b = append(b, `{"op":"delete","id":`...)
		b = strconv.AppendInt(b, e.ID, 10)
		return append(b, '}'), nil
	default:
		return nil, fieldErrorf("op", "op %v: %w", e.Op, ErrInvalidValue)
	}
	b = strconv.AppendInt(b, e.ID, 10)
	idxName := sparseName(h.Kind)
	switch {
	case e.Sample.Idx != nil && idxName == "":
		return nil, fieldErrorf(vecName, "a %s stream has no sparse payloads: %w", h.Kind, ErrFormat)
	case !e.Sample.FitsDim(h.D) && e.Sample.Idx != nil:
		return nil, fieldErrorf(idxName, "%d indices for %d values, or an index outside [0, d = %d): %w", len(e.Sample.Idx), len(e.Sample.V), h.D, ErrDimension)
	case !e.Sample.FitsDim(h.D):
		return nil, fieldErrorf(vecName, "length %d, want d = %d: %w", len(e.Sample.V), h.D, ErrDimension)
	}
	b = append(b, `,"`...)
	b = append(b, vecName...)
	b = append(b, `":`...)
	var err error
	if b, err = appendFloats(b, e.Sample.V); err != nil {
		return nil, &FieldError{Field: vecName, Err: err}
	}
	if e.Sample.Idx != nil {
		b = append(b, `,"`...)
		b = append(b, idxName...)
		b = append(b, `":`...)
		b = appendInts(b, e.Sample.Idx)
	}
	b = append(b, `,"`...)
	b = append(b, scalarName...)
	b = append(b, `":`...)
	if b, err = appendFloat(b, e.Sample.S); err != nil {
		return nil, &FieldError{Field: scalarName, Err: err}
	}
	return append(b, '}'), nil
}

// appendFloats appends v as a JSON array.
func appendFloats(b []byte, v []float64) ([]byte, error) {
	b = append(b, '[')
	for i, f := range v {
		if i > 0 {
			b = append(b, ',')
		}
		var err error
		if b, err = appendFloat(b, f); err != nil {
			return nil, fmt.Errorf("entry %d: %w", i, err)
		}
	}
	return append(b, ']'), nil
}

// appendFloat appends f in the shortest representation that parses back to
// f, formatted as encoding/json does ('f', or 'e' outside [1e-6, 1e21), with
// a one-digit negative exponent written e-7 rather than e-07). NaN and ±Inf
// have no JSON form and are ErrNonFinite.
func appendFloat(b []byte, f float64) ([]byte, error) {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return nil, fmt.Errorf("%v: %w", f, ErrNonFinite)
	}
	format := byte('f')
	if abs := math.Abs(f); abs != 0 && (abs < 1e-6 || abs >= 1e21) {
		format = 'e'
	}
	b = strconv.AppendFloat(b, f, format, -1, 64)
	if format == 'e' {
		// clean up e-09 to e-9
		n := len(b)
		if n >= 4 && b[n-4] == 'e' && b[n-3] == '-' && b[n-2] == '0' {
			b[n-2] = b[n-1]
			b = b[:n-1]
		}
	}
	return b, nil
}
