package olbfgs

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"

	"gonum.org/v1/gonum/floats"

	"unlearn/internal/strictjson"
	"unlearn/stream"
)

// SnapshotFormat is the format tag of a learner state snapshot of the
// paper's learner: a configuration without options (Config.HasOptions is
// false), whose state is (w, Z), the deleted ids and the counters.
const SnapshotFormat = "olbfgs-state/v1"

// SnapshotFormatV2 is the format tag of a snapshot of a learner with
// options (Config.HasOptions): format v1's fields, and the insert count
// and the state of each option that is on.
const SnapshotFormatV2 = "olbfgs-state/v2"

// snapshot is the JSON layout of a saved learner state. Memory pairs are
// listed oldest first; floats use the shortest representation that
// round-trips, so a save/load cycle is bit-exact.
type snapshot struct {
	Format          string               `json:"format"`
	Config          ConfigJSON           `json:"config"`
	T               int                  `json:"t"`
	Skipped         int                  `json:"skipped"`
	Inserts         *int                 `json:"inserts,omitempty"`
	W               []float64            `json:"w"`
	Memory          []snapshotPair       `json:"memory"`
	Deleted         []int64              `json:"deleted"`
	Standardization *snapshotStandardize `json:"standardization,omitempty"`
	Average         *snapshotAverage     `json:"average,omitempty"`
	Progress        *snapshotProgress    `json:"progress,omitempty"`
	Stream          json.RawMessage      `json:"stream"`
}

// ConfigJSON is Config with the JSON names of the snapshot format (and of
// the model store's meta "learner"): the same fields in Config's order, so
// that a conversion from one to the other is valid; the options of
// docs/spec.md §2.1 are omitted when off, so that a configuration without
// options is written as before they existed.
type ConfigJSON struct {
	Dim            int     `json:"d"`
	Outputs        int     `json:"outputs,omitempty"`
	Memory         int     `json:"tau"`
	StepSize       float64 `json:"eta"`
	InitialScale   float64 `json:"gamma0"`
	CurvatureTol   float64 `json:"curvature_tol"`
	Radius         float64 `json:"radius,omitempty"`
	SampleBound    float64 `json:"sample_bound,omitempty"`
	PairAngle      float64 `json:"pair_angle,omitempty"`
	PairMin        float64 `json:"pair_min,omitempty"`
	PairMax        float64 `json:"pair_max,omitempty"`
	Intercept      bool    `json:"intercept,omitempty"`
	RidgeIntercept bool    `json:"ridge_intercept,omitempty"`
	Standardize    bool    `json:"standardize,omitempty"`
	Average        bool    `json:"average,omitempty"`
	AverageStart   int     `json:"average_start,omitempty"`
	AveragePower   float64 `json:"average_power,omitempty"`
	Damping        float64 `json:"damping,omitempty"`
	StepDecay      float64 `json:"step_decay,omitempty"`
	StepPower      float64 `json:"step_power,omitempty"`
	Progress       bool    `json:"progress,omitempty"`
}

// snapshotStandardize is the state of Config.Standardize: Welford's n,
// means and M2 sums.
type snapshotStandardize struct {
	N    int       `json:"n"`
	Mean []float64 `json:"mean"`
	M2   []float64 `json:"m2"`
}

// snapshotAverage is the state of Config.Average: the number of iterates
// averaged and their average (zeros while n = 0).
type snapshotAverage struct {
	N int       `json:"n"`
	W []float64 `json:"w"`
}

// snapshotProgress is Progress with JSON names.
type snapshotProgress struct {
	N               int       `json:"n"`
	LossSum         float64   `json:"loss_sum"`
	Correct         int       `json:"correct"`
	RecentLoss      float64   `json:"recent_loss"`
	RecentZeroLoss  float64   `json:"recent_zero_loss"`
	RecentAccuracy  float64   `json:"recent_accuracy"`
	RecentPredicted []float64 `json:"recent_predicted"`
	RecentLabels    []float64 `json:"recent_labels"`
}

// configJSON returns the snapshot form of a configuration (the same
// fields, with JSON tags; the options' are omitted when off, so that a
// configuration without options writes format v1's bytes).
func configJSON(c Config) ConfigJSON { return ConfigJSON(c) }

// config returns the configuration of a snapshot form.
func (s ConfigJSON) config() Config { return Config(s) }

type snapshotPair struct {
	S      []float64 `json:"s"`
	Y      []float64 `json:"y"`
	Source []int64   `json:"source"`
}

// MarshalSnapshot encodes the learner's full state — configuration, w, the
// memory with the source of every pair, the deleted ids, the event and skip
// counters, and with options (Config.HasOptions) the insert count and each
// option's state — and the stream header h that defines its loss, as a
// versioned JSON document (SnapshotFormat, or SnapshotFormatV2 with
// options). h must describe the learner's loss (same kind and dimension).
// Checkpoints are not saved. It is [WriteSnapshot] into a buffer; to write
// a file, call WriteSnapshot on it directly.
func MarshalSnapshot(l *Learner, h stream.Header) ([]byte, error) {
	var b bytes.Buffer
	if err := WriteSnapshot(&b, l, h); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

// WriteSnapshot writes the snapshot of MarshalSnapshot to w, byte for byte
// the same document: json.MarshalIndent of the snapshot layout with a
// one-space indent, then a newline. It streams: the vectors (w and the 2τ
// memory vectors, (2τ+1)·d numbers) are formatted into a small buffer and
// written as they go, so the memory it needs beyond the learner's state is
// a few kilobytes and the stream header, not the two whole encodings
// (compact and indented) that json.MarshalIndent holds. Numbers are
// formatted as encoding/json formats a float64 (strconv.AppendFloat,
// shortest round-trip form, exponent form below 1e-6 and from 1e21), so a
// save/load cycle is bit-exact. A non-finite number is an error wrapping
// ErrSnapshot, as json.Marshal's error is; an error of w is returned as it
// is. After an error w may hold a prefix of the document (write files with
// internal/atomicfile, which then leaves no file).
func WriteSnapshot(w io.Writer, l *Learner, h stream.Header) error {
	if !headerMatches(h, l.loss.Kind(), l.cfg) {
		return fmt.Errorf("%w: header (kind %q, d=%d, k=%d) does not match the learner (kind %q, d=%d, k=%d)",
			ErrSnapshot, h.Kind, h.D, h.K, l.loss.Kind(), l.cfg.Dim, l.cfg.Outputs)
	}
	hdr, err := json.Marshal(h)
	if err != nil {
		return fmt.Errorf("%w: stream header: %w", ErrSnapshot, err)
	}
	// Fields nested one level deep: json.MarshalIndent with prefix " "
	// indents them as the whole document's MarshalIndent does.
	v2 := l.cfg.HasOptions()
	format, _ := json.Marshal(snapshotFormat(l.cfg))
	cfg, err := json.MarshalIndent(configJSON(l.cfg), " ", " ")
	if err != nil {
		return fmt.Errorf("%w: %w", ErrSnapshot, err)
	}
	var stm bytes.Buffer
	if err := json.Indent(&stm, hdr, " ", " "); err != nil {
		return fmt.Errorf("%w: stream header: %w", ErrSnapshot, err)
	}

	e := snapshotWriter{w: w, buf: make([]byte, 0, snapshotBufSize)}
	e.str("{\n \"format\": ")
	e.raw(format)
	e.str(",\n \"config\": ")
	e.raw(cfg)
	e.str(",\n \"t\": ")
	e.buf = strconv.AppendInt(e.buf, int64(l.t), 10)
	e.str(",\n \"skipped\": ")
	e.buf = strconv.AppendInt(e.buf, int64(l.skipped), 10)
	if v2 {
		e.str(",\n \"inserts\": ")
		e.buf = strconv.AppendInt(e.buf, int64(l.opt.inserts), 10)
	}
	e.str(",\n \"w\": ")
	e.floats(l.w, 1, "w")
	e.str(",\n \"memory\": ")
	if n := l.mem.Len(); n == 0 {
		e.str("[]")
	} else {
		e.str("[")
		for i := range n {
			p := l.mem.Pair(i)
			if i > 0 {
				e.str(",")
			}
			e.str("\n  {\n   \"s\": ")
			e.floats(p.S, 3, fmt.Sprintf("memory[%d].s", i))
			e.str(",\n   \"y\": ")
			e.floats(p.Y, 3, fmt.Sprintf("memory[%d].y", i))
			e.str(",\n   \"source\": ")
			e.ints(p.Source, 3)
			e.str("\n  }")
		}
		e.str("\n ]")
	}
	e.str(",\n \"deleted\": ")
	if len(l.deleted) == 0 {
		e.str("[]") // never null: an empty list
	} else {
		e.ints(l.deleted, 1)
	}
	if v2 {
		e.options(l)
	}
	e.str(",\n \"stream\": ")
	e.raw(stm.Bytes())
	e.str("\n}\n")
	e.flush()
	return e.err
}

// snapshotFormat returns the format tag of a snapshot of a learner with
// configuration c.
func snapshotFormat(c Config) string {
	if c.HasOptions() {
		return SnapshotFormatV2
	}
	return SnapshotFormat
}

// snapshotBufSize is the size at which WriteSnapshot's buffer is written
// out.
const snapshotBufSize = 32 << 10

// snapshotWriter is WriteSnapshot's buffered writer; the first error
// (of w, or a non-finite number) sticks and stops all writing.
type snapshotWriter struct {
	w   io.Writer
	buf []byte
	err error
}

func (e *snapshotWriter) str(s string) { e.buf = append(e.buf, s...); e.maybeFlush() }
func (e *snapshotWriter) raw(b []byte) { e.buf = append(e.buf, b...); e.maybeFlush() }

func (e *snapshotWriter) maybeFlush() {
	if len(e.buf) >= snapshotBufSize {
		e.flush()
	}
}

func (e *snapshotWriter) flush() {
	if e.err == nil && len(e.buf) > 0 {
		_, e.err = e.w.Write(e.buf)
	}
	e.buf = e.buf[:0]
}

// newline appends a newline and the indent of a value at depth (one space
// per level).
func (e *snapshotWriter) newline(depth int) {
	e.buf = append(e.buf, '\n')
	for range depth {
		e.buf = append(e.buf, ' ')
	}
}

// floats writes v as a JSON array whose elements are at depth+1
// (json.MarshalIndent's layout: "[]" when empty, "null" when nil).
func (e *snapshotWriter) floats(v []float64, depth int, field string) {
	if v == nil {
		e.str("null")
		return
	}
	if len(v) == 0 {
		e.str("[]")
		return
	}
	e.buf = append(e.buf, '[')
	for i, x := range v {
		if e.err != nil {
			return
		}
		if math.IsNaN(x) || math.IsInf(x, 0) {
			e.err = fmt.Errorf("%w: field %q: element %d is %v (JSON has no non-finite numbers)", ErrSnapshot, field, i, x)
			return
		}
		if i > 0 {
			e.buf = append(e.buf, ',')
		}
		e.newline(depth + 1)
		e.buf = appendFloatJSON(e.buf, x)
		e.maybeFlush()
	}
	e.newline(depth)
	e.str("]")
}

// ints writes v as a JSON array whose elements are at depth+1.
func (e *snapshotWriter) ints(v []int64, depth int) {
	if v == nil {
		e.str("null")
		return
	}
	if len(v) == 0 {
		e.str("[]")
		return
	}
	e.buf = append(e.buf, '[')
	for i, x := range v {
		if i > 0 {
			e.buf = append(e.buf, ',')
		}
		e.newline(depth + 1)
		e.buf = strconv.AppendInt(e.buf, x, 10)
		e.maybeFlush()
	}
	e.newline(depth)
	e.str("]")
}

// appendFloatJSON appends the finite x as encoding/json encodes a float64
// (encoding/json's floatEncoder, Go 1.8 onwards, as ES6 prints numbers):
// the shortest decimal that round-trips, in 'f' form unless |x| < 1e-6 or
// |x| ≥ 1e21, and then in 'e' form with a two-digit exponent trimmed
// ("1e-07" → "1e-7").
func appendFloatJSON(b []byte, x float64) []byte {
	format := byte('f')
	if a := math.Abs(x); a != 0 && (a < 1e-6 || a >= 1e21) {
		format = 'e'
	}
	b = strconv.AppendFloat(b, x, format, -1, 64)
	if format == 'e' {
		if n := len(b); n >= 4 && b[n-4] == 'e' && b[n-3] == '-' && b[n-2] == '0' {
			b[n-2] = b[n-1]
			b = b[:n-1]
		}
	}
	return b
}

// UnmarshalSnapshot decodes a snapshot written by MarshalSnapshot and returns
// the learner and its stream header. Every field is checked: format tag,
// configuration (Config.Validate), dimensions, finiteness, at most τ pairs
// each with sᵀy > 0, deleted ids strictly ascending, non-negative counters,
// and the header's loss (stream.Header.Loss); for format v2, the options'
// blocks against the configuration. Unknown fields are errors. Errors wrap
// ErrSnapshot and name the field.
func UnmarshalSnapshot(data []byte) (*Learner, stream.Header, error) {
	var s snapshot
	if err := strictjson.Decode(bytes.NewReader(data), &s); err != nil {
		return nil, stream.Header{}, fmt.Errorf("%w: %w", ErrSnapshot, err)
	}
	fail := func(field string, format string, args ...any) (*Learner, stream.Header, error) {
		return nil, stream.Header{}, fmt.Errorf("%w: field %q: %s", ErrSnapshot, field, fmt.Sprintf(format, args...))
	}
	if s.Format != SnapshotFormat && s.Format != SnapshotFormatV2 {
		return fail("format", "%q, want %q or %q", s.Format, SnapshotFormat, SnapshotFormatV2)
	}
	if len(s.Stream) == 0 {
		return fail("stream", "missing")
	}
	var h stream.Header
	if err := json.Unmarshal(s.Stream, &h); err != nil {
		return fail("stream", "%v", err)
	}
	loss, err := h.Loss()
	if err != nil {
		return fail("stream", "%v", err)
	}
	cfg := s.Config.config()
	// The configuration and w are checked before the learner is allocated,
	// so that its size is bounded by MaxStateFloats and d by the input's.
	if err := cfg.Validate(); err != nil {
		return fail("config", "%v", err)
	}
	if want := snapshotFormat(cfg); s.Format != want {
		return fail("format", "%q, but a configuration %s options is written as %q", s.Format,
			map[bool]string{true: "with", false: "without"}[cfg.HasOptions()], want)
	}
	if len(s.W) != cfg.ParamDim() || !finite(s.W) {
		return fail("w", "want %d finite values, got %d", cfg.ParamDim(), len(s.W))
	}
	l, err := New(cfg, loss)
	if err != nil {
		return fail("config", "%v", err)
	}
	if cfg.Radius > 0 && floats.Norm(s.W, 2) > cfg.Radius*(1+slack(cfg.ParamDim())) {
		return fail("w", "‖w‖ = %v exceeds radius = %v", floats.Norm(s.W, 2), cfg.Radius)
	}
	copy(l.w, s.W)
	if len(s.Memory) > cfg.Memory {
		return fail("memory", "%d pairs exceed tau = %d", len(s.Memory), cfg.Memory)
	}
	for i, p := range s.Memory {
		if err := l.mem.Push(p.S, p.Y, p.Source...); err != nil {
			return fail(fmt.Sprintf("memory[%d]", i), "%v", err)
		}
		if cfg.Guarded() && !cfg.acceptPair(floats.Dot(p.S, p.S), floats.Dot(p.S, p.Y), floats.Dot(p.Y, p.Y)) {
			return fail(fmt.Sprintf("memory[%d]", i), "the pair fails the configuration's pair guard")
		}
	}
	if s.T < 0 || s.Skipped < 0 || s.Skipped > s.T {
		return fail("t", "counters t = %d, skipped = %d are inconsistent", s.T, s.Skipped)
	}
	l.t, l.skipped = s.T, s.Skipped
	for i := 1; i < len(s.Deleted); i++ {
		if s.Deleted[i] <= s.Deleted[i-1] {
			return fail("deleted", "ids not strictly ascending at position %d", i)
		}
	}
	l.deleted = slices.Clone(s.Deleted)
	if err := loadOptions(l, &s); err != nil {
		return nil, stream.Header{}, err
	}
	return l, h, nil
}
