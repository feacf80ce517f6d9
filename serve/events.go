package serve

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"

	"github.com/go-json-experiment/json"

	"unlearn/dataset"
	"unlearn/store"
	"unlearn/stream"
)

// eventsRequest is the body of POST /v1/events, in one of two forms:
//
//   - rows: "rows" (each a row of d numbers in the data's own units, as
//     the store's data contract describes its source: a CSV's or a LIBSVM
//     file's values, an IDX image's raw pixels 0…255; for a store without
//     a contract, the stream's vector x, or a for a quadratic store) or
//     "rows_f64" with "cols" (the same numbers as base64 of little-endian
//     IEEE 754 float64s, row after row, cols = d a row: bit for bit, and
//     far cheaper to encode and decode than decimal text), "labels" (each
//     row's label in the data's class names, a string or a number, or a
//     number for a store without classes), and optionally "ids" and "keys"
//     (one per row) and "columns", the rows' column names, which must be
//     the store's features in its order (its data contract's). The rows
//     and labels are preprocessed as the data readers preprocess a file
//     (model.RawRowsOf): the same raw row gives the same event as
//     `unlearn ingest --data`;
//   - events: "events", an array of insert events in the stream format
//     (spec §1.1: "op": "insert", "id", the kind's vector and scalar
//     fields, already the stream's values, as in a stream file), each with
//     an optional "key".
//
// Without ids, the service numbers the rows itself (above every id the
// store ever held) and returns the ids.
type eventsRequest struct {
	Rows    [][]float64 `json:"rows,omitempty"`
	RowsF64 []byte      `json:"rows_f64,omitempty"`
	Cols    *int        `json:"cols,omitempty"`
	Columns []string    `json:"columns,omitempty"`
	Labels  []label     `json:"labels,omitempty"`
	IDs     []int64     `json:"ids,omitempty"`
	Keys    []string    `json:"keys,omitempty"`
	Events  []eventJSON `json:"events,omitempty"`
}

// eventJSON is an insert event of the stream format with an optional key.
type eventJSON struct {
	Op    *string   `json:"op"`
	ID    *int64    `json:"id"`
	Key   *string   `json:"key"`
	X     []float64 `json:"x"`
	Y     *float64  `json:"y"`
	A     []float64 `json:"a"`
	Alpha *float64  `json:"alpha"`
}

// eventsResponse is the answer once the batch is committed.
type eventsResponse struct {
	// Events is the number of events committed (the whole batch).
	Events int `json:"events"`
	// Head is the log position of the last one.
	Head int64 `json:"head"`
	// Checkpoints is the number of checkpoints the batch wrote.
	Checkpoints int `json:"checkpoints"`
	// IDs are the events' ids, in the order of the request.
	IDs []int64 `json:"ids"`
}

// batch is a decoded ingest batch.
type batch struct {
	events []stream.Event
	keys   []string // "" when a row has none
	field  string   // "rows" or "events", for errors
	hasIDs bool
}

// toBatch checks the request against the store's loss and returns its
// events, with the field at fault in every problem.
func (req *eventsRequest) toBatch(h stream.Header, raw *dataset.RawRows) (*batch, *Problem) {
	spec, _ := stream.LookupLoss(h.Kind)
	byRows := req.Rows != nil || req.RowsF64 != nil || req.Labels != nil || req.IDs != nil || req.Keys != nil || req.Columns != nil
	if req.Columns != nil {
		if p := checkColumns("columns", req.Columns, contractFeatures(h)); p != nil {
			return nil, p
		}
	}
	switch {
	case req.Rows != nil && req.RowsF64 != nil:
		return nil, problem("bad-request", "send rows or rows_f64, not both").at("rows_f64")
	case req.RowsF64 != nil:
		var p *Problem
		if req.Rows, p = unpackRows(req.RowsF64, req.Cols, h.D, contractFeatures(h)); p != nil {
			return nil, p
		}
		return req.rowsBatch(h, raw)
	case byRows && req.Events != nil:
		return nil, problem("bad-request", "send either rows (with labels, ids, keys) or events, not both")
	case byRows:
		return req.rowsBatch(h, raw)
	case req.Events != nil:
		return req.eventsBatch(h, spec)
	}
	return nil, problem("bad-request", "the body has neither rows nor events")
}

func (req *eventsRequest) rowsBatch(h stream.Header, raw *dataset.RawRows) (*batch, *Problem) {
	n := len(req.Rows)
	switch {
	case n == 0:
		return nil, problem("unprocessable", "the batch has no rows: send at least one row").at("rows")
	case len(req.Labels) != n:
		return nil, problem("unprocessable", "%d labels for %d rows", len(req.Labels), n).at("labels")
	case req.IDs != nil && len(req.IDs) != n:
		return nil, problem("unprocessable", "%d ids for %d rows", len(req.IDs), n).at("ids")
	case req.Keys != nil && len(req.Keys) != n:
		return nil, problem("unprocessable", "%d keys for %d rows", len(req.Keys), n).at("keys")
	}
	if p := checkRows("rows", req.Rows, h.D, contractFeatures(h)); p != nil {
		return nil, p
	}
	if p := preprocessRows("rows", req.Rows, raw); p != nil {
		return nil, p
	}
	b := &batch{field: "rows", hasIDs: req.IDs != nil, events: make([]stream.Event, n), keys: make([]string, n)}
	for i := range req.Rows {
		y, err := raw.Label(string(req.Labels[i]))
		if err != nil {
			return nil, problem("unprocessable", "labels[%d]: %v", i, err).at(fmt.Sprintf("labels[%d]", i))
		}
		b.events[i] = stream.InsertEvent(0, req.Rows[i], y)
		if b.hasIDs {
			b.events[i].ID = req.IDs[i]
		}
		if req.Keys != nil {
			if req.Keys[i] == "" {
				return nil, problem("unprocessable", "keys[%d] is empty (omit keys, or give every row one)", i).at(fmt.Sprintf("keys[%d]", i))
			}
			if p := checkKey(fmt.Sprintf("keys[%d]", i), req.Keys[i]); p != nil {
				return nil, p
			}
			b.keys[i] = req.Keys[i]
		}
	}
	return b, nil
}

func (req *eventsRequest) eventsBatch(h stream.Header, spec stream.LossSpec) (*batch, *Problem) {
	n := len(req.Events)
	if n == 0 {
		return nil, problem("unprocessable", "events is empty").at("events")
	}
	b := &batch{field: "events", events: make([]stream.Event, n), keys: make([]string, n)}
	for i, e := range req.Events {
		at := func(f string) string { return fmt.Sprintf("events[%d].%s", i, f) }
		if e.Op != nil && *e.Op != "insert" {
			return nil, problem("unprocessable", "%s is %q: only inserts are ingested (a deletion is POST /v1/forget, which erases the data)", at("op"), *e.Op).at(at("op"))
		}
		vec, sc := e.X, e.Y
		other := e.A != nil || e.Alpha != nil
		if spec.Vector == "a" {
			vec, sc = e.A, e.Alpha
			other = e.X != nil || e.Y != nil
		}
		switch {
		case other:
			return nil, problem("bad-request", "%s has a field of another loss: a %s event has %q and %q", at(""), h.Kind, spec.Vector, spec.Scalar).at(at(""))
		case vec == nil:
			return nil, problem("unprocessable", "%s is missing", at(spec.Vector)).at(at(spec.Vector))
		case sc == nil:
			return nil, problem("unprocessable", "%s is missing", at(spec.Scalar)).at(at(spec.Scalar))
		case i > 0 && (e.ID != nil) != b.hasIDs:
			return nil, problem("unprocessable", "%s: give every event an id, or none (the service then numbers them)", at("id")).at(at("id"))
		}
		b.hasIDs = e.ID != nil
		b.events[i] = stream.InsertEvent(0, vec, *sc)
		if e.ID != nil {
			b.events[i].ID = *e.ID
		}
		if e.Key != nil {
			if p := checkKey(at("key"), *e.Key); p != nil {
				return nil, p
			}
			b.keys[i] = *e.Key
		}
		if p := checkRow(at(spec.Vector), vec, h.D, nil); p != nil {
			return nil, p
		}
	}
	return b, nil
}

// source feeds a batch to store.IngestEvents as a KeySource, counting the
// events it gave (the index of a refused one).
type source struct {
	b *batch
	i int
}

func (s *source) Next() (stream.Event, error) {
	if s.i == len(s.b.events) {
		return stream.Event{}, io.EOF
	}
	s.i++
	return s.b.events[s.i-1], nil
}

func (s *source) Key() string { return s.b.keys[s.i-1] }

func (s *Server) postEvents(w http.ResponseWriter, r *http.Request, c *call) error {
	data, p := readBody(w, r, s.opt.MaxBody)
	if p != nil {
		return p
	}
	b, p := s.parseBatch(r.Context(), data)
	if p != nil {
		return p
	}
	out, err := s.ingest(r.Context(), b)
	if err != nil {
		return err
	}
	c.count = len(b.events)
	ids := make([]int64, len(b.events))
	for i, e := range b.events {
		ids[i] = e.ID
	}
	return writeJSON(w, http.StatusOK, eventsResponse{Events: out.Events, Head: out.Head, Checkpoints: out.Checkpoints, IDs: ids})
}

// parseBatch decodes and checks an ingest body. At most decodeSlots bodies
// are parsed at once (one less than the processors), so that a burst of
// ingest batches leaves a processor to the predictions.
func (s *Server) parseBatch(ctx context.Context, data []byte) (*batch, *Problem) {
	select {
	case s.decodeSlots <- struct{}{}:
		defer func() { <-s.decodeSlots }()
	case <-ctx.Done():
		return nil, problem("timeout", "the request was cancelled before its body was parsed; nothing was written")
	}
	var req eventsRequest
	if p := unmarshal(data, &req); p != nil {
		return nil, p
	}
	if n := max(len(req.Rows), len(req.Events), len(req.Labels)); n > s.opt.MaxRows {
		field := "rows"
		if req.Events != nil {
			field = "events"
		}
		return nil, problem("too-many-rows", "%d %s; at most %d a request (the service's limit): send several batches", n, field, s.opt.MaxRows).at(field)
	}
	b, p := req.toBatch(s.st.Header(), s.raw)
	if p != nil {
		return nil, p
	}
	for i, e := range b.events { // the loss's own checks, named by the request's field
		if field, err := s.st.Loss().CheckSample(e.Sample); err != nil {
			name := fmt.Sprintf("%s[%d]", b.field, i)
			if b.field == "rows" && field != "x" && field != "a" {
				name = fmt.Sprintf("labels[%d]", i)
			} else if b.field == "events" {
				name = fmt.Sprintf("events[%d].%s", i, field)
			}
			return nil, problem("unprocessable", "%s: %v", name, err).at(name)
		}
	}
	return b, nil
}

// ingestProblem explains a refused batch (nothing of it was committed): a
// duplicate or forgotten id or a key already held is a conflict (409),
// a step the learner refuses is unprocessable (422).
func (s *Server) ingestProblem(err error, b *batch, i int) error {
	var ee *store.EventError
	if !errors.As(err, &ee) || i < 0 || i >= len(b.events) {
		return err
	}
	field := fmt.Sprintf("%s[%d]", b.field, i)
	if b.field == "rows" {
		field = fmt.Sprintf("ids[%d]", i)
	} else if b.hasIDs {
		field = fmt.Sprintf("events[%d].id", i)
	}
	if errors.Is(err, store.ErrEvent) { // the payloads were checked: an id or key the store holds
		// One message per field, naming no other record, tombstone or
		// request (the store's own words do: they are the operator's).
		what := "this id cannot be ingested: it is in use or was forgotten"
		if strings.Contains(ee.Err.Error(), "key ") && b.keys[i] != "" {
			field = fmt.Sprintf("keys[%d]", i)
			if b.field == "events" {
				field = fmt.Sprintf("events[%d].key", i)
			}
			what = "this key cannot be ingested: it is in use"
		}
		return problem("conflict", "%s: %s; nothing of the batch was written", field, what).at(field)
	}
	// A step the learner refuses (olbfgs: a payload above a certifiable
	// learner's sample bound, a diverging step).
	field = fmt.Sprintf("%s[%d]", b.field, i)
	return problem("unprocessable", "%s: %v; nothing of the batch was written", field, ee.Err).at(field)
}

// label is a row's label as a request sends it, a JSON string or number,
// kept as its text (a string's value, a number's JSON text): it is read
// as a data file's label cell is (dataset.RawRows.Label), so that 6, 6.0
// and "6" are all class "6".
type label string

// UnmarshalJSON accepts a string or a number.
func (l *label) UnmarshalJSON(b []byte) error {
	b = bytes.TrimSpace(b)
	switch {
	case len(b) > 0 && b[0] == '"':
		var s string
		if err := json.Unmarshal(b, &s); err != nil {
			return err
		}
		*l = label(s)
		return nil
	case len(b) > 0 && (b[0] == '-' || b[0] >= '0' && b[0] <= '9'):
		*l = label(b)
		return nil
	}
	return errNotLabel
}

var errNotLabel = errors.New("a label is a class name (a string) or a number")
