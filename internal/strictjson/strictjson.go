// Package strictjson decodes a file that must hold exactly one JSON value of
// a known shape — a snapshot, a certificate, a record, a manifest — and
// nothing else.
package strictjson

import (
	"encoding/json"
	"errors"
	"io"
)

// ErrTrailing is returned when anything but white space follows the value.
var ErrTrailing = errors.New("trailing data after the JSON value")

// Decode decodes one JSON value from r into v. Unknown object fields are
// errors (json.Decoder.DisallowUnknownFields), and so is anything after
// the value but white space, including the closing brackets that
// json.Decoder.More does not count as more data.
func Decode(r io.Reader, v any) error {
	dec := json.NewDecoder(r)
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return err
	}
	rest := io.MultiReader(dec.Buffered(), r)
	var buf [512]byte
	for {
		n, err := rest.Read(buf[:])
		for _, c := range buf[:n] {
			switch c {
			case ' ', '\t', '\n', '\r':
			default:
				return ErrTrailing
			}
		}
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
	}
}
