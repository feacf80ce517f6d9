package serve

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"mime"
	"net"
	"net/http"
	"reflect"
	"strings"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"unlearn/dataset"
	"unlearn/internal/strictjson"
)

// decodeBody decodes the request body, which must be one JSON object of
// dst's shape and nothing else, into dst. It returns a *Problem naming
// what is wrong: a media type other than application/json (415), a body
// over the limit (413), a body not received before the server's read
// timeout (408), malformed JSON (invalid UTF-8 and a member named twice
// included), a value of the wrong type, an unknown member, or trailing
// data (400, with the member's path or the byte offset). JSON has no NaN
// or infinity; a number too large for a float64 (1e999) is a value of the
// wrong type.
//
// Bodies are decoded by encoding/json/v2 (github.com/go-json-experiment/json,
// the Go team's module that Go 1.27's standard library takes over): it is
// strict where encoding/json is lenient (member names match exactly and
// only once, strings are valid UTF-8) and it decodes a batch of rows about
// twice as fast (BenchmarkDecodeRows, docs/performance.md).
func decodeBody(w http.ResponseWriter, r *http.Request, limit int64, dst any) *Problem {
	data, p := readBody(w, r, limit)
	if p != nil {
		return p
	}
	return unmarshal(data, dst)
}

// readBody reads the request body (see decodeBody).
func readBody(w http.ResponseWriter, r *http.Request, limit int64) ([]byte, *Problem) {
	if ct := r.Header.Get("Content-Type"); ct != "" {
		mt, _, err := mime.ParseMediaType(ct)
		if err != nil || mt != "application/json" {
			return nil, problem("unsupported-media", "Content-Type %q: send application/json", ct).at("Content-Type")
		}
	}
	body := http.MaxBytesReader(w, r.Body, limit)
	data, err := io.ReadAll(body)
	if err != nil {
		var tooLarge *http.MaxBytesError
		var ne net.Error
		switch {
		case errors.As(err, &tooLarge):
			return nil, problem("too-large", "the body exceeds %d bytes (the server's --max-body); send smaller batches", tooLarge.Limit)
		case errors.As(err, &ne) && ne.Timeout():
			return nil, problem("timeout", "the body was not received within the server's read timeout")
		}
		return nil, problem("bad-request", "reading the body: %v", err)
	}
	return data, nil
}

// unmarshal decodes a body read by readBody into dst (see decodeBody).
func unmarshal(data []byte, dst any) *Problem {
	if len(bytes.TrimSpace(data)) == 0 {
		return problem("bad-request", "the body is empty: send a JSON object")
	}
	if err := json.Unmarshal(data, dst, json.RejectUnknownMembers(true)); err != nil {
		return jsonProblem(err, data)
	}
	return nil
}

// jsonProblem turns a decoding error into a problem naming the member or the
// byte offset.
func jsonProblem(err error, data []byte) *Problem {
	var syn *jsontext.SyntacticError
	var sem *json.SemanticError
	switch {
	case errors.As(err, &syn):
		if errors.Is(err, io.ErrUnexpectedEOF) {
			return problem("bad-request", "the JSON object is truncated")
		}
		p := problem("bad-request", "malformed JSON at byte %d (%s): %v", syn.ByteOffset, strictjson.Around(data, syn.ByteOffset), syn.Err)
		if f := strictjson.MemberPath(syn.JSONPointer); f != "" {
			p.at(f)
		}
		return p
	case errors.As(err, &sem):
		field := strictjson.MemberPath(sem.JSONPointer)
		if errors.Is(err, json.ErrUnknownName) {
			return problem("bad-request", "unknown member %q", field).at(field)
		}
		what := "(the body)"
		if field != "" {
			what = field
		}
		want := "a JSON object"
		if sem.GoType == reflect.TypeFor[label]() {
			want = "a class name (a string) or a number"
		} else if sem.GoType != nil {
			switch sem.GoType.Kind() {
			case reflect.Float64:
				want = "a finite number"
			case reflect.Int64:
				want = "an integer (a signed 64-bit id)"
			case reflect.String:
				want = "a string"
			case reflect.Bool:
				want = "true or false"
			case reflect.Slice:
				want = "an array"
			case reflect.Pointer:
				want = "a " + sem.GoType.Elem().Kind().String()
			}
		}
		got := string(sem.JSONValue)
		switch {
		case got != "":
		case sem.JSONKind == 't' || sem.JSONKind == 'f' || sem.JSONKind == 'n':
			got = sem.JSONKind.String() // true, false, null
		default:
			got = "the " + sem.JSONKind.String()
		}
		if len(got) > 40 {
			got = got[:40] + "…"
		}
		return problem("bad-request", "%s: %s is not %s", what, got, want).at(field)
	}
	return problem("bad-request", "%v", err)
}

// expected says what a row must hold, in the user's words: "30 features",
// and the first few feature names when the contract has them ("30
// features: mean radius, mean texture, mean perimeter, …").
func expected(d int, features []string) string {
	w := fmt.Sprintf("%d features", d)
	if len(features) == d && d > 0 {
		const show = 3
		names := features[:min(show, d)]
		w += ": " + strings.Join(names, ", ")
		if d > show {
			w += ", …"
		}
	}
	return w
}

// checkRows checks that every row has d finite numbers; field names the
// rows' member ("rows"), features the contract's names (or nil).
func checkRows(field string, rows [][]float64, d int, features []string) *Problem {
	for i, row := range rows {
		if p := checkRow(fmt.Sprintf("%s[%d]", field, i), row, d, features); p != nil {
			return p
		}
	}
	return nil
}

// checkRow checks one row, the member at (rows[3], events[3].x): d finite
// numbers, a problem naming the row or the value at fault otherwise.
func checkRow(at string, row []float64, d int, features []string) *Problem {
	if len(row) != d {
		values := "values"
		if len(row) == 1 {
			values = "value"
		}
		return problem("unprocessable", "%s has %d %s; the model expects %s", at, len(row), values, expected(d, features)).at(at)
	}
	for j, v := range row {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			el := fmt.Sprintf("%s[%d]", at, j)
			return problem("unprocessable", "%s is %v: every value must be a finite number", el, v).at(el)
		}
	}
	return nil
}

// preprocessRows turns rows in the data's own units into the stream's, in
// place, as the data readers do (dataset.RawRows.Features: an IDX image's
// pixels divided by the contract's scale); field names the rows' member.
// The rows' lengths and finiteness are checked first (checkRows). A value
// refused is named to the element (rows[i][j]).
func preprocessRows(field string, rows [][]float64, raw *dataset.RawRows) *Problem {
	for i, row := range rows {
		if err := raw.Features(row); err != nil {
			at := fmt.Sprintf("%s[%d]", field, i)
			var px *dataset.PixelError
			if errors.As(err, &px) {
				at = fmt.Sprintf("%s[%d][%d]", field, i, px.Index)
				return problem("unprocessable", "%s is %v: %s", at, px.Value, px.Reason()).at(at)
			}
			return problem("unprocessable", "%s: %v", at, err).at(at)
		}
	}
	return nil
}

// unpackRows reads the rows of a rows_f64 member: cols float64s a row
// (the request's "cols", which must be the model's d), little-endian IEEE
// 754 bits, row after row. The row length is stated so that rows of
// another length are refused rather than read as other rows. features
// are the contract's names (or nil), for the messages.
func unpackRows(b []byte, cols *int, d int, features []string) ([][]float64, *Problem) {
	switch {
	case cols == nil:
		return nil, problem("unprocessable", "cols is required with rows_f64: the number of values in a row").at("cols")
	case *cols != d:
		return nil, problem("unprocessable", "the rows have %d values each; the model expects %s", *cols, expected(d, features)).at("cols")
	case len(b) == 0:
		return nil, problem("unprocessable", "the batch has no rows: send at least one row").at("rows_f64")
	case len(b)%(8*d) != 0:
		return nil, problem("unprocessable", "rows_f64 does not hold whole rows: %d bytes are not rows of %d values of 8 bytes (the last row is cut short)", len(b), d).at("rows_f64")
	}
	n := len(b) / (8 * d)
	flat := make([]float64, n*d)
	for i := range flat {
		flat[i] = math.Float64frombits(binary.LittleEndian.Uint64(b[8*i:]))
	}
	rows := make([][]float64, n)
	for i := range rows {
		rows[i] = flat[i*d : (i+1)*d : (i+1)*d]
	}
	return rows, nil
}
