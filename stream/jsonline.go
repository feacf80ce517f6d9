package stream

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strconv"
	"unicode/utf8"
)

// This file holds the strict JSON scanner behind the stream format. It reads
// one JSON object from a byte slice (one line of a stream file) into typed
// values without reflection. It is stricter than encoding/json where the
// stream format needs it: duplicate keys, null in place of a number, and
// trailing bytes after the object are errors (encoding/json silently keeps the
// last duplicate and leaves a Go value unchanged on null). Every document it
// accepts is valid JSON (RFC 8259); the fuzz test checks this against
// json.Valid.

// maxDepth bounds the nesting of arrays and objects in header metadata, so a
// line of ten million '[' cannot exhaust the stack. encoding/json uses 10000.
const maxDepth = 10000

// syntaxError is a scanner error: a message, the 1-based column (in
// characters, as an editor counts them) in the line, and the sentinel it
// wraps.
type syntaxError struct {
	col int
	msg string
	err error
}

func (e *syntaxError) Error() string {
	return fmt.Sprintf("%s at column %d: %v", e.msg, e.col, e.err)
}
func (e *syntaxError) Unwrap() error { return e.err }

// pathError locates an error inside a field's value: path is the route from
// the field to the offending value, such as "[2]" or ".a[0]" (JSON
// arrays indexed from 0). The reader moves it into [LineError.Path].
type pathError struct {
	path string
	err  error
}

func (e *pathError) Error() string { return e.path + ": " + e.err.Error() }
func (e *pathError) Unwrap() error { return e.err }

// inPath prefixes the path of err (a *pathError or any error) with seg.
func inPath(seg string, err error) error {
	var pe *pathError
	if errors.As(err, &pe) && pe == err {
		return &pathError{path: seg + pe.path, err: pe.err}
	}
	return &pathError{path: seg, err: err}
}

// keySegment returns the path segment of object key k: ".k" for a key made
// of letters, digits and underscores (not starting with a digit), else
// [k] with k quoted as a JSON string.
func keySegment(k string) string {
	plain := k != ""
	for i, r := range k {
		ok := r == '_' || (r >= 'a' && r <= 'z') || (r >= 'A' && r <= 'Z') || (i > 0 && r >= '0' && r <= '9')
		plain = plain && ok
	}
	if plain {
		return "." + k
	}
	q, _ := json.Marshal(k) // a Go string always marshals
	return "[" + string(q) + "]"
}

// scanner reads JSON tokens from b starting at i.
type scanner struct {
	b []byte
	i int
}

func (s *scanner) fail(sentinel error, format string, args ...any) error {
	col := utf8.RuneCount(s.b[:min(s.i, len(s.b))]) + 1
	return &syntaxError{col: col, msg: fmt.Sprintf(format, args...), err: sentinel}
}

// skipWS skips JSON whitespace (space, tab, CR, LF).
func (s *scanner) skipWS() {
	for s.i < len(s.b) {
		switch s.b[s.i] {
		case ' ', '\t', '\r', '\n':
			s.i++
		default:
			return
		}
	}
}

// peek returns the next non-whitespace byte, or 0 at the end of input. A
// NUL byte in the input also peeks as 0, so a caller that accepts the end of
// input must test [scanner.atEnd], never peek() == 0: a NUL is not the end
// of a line.
func (s *scanner) peek() byte {
	s.skipWS()
	if s.i < len(s.b) {
		return s.b[s.i]
	}
	return 0
}

// atEnd skips whitespace and reports whether the input is exhausted.
func (s *scanner) atEnd() bool {
	s.skipWS()
	return s.i >= len(s.b)
}

// describe names the next token for error messages. Bytes that JSON does
// not allow outside strings are named by their code point, so that a NUL,
// another control character or a byte-order mark cannot pass for the end of
// the line or for a mis-decoded letter.
func (s *scanner) describe() string {
	if s.atEnd() {
		return "end of line"
	}
	switch c := s.b[s.i]; {
	case c < 0x20 || c == 0x7f:
		return fmt.Sprintf("control character U+%04X", c)
	case c >= utf8.RuneSelf:
		r, _ := utf8.DecodeRune(s.b[s.i:])
		if r == '\uFEFF' {
			return "a byte-order mark U+FEFF (save the file as UTF-8 without BOM)"
		}
		return fmt.Sprintf("%q (U+%04X)", r, r)
	case c == '"':
		return "string"
	case c == '-' || (c >= '0' && c <= '9'):
		return "number"
	case c == '[':
		return "array"
	case c == '{':
		return "object"
	case c == 'n':
		return "null"
	case c == 't' || c == 'f':
		return "boolean"
	default:
		return strconv.QuoteRune(rune(c))
	}
}

// expect consumes the byte c after optional whitespace.
func (s *scanner) expect(c byte) error {
	if s.peek() != c {
		return s.fail(ErrFormat, "want %q, found %s", c, s.describe())
	}
	s.i++
	return nil
}

// end checks that only whitespace remains. Any other byte, a NUL
// included, is an error: a line holds exactly one JSON object.
func (s *scanner) end() error {
	if !s.atEnd() {
		return s.fail(ErrFormat, "trailing data after the JSON object: found %s", s.describe())
	}
	return nil
}

// object calls field for each key of the object at the current position, with
// the scanner positioned at the key's value; field must consume the value.
// Keys are unescaped. Duplicate keys are errors.
func (s *scanner) object(field func(key string) error) error {
	if err := s.expect('{'); err != nil {
		return err
	}
	if s.peek() == '}' {
		s.i++
		return nil
	}
	var seen map[string]struct{}
	var few [8]string // keys seen so far, without allocating for short objects
	n := 0
	for {
		if s.peek() != '"' {
			return s.fail(ErrFormat, "want a field name, found %s", s.describe())
		}
		start := s.i
		key, err := s.str()
		if err != nil {
			return err
		}
		dup := false
		if seen != nil {
			_, dup = seen[key]
		} else {
			for _, k := range few[:n] {
				dup = dup || k == key
			}
		}
		if dup {
			s.i = start
			return &FieldError{Field: key, Err: s.fail(ErrFormat, "duplicate field")}
		}
		if n < len(few) {
			few[n] = key
			n++
		} else {
			if seen == nil {
				seen = make(map[string]struct{}, 2*len(few))
				for _, k := range few {
					seen[k] = struct{}{}
				}
			}
			seen[key] = struct{}{}
		}
		if err := s.expect(':'); err != nil {
			return err
		}
		if err := field(key); err != nil {
			return err
		}
		switch s.peek() {
		case ',':
			s.i++
		case '}':
			s.i++
			return nil
		default:
			return s.fail(ErrFormat, "want ',' or '}', found %s", s.describe())
		}
	}
}

// str consumes a string and returns it unescaped. The common case, a string
// without escapes, is returned directly; strings with escapes are decoded by
// encoding/json. Control characters are errors; the caller has checked that
// the line is valid UTF-8.
func (s *scanner) str() (string, error) {
	if err := s.expect('"'); err != nil {
		return "", err
	}
	start := s.i
	escaped := false
	for s.i < len(s.b) {
		c := s.b[s.i]
		switch {
		case c == '"':
			s.i++
			if !escaped {
				return intern(s.b[start : s.i-1]), nil
			}
			var out string
			if err := json.Unmarshal(s.b[start-1:s.i], &out); err != nil {
				s.i = start
				return "", s.fail(ErrFormat, "bad string escape")
			}
			return out, nil
		case c == '\\':
			escaped = true
			s.i += 2 // skip the escaped byte; \uXXXX is checked by json.Unmarshal
		case c < 0x20:
			return "", s.fail(ErrFormat, "control character in string")
		default:
			s.i++
		}
	}
	return "", s.fail(ErrFormat, "unterminated string")
}

// numberToken consumes a number following the JSON grammar
//
//	-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?
//
// and returns its bytes and whether it is an integer literal (no fraction,
// no exponent).
func (s *scanner) numberToken() ([]byte, bool, error) {
	s.skipWS()
	start := s.i
	digits := func() int {
		n := 0
		for s.i < len(s.b) && s.b[s.i] >= '0' && s.b[s.i] <= '9' {
			s.i++
			n++
		}
		return n
	}
	if s.i < len(s.b) && s.b[s.i] == '-' {
		s.i++
	}
	switch {
	case s.i < len(s.b) && s.b[s.i] == '0':
		s.i++
	case digits() > 0:
	default:
		s.i = start
		for _, lit := range [...]string{"NaN", "Infinity", "-Infinity"} {
			if bytes.HasPrefix(s.b[s.i:], []byte(lit)) {
				return nil, false, s.fail(ErrNonFinite, "%s is not a JSON number", lit)
			}
		}
		if s.i < len(s.b) && s.b[s.i] == '-' {
			return nil, false, s.fail(ErrFormat, "malformed number")
		}
		return nil, false, s.fail(ErrFormat, "want a number, found %s", s.describe())
	}
	integer := true
	if s.i < len(s.b) && s.b[s.i] == '.' {
		s.i++
		integer = false
		if digits() == 0 {
			return nil, false, s.fail(ErrFormat, "malformed number")
		}
	}
	if s.i < len(s.b) && (s.b[s.i] == 'e' || s.b[s.i] == 'E') {
		s.i++
		integer = false
		if s.i < len(s.b) && (s.b[s.i] == '+' || s.b[s.i] == '-') {
			s.i++
		}
		if digits() == 0 {
			return nil, false, s.fail(ErrFormat, "malformed number")
		}
	}
	return s.b[start:s.i], integer, nil
}

// float consumes a number and returns it as the nearest float64. Literals
// beyond the float64 range (1e999) are ErrNonFinite; JSON has no NaN or
// Infinity literals, so every accepted value is finite.
func (s *scanner) float() (float64, error) {
	start := s.i
	tok, _, err := s.numberToken()
	if err != nil {
		return 0, err
	}
	// string(tok) does not allocate for short tokens: ParseFloat does not
	// retain its argument.
	f, err := strconv.ParseFloat(string(tok), 64)
	if err != nil || math.IsInf(f, 0) {
		s.i = start
		if errors.Is(err, strconv.ErrRange) {
			return 0, s.fail(ErrNonFinite, "number %s overflows float64", tok)
		}
		return 0, s.fail(ErrFormat, "malformed number %s", tok)
	}
	return f, nil
}

// int64 consumes an integer literal. Fractions, exponents and values
// outside the int64 range are ErrInvalidValue.
func (s *scanner) int64() (int64, error) {
	start := s.i
	tok, integer, err := s.numberToken()
	if err != nil {
		return 0, err
	}
	if !integer {
		s.i = start
		return 0, s.fail(ErrInvalidValue, "%s is not an integer", tok)
	}
	v, err := strconv.ParseInt(string(tok), 10, 64)
	if err != nil {
		s.i = start
		return 0, s.fail(ErrInvalidValue, "integer %s out of range", tok)
	}
	return v, nil
}

// floats consumes an array of numbers, appending them to dst.
func (s *scanner) floats(dst []float64) ([]float64, error) {
	if err := s.expect('['); err != nil {
		return nil, err
	}
	if s.peek() == ']' {
		s.i++
		return dst, nil
	}
	for i := 0; ; i++ {
		f, err := s.float()
		if err != nil {
			return nil, inPath("["+strconv.Itoa(i)+"]", err)
		}
		dst = append(dst, f)
		switch s.peek() {
		case ',':
			s.i++
		case ']':
			s.i++
			return dst, nil
		default:
			return nil, s.fail(ErrFormat, "want ',' or ']', found %s", s.describe())
		}
	}
}

// matrix consumes an array of arrays of numbers.
func (s *scanner) matrix() ([][]float64, error) {
	if err := s.expect('['); err != nil {
		return nil, err
	}
	out := [][]float64{}
	if s.peek() == ']' {
		s.i++
		return out, nil
	}
	for i := 0; ; i++ {
		var hint []float64 // rows of a matrix usually share a length
		if len(out) > 0 {
			hint = make([]float64, 0, len(out[0]))
		}
		row, err := s.floats(hint)
		if err != nil {
			return nil, inPath("["+strconv.Itoa(i)+"]", err)
		}
		out = append(out, row)
		switch s.peek() {
		case ',':
			s.i++
		case ']':
			s.i++
			return out, nil
		default:
			return nil, s.fail(ErrFormat, "want ',' or ']', found %s", s.describe())
		}
	}
}

// value consumes any JSON value and returns its bytes (a subslice of the
// input).
func (s *scanner) value() ([]byte, error) {
	s.skipWS()
	start := s.i
	if err := s.skipValue(0); err != nil {
		return nil, err
	}
	return s.b[start:s.i], nil
}

// skipValue consumes any JSON value, checking it as encoding/json would
// decode it: numbers must fit a float64 (1e999 is ErrNonFinite, as in a
// payload). Errors inside arrays and objects carry the path to the
// offending value (see [pathError]).
func (s *scanner) skipValue(depth int) error {
	if depth > maxDepth {
		return s.fail(ErrFormat, "nesting deeper than %d", maxDepth)
	}
	switch c := s.peek(); c {
	case '{':
		return s.object(func(key string) error {
			if err := s.skipValue(depth + 1); err != nil {
				return inPath(keySegment(key), err)
			}
			return nil
		})
	case '[':
		s.i++
		if s.peek() == ']' {
			s.i++
			return nil
		}
		for i := 0; ; i++ {
			if err := s.skipValue(depth + 1); err != nil {
				return inPath("["+strconv.Itoa(i)+"]", err)
			}
			switch s.peek() {
			case ',':
				s.i++
			case ']':
				s.i++
				return nil
			default:
				return s.fail(ErrFormat, "want ',' or ']', found %s", s.describe())
			}
		}
	case '"':
		_, err := s.str()
		return err
	case 't':
		return s.literal("true")
	case 'f':
		return s.literal("false")
	case 'n':
		return s.literal("null")
	default:
		_, err := s.float()
		return err
	}
}

func (s *scanner) literal(lit string) error {
	if len(s.b)-s.i < len(lit) || string(s.b[s.i:s.i+len(lit)]) != lit {
		return s.fail(ErrFormat, "invalid literal")
	}
	s.i += len(lit)
	return nil
}

// intern returns b as a string, without allocating for the names of the
// event format, which occur on every line.
func intern(b []byte) string {
	switch string(b) { // no allocation: the compiler compares in place
	case "op":
		return "op"
	case "id":
		return "id"
	case "a":
		return "a"
	case "alpha":
		return "alpha"
	case "x":
		return "x"
	case "y":
		return "y"
	case "insert":
		return "insert"
	case "delete":
		return "delete"
	}
	return string(b)
}
