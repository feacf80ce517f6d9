package certify

import (
	"bytes"
	"encoding/json"
	"fmt"

	"unlearn/internal/strictjson"
	"unlearn/model"
	"unlearn/olbfgs"
	"unlearn/stream"
)

// ReleaseFormat is the format tag of a released model.
const ReleaseFormat = "unlearn-release/v1"

// Release is what a certified release publishes, and nothing else
// (spec §7, "Only what the certificate covers is released"): the
// configuration and the loss's header, which are public by definition, the
// data contract of a model trained on a data file (feature names, classes,
// scale: what applying it to raw rows needs; it comes from the header the
// user's options and the file's header row wrote, never from the rows),
// the noised parameters w, and the memory — empty after a reset, rebuilt
// from the noised w and retained data after a rebuild, or the
// counterfactual's own memory for an exact release. Unlike an olbfgs
// snapshot it holds no event or skip counter, no deleted ids, no pair
// sources (ids), no other metadata (file name, generator, seed) and no
// hash of un-noised data: each of these depends on the deleted data or
// identifies it. The certificate's hash of the file covers every field,
// the contract included.
type Release struct {
	// Format is [ReleaseFormat].
	Format string `json:"format"`
	// Config is the learner's configuration.
	Config ReleaseConfig `json:"config"`
	// Loss is the loss's header (format, kind, d and H0, H1 or λ), without
	// metadata.
	Loss stream.Header `json:"loss"`
	// Contract is the data contract (package model) of a model whose loss
	// header records its data source (a store created from a data file, a
	// snapshot trained on one); absent otherwise, and in releases made
	// before releases carried it.
	Contract *model.Contract `json:"contract,omitempty"`
	// W is the released parameter vector.
	W []float64 `json:"w"`
	// Memory holds the released curvature pairs, oldest first.
	Memory []ReleasePair `json:"memory"`
}

// ReleaseConfig is the public configuration of a released learner: the
// olbfgs.Config fields.
type ReleaseConfig struct {
	Dim          int     `json:"d"`
	Memory       int     `json:"tau"`
	StepSize     float64 `json:"eta"`
	InitialScale float64 `json:"gamma0"`
	CurvatureTol float64 `json:"curvature_tol"`
	Radius       float64 `json:"radius"`
	SampleBound  float64 `json:"sample_bound"`
	PairAngle    float64 `json:"pair_angle"`
	PairMin      float64 `json:"pair_min"`
	PairMax      float64 `json:"pair_max"`
}

// ReleasePair is a released curvature pair, without its source.
type ReleasePair struct {
	S []float64 `json:"s"`
	Y []float64 `json:"y"`
}

func releaseConfig(c olbfgs.Config) ReleaseConfig {
	return ReleaseConfig{Dim: c.Dim, Memory: c.Memory, StepSize: c.StepSize, InitialScale: c.InitialScale,
		CurvatureTol: c.CurvatureTol, Radius: c.Radius, SampleBound: c.SampleBound,
		PairAngle: c.PairAngle, PairMin: c.PairMin, PairMax: c.PairMax}
}

// Olbfgs returns the configuration as an olbfgs.Config.
func (c ReleaseConfig) Olbfgs() olbfgs.Config {
	return olbfgs.Config{Dim: c.Dim, Memory: c.Memory, StepSize: c.StepSize, InitialScale: c.InitialScale,
		CurvatureTol: c.CurvatureTol, Radius: c.Radius, SampleBound: c.SampleBound,
		PairAngle: c.PairAngle, PairMin: c.PairMin, PairMax: c.PairMax}
}

// releaseOf returns the release of l's w and memory (pair sources dropped)
// under the metadata-free header h, with the data contract c (nil: none).
func releaseOf(l *olbfgs.Learner, h stream.Header, c *model.Contract) *Release {
	h.Meta = nil
	h.Format = stream.FormatV1
	r := &Release{Format: ReleaseFormat, Config: releaseConfig(l.Config()), Loss: h, Contract: c,
		W: append([]float64(nil), l.W()...), Memory: make([]ReleasePair, l.Memory().Len())}
	for i := range r.Memory {
		p := l.Memory().Pair(i)
		r.Memory[i] = ReleasePair{S: append([]float64(nil), p.S...), Y: append([]float64(nil), p.Y...)}
	}
	return r
}

// Marshal returns the release's canonical JSON (indented, final newline);
// floats use the shortest representation that round-trips.
func (r *Release) Marshal() ([]byte, error) {
	b, err := json.MarshalIndent(r, "", " ")
	if err != nil {
		return nil, fmt.Errorf("certify: release: %w", err)
	}
	return append(b, '\n'), nil
}

// ParseRelease decodes and checks a release: its format, configuration
// (olbfgs.Config.Validate), loss header, dimensions and pairs
// (sᵀy > 0, at most τ). Unknown fields and trailing data are errors.
// Errors are *VerifyError values naming the field (ErrRelease).
func ParseRelease(data []byte) (*Release, error) {
	var r Release
	if err := strictjson.Decode(bytes.NewReader(data), &r); err != nil {
		return nil, verifyErr("release", ErrRelease, "%v", err)
	}
	if _, err := r.Learner(); err != nil {
		return nil, err
	}
	return &r, nil
}

// Learner returns the released model as a learner at (w, Z) with no event
// history, e.g. to evaluate it or to continue training from it. Errors
// (*VerifyError, ErrRelease): an invalid release.
func (r *Release) Learner() (*olbfgs.Learner, error) {
	if r.Format != ReleaseFormat {
		return nil, verifyErr("release.format", ErrRelease, "%q, want %q", r.Format, ReleaseFormat)
	}
	cfg := r.Config.Olbfgs()
	if err := cfg.Validate(); err != nil {
		return nil, verifyErr("release.config", ErrRelease, "%v", err)
	}
	loss, err := r.Loss.Loss()
	if err != nil {
		return nil, verifyErr("release.loss", ErrRelease, "%v", err)
	}
	if len(r.Loss.Meta) > 0 {
		return nil, verifyErr("release.loss", ErrRelease, "a release carries no header metadata")
	}
	if r.Contract != nil {
		if err := r.Contract.Validate(r.Loss.Kind, r.Loss.D); err != nil {
			return nil, verifyErr("release.contract", ErrRelease, "%v", err)
		}
	}
	// Sizes are checked before the learner is allocated, so that a small
	// file cannot make it allocate for a huge d or τ.
	if len(r.W) != cfg.Dim {
		return nil, verifyErr("release.w", ErrRelease, "%d values, want d = %d", len(r.W), cfg.Dim)
	}
	if len(r.Memory) > cfg.Memory {
		return nil, verifyErr("release.memory", ErrRelease, "%d pairs exceed τ = %d", len(r.Memory), cfg.Memory)
	}
	for i, p := range r.Memory {
		if len(p.S) != cfg.Dim || len(p.Y) != cfg.Dim {
			return nil, verifyErr(fmt.Sprintf("release.memory[%d]", i), ErrRelease, "vectors of %d and %d values, want d = %d", len(p.S), len(p.Y), cfg.Dim)
		}
	}
	l, err := olbfgs.New(cfg, loss)
	if err != nil {
		return nil, verifyErr("release.config", ErrRelease, "%v", err)
	}
	for i, v := range r.W {
		if v != v || v > 1e308 || v < -1e308 {
			return nil, verifyErr("release.w", ErrRelease, "w[%d] = %v is not finite", i, v)
		}
	}
	l.SetW(r.W)
	for i, p := range r.Memory {
		if err := l.Memory().Push(p.S, p.Y); err != nil {
			return nil, verifyErr(fmt.Sprintf("release.memory[%d]", i), ErrRelease, "%v", err)
		}
	}
	return l, nil
}
