package serve

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"mime"
	"net"
	"net/http"
	"strings"

	"unlearn/internal/strictjson"
)

// decodeBody decodes the request body, which must be one JSON object of
// dst's shape and nothing else, into dst. It returns a *Problem naming
// what is wrong: a media type other than application/json (415), a body
// over the limit (413), a body not received before the server's read
// timeout (408), malformed JSON, a value of the wrong type, an unknown
// field or trailing data (400, with the field or byte offset). JSON has
// no NaN or infinity; a number too large for a float64 (1e999) is a value
// of the wrong type.
func decodeBody(w http.ResponseWriter, r *http.Request, limit int64, dst any) *Problem {
	if ct := r.Header.Get("Content-Type"); ct != "" {
		mt, _, err := mime.ParseMediaType(ct)
		if err != nil || mt != "application/json" {
			return problem("unsupported-media", "Content-Type %q: send application/json", ct).at("Content-Type")
		}
	}
	body := http.MaxBytesReader(w, r.Body, limit)
	data, err := io.ReadAll(body)
	if err != nil {
		var tooLarge *http.MaxBytesError
		var ne net.Error
		switch {
		case errors.As(err, &tooLarge):
			return problem("too-large", "the body exceeds %d bytes (the server's --max-body); send smaller batches", tooLarge.Limit)
		case errors.As(err, &ne) && ne.Timeout():
			return problem("timeout", "the body was not received within the server's read timeout")
		}
		return problem("bad-request", "reading the body: %v", err)
	}
	if len(bytes.TrimSpace(data)) == 0 {
		return problem("bad-request", "the body is empty: send a JSON object")
	}
	if err := strictjson.Decode(bytes.NewReader(data), dst); err != nil {
		return jsonProblem(err, data)
	}
	return nil
}

// jsonProblem turns a decoding error into a problem naming the field or the
// byte offset.
func jsonProblem(err error, data []byte) *Problem {
	var syn *json.SyntaxError
	var typ *json.UnmarshalTypeError
	switch {
	case errors.As(err, &syn):
		return problem("bad-request", "malformed JSON at byte %d (%s): %v", syn.Offset, around(data, syn.Offset), syn)
	case errors.As(err, &typ):
		field := typ.Field
		if field == "" {
			field = "(the body)"
		}
		want := typ.Type.String()
		switch want {
		case "float64":
			want = "a finite number"
		case "int64":
			want = "an integer (a signed 64-bit id)"
		case "string":
			want = "a string"
		case "[]float64", "[][]float64", "[]int64", "[]string":
			want = "an array (" + want + ")"
		}
		return problem("bad-request", "field %s: %s is not %s", field, typ.Value, want).at(field)
	case errors.Is(err, strictjson.ErrTrailing):
		return problem("bad-request", "data after the JSON object: send exactly one object")
	case errors.Is(err, io.ErrUnexpectedEOF), errors.Is(err, io.EOF):
		return problem("bad-request", "the JSON object is truncated")
	case strings.HasPrefix(err.Error(), "json: unknown field "):
		field := strings.Trim(strings.TrimPrefix(err.Error(), "json: unknown field "), `"`)
		return problem("bad-request", "unknown field %q", field).at(field)
	}
	return problem("bad-request", "%v", err)
}

// around quotes up to 16 bytes of data around offset, for an error message.
func around(data []byte, offset int64) string {
	lo, hi := max(0, int(offset)-8), min(len(data), int(offset)+8)
	return fmt.Sprintf("near %q", data[lo:hi])
}

// checkRows checks that every row has d finite numbers; field names the
// rows' member ("rows").
func checkRows(field string, rows [][]float64, d int) *Problem {
	for i, row := range rows {
		if len(row) != d {
			return problem("unprocessable", "%s[%d] has %d features, the model has d = %d", field, i, len(row), d).at(fmt.Sprintf("%s[%d]", field, i))
		}
		for j, v := range row {
			if math.IsNaN(v) || math.IsInf(v, 0) {
				return problem("unprocessable", "%s[%d][%d] is not finite", field, i, j).at(fmt.Sprintf("%s[%d][%d]", field, i, j))
			}
		}
	}
	return nil
}
