// Package strictjson decodes a file that must hold exactly one JSON value of
// a known shape — a snapshot, a certificate, a release, a receipt, a ledger
// line, a key, a record, a manifest — and nothing else.
//
// Every reader of such a file must see the same values in it, so the decoder
// is as strict as JSON allows and admits exactly one reading: member names
// match a field's name exactly (case-sensitive), no object names a member
// twice, no member is unknown, strings are valid UTF-8, null is no string,
// number or boolean, and nothing but white space follows the value. The
// decoding is encoding/json/v2's (github.com/go-json-experiment/json, the Go
// team's module that Go's standard library takes over), whose defaults are
// these rules; encoding/json matches names case-insensitively and keeps the
// last of duplicate members, so a signed file could read one way in Go and
// another in a stricter reader (see the receipt corpus of package certify).
package strictjson

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"reflect"
	"strconv"
	"strings"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
	jsonv1 "github.com/go-json-experiment/json/v1"
)

// ErrTrailing is returned when anything but white space follows the value.
var ErrTrailing = errors.New("trailing data after the JSON value")

// ErrDuplicate is wrapped by the error for an object that names a member
// twice.
var ErrDuplicate = errors.New("duplicate member")

// ErrUnknown is wrapped by the error for a member that is not a field of
// the document (names are case-sensitive: "Payload" is not "payload").
var ErrUnknown = errors.New("unknown member")

// ErrNull is wrapped by the error for a null where a string, number or
// boolean is required.
var ErrNull = errors.New("null is not a value here")

var legacyUnmarshaler = reflect.TypeFor[jsonv1.Unmarshaler]()

// options are the decoding rules (see the package comment). Durations are
// integer nanoseconds, as encoding/json writes them.
var options = json.JoinOptions(
	json.RejectUnknownMembers(true),
	jsonv1.FormatDurationAsNano(true),
	json.WithUnmarshalers(json.UnmarshalFromFunc(refuseNullScalar)),
)

// refuseNullScalar refuses a JSON null decoded into a string, number or
// boolean (encoding/json would leave the field unchanged, so a reader that
// refuses it would disagree). Types that decode themselves are left to
// their UnmarshalJSON method.
func refuseNullScalar(dec *jsontext.Decoder, v any) error {
	if dec.PeekKind() != 'n' {
		return errors.ErrUnsupported
	}
	t := reflect.TypeOf(v)
	if t.Implements(legacyUnmarshaler) {
		return errors.ErrUnsupported
	}
	switch t.Elem().Kind() {
	case reflect.String, reflect.Bool, reflect.Float32, reflect.Float64,
		reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return ErrNull
	}
	return errors.ErrUnsupported
}

// Decode decodes one JSON value from r into v by the package's rules.
// Errors name the member as the file writes it (batch.records, rows[3]).
func Decode(r io.Reader, v any) error {
	data, err := io.ReadAll(r)
	if err != nil {
		return err
	}
	return Unmarshal(data, v)
}

// Unmarshal decodes data, which must hold one JSON value, into v by the
// package's rules (see [Decode]).
func Unmarshal(data []byte, v any) error {
	dec := jsontext.NewDecoder(bytes.NewReader(data))
	if err := json.UnmarshalDecode(dec, v, options); err != nil {
		return describe(err, data)
	}
	for _, c := range data[dec.InputOffset():] {
		switch c {
		case ' ', '\t', '\n', '\r':
		default:
			return ErrTrailing
		}
	}
	return nil
}

// describe turns a decoding error into one that names the member path or
// the byte offset, in the file's words rather than Go's.
func describe(err error, data []byte) error {
	var syn *jsontext.SyntacticError
	var sem *json.SemanticError
	switch {
	case errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF):
		return errors.New("truncated JSON: the value does not end")
	case errors.As(err, &syn):
		path := MemberPath(syn.JSONPointer)
		if errors.Is(err, jsontext.ErrDuplicateName) {
			return fmt.Errorf("%w %q (a member may appear only once)", ErrDuplicate, path)
		}
		where := ""
		if path != "" {
			where = " in " + path
		}
		return fmt.Errorf("malformed JSON at byte %d%s (%s): %v", syn.ByteOffset, where, Around(data, syn.ByteOffset), syn.Err)
	case errors.As(err, &sem):
		path := MemberPath(sem.JSONPointer)
		if errors.Is(err, json.ErrUnknownName) {
			return fmt.Errorf("%w %q (member names are exact and case-sensitive)", ErrUnknown, path)
		}
		what := "the document"
		if path != "" {
			what = "member " + strconv.Quote(path)
		}
		if errors.Is(err, ErrNull) {
			return fmt.Errorf("%s: %w", what, ErrNull)
		}
		if sem.Err != nil && sem.GoType != nil && sem.JSONValue == nil {
			return fmt.Errorf("%s: %v", what, sem.Err)
		}
		got := string(sem.JSONValue)
		if got == "" {
			got = kindWord(sem.JSONKind)
		}
		if len(got) > 40 {
			got = got[:40] + "…"
		}
		if sem.GoType == nil {
			return fmt.Errorf("%s: %s: %v", what, got, sem.Err)
		}
		return fmt.Errorf("%s: %s is not %s", what, got, want(sem.GoType))
	}
	return err
}

// kindWord names the kind of a JSON value.
func kindWord(k jsontext.Kind) string {
	switch k {
	case '"':
		return "a string"
	case '0':
		return "a number"
	case '{', '}':
		return "an object"
	case '[', ']':
		return "an array"
	case 't', 'f':
		return "a boolean"
	case 'n':
		return "null"
	}
	return "the value"
}

// want names what a Go type holds in JSON's words.
func want(t reflect.Type) string {
	switch t.Kind() {
	case reflect.Float32, reflect.Float64:
		return "a finite number"
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return "an integer in range"
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return "a non-negative integer in range"
	case reflect.String:
		return "a string"
	case reflect.Bool:
		return "true or false"
	case reflect.Slice, reflect.Array:
		if t.Elem().Kind() == reflect.Uint8 && t.Kind() == reflect.Slice {
			return "a base64 string"
		}
		return "an array"
	case reflect.Pointer:
		return want(t.Elem())
	case reflect.Struct, reflect.Map:
		return "an object"
	}
	return "a value of its type"
}

// MemberPath writes a JSON pointer (/rows/3/7) as a member path
// (rows[3][7]), the form error messages name members in.
func MemberPath(p jsontext.Pointer) string {
	var b strings.Builder
	for tok := range p.Tokens() {
		if _, err := strconv.Atoi(tok); err == nil && b.Len() > 0 {
			b.WriteString("[" + tok + "]")
			continue
		}
		if b.Len() > 0 {
			b.WriteByte('.')
		}
		b.WriteString(tok)
	}
	return b.String()
}

// Around quotes up to 16 bytes of data around offset, for an error message.
func Around(data []byte, offset int64) string {
	lo, hi := max(0, min(len(data), int(offset)-8)), min(len(data), int(offset)+8)
	return fmt.Sprintf("near %q", data[lo:hi])
}
