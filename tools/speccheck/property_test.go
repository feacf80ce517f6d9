package speccheck

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/stretchr/testify/require"
	"pgregory.net/rapid"

	"unlearn/stream"
)

// streamSchemas are the compiled schemas of a stream file's lines.
type streamSchemas struct {
	header *jsonschema.Schema
	events map[string]*jsonschema.Schema // by kind
}

func compileStream(t *testing.T) streamSchemas {
	return streamSchemas{
		header: compile(t, "olbfgs-stream-v1.header.schema.json"),
		events: map[string]*jsonschema.Schema{
			"quadratic": compile(t, "olbfgs-stream-v1.event.schema.json#/$defs/quadratic"),
			"logistic":  compile(t, "olbfgs-stream-v1.event.schema.json#/$defs/logistic"),
		},
	}
}

// valid reports whether the schemas accept every line of a stream file:
// the header, then each event against the schema of the header's kind.
func (s streamSchemas) valid(doc []byte) bool {
	ls := lines(doc)
	if validate(s.header, ls[0]) != nil {
		return false
	}
	var h struct{ Kind string }
	if json.Unmarshal(ls[0], &h) != nil {
		return false
	}
	ev, ok := s.events[h.Kind]
	if !ok {
		return false
	}
	for _, l := range ls[1:] {
		if validate(ev, l) != nil {
			return false
		}
	}
	return true
}

// TestStreamSchemaNoStricterThanReader: whatever stream file the reader
// accepts, the schemas accept. Streams are generated (both kinds, random
// sizes and seeds, deletes spliced in), then one line is edited at random:
// a field set to a value from a pool of awkward JSON values, or removed.
// The converse does not hold (the reader also checks what JSON Schema
// cannot: lengths against d, positive definiteness, the id rules, integer
// spelling), so only this direction is a property; the counts show that
// both outcomes occur.
func TestStreamSchemaNoStricterThanReader(t *testing.T) {
	sch := compileStream(t)
	var accepted, rejected int
	rapid.Check(t, func(rt *rapid.T) {
		doc := randomStreamFile(rt)
		require.NoError(rt, readStreamBytes(doc), "unedited stream")
		require.True(rt, sch.valid(doc), "the schemas reject an unedited stream:\n%s", doc)

		ls := lines(doc)
		n := rapid.IntRange(0, len(ls)-1).Draw(rt, "line")
		var obj map[string]any
		require.NoError(rt, json.Unmarshal(ls[n], &obj))
		keys := []string{"format", "kind", "d", "H0", "H1", "lambda", "op", "id", "a", "alpha", "x", "y", "seed", "extra"}
		key := rapid.SampledFrom(keys).Draw(rt, "key")
		if rapid.Bool().Draw(rt, "remove") {
			delete(obj, key)
		} else {
			obj[key] = rapid.SampledFrom(awkwardValues()).Draw(rt, "value")
		}
		b, err := json.Marshal(obj)
		require.NoError(rt, err)
		ls = append([][]byte(nil), ls...)
		ls[n] = b
		edited := append(bytes.Join(ls, []byte("\n")), '\n')

		if readStreamBytes(edited) == nil {
			accepted++
			require.True(rt, sch.valid(edited), "the reader accepts what the schemas reject:\n%s", edited)
		} else {
			rejected++
		}
	})
	t.Logf("edited streams: %d accepted by the reader, %d rejected", accepted, rejected)
	require.Positive(t, accepted)
	require.Positive(t, rejected)
}

// awkwardValues are JSON values an edit may put in a field.
func awkwardValues() []any {
	return []any{
		0, 1, -1, 2, 0.5, 1.5, -0.25, 1e300, -1e-300, 7, 1 << 40,
		"", "insert", "delete", "quadratic", "logistic", "olbfgs-stream/v1", "1",
		true, false, nil,
		[]any{}, []float64{0.5}, []float64{1, 2}, []float64{0.1, 0.2, 0.3}, []any{"1", 2},
		[][]float64{{1, 0}, {0, 1}}, [][]float64{{2, 0, 0}, {0, 2, 0}, {0, 0, 2}}, [][]float64{{1}},
		map[string]any{}, map[string]any{"a": 1},
	}
}

// randomStreamFile draws a small generated stream, possibly with deletes,
// and returns it as a stream file.
func randomStreamFile(t *rapid.T) []byte {
	seed := rapid.Uint64().Draw(t, "seed")
	T := rapid.IntRange(1, 6).Draw(t, "T")
	var h *stream.History
	var err error
	if rapid.Bool().Draw(t, "logistic") {
		h, err = stream.GenerateLogistic(stream.LogisticOptions{D: rapid.IntRange(1, 3).Draw(t, "d"), T: T, Seed: seed})
	} else {
		h, err = stream.GenerateQuadratic(stream.QuadraticOptions{D: rapid.IntRange(2, 3).Draw(t, "d"), T: T, Seed: seed})
	}
	require.NoError(t, err)
	events := append([]stream.Event(nil), h.Events...)
	for _, id := range rapid.SliceOfDistinct(rapid.Int64Range(1, int64(T)), func(v int64) int64 { return v }).Draw(t, "deletes") {
		events = append(events, stream.DeleteEvent(id))
	}
	h, err = stream.NewHistory(h.Header, events)
	require.NoError(t, err)
	var b bytes.Buffer
	require.NoError(t, stream.Write(&b, h))
	return b.Bytes()
}

func readStreamBytes(doc []byte) error {
	_, err := stream.Read(bytes.NewReader(doc))
	return err
}
