package stream

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"pgregory.net/rapid"
)

const (
	qHeader = `{"format":"olbfgs-stream/v1","kind":"quadratic","d":2,"H0":[[2,0],[0,1]],"H1":[[1,0],[0,1]]}`
	lHeader = `{"format":"olbfgs-stream/v1","kind":"logistic","d":2,"lambda":0.05}`
	qInsert = `{"op":"insert","id":1,"a":[0.1,0.2],"alpha":0.25}`
	lInsert = `{"op":"insert","id":1,"x":[0.1,-1.2],"y":-1}`
)

// lines joins lines with "\n" and a final newline.
func lines(ls ...string) string { return strings.Join(ls, "\n") + "\n" }

// withHeader returns a quadratic header with the given fields replaced
// ("-" deletes a field). Fields are spliced textually to keep the test
// inputs readable.
func hdr(fields string) string {
	return `{"format":"olbfgs-stream/v1",` + fields + `}`
}

func TestReadErrors(t *testing.T) {
	tests := []struct {
		name     string
		in       string
		line     int
		field    string
		sentinel error
	}{
		// Header (line 1).
		{"empty input", "", 1, "", ErrFormat},
		{"blank header", "\n" + qInsert + "\n", 1, "", ErrFormat},
		{"malformed JSON", "{\n", 1, "", ErrFormat},
		{"header not an object", "[1,2]\n", 1, "", ErrFormat},
		{"missing format", `{"kind":"logistic","d":2,"lambda":0.05}` + "\n", 1, "format", ErrFormat},
		{"wrong format tag", `{"format":"olbfgs-stream/v2","kind":"logistic","d":2,"lambda":0.05}` + "\n", 1, "format", ErrFormat},
		{"format not a string", `{"format":1,"kind":"logistic","d":2,"lambda":0.05}` + "\n", 1, "format", ErrFormat},
		{"missing kind", hdr(`"d":2,"lambda":0.05`), 1, "kind", ErrFormat},
		{"unknown kind", hdr(`"kind":"linear","d":2,"lambda":0.05`), 1, "kind", ErrInvalidValue},
		{"missing d", hdr(`"kind":"logistic","lambda":0.05`), 1, "d", ErrFormat},
		{"d = 0", hdr(`"kind":"logistic","d":0,"lambda":0.05`), 1, "d", ErrInvalidValue},
		{"d not an integer", hdr(`"kind":"logistic","d":2.5,"lambda":0.05`), 1, "d", ErrInvalidValue},
		{"d a string", hdr(`"kind":"logistic","d":"2","lambda":0.05`), 1, "d", ErrFormat},
		{"missing lambda", hdr(`"kind":"logistic","d":2`), 1, "lambda", ErrFormat},
		{"negative lambda", hdr(`"kind":"logistic","d":2,"lambda":-0.01`), 1, "lambda", ErrInvalidValue},
		{"null lambda", hdr(`"kind":"logistic","d":2,"lambda":null`), 1, "lambda", ErrFormat},
		{"overflowing lambda", hdr(`"kind":"logistic","d":2,"lambda":1e999`), 1, "lambda", ErrNonFinite},
		{"Infinity lambda", hdr(`"kind":"logistic","d":2,"lambda":Infinity`), 1, "lambda", ErrNonFinite},
		{"H0 in a logistic header", hdr(`"kind":"logistic","d":1,"lambda":0.05,"H0":[[1]]`), 1, "H0", ErrFormat},
		{"lambda in a quadratic header", hdr(`"kind":"quadratic","d":1,"H0":[[1]],"H1":[[1]],"lambda":0.05`), 1, "lambda", ErrFormat},
		{"missing H1", hdr(`"kind":"quadratic","d":1,"H0":[[1]]`), 1, "H1", ErrFormat},
		{"H0 wrong rows", hdr(`"kind":"quadratic","d":2,"H0":[[1,0]],"H1":[[1,0],[0,1]]`), 1, "H0", ErrDimension},
		{"H1 ragged", hdr(`"kind":"quadratic","d":2,"H0":[[1,0],[0,1]],"H1":[[1,0],[0]]`), 1, "H1", ErrDimension},
		{"H0 non-symmetric", hdr(`"kind":"quadratic","d":2,"H0":[[2,1],[0,2]],"H1":[[1,0],[0,1]]`), 1, "H0", ErrNotSPD},
		{"H1 indefinite", hdr(`"kind":"quadratic","d":2,"H0":[[1,0],[0,1]],"H1":[[1,3],[3,1]]`), 1, "H1", ErrNotSPD},
		{"H0 NaN literal", hdr(`"kind":"quadratic","d":1,"H0":[[NaN]],"H1":[[1]]`), 1, "H0", ErrNonFinite},
		{"H0 overflow", hdr(`"kind":"quadratic","d":1,"H0":[[1e999]],"H1":[[1]]`), 1, "H0", ErrNonFinite},
		{"H0 null entry", hdr(`"kind":"quadratic","d":1,"H0":[[null]],"H1":[[1]]`), 1, "H0", ErrFormat},
		{"duplicate header field", hdr(`"kind":"logistic","d":2,"d":3,"lambda":0.05`), 1, "d", ErrFormat},
		{"duplicate meta field", hdr(`"kind":"logistic","d":2,"lambda":0.05,"seed":1,"seed":2`), 1, "seed", ErrFormat},
		{"malformed meta", hdr(`"kind":"logistic","d":2,"lambda":0.05,"seed":[1,]`), 1, "seed", ErrFormat},
		{"trailing garbage after header", lHeader + ` x`, 1, "", ErrFormat},
		{"invalid UTF-8", hdr(`"kind":"logistic","d":2,"lambda":0.05,"note":"` + "\xff" + `"`), 1, "", ErrFormat},

		// Events.
		{"blank line", lines(lHeader, "", lInsert), 2, "", ErrFormat},
		{"whitespace line", lines(lHeader, lInsert, " \t "), 3, "", ErrFormat},
		{"trailing blank line", lines(lHeader, lInsert) + "\n", 3, "", ErrFormat},
		{"malformed event", lines(lHeader, `{"op":"insert","id":1,`), 2, "", ErrFormat},
		{"event not an object", lines(lHeader, `null`), 2, "", ErrFormat},
		{"missing op", lines(lHeader, `{"id":1,"x":[1,2],"y":1}`), 2, "op", ErrFormat},
		{"unknown op", lines(lHeader, `{"op":"update","id":1,"x":[1,2],"y":1}`), 2, "op", ErrInvalidValue},
		{"op not a string", lines(lHeader, `{"op":1,"id":1,"x":[1,2],"y":1}`), 2, "op", ErrFormat},
		{"missing id", lines(lHeader, `{"op":"insert","x":[1,2],"y":1}`), 2, "id", ErrFormat},
		{"fractional id", lines(lHeader, `{"op":"insert","id":1.5,"x":[1,2],"y":1}`), 2, "id", ErrInvalidValue},
		{"integral float id", lines(lHeader, `{"op":"insert","id":1.0,"x":[1,2],"y":1}`), 2, "id", ErrInvalidValue},
		{"exponent id", lines(lHeader, `{"op":"insert","id":1e2,"x":[1,2],"y":1}`), 2, "id", ErrInvalidValue},
		{"string id", lines(lHeader, `{"op":"insert","id":"1","x":[1,2],"y":1}`), 2, "id", ErrFormat},
		{"id beyond int64", lines(lHeader, `{"op":"insert","id":9223372036854775808,"x":[1,2],"y":1}`), 2, "id", ErrInvalidValue},
		{"unknown field", lines(lHeader, `{"op":"insert","id":1,"x":[1,2],"y":1,"w":3}`), 2, "w", ErrFormat},
		{"quadratic field in logistic", lines(lHeader, `{"op":"insert","id":1,"x":[1,2],"y":1,"alpha":0}`), 2, "alpha", ErrFormat},
		{"logistic field in quadratic", lines(qHeader, `{"op":"insert","id":1,"x":[1,2],"alpha":0.5}`), 2, "x", ErrFormat},
		{"delete with vector", lines(qHeader, qInsert, `{"op":"delete","id":1,"a":[1,2]}`), 3, "a", ErrFormat},
		{"delete with scalar", lines(lHeader, lInsert, `{"op":"delete","id":1,"y":1}`), 3, "y", ErrFormat},
		{"missing a", lines(qHeader, `{"op":"insert","id":1,"alpha":0.5}`), 2, "a", ErrFormat},
		{"missing alpha", lines(qHeader, `{"op":"insert","id":1,"a":[1,2]}`), 2, "alpha", ErrFormat},
		{"missing y", lines(lHeader, `{"op":"insert","id":1,"x":[1,2]}`), 2, "y", ErrFormat},
		{"wrong dimension", lines(lHeader, lInsert, `{"op":"insert","id":2,"x":[1,2,3],"y":1}`), 3, "x", ErrDimension},
		{"null in payload", lines(lHeader, `{"op":"insert","id":1,"x":[1,null],"y":1}`), 2, "x", ErrFormat},
		{"string in payload", lines(lHeader, `{"op":"insert","id":1,"x":[1,"2"],"y":1}`), 2, "x", ErrFormat},
		{"NaN in payload", lines(lHeader, `{"op":"insert","id":1,"x":[NaN,1],"y":1}`), 2, "x", ErrNonFinite},
		{"-Infinity in payload", lines(qHeader, `{"op":"insert","id":1,"a":[1,-Infinity],"alpha":0}`), 2, "a", ErrNonFinite},
		{"overflow in payload", lines(qHeader, `{"op":"insert","id":1,"a":[-1e999,1],"alpha":0}`), 2, "a", ErrNonFinite},
		{"alpha > 1", lines(qHeader, `{"op":"insert","id":1,"a":[1,2],"alpha":1.5}`), 2, "alpha", ErrInvalidValue},
		{"alpha < 0", lines(qHeader, `{"op":"insert","id":1,"a":[1,2],"alpha":-0.1}`), 2, "alpha", ErrInvalidValue},
		{"alpha null", lines(qHeader, `{"op":"insert","id":1,"a":[1,2],"alpha":null}`), 2, "alpha", ErrFormat},
		{"y = 0", lines(lHeader, `{"op":"insert","id":1,"x":[1,2],"y":0}`), 2, "y", ErrInvalidValue},
		{"y = 2", lines(lHeader, `{"op":"insert","id":1,"x":[1,2],"y":2}`), 2, "y", ErrInvalidValue},
		{"y a string", lines(lHeader, `{"op":"insert","id":1,"x":[1,2],"y":"1"}`), 2, "y", ErrFormat},
		{"trailing garbage", lines(lHeader, lInsert+` ,`), 2, "", ErrFormat},
		{"two objects on a line", lines(lHeader, lInsert+`{"op":"delete","id":1}`), 2, "", ErrFormat},
		{"duplicate event field", lines(lHeader, `{"op":"insert","id":1,"id":2,"x":[1,2],"y":1}`), 2, "id", ErrFormat},
		{"duplicate payload field", lines(lHeader, `{"op":"insert","id":1,"x":[1,2],"y":1,"y":-1}`), 2, "y", ErrFormat},
		{"leading zero", lines(lHeader, `{"op":"insert","id":01,"x":[1,2],"y":1}`), 2, "", ErrFormat},
		{"control character", lines(lHeader, "{\"op\":\"ins\tert\",\"id\":1,\"x\":[1,2],\"y\":1}"), 2, "op", ErrFormat},
		{"bad escape", lines(lHeader, `{"op":"\x","id":1,"x":[1,2],"y":1}`), 2, "op", ErrFormat},
		{"unknown deletion", lines(lHeader, lInsert, `{"op":"delete","id":2}`), 3, "id", ErrUnknownDeletion},
		{"repeated deletion", lines(lHeader, lInsert, `{"op":"delete","id":1}`, `{"op":"delete","id":1}`), 4, "id", ErrRepeatedDeletion},
		{"duplicate id", lines(lHeader, lInsert, lInsert), 3, "id", ErrDuplicateID},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Read(strings.NewReader(tt.in))
			require.Error(t, err, "Read accepted %q", tt.in)
			var le *LineError
			require.ErrorAs(t, err, &le)
			assert.Equal(t, tt.line, le.Line, "LineError.Line; error: %v", err)
			assert.Equal(t, tt.field, le.Field, "LineError.Field; error: %v", err)
			assert.ErrorIs(t, err, tt.sentinel)
			assert.True(t, strings.HasPrefix(err.Error(), fmt.Sprintf("line %d", tt.line)),
				"message %q does not start with the line number", err.Error())
		})
	}
}

func TestReadAccepts(t *testing.T) {
	tests := []struct {
		name  string
		in    string
		check func(t *testing.T, h *History)
	}{
		{"no final newline", lHeader + "\n" + lInsert, func(t *testing.T, h *History) {
			assert.Len(t, h.Events, 1)
		}},
		{"CRLF", lHeader + "\r\n" + lInsert + "\r\n" + `{"op":"delete","id":1}` + "\r\n", func(t *testing.T, h *History) {
			require.Len(t, h.Events, 2)
			assert.Equal(t, Insert, h.Events[0].Op)
			assert.Equal(t, Delete, h.Events[1].Op)
		}},
		{"header only", lHeader + "\n", func(t *testing.T, h *History) {
			assert.Empty(t, h.Events)
			assert.Equal(t, KindLogistic, h.Loss.Kind())
		}},
		{"any field order and whitespace", lines(
			` { "lambda" : 0.05 , "d":2, "kind":"logistic","format":"olbfgs-stream/v1" } `,
			`{"y":1, "x":[ 1 , 2 ], "id":-5, "op":"insert"}`), func(t *testing.T, h *History) {
			if e := h.Events[0]; e.ID != -5 || e.Sample.S != 1 || !sameFloats(e.Sample.V, []float64{1, 2}) {
				t.Errorf("event = %+v", e)
			}
		}},
		{"escaped key and value", lines(lHeader, `{"\u006fp":"in\u0073ert","id":1,"x":[1,2],"y":1}`), func(t *testing.T, h *History) {
			assert.Equal(t, Insert, h.Events[0].Op)
		}},
		{"y = 1.0 and -1E0", lines(lHeader, `{"op":"insert","id":1,"x":[1,2],"y":1.0}`, `{"op":"insert","id":2,"x":[1,2],"y":-1E0}`),
			func(t *testing.T, h *History) {
				if h.Events[0].Sample.S != 1 || h.Events[1].Sample.S != -1 {
					t.Errorf("labels %v, %v", h.Events[0].Sample.S, h.Events[1].Sample.S)
				}
			}},
		{"extreme floats", lines(lHeader, `{"op":"insert","id":1,"x":[-0,5e-324],"y":1}`, `{"op":"insert","id":2,"x":[1.7976931348623157e308,1e-400],"y":1}`),
			func(t *testing.T, h *History) {
				want := [][]float64{{math.Copysign(0, -1), 5e-324}, {math.MaxFloat64, 0}}
				for i, w := range want {
					if !sameFloats(h.Events[i].Sample.V, w) {
						t.Errorf("event %d: x = %v, want %v (bitwise)", i, h.Events[i].Sample.V, w)
					}
				}
			}},
		{"alpha bounds", lines(qHeader, `{"op":"insert","id":1,"a":[1,2],"alpha":0}`, `{"op":"insert","id":2,"a":[1,2],"alpha":1}`),
			func(t *testing.T, h *History) {
				assert.Len(t, h.Events, 2)
			}},
		{"metadata preserved", hdr(`"kind":"logistic","d":2,"lambda":0.05,"seed":18446744073709551615,"note":"κ \"drift\"","nested":{"a":[1,{"b":null}],"t":true}`),
			func(t *testing.T, h *History) {
				want := map[string]string{
					"seed":   `18446744073709551615`,
					"note":   `"κ \"drift\""`,
					"nested": `{"a":[1,{"b":null}],"t":true}`,
				}
				assert.Len(t, h.Header.Meta, len(want))
				for k, v := range want {
					assert.Equal(t, v, string(h.Header.Meta[k]), "Meta[%q]", k)
				}
				var seed uint64
				ok, err := h.Header.MetaValue("seed", &seed)
				assert.NoError(t, err, "MetaValue(seed)")
				assert.True(t, ok, "MetaValue(seed) did not find the key")
				assert.Equal(t, uint64(math.MaxUint64), seed, "MetaValue(seed)")
			}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h, err := Read(strings.NewReader(tt.in))
			require.NoError(t, err, "Read")
			tt.check(t, h)
		})
	}
}

func TestReadLongLines(t *testing.T) {
	// A d = 6000 event line is ≈ 120 kB, longer than the reader's 64 kB buffer.
	const d = 6000
	r := newTestRand(7)
	events := []Event{InsertEvent(1, randomVec(r, d), 1), InsertEvent(2, randomVec(r, d), -1)}
	h, err := NewHistory(Header{Format: FormatV1, Kind: KindLogistic, D: d, Lambda: 0.05}, events)
	require.NoError(t, err)
	h2, raw := roundTrip(t, h)
	require.GreaterOrEqual(t, len(raw), 2*(64<<10), "test stream bytes: it must exceed the buffer")
	if diff := diffHistory(h, h2); diff != "" {
		t.Error(diff)
	}
}

func TestWriteFormat(t *testing.T) {
	h, err := NewHistory(Header{Kind: KindQuadratic, D: 2, H0: [][]float64{{2, 0.5}, {0.5, 1}}, H1: [][]float64{{1e-7, 0}, {0, 1e21}},
		Meta: map[string]json.RawMessage{"seed": json.RawMessage(`7`), "a_note": json.RawMessage(" [1, \n 2] ")}},
		[]Event{InsertEvent(1, []float64{0.1, -3}, 0.25), DeleteEvent(1), InsertEvent(2, []float64{1e-7, 123456789}, 1)})
	require.NoError(t, err)
	var buf bytes.Buffer
	require.NoError(t, Write(&buf, h))
	// Known fields in fixed order, then Meta keys ascending and compacted;
	// floats as encoding/json writes them.
	want := lines(
		`{"format":"olbfgs-stream/v1","kind":"quadratic","d":2,"H0":[[2,0.5],[0.5,1]],"H1":[[1e-7,0],[0,1e+21]],"a_note":[1,2],"seed":7}`,
		`{"op":"insert","id":1,"a":[0.1,-3],"alpha":0.25}`,
		`{"op":"delete","id":1}`,
		`{"op":"insert","id":2,"a":[1e-7,123456789],"alpha":1}`)
	assert.Equal(t, want, buf.String(), "Write")
	// The float format is encoding/json's.
	for _, f := range []float64{0, 1, -0.5, 1e-6, 9.99e-7, 1e20, 1e21, 123.456e-300, math.MaxFloat64, 5e-324} {
		got, err := appendFloat(nil, f)
		require.NoError(t, err)
		want, err := json.Marshal(f)
		require.NoError(t, err)
		assert.Equal(t, string(want), string(got), "appendFloat(%v) must write what encoding/json writes", f)
	}
}

func TestWriteErrors(t *testing.T) {
	lg := func() *History {
		h, err := NewHistory(Header{Kind: KindLogistic, D: 2, Lambda: 0.05}, []Event{InsertEvent(1, []float64{1, 2}, 1)})
		require.NoError(t, err)
		return h
	}
	tests := []struct {
		name     string
		edit     func(h *History)
		sentinel error
		event    int // index of the bad event, or -1 for the header
	}{
		{"NaN payload", func(h *History) { h.Events[0].Sample.V[1] = math.NaN() }, ErrNonFinite, 0},
		{"Inf label", func(h *History) { h.Events[0].Sample.S = math.Inf(1) }, ErrNonFinite, 0},
		{"short payload", func(h *History) { h.Events[0].Sample.V = []float64{1} }, ErrDimension, 0},
		{"delete with payload", func(h *History) {
			h.Events = append(h.Events, Event{Op: Delete, ID: 1, Sample: Sample{S: 1}})
		}, ErrInvalidValue, 1},
		{"invalid op", func(h *History) { h.Events[0].Op = 7 }, ErrInvalidValue, 0},
		{"meta shadows a field", func(h *History) { h.Header.Meta = map[string]json.RawMessage{"d": json.RawMessage(`3`)} }, ErrFormat, -1},
		{"meta not JSON", func(h *History) { h.Header.Meta = map[string]json.RawMessage{"x": json.RawMessage(`{`)} }, ErrFormat, -1},
		{"H0 in a logistic header", func(h *History) { h.Header.H0 = [][]float64{{1}} }, ErrFormat, -1},
		{"NaN lambda", func(h *History) { h.Header.Lambda = math.NaN() }, ErrNonFinite, -1},
		{"wrong format", func(h *History) { h.Header.Format = "v0" }, ErrFormat, -1},
		{"unknown kind", func(h *History) { h.Header.Kind = "linear" }, ErrInvalidValue, -1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := lg()
			tt.edit(h)
			err := Write(&bytes.Buffer{}, h)
			require.ErrorIs(t, err, tt.sentinel)
			var ee *EventError
			if tt.event < 0 {
				assert.NotErrorAs(t, err, &ee, "a header error")
				return
			}
			require.ErrorAs(t, err, &ee)
			assert.Equal(t, tt.event, ee.Index, "index of the bad event")
		})
	}
	t.Run("lambda in a quadratic header", func(t *testing.T) {
		h, err := GenerateQuadratic(QuadraticOptions{D: 2, T: 1})
		require.NoError(t, err)
		h.Header.Lambda = 0.05
		require.ErrorIs(t, Write(&bytes.Buffer{}, h), ErrFormat)
	})
}

func TestRoundTripGenerated(t *testing.T) {
	tests := []struct {
		name string
		gen  func() (*History, error)
	}{
		{"quadratic d=25", func() (*History, error) { return GenerateQuadratic(QuadraticOptions{T: 400, Seed: 1}) }},
		{"quadratic d=2 no drift", func() (*History, error) {
			return GenerateQuadratic(QuadraticOptions{D: 2, T: 50, Seed: 2, NoDrift: true})
		}},
		{"logistic d=25", func() (*History, error) { return GenerateLogistic(LogisticOptions{T: 400, Seed: 1}) }},
		{"logistic d=1 kappa=100", func() (*History, error) { return GenerateLogistic(LogisticOptions{D: 1, T: 50, Kappa: 100}) }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h, err := tt.gen()
			require.NoError(t, err)
			// Add deletions, so the round trip covers both ops.
			h.Events = append(h.Events, DeleteEvent(3), DeleteEvent(1))
			h2, raw := roundTrip(t, h)
			if diff := diffHistory(h, h2); diff != "" {
				t.Fatalf("Read(Write(h)) ≠ h: %s", diff)
			}
			// Writing is deterministic and idempotent on the read history.
			_, raw2 := roundTrip(t, h2)
			if !bytes.Equal(raw, raw2) {
				t.Error("Write(Read(Write(h))) ≠ Write(h)")
			}
		})
	}
}

// randomHistory draws a random valid history of either kind with arbitrary
// finite floats (subnormals, ±0 and huge values included) and metadata.
func randomHistory(t *rapid.T) *History {
	d := rapid.IntRange(1, 4).Draw(t, "d")
	anyFloat := rapid.Float64()
	h := Header{Format: FormatV1, D: d}
	var scalar *rapid.Generator[float64]
	if rapid.Bool().Draw(t, "quadratic") {
		h.Kind = KindQuadratic
		// Exactly symmetric, strictly diagonally dominant ⇒ SPD.
		for _, m := range []*[][]float64{&h.H0, &h.H1} {
			*m = make([][]float64, d)
			for i := range *m {
				(*m)[i] = make([]float64, d)
			}
			for i := range d {
				for j := range i {
					v := rapid.Float64Range(-1, 1).Draw(t, "offdiag")
					(*m)[i][j], (*m)[j][i] = v, v
				}
				(*m)[i][i] = float64(d) + rapid.Float64Range(0, 1e6).Draw(t, "diag")
			}
		}
		scalar = rapid.Float64Range(0, 1)
	} else {
		h.Kind = KindLogistic
		h.Lambda = rapid.Float64Range(0, math.MaxFloat64).Draw(t, "lambda")
		scalar = rapid.SampledFrom([]float64{-1, 1})
	}
	if n := rapid.IntRange(0, 3).Draw(t, "meta"); n > 0 {
		for range n {
			key := rapid.StringMatching(`[a-zA-Z_κ"\\ ]{1,8}`).Filter(func(s string) bool { return !isKnownHeaderKey(s) }).Draw(t, "key")
			var v any
			switch rapid.IntRange(0, 3).Draw(t, "metaKind") {
			case 0:
				v = anyFloat.Draw(t, "metaFloat")
			case 1:
				v = rapid.String().Draw(t, "metaString")
			case 2:
				v = rapid.Uint64().Draw(t, "metaUint")
			default:
				v = map[string]any{"list": []any{true, nil, rapid.Int64().Draw(t, "metaInt")}}
			}
			require.NoError(t, h.SetMeta(key, v))
		}
	}
	var events []Event
	var live []int64
	next := rapid.Int64Range(math.MinInt64/2, math.MaxInt64/2).Draw(t, "firstID")
	for range rapid.IntRange(0, 30).Draw(t, "n") {
		if len(live) > 0 && rapid.IntRange(0, 3).Draw(t, "op") == 0 {
			k := rapid.IntRange(0, len(live)-1).Draw(t, "victim")
			events = append(events, DeleteEvent(live[k]))
			live = append(live[:k], live[k+1:]...)
			continue
		}
		next += rapid.Int64Range(1, 1e12).Draw(t, "idStep")
		live = append(live, next)
		events = append(events, InsertEvent(next, rapid.SliceOfN(anyFloat, d, d).Draw(t, "v"), scalar.Draw(t, "s")))
	}
	hist, err := NewHistory(h, events)
	require.NoError(t, err, "random history invalid")
	return hist
}

func TestRoundTripProperty(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		h := randomHistory(t)
		h2, _ := roundTrip(t, h)
		if diff := diffHistory(h, h2); diff != "" {
			t.Fatalf("Read(Write(h)) ≠ h: %s", diff)
		}
	})
}

func TestHeaderJSON(t *testing.T) {
	h, err := GenerateQuadratic(QuadraticOptions{D: 3, T: 1, Seed: 5})
	require.NoError(t, err)
	// As the olbfgs snapshot uses it: embedded, indented, decoded back.
	doc, err := json.MarshalIndent(struct {
		Stream Header `json:"stream"`
	}{h.Header}, "", "  ")
	require.NoError(t, err)
	var back struct {
		Stream Header `json:"stream"`
	}
	require.NoError(t, json.Unmarshal(doc, &back))
	h2 := &History{Header: back.Stream, Loss: h.Loss}
	if diff := diffHistory(&History{Header: h.Header, Loss: h.Loss}, h2); diff != "" {
		t.Errorf("header JSON round trip: %s", diff)
	}
	t.Run("strict", func(t *testing.T) {
		var hh Header
		err := json.Unmarshal([]byte(`{"format":"olbfgs-stream/v1","kind":"logistic","d":2,"lambda":null}`), &hh)
		require.ErrorIs(t, err, ErrFormat)
	})
}

func TestReadWriteFile(t *testing.T) {
	dir := t.TempDir()
	h, err := GenerateLogistic(LogisticOptions{D: 3, T: 20, Seed: 9})
	require.NoError(t, err)
	path := filepath.Join(dir, "s.jsonl")
	require.NoError(t, WriteFile(path, h))
	h2, err := ReadFile(path)
	require.NoError(t, err)
	if diff := diffHistory(h, h2); diff != "" {
		t.Error(diff)
	}
	t.Run("failed write leaves the old file", func(t *testing.T) {
		bad, _ := GenerateLogistic(LogisticOptions{D: 3, T: 2})
		bad.Events[1].Sample.V = []float64{math.NaN(), 0, 0}
		require.ErrorIs(t, WriteFile(path, bad), ErrNonFinite)
		if h3, err := ReadFile(path); assert.NoError(t, err, "file unreadable after a failed write") {
			assert.Empty(t, diffHistory(h, h3), "file changed after a failed write")
		}
		ents, err := os.ReadDir(dir)
		require.NoError(t, err)
		assert.Len(t, ents, 1, "directory entries")
	})
	t.Run("missing file", func(t *testing.T) {
		_, err := ReadFile(filepath.Join(dir, "nope.jsonl"))
		require.ErrorIs(t, err, os.ErrNotExist)
	})
	t.Run("error names file and line", func(t *testing.T) {
		bad := filepath.Join(dir, "bad.jsonl")
		require.NoError(t, os.WriteFile(bad, []byte(lines(lHeader, lInsert, `{"op":"delete","id":5}`)), 0o600))
		_, err := ReadFile(bad)
		var le *LineError
		require.ErrorAs(t, err, &le)
		assert.Equal(t, 3, le.Line, "line of the error")
		assert.ErrorContains(t, err, "bad.jsonl", "the error must name the file")
	})
}

func TestReadIOError(t *testing.T) {
	errDisk := errors.New("disk on fire")
	r := &failingReader{data: []byte(lines(lHeader, lInsert)), err: errDisk}
	_, err := Read(r)
	require.ErrorIs(t, err, errDisk, "the reader's error must be wrapped")
	var le *LineError
	require.ErrorAs(t, err, &le)
	assert.Equal(t, 3, le.Line, "line of the error")
}

// failingReader returns data, then err.
type failingReader struct {
	data []byte
	err  error
}

func (r *failingReader) Read(p []byte) (int, error) {
	if len(r.data) == 0 {
		return 0, r.err
	}
	n := copy(p, r.data)
	r.data = r.data[n:]
	return n, nil
}

// benchStream returns a 5000-event d=25 stream of the given kind as file
// bytes (the paper's state-aware benchmark size, Table 1).
func benchStream(b *testing.B, kind Kind) []byte {
	b.Helper()
	var h *History
	var err error
	if kind == KindQuadratic {
		h, err = GenerateQuadratic(QuadraticOptions{Seed: 1})
	} else {
		h, err = GenerateLogistic(LogisticOptions{Seed: 1})
	}
	require.NoError(b, err)
	var buf bytes.Buffer
	require.NoError(b, Write(&buf, h))
	return buf.Bytes()
}

func BenchmarkRead(b *testing.B) {
	for _, kind := range []Kind{KindQuadratic, KindLogistic} {
		b.Run(fmt.Sprintf("%s/d=25/T=5000", kind), func(b *testing.B) {
			data := benchStream(b, kind)
			b.SetBytes(int64(len(data)))
			b.ReportAllocs()
			for b.Loop() {
				if _, err := Read(bytes.NewReader(data)); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

func BenchmarkWrite(b *testing.B) {
	for _, kind := range []Kind{KindQuadratic, KindLogistic} {
		b.Run(fmt.Sprintf("%s/d=25/T=5000", kind), func(b *testing.B) {
			data := benchStream(b, kind)
			h, err := Read(bytes.NewReader(data))
			require.NoError(b, err)
			b.SetBytes(int64(len(data)))
			b.ReportAllocs()
			for b.Loop() {
				if err := Write(io.Discard, h); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
