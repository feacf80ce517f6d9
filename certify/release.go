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
	// Standardization holds the feature statistics of a learner that
	// standardizes its features (olbfgs.Config.Standardize), in an exact
	// release only (a noised one is refused: the statistics depend on the
	// deleted rows).
	Standardization *ReleaseStandardization `json:"standardization,omitempty"`
	// Average holds the averaged iterate — the parameters the model
	// predicts with — of an averaging learner (olbfgs.Config.Average) in an
	// exact release. A noised release of such a learner publishes the noised
	// average as W and no Average.
	Average *ReleaseAverage `json:"average,omitempty"`
}

// ReleaseStandardization is the standardization state of an exact release:
// Welford's count, means and sums of squared deviations (x̃_j =
// (x_j − mean_j)/sqrt(m2_j/n), 0 where m2_j = 0; docs/spec.md §2.1).
type ReleaseStandardization struct {
	N    int       `json:"n"`
	Mean []float64 `json:"mean"`
	M2   []float64 `json:"m2"`
}

// ReleaseAverage is the averaged iterate of an exact release and the
// number of iterates in it.
type ReleaseAverage struct {
	N int       `json:"n"`
	W []float64 `json:"w"`
}

// ReleaseConfig is the public configuration of a released learner: the
// olbfgs.Config fields, in its order (a conversion from one to the other
// is valid). The options of docs/spec.md §2.1 are omitted when off, so
// that a release of the paper's learner is written as before they existed.
type ReleaseConfig struct {
	Dim            int     `json:"d"`
	Outputs        int     `json:"outputs,omitempty"`
	Memory         int     `json:"tau"`
	StepSize       float64 `json:"eta"`
	InitialScale   float64 `json:"gamma0"`
	CurvatureTol   float64 `json:"curvature_tol"`
	Radius         float64 `json:"radius"`
	SampleBound    float64 `json:"sample_bound"`
	PairAngle      float64 `json:"pair_angle"`
	PairMin        float64 `json:"pair_min"`
	PairMax        float64 `json:"pair_max"`
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

// ReleasePair is a released curvature pair, without its source.
type ReleasePair struct {
	S []float64 `json:"s"`
	Y []float64 `json:"y"`
}

func releaseConfig(c olbfgs.Config) ReleaseConfig { return ReleaseConfig(c) }

// Olbfgs returns the configuration as an olbfgs.Config.
func (c ReleaseConfig) Olbfgs() olbfgs.Config { return olbfgs.Config(c) }

// releaseOf returns the release of l's w and memory (pair sources dropped)
// under the metadata-free header h, with the data contract c (nil: none)
// and the standardization statistics and the average of l's options (an
// exact release's; a noised release's learner has none: see released).
func releaseOf(l *olbfgs.Learner, h stream.Header, c *model.Contract) *Release {
	h.Meta = nil
	h.Format = stream.FormatV1
	r := &Release{Format: ReleaseFormat, Config: releaseConfig(l.Config()), Loss: h, Contract: c,
		W: append([]float64(nil), l.W()...), Memory: make([]ReleasePair, l.Memory().Len())}
	for i := range r.Memory {
		p := l.Memory().Pair(i)
		r.Memory[i] = ReleasePair{S: append([]float64(nil), p.S...), Y: append([]float64(nil), p.Y...)}
	}
	st := l.OptionState()
	if l.Config().Standardize {
		r.Standardization = &ReleaseStandardization{N: st.StandardizeN, Mean: st.Mean, M2: st.M2}
	}
	if l.Averaged() > 0 {
		r.Average = &ReleaseAverage{N: st.AverageN, W: st.Average}
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
		if err := r.Contract.Validate(r.Loss.Kind, r.Loss.D, r.Loss.K); err != nil {
			return nil, verifyErr("release.contract", ErrRelease, "%v", err)
		}
	}
	// Sizes are checked before the learner is allocated, so that a small
	// file cannot make it allocate for a huge d or τ.
	pd := cfg.ParamDim()
	if len(r.W) != pd {
		return nil, verifyErr("release.w", ErrRelease, "%d values, want the parameter dimension %d", len(r.W), pd)
	}
	if len(r.Memory) > cfg.Memory {
		return nil, verifyErr("release.memory", ErrRelease, "%d pairs exceed τ = %d", len(r.Memory), cfg.Memory)
	}
	for i, p := range r.Memory {
		if len(p.S) != pd || len(p.Y) != pd {
			return nil, verifyErr(fmt.Sprintf("release.memory[%d]", i), ErrRelease, "vectors of %d and %d values, want the parameter dimension %d", len(p.S), len(p.Y), pd)
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
	if err := r.setOptions(l); err != nil {
		return nil, err
	}
	return l, nil
}

// setOptions restores an exact release's standardization and average into
// l, a new learner of the release's configuration. A release publishes no
// insert count; the restored learner's is the one the statistics show
// (their n, or the average's n plus AverageStart), which is the released
// learner's own when either option is on. An averaged learner without a
// released average (a noised release, or one made before averaging began)
// predicts with W.
func (r *Release) setOptions(l *olbfgs.Learner) error {
	cfg := l.Config()
	switch {
	case r.Standardization != nil && !cfg.Standardize:
		return verifyErr("release.standardization", ErrRelease, "present, but the configuration does not standardize")
	case r.Standardization == nil && cfg.Standardize:
		return verifyErr("release.standardization", ErrRelease, "missing: the configuration standardizes its features")
	case r.Average != nil && !cfg.Average:
		return verifyErr("release.average", ErrRelease, "present, but the configuration does not average")
	}
	if !cfg.Standardize && r.Average == nil {
		return nil
	}
	st := olbfgs.OptionState{}
	if s := r.Standardization; s != nil {
		st.StandardizeN, st.Mean, st.M2 = s.N, s.Mean, s.M2
		st.Inserts = s.N
	}
	if cfg.Average {
		st.Average = make([]float64, cfg.ParamDim())
	}
	if a := r.Average; a != nil {
		st.AverageN, st.Average = a.N, a.W
		st.Inserts = max(st.Inserts, a.N+cfg.AverageStart)
	}
	if cfg.Progress {
		st.Progress, _ = l.Progress()
	}
	if err := l.SetOptionState(st); err != nil {
		return verifyErr("release", ErrRelease, "%v", err)
	}
	return nil
}
