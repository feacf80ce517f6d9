package olbfgs

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"

	"gonum.org/v1/gonum/floats"

	"unlearn/internal/strictjson"
	"unlearn/stream"
)

// SnapshotFormat is the format tag of a learner state snapshot.
const SnapshotFormat = "olbfgs-state/v1"

// snapshot is the JSON layout of a saved learner state. Memory pairs are
// listed oldest first; floats use the shortest representation that
// round-trips, so a save/load cycle is bit-exact.
type snapshot struct {
	Format  string          `json:"format"`
	Config  snapshotConfig  `json:"config"`
	T       int             `json:"t"`
	Skipped int             `json:"skipped"`
	W       []float64       `json:"w"`
	Memory  []snapshotPair  `json:"memory"`
	Deleted []int64         `json:"deleted"`
	Stream  json.RawMessage `json:"stream"`
}

type snapshotConfig struct {
	Dim          int     `json:"d"`
	Memory       int     `json:"tau"`
	StepSize     float64 `json:"eta"`
	InitialScale float64 `json:"gamma0"`
	CurvatureTol float64 `json:"curvature_tol"`
	Radius       float64 `json:"radius,omitempty"`
	SampleBound  float64 `json:"sample_bound,omitempty"`
	PairAngle    float64 `json:"pair_angle,omitempty"`
	PairMin      float64 `json:"pair_min,omitempty"`
	PairMax      float64 `json:"pair_max,omitempty"`
}

// configJSON returns the snapshot form of a configuration (the same
// fields, with JSON tags).
func configJSON(c Config) snapshotConfig { return snapshotConfig(c) }

// config returns the configuration of a snapshot form.
func (s snapshotConfig) config() Config { return Config(s) }

type snapshotPair struct {
	S      []float64 `json:"s"`
	Y      []float64 `json:"y"`
	Source []int64   `json:"source"`
}

// MarshalSnapshot encodes the learner's full state — configuration, w, the
// memory with the source of every pair, the deleted ids, the event and skip
// counters — and the stream header h that defines its loss, as a versioned
// JSON document (SnapshotFormat). h must describe the learner's loss (same
// kind and dimension). Checkpoints are not saved.
func MarshalSnapshot(l *Learner, h stream.Header) ([]byte, error) {
	if h.Kind != l.loss.Kind() || h.D != l.cfg.Dim {
		return nil, fmt.Errorf("%w: header (kind %q, d=%d) does not match the learner (kind %q, d=%d)",
			ErrSnapshot, h.Kind, h.D, l.loss.Kind(), l.cfg.Dim)
	}
	hdr, err := json.Marshal(h)
	if err != nil {
		return nil, fmt.Errorf("%w: stream header: %w", ErrSnapshot, err)
	}
	s := snapshot{
		Format:  SnapshotFormat,
		Config:  configJSON(l.cfg),
		T:       l.t,
		Skipped: l.skipped,
		W:       l.w,
		Memory:  make([]snapshotPair, l.mem.Len()),
		Deleted: l.deleted,
		Stream:  hdr,
	}
	if s.Deleted == nil {
		s.Deleted = []int64{}
	}
	for i := range s.Memory {
		s.Memory[i] = snapshotPair(l.mem.Pair(i)) // same fields, with JSON tags
	}
	out, err := json.MarshalIndent(s, "", " ")
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrSnapshot, err)
	}
	return append(out, '\n'), nil
}

// UnmarshalSnapshot decodes a snapshot written by MarshalSnapshot and returns
// the learner and its stream header. Every field is checked: format tag,
// configuration (Config.Validate), dimensions, finiteness, at most τ pairs
// each with sᵀy > 0, deleted ids strictly ascending, non-negative counters,
// and the header's loss (stream.Header.Loss). Unknown fields are errors.
// Errors wrap ErrSnapshot and name the field.
func UnmarshalSnapshot(data []byte) (*Learner, stream.Header, error) {
	var s snapshot
	if err := strictjson.Decode(bytes.NewReader(data), &s); err != nil {
		return nil, stream.Header{}, fmt.Errorf("%w: %w", ErrSnapshot, err)
	}
	fail := func(field string, format string, args ...any) (*Learner, stream.Header, error) {
		return nil, stream.Header{}, fmt.Errorf("%w: field %q: %s", ErrSnapshot, field, fmt.Sprintf(format, args...))
	}
	if s.Format != SnapshotFormat {
		return fail("format", "%q, want %q", s.Format, SnapshotFormat)
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
	if len(s.W) != cfg.Dim || !finite(s.W) {
		return fail("w", "want %d finite values, got %d", cfg.Dim, len(s.W))
	}
	l, err := New(cfg, loss)
	if err != nil {
		return fail("config", "%v", err)
	}
	if cfg.Radius > 0 && floats.Norm(s.W, 2) > cfg.Radius*(1+slack(cfg.Dim)) {
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
	return l, h, nil
}
