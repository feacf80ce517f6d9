package model

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"unicode/utf8"

	"unlearn/stream"
)

// Rows is a source of rows to predict or evaluate on, one at a time: the
// insert events of a data file (*dataset.Reader) or of a stream file
// (*stream.Reader). Next returns io.EOF after the last event; delete
// events are skipped.
type Rows interface {
	Next() (stream.Event, error)
}

// keyed is a Rows whose rows may carry a string id (a CSV's id column of
// strings: *dataset.Reader).
type keyed interface {
	Key() string
}

// Output says how [WritePredictions] writes.
type Output struct {
	// JSON writes JSON Lines (one object per row) instead of CSV.
	JSON bool
}

// Columns returns the names of the columns (CSV) or fields (JSON Lines)
// of the model's predictions: "id", then "label" and "p_" + each class
// label for a classifier, or "prediction" for regression.
func (m *Model) Columns() []string {
	if m.kind == stream.KindRegression {
		return []string{"id", "prediction"}
	}
	cols := []string{"id", "label"}
	for _, c := range m.classes {
		cols = append(cols, "p_"+c)
	}
	return cols
}

// WritePredictions predicts every row of src and writes one line per row
// to w, in src's order, and returns the number of rows written.
//
// CSV (the default) has a header row of [Model.Columns]; JSON Lines one
// object per row with the same fields. A row's id is its string id (the
// key of a CSV id column of strings), else its integer id (the data's id,
// or its 1-based row number). label is the predicted class in the data's
// own names ([Model.Classes]); p_<class> the probability of each class;
// prediction the regression's wᵀx. Numbers are written in the shortest
// form that reads back to the same float64, so two runs — or a store and
// its exact release — write the same bytes.
//
// Memory is constant in the number of rows: one row and one output line at
// a time (src's own memory aside: dataset readers with
// dataset.Options.Unlabeled and stream readers keep nothing per row).
// Errors: src's (a data file's errors name the file, line and column); a
// row that cannot be scored, wrapping ErrRow with its id; w's.
func WritePredictions(w io.Writer, m *Model, src Rows, o Output) (int, error) {
	bw := bufio.NewWriterSize(w, 64<<10)
	pw := newPredictionWriter(m, o.JSON)
	if k, ok := src.(keyed); ok {
		pw.key = k
	}
	if !o.JSON {
		if _, err := bw.Write(pw.header()); err != nil {
			return 0, err
		}
	}
	var p Prediction
	n := 0
	for {
		e, err := src.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return n, err
		}
		if e.Op != stream.Insert {
			continue
		}
		if err := m.PredictTo(&p, e.Sample); err != nil {
			return n, fmt.Errorf("row with id %s: %w", pw.id(e.ID), err)
		}
		if _, err := bw.Write(pw.line(e.ID, &p)); err != nil {
			return n, err
		}
		n++
	}
	return n, bw.Flush()
}

// predictionWriter formats output lines into one reused buffer.
type predictionWriter struct {
	m    *Model
	json bool
	key  keyed
	buf  []byte
	// fields are the JSON members' openings of the probabilities:
	// `,"p_<class>":`.
	fields [][]byte
}

func newPredictionWriter(m *Model, json bool) *predictionWriter {
	pw := &predictionWriter{m: m, json: json}
	for _, c := range m.classes {
		f := appendJSONString([]byte{','}, "p_"+c)
		pw.fields = append(pw.fields, append(f, ':'))
	}
	return pw
}

// header returns the CSV header row.
func (pw *predictionWriter) header() []byte {
	b := pw.buf[:0]
	for i, c := range pw.m.Columns() {
		if i > 0 {
			b = append(b, ',')
		}
		b = appendCSV(b, c)
	}
	pw.buf = append(b, '\n')
	return pw.buf
}

// id returns the row's id as written.
func (pw *predictionWriter) id(id int64) string {
	if pw.key != nil {
		if k := pw.key.Key(); k != "" {
			return strconv.Quote(k)
		}
	}
	return strconv.FormatInt(id, 10)
}

// line returns one row's output line.
func (pw *predictionWriter) line(id int64, p *Prediction) []byte {
	key := ""
	if pw.key != nil {
		key = pw.key.Key()
	}
	if pw.json {
		pw.buf = pw.jsonLine(pw.buf[:0], id, key, p)
		return pw.buf
	}
	b := pw.buf[:0]
	if key != "" {
		b = appendCSV(b, key)
	} else {
		b = strconv.AppendInt(b, id, 10)
	}
	if pw.m.kind == stream.KindRegression {
		b = append(b, ',')
		b = strconv.AppendFloat(b, p.Value, 'g', -1, 64)
	} else {
		b = append(b, ',')
		b = appendCSV(b, p.Label)
		for _, q := range p.Probabilities {
			b = append(b, ',')
			b = strconv.AppendFloat(b, q, 'g', -1, 64)
		}
	}
	pw.buf = append(b, '\n')
	return pw.buf
}

func (pw *predictionWriter) jsonLine(b []byte, id int64, key string, p *Prediction) []byte {
	b = append(b, `{"id":`...)
	if key != "" {
		b = appendJSONString(b, key)
	} else {
		b = strconv.AppendInt(b, id, 10)
	}
	if pw.m.kind == stream.KindRegression {
		b = append(b, `,"prediction":`...)
		b = strconv.AppendFloat(b, p.Value, 'g', -1, 64)
		return append(b, "}\n"...)
	}
	b = append(b, `,"label":`...)
	b = appendJSONString(b, p.Label)
	for k, q := range p.Probabilities {
		b = append(b, pw.fields[k]...)
		b = strconv.AppendFloat(b, q, 'g', -1, 64)
	}
	return append(b, "}\n"...)
}

// appendCSV appends a CSV field, quoted as RFC 4180 asks when it holds a
// comma, a quote, a line break or surrounding space (encoding/csv's rule).
func appendCSV(b []byte, s string) []byte {
	if s == "" || (!strings.ContainsAny(s, ",\"\r\n") && s[0] != ' ' && s[0] != '\t') {
		return append(b, s...)
	}
	b = append(b, '"')
	b = append(b, strings.ReplaceAll(s, `"`, `""`)...)
	return append(b, '"')
}

// appendJSONString appends s as a JSON string (RFC 8259 §7): quotes,
// backslashes and control characters escaped, invalid UTF-8 replaced by
// U+FFFD, as encoding/json writes it.
func appendJSONString(b []byte, s string) []byte {
	const hex = "0123456789abcdef"
	b = append(b, '"')
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			switch {
			case c == '"' || c == '\\':
				b = append(b, '\\', c)
			case c == '\n':
				b = append(b, '\\', 'n')
			case c == '\r':
				b = append(b, '\\', 'r')
			case c == '\t':
				b = append(b, '\\', 't')
			case c < 0x20:
				b = append(b, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xf])
			default:
				b = append(b, c)
			}
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			b = append(b, `\ufffd`...)
		} else {
			b = append(b, s[i:i+size]...)
		}
		i += size
	}
	return append(b, '"')
}
