package olbfgs

import (
	"errors"
	"fmt"
	"math"
)

// Errors returned by this package; test for them with errors.Is.
var (
	// ErrConfig: a configuration field is out of range.
	ErrConfig = errors.New("invalid o-LBFGS configuration")
	// ErrDiverged: a step produced a non-finite parameter vector.
	ErrDiverged = errors.New("o-LBFGS diverged: non-finite parameters")
	// ErrEvent: an event the learner cannot apply (wrong dimension, repeated
	// deletion, unknown op).
	ErrEvent = errors.New("invalid event for the learner")
	// ErrNoCheckpoint: the requested past state is not covered by the kept
	// checkpoints.
	ErrNoCheckpoint = errors.New("state not covered by checkpoints")
	// ErrSnapshot: a malformed or inconsistent state snapshot.
	ErrSnapshot = errors.New("invalid state snapshot")
)

// Default values of spec §2.
const (
	DefaultMemory       = 10
	DefaultStepSize     = 0.1
	DefaultInitialScale = 1.0
	// DefaultCurvatureTol is the relative curvature guard: a pair is stored
	// only when sᵀy > DefaultCurvatureTol·‖s‖·‖y‖.
	DefaultCurvatureTol = 1e-10
)

// Config holds the parameters of the o-LBFGS learner (spec §2). Start from
// [DefaultConfig]: the zero value is not valid (its step size is 0) because
// Memory = 0 is a meaningful setting (no curvature memory: the learner is
// then SGD with step η·γ0).
type Config struct {
	// Dim is the dimension d ≥ 1. Required.
	Dim int
	// Memory is τ ≥ 0, the maximum number of curvature pairs kept.
	// DefaultConfig sets 10.
	Memory int
	// StepSize is the constant step η > 0. DefaultConfig sets 0.1.
	StepSize float64
	// InitialScale is γ0 > 0, the scale of the initial inverse Hessian γ0·I
	// used while the memory is empty. DefaultConfig sets 1.
	InitialScale float64
	// CurvatureTol is the relative tolerance c ≥ 0 of the curvature guard
	// sᵀy > c·‖s‖·‖y‖. DefaultConfig sets 1e-10.
	CurvatureTol float64

	// The fields below make the learner certifiable (docs/theory.md,
	// "The certifiable learner"): they turn the paper's assumed constants
	// into quantities the learner enforces. Each is off at its zero value,
	// so DefaultConfig is the spec §2 learner of the benchmark, unchanged.

	// Radius is W ≥ 0. If positive, every insert ends by projecting w onto
	// the ball ‖w‖₂ ≤ W (w ← w·W/‖w‖ when ‖w‖ > W), a non-expansive map, so
	// every state the learner reaches lies in the ball (up to the round-off
	// of [Config.RadiusBound]). This proves a gradient bound G for every
	// loss with a bounded payload (see SampleBound) and the diameter bound
	// ‖w̃ − w⁻‖ ≤ 2W for any two states. Defaults to 0: no projection.
	Radius float64
	// SampleBound is B ≥ 0. If positive, an insert whose payload vector
	// (x for logistic, a for quadratic) has ‖·‖₂ > B is refused with an
	// error wrapping ErrSampleBound instead of being applied: the learner
	// enforces the data bound its certificates rest on. Defaults to 0: no
	// bound.
	SampleBound float64
	// PairAngle is r̄ ∈ [0, 1). If positive, the pair guard is on: a
	// curvature pair (s, y) is stored only if PairMin ≤ sᵀy/‖s‖² ≤ PairMax
	// and tan∠(s, y) ≤ r̄, tested conservatively (the exact values of the
	// stored float vectors satisfy the bounds, whatever the round-off of
	// the test). Every H_Z then has its spectrum in the interval
	// [Config.SpectralBounds] (docs/theory.md, "Spectral bounds of a guarded
	// memory"). Defaults to 0: no pair guard beyond CurvatureTol.
	PairAngle float64
	// PairMin and PairMax are the curvature window 0 < μ̄ ≤ L̄ < ∞ of the
	// pair guard. Required when PairAngle > 0, ignored otherwise.
	PairMin, PairMax float64
}

// Certifiable reports whether any certifiable option is set (Radius,
// SampleBound or the pair guard): the learner then also checks every
// payload with the loss's CheckSample before applying it.
func (c Config) Certifiable() bool { return c.Radius > 0 || c.SampleBound > 0 || c.PairAngle > 0 }

// Guarded reports whether the pair guard is on (PairAngle > 0).
func (c Config) Guarded() bool { return c.PairAngle > 0 }

// DefaultConfig returns the spec §2 defaults for dimension d:
// τ = 10, η = 0.1, γ0 = 1, curvature tolerance 1e-10.
func DefaultConfig(d int) Config {
	return Config{
		Dim:          d,
		Memory:       DefaultMemory,
		StepSize:     DefaultStepSize,
		InitialScale: DefaultInitialScale,
		CurvatureTol: DefaultCurvatureTol,
	}
}

// ConfigError reports a configuration field out of range. It matches
// ErrConfig with errors.Is.
type ConfigError struct {
	// Field is the Config field name ("Dim", "Memory", "StepSize",
	// "InitialScale", "CurvatureTol").
	Field string
	// Symbol is the paper's symbol for the field ("d", "tau", "eta", …).
	Symbol string
	Value  any
	// Want says what the field must be.
	Want string
}

func (e *ConfigError) Error() string {
	return fmt.Sprintf("%v: %s (%s) = %v: %s", ErrConfig, e.Field, e.Symbol, e.Value, e.Want)
}

// Is makes errors.Is(err, ErrConfig) true.
func (e *ConfigError) Is(target error) bool { return target == ErrConfig }

// MaxStateFloats bounds the size of a learner in 8-byte words: its work
// vectors take 7d and each of the τ pairs 2d + 10 (the two vectors and the
// per-pair bookkeeping), and Validate rejects a configuration whose full
// learner would need more than 2³⁰ words (8 GiB) rather than let it fail in
// the allocator. (A large memory is allocated as pairs arrive, see Memory,
// so a learner that has stored few pairs is small whatever τ is.)
const MaxStateFloats = 1 << 30

// maxMemory returns the largest τ that Validate accepts at dimension d.
func maxMemory(d int) int { return (MaxStateFloats - 7*d) / (2*d + 10) }

// Validate reports the first field out of range as a *ConfigError.
func (c Config) Validate() error {
	bad := func(field, symbol string, v any, want string) error {
		return &ConfigError{Field: field, Symbol: symbol, Value: v, Want: want}
	}
	switch {
	case c.Dim < 1:
		return bad("Dim", "d", c.Dim, "must be at least 1")
	case c.Dim > MaxStateFloats/7:
		return bad("Dim", "d", c.Dim, fmt.Sprintf("must be at most %d (a learner takes 7d + τ(2d+10) words, at most MaxStateFloats = 2^30)", MaxStateFloats/7))
	case c.Memory < 0:
		return bad("Memory", "tau", c.Memory, "must be non-negative")
	case c.Memory > maxMemory(c.Dim):
		return bad("Memory", "tau", c.Memory, fmt.Sprintf("must be at most %d at d = %d (a learner takes 7d + τ(2d+10) words, at most MaxStateFloats = 2^30)", maxMemory(c.Dim), c.Dim))
	case !(c.StepSize > 0) || math.IsInf(c.StepSize, 0):
		return bad("StepSize", "eta", c.StepSize, "must be positive and finite")
	case !(c.InitialScale > 0) || math.IsInf(c.InitialScale, 0):
		return bad("InitialScale", "gamma0", c.InitialScale, "must be positive and finite")
	case !(c.CurvatureTol >= 0) || math.IsInf(c.CurvatureTol, 0):
		return bad("CurvatureTol", "curvature tolerance", c.CurvatureTol, "must be non-negative and finite")
	case !(c.Radius >= 0) || math.IsInf(c.Radius, 0):
		return bad("Radius", "W", c.Radius, "must be non-negative and finite (0: no projection)")
	case !(c.SampleBound >= 0) || math.IsInf(c.SampleBound, 0):
		return bad("SampleBound", "B", c.SampleBound, "must be non-negative and finite (0: no bound)")
	case !(c.PairAngle >= 0) || c.PairAngle >= 1:
		return bad("PairAngle", "pair angle", c.PairAngle, "must be in [0, 1) (0: no pair guard)")
	case c.PairAngle > 0 && (!(c.PairMin > 0) || math.IsInf(c.PairMin, 0)):
		return bad("PairMin", "pair curvature min", c.PairMin, "must be positive and finite with the pair guard (PairAngle > 0)")
	case c.PairAngle > 0 && (!(c.PairMax >= c.PairMin) || math.IsInf(c.PairMax, 0)):
		return bad("PairMax", "pair curvature max", c.PairMax, "must be finite and at least PairMin with the pair guard (PairAngle > 0)")
	// Unused without the guard, but a NaN would make the configuration
	// unequal to itself (Learner.Equal, CopyFrom compare configurations).
	case !(c.PairMin >= 0) || math.IsInf(c.PairMin, 0):
		return bad("PairMin", "pair curvature min", c.PairMin, "must be non-negative and finite")
	case !(c.PairMax >= 0) || math.IsInf(c.PairMax, 0):
		return bad("PairMax", "pair curvature max", c.PairMax, "must be non-negative and finite")
	}
	return nil
}
