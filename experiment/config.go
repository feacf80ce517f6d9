package experiment

import (
	"errors"
	"fmt"
	"math"
	"slices"

	"unlearn/align"
	"unlearn/olbfgs"
	"unlearn/stream"
)

// Defaults of the paper's Table "Default experimental configuration"
// (Methods section) and spec §6.
const (
	// DefaultDim is the dimension d = 25.
	DefaultDim = 25
	// DefaultTau is the o-LBFGS memory size τ = 10.
	DefaultTau = 10
	// DefaultEta is the constant step size η = 0.1 (spec §2).
	DefaultEta = 0.1
	// DefaultCount is the deletion size |U| = 5.
	DefaultCount = 5
	// DefaultProbes is the number of probe vectors m_q = 32.
	DefaultProbes = 32
	// DefaultLambdaZ is the state memory weight λ_Z = 1.
	DefaultLambdaZ = 1.0
	// DefaultKappa is the condition number κ = 10 of the generators
	// (spec §1.2; the grid also uses 100).
	DefaultKappa = 10.0

	// Experiment 1, finite-memory decay: T = 700, t_del = 300, H = 250.
	Exp1T       = 700
	Exp1TDel    = 300
	Exp1Horizon = 250

	// Experiment 2, state-aware benchmark: T = 5000, t_del = 500, H = 4500.
	Exp2T       = 5000
	Exp2TDel    = 500
	Exp2Horizon = 4500
)

// Deletion modes (spec §4), as spelled on the command line and in records.
const (
	ModeRecent       = "recent"
	ModeOld          = "old"
	ModeRandom       = "random"
	ModeHighGradient = "high-gradient"
	// ModeExplicit marks a run whose deletion set was given id by id
	// ([Config.Deleted]); it is never a valid input for Config.Mode.
	ModeExplicit = "explicit"
)

// Modes lists the deletion modes of spec §4 in their canonical order (the
// order of the deletion-mode table).
var Modes = []string{ModeRecent, ModeOld, ModeRandom, ModeHighGradient}

// StreamSpec describes a synthetic stream of spec §1.2 (the generators of
// package stream). The zero value is the paper's drifting quadratic stream
// with d = 25, T = 5000, κ = 10 and seed 0.
type StreamSpec struct {
	// Kind is stream.KindQuadratic or stream.KindLogistic. If empty,
	// defaults to quadratic.
	Kind stream.Kind `json:"kind"`
	// D is the dimension d. If zero, defaults to 25.
	D int `json:"d"`
	// T is the number of events (all inserts, ids 1..T). If zero, defaults
	// to 5000 (Experiment 2).
	T int `json:"T"`
	// Kappa is the condition number κ ≥ 1. If zero, defaults to 10.
	Kappa float64 `json:"kappa"`
	// Seed seeds the generator; every value, zero included, is a seed.
	Seed uint64 `json:"seed"`
	// NoDrift turns curvature (covariance) drift off. The paper's grid has
	// drift on, the default.
	NoDrift bool `json:"no_drift,omitempty"`
	// FeatureScale is the largest eigenvalue s > 0 of the logistic
	// stream's feature covariances (eigenvalues in [s/κ, s]); logistic
	// streams only. If zero, defaults to 1, the paper's unit scale. At
	// s = κ the default learner is unstable and runs are chaotic (the spec
	// §1.2).
	FeatureScale float64 `json:"feature_scale,omitempty"`
	// Data, if set, replaces the generator by a real data set streamed in
	// the order of Seed (see [DataSource] and [DataGrid]): Kind must be the
	// data set's (logistic or regression), D its dimension, T at most its
	// selected rows; Kappa, NoDrift and FeatureScale do not apply.
	Data *DataSource `json:"data,omitempty"`
}

func (s StreamSpec) resolve() StreamSpec {
	if s.Kind == "" {
		s.Kind = stream.KindQuadratic
	}
	setDefault(&s.D, DefaultDim)
	setDefault(&s.T, Exp2T)
	if s.Data == nil {
		setDefault(&s.Kappa, DefaultKappa)
	}
	return s
}

func (s StreamSpec) validate() error {
	if s.Data != nil {
		return s.validateData()
	}
	switch {
	case s.Kind != stream.KindQuadratic && s.Kind != stream.KindLogistic:
		return configErr("Stream.Kind", s.Kind, `must be "quadratic" or "logistic"`)
	case s.D < 2:
		return configErr("Stream.D", s.D, "must be at least 2")
	case s.D > stream.MaxGeneratedDim:
		return configErr("Stream.D", s.D, fmt.Sprintf("must be at most %d (the generators' limit)", stream.MaxGeneratedDim))
	case s.T < 1:
		return configErr("Stream.T", s.T, "must be at least 1")
	case s.T > stream.MaxGeneratedValues/(s.D+6):
		return configErr("Stream.T", s.T, fmt.Sprintf("must be at most %d at d = %d (T·(d+6) ≤ 2^28 generated values)", stream.MaxGeneratedValues/(s.D+6), s.D))
	case !(s.Kappa >= 1) || math.IsInf(s.Kappa, 0):
		return configErr("Stream.Kappa", s.Kappa, "must be finite and at least 1")
	case !(s.FeatureScale >= 0) || math.IsInf(s.FeatureScale, 0):
		return configErr("Stream.FeatureScale", s.FeatureScale, "must be positive and finite (0: the default 1)")
	case s.FeatureScale != 0 && s.Kind != stream.KindLogistic:
		return configErr("Stream.FeatureScale", s.FeatureScale, "applies to logistic streams only")
	}
	return nil
}

// Generate returns the stream the spec describes, from the generators of
// package stream with their other parameters at the paper's defaults.
func (s StreamSpec) Generate() (*stream.History, error) {
	s = s.resolve()
	if err := s.validate(); err != nil {
		return nil, err
	}
	if s.Data != nil {
		h, err := s.Data.load(s.Seed, s.T)
		if err != nil {
			return nil, err
		}
		if h.Header.D != s.D || h.Header.Kind != s.Kind {
			return nil, configErr("Stream.D", s.D, fmt.Sprintf("the data file %s gives a %s stream with d = %d", s.Data.File, h.Header.Kind, h.Header.D))
		}
		return h, nil
	}
	var (
		h   *stream.History
		err error
	)
	switch s.Kind {
	case stream.KindQuadratic:
		h, err = stream.GenerateQuadratic(stream.QuadraticOptions{
			D: s.D, T: s.T, Seed: s.Seed, Kappa: s.Kappa, NoDrift: s.NoDrift,
		})
	default:
		h, err = stream.GenerateLogistic(stream.LogisticOptions{
			D: s.D, T: s.T, Seed: s.Seed, Kappa: s.Kappa, NoDrift: s.NoDrift, FeatureScale: s.FeatureScale,
		})
	}
	if err != nil {
		return nil, fmt.Errorf("experiment: generating the %s stream: %w", s.Kind, err)
	}
	return h, nil
}

// Config is one run: a stream, a deletion at t_del, the learner and the
// metrics' parameters (spec §6, §8). The zero value is a valid Experiment 2
// configuration of the paper (quadratic stream, seed 0); [Experiment1] and
// [Experiment2] return the paper's defaults with every field set.
//
// Conventions (spec §8): events are e_1..e_T, the prefix is e_1..e_{t_del},
// post-deletion state k follows e_{t_del+k} (k = 0 is the state right after
// the intervention), and t_del + H ≤ T.
//
// Defaults are resolved into a private copy; the caller's struct is never
// written. A run record stores the resolved configuration, so it re-runs
// the same experiment.
type Config struct {
	// Stream is the generated stream. Runs on a given history (a stream
	// file) ignore it, except that its Seed is the default of DeletionSeed
	// and ProbeSeed, and their records omit it (Record.Source names the
	// file).
	Stream StreamSpec `json:"stream,omitzero"`
	// TDel is the deletion time t_del ≥ 1: the prefix is e_1..e_{t_del}.
	// If zero, defaults to 500 (Experiment 2).
	TDel int `json:"t_del"`
	// Horizon is H ≥ 1, the number of future events propagated after the
	// intervention. If zero, defaults to T − t_del.
	Horizon int `json:"horizon"`
	// Tau is the o-LBFGS memory size τ ≥ 1. If zero, defaults to 10.
	Tau int `json:"tau"`
	// Eta is the constant step size η > 0. If zero, defaults to 0.1.
	Eta float64 `json:"eta"`
	// Mode is the deletion mode of spec §4 (recent, old, random,
	// high-gradient). If empty, defaults to recent. Ignored when Deleted
	// is set.
	Mode string `json:"mode"`
	// Count is |U| ≥ 1 for a deletion mode. If zero, defaults to 5.
	Count int `json:"count,omitempty"`
	// Deleted, if not empty, is the deletion set U given id by id (each an
	// insert of the prefix); Mode and Count are then ignored and the
	// record's mode is "explicit".
	Deleted []int64 `json:"deleted_ids,omitempty"`
	// DeletionSeed seeds the random deletion mode. If nil, defaults to
	// Stream.Seed.
	DeletionSeed *uint64 `json:"deletion_seed,omitempty"`
	// Probes is the number m_q ≥ 1 of probe vectors of the memory-operator
	// error. If zero, defaults to 32. Ignored when ProbeVectors is set.
	Probes int `json:"probes"`
	// ProbeSeed seeds the probes. If nil, defaults to Stream.Seed.
	ProbeSeed *uint64 `json:"probe_seed,omitempty"`
	// ProbeVectors, if not empty, are the probe vectors themselves (m_q
	// vectors of length d, each of unit norm within align.ProbeNormTol);
	// Probes and ProbeSeed are then ignored.
	ProbeVectors [][]float64 `json:"probe_vectors,omitempty"`
	// LambdaZ is the state memory weight λ_Z ≥ 0 of E_Θ = E_w + λ_Z·E_Z.
	// If nil, defaults to 1.
	LambdaZ *float64 `json:"lambda_z,omitempty"`
}

// Experiment1 returns the defaults of Experiment 1, finite-memory decay
// (spec §6; paper Table "Default experimental configuration"): d = 25,
// T = 700, t_del = 300, H = 250, τ = 10, η = 0.1, |U| = 5 recent
// deletions, m_q = 32, λ_Z = 1, a drifting quadratic stream with κ = 10.
func Experiment1() Config {
	c := Experiment2()
	c.Stream.T, c.TDel, c.Horizon = Exp1T, Exp1TDel, Exp1Horizon
	return c
}

// Experiment2 returns the defaults of Experiment 2, the state-aware
// benchmark (spec §6): d = 25, T = 5000, t_del = 500, H = 4500, τ = 10,
// η = 0.1, |U| = 5 recent deletions, m_q = 32, λ_Z = 1, a drifting
// quadratic stream with κ = 10.
func Experiment2() Config {
	return Config{
		Stream:  StreamSpec{Kind: stream.KindQuadratic, D: DefaultDim, T: Exp2T, Kappa: DefaultKappa},
		TDel:    Exp2TDel,
		Horizon: Exp2Horizon,
		Tau:     DefaultTau,
		Eta:     DefaultEta,
		Mode:    ModeRecent,
		Count:   DefaultCount,
		Probes:  DefaultProbes,
		LambdaZ: new(DefaultLambdaZ),
	}
}

// resolve returns a copy of c with every default filled in, for a stream of
// T events (the generated stream's, or a file's). Slices are copied.
func (c Config) resolve(T int) Config {
	c.Stream = c.Stream.resolve()
	if T <= 0 {
		T = c.Stream.T
	}
	setDefault(&c.TDel, Exp2TDel)
	if c.Horizon == 0 {
		c.Horizon = T - c.TDel
	}
	setDefault(&c.Tau, DefaultTau)
	setDefault(&c.Eta, DefaultEta)
	if len(c.Deleted) > 0 {
		c.Deleted = slices.Clone(c.Deleted)
		slices.Sort(c.Deleted)
		c.Mode, c.Count, c.DeletionSeed = ModeExplicit, 0, nil
	} else {
		if c.Mode == "" {
			c.Mode = ModeRecent
		}
		setDefault(&c.Count, DefaultCount)
		if c.DeletionSeed == nil {
			c.DeletionSeed = new(c.Stream.Seed)
		} else {
			c.DeletionSeed = new(*c.DeletionSeed)
		}
	}
	if len(c.ProbeVectors) > 0 {
		pv := make([][]float64, len(c.ProbeVectors))
		for i, v := range c.ProbeVectors {
			pv[i] = slices.Clone(v)
		}
		c.ProbeVectors = pv
		c.Probes, c.ProbeSeed = len(pv), nil
	} else {
		setDefault(&c.Probes, DefaultProbes)
		if c.ProbeSeed == nil {
			c.ProbeSeed = new(c.Stream.Seed)
		} else {
			c.ProbeSeed = new(*c.ProbeSeed)
		}
	}
	if c.LambdaZ == nil {
		c.LambdaZ = new(DefaultLambdaZ)
	} else {
		c.LambdaZ = new(*c.LambdaZ)
	}
	return c
}

// validate checks a resolved configuration against a stream of T events of
// dimension d. It names the first offending field.
func (c Config) validate(T, d int) error {
	// Every comparison is written so that no sum of user input can
	// overflow: t_del + H ≤ T is tested as H ≤ T − t_del with 1 ≤ t_del < T.
	switch {
	case T < 2:
		return fmt.Errorf("%w: the stream has %d event(s); a run needs at least 2 (a prefix to train on and one future event)", ErrConfig, T)
	case c.TDel < 1:
		return configErr("TDel", c.TDel, "must be at least 1")
	case c.TDel >= T:
		return configErr("TDel", c.TDel, fmt.Sprintf("must be less than T = %d, the number of events of the stream (spec §8: t_del + H ≤ T, H ≥ 1)", T))
	case c.Horizon < 1:
		return configErr("Horizon", c.Horizon, "must be at least 1")
	case c.Horizon > T-c.TDel:
		return configErr("Horizon", c.Horizon, fmt.Sprintf("must be at most T − t_del = %d − %d = %d (spec §8: t_del + H ≤ T)", T, c.TDel, T-c.TDel))
	case c.Tau < 1:
		return configErr("Tau", c.Tau, "must be at least 1")
	case !(c.Eta > 0) || math.IsInf(c.Eta, 0):
		return configErr("Eta", c.Eta, "must be positive and finite")
	case c.Mode != ModeExplicit && !slices.Contains(Modes, c.Mode):
		return configErr("Mode", c.Mode, "must be one of recent, old, random, high-gradient")
	case c.Mode != ModeExplicit && c.Count < 1:
		return configErr("Count", c.Count, "must be at least 1")
	case c.Probes < 1:
		return configErr("Probes", c.Probes, "must be at least 1")
	case !(*c.LambdaZ >= 0) || math.IsInf(*c.LambdaZ, 0):
		return configErr("LambdaZ", *c.LambdaZ, "must be non-negative and finite")
	}
	// The learners' size limit (olbfgs.MaxStateFloats), named by this
	// configuration's field, before the probes' limit, which a huge d
	// would otherwise blame on m_q.
	if err := c.learnerConfig(d).Validate(); err != nil {
		var ce *olbfgs.ConfigError
		if errors.As(err, &ce) && ce.Field == "Memory" {
			return configErr("Tau", c.Tau, ce.Want)
		}
		return fmt.Errorf("%w: %w", ErrConfig, err)
	}
	if len(c.ProbeVectors) == 0 && c.Probes > align.MaxProbeFloats/max(d, 1) {
		if d > align.MaxProbeFloats {
			return fmt.Errorf("%w: d = %d exceeds the probes' limit m_q·d ≤ 2^26 even for m_q = 1", ErrConfig, d)
		}
		return configErr("Probes", c.Probes, fmt.Sprintf("must be at most %d at d = %d (m_q·d ≤ 2^26)", align.MaxProbeFloats/max(d, 1), d))
	}
	if len(c.ProbeVectors) > 0 {
		if err := align.CheckProbes(c.ProbeVectors, d); err != nil {
			return configErr("ProbeVectors", len(c.ProbeVectors), err.Error())
		}
	}
	return nil
}

// learnerConfig is the o-LBFGS configuration of every learner of a run in
// dimension d: spec §2's defaults with the configuration's τ and η.
func (c Config) learnerConfig(d int) olbfgs.Config {
	lcfg := olbfgs.DefaultConfig(d)
	lcfg.Memory, lcfg.StepSize = c.Tau, c.Eta
	return lcfg
}

// Validate reports the first field of c that is out of range once defaults
// are resolved, for the generated stream c.Stream. Runs on a stream file
// are validated against the file when they start.
func (c Config) Validate() error {
	r := c.resolve(0)
	if err := r.Stream.validate(); err != nil {
		return err
	}
	return r.validate(r.Stream.T, r.Stream.D)
}

func configErr(field string, v any, want string) error {
	return &ConfigError{Field: field, Value: v, Want: want}
}

func fmtValue(v any) string { return fmt.Sprint(v) }

func setDefault[T int | float64](p *T, def T) {
	if *p == 0 {
		*p = def
	}
}
