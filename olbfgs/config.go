package olbfgs

import (
	"errors"
	"fmt"
	"math"

	"unlearn/bound"
	"unlearn/stream"
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
//
// Dimensions. Dim is the feature dimension d: the length of a dense
// payload vector x and the stream header's d. The parameter dimension —
// the length of w and of every curvature pair — is [Config.ParamDim]:
// K·(d + 1) with an intercept, K·d without, K = max(1, Outputs).
type Config struct {
	// Dim is the feature dimension d ≥ 1 (the header's d). Required.
	Dim int
	// Outputs is K, the number of scores per sample of a multinomial loss
	// (its number of classes, 2 ≤ K ≤ stream.MaxClasses), where it is
	// required; 0 for every other loss (one score). It makes the
	// configuration know its parameter dimension ([Config.ParamDim]); New
	// checks it against the loss ([Config.ForLoss] sets it).
	Outputs int
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

	// The fields below are the practitioner's options (docs/spec.md §2.1,
	// the package doc's "Options"): each is part of the state θ, carried by
	// checkpoints, snapshots and replay, and off at its zero value, so
	// DefaultConfig is the paper's learner, bit for bit. Intercept,
	// Standardize and Progress need a loss of a linear model
	// (stream.Linear: logistic, regression, multinomial).

	// Intercept adds one bias b_k per output, u_k = w_kᵀx̃ + b_k. The
	// parameters are then, per output k, its d weights followed by b_k
	// (blocks of d + 1). Defaults to false: no intercept (the paper's
	// model).
	Intercept bool
	// RidgeIntercept applies the ridge (λ/2)b_k² to the intercepts too.
	// Defaults to false: the intercepts are not regularized (a shift of
	// every score by a constant is not penalized).
	RidgeIntercept bool
	// Standardize replaces each feature by x̃_j = (x_j − m_j)·v_j, with m_j
	// the mean and v_j = 1/s_j the inverse standard deviation of feature j
	// over every insert so far, the current one included (Welford's
	// update; v_j = 0 while feature j has not varied). The statistics are
	// part of the state. Defaults to false: raw features.
	Standardize bool
	// Average makes the deployed parameters — what Scores, evaluation and
	// releases use — the Polyak–Ruppert average of the iterates after the
	// first AverageStart inserts (the last iterate before that). The
	// trajectory of w itself does not change. Defaults to false.
	Average bool
	// AverageStart is the number of inserts before averaging begins
	// (a burn-in, ≥ 0). Ignored without Average. Defaults to 0: the average
	// of every iterate.
	AverageStart int
	// AveragePower is γ ≥ 0 of polynomial-decay averaging (Shamir & Zhang
	// 2013, "Stochastic Gradient Descent for Non-smooth Optimization:
	// Convergence Results and Optimal Averaging Schemes", ICML): the k-th
	// averaged iterate enters as w̄ ← w̄ + ρ_k·(w − w̄), ρ_k = (γ+1)/(k+γ),
	// which weighs iterate i about as (i/k)^γ, so the average forgets the
	// early iterates, far from the optimum (and, with Standardize, taken
	// with statistics of few rows) — a tail average that needs no stream
	// length. Needs Average. Defaults to 0: ρ_k = 1/k, the uniform
	// Polyak–Ruppert average.
	AveragePower float64
	// Damping is δ ≥ 0: every curvature pair is formed with
	// y = ∇ℓ_z(w⁺) − ∇ℓ_z(w) + δ·s (δ·s rounded before the addition), the
	// λ ≥ 0 of Schraudolph, Yu & Günter's o-BFGS (2007). It bounds a pair's
	// curvature sᵀy/‖s‖² below by δ, and so the inverse-Hessian scale
	// γ = sᵀy/yᵀy of the newest pair above by 1/δ: a sample whose loss is
	// saturated (a confident logistic margin) has a curvature near λ, and
	// without damping its pair makes γ ≈ 1/λ and the next steps huge.
	// Defaults to 0: the paper's pairs.
	Damping float64
	// StepDecay is a ≥ 0 of the step-size schedule
	// η_t = η·(1 + a·η·t)^(−c), t the number of inserts before the step
	// (Bottou 2012, "Stochastic Gradient Descent Tricks", §5.2 for c = 1;
	// Xu 2011 and Bottou 2012 §5.3 for c = 3/4 with averaging). Defaults
	// to 0: the constant step η.
	StepDecay float64
	// StepPower is the exponent c ∈ (0, 1] of the schedule. Ignored when
	// StepDecay is 0; if 0 with StepDecay > 0, it defaults to 1.
	StepPower float64
	// Progress keeps progressive validation statistics in the state: every
	// insert is scored by the deployed parameters before its step
	// (predict-then-train), and its loss and the correctness of its
	// prediction are accumulated ([Learner.Progress]). It does not change
	// the trajectory. Defaults to false.
	Progress bool
}

// HasOptions reports whether any of the practitioner's options is on, or
// the loss has several outputs: the state then has more than (w, Z) and a
// snapshot of it is in format v2 (SnapshotFormatV2).
func (c Config) HasOptions() bool {
	return c.Outputs != 0 || c.Intercept || c.RidgeIntercept || c.Standardize || c.Average || c.AverageStart != 0 ||
		c.AveragePower != 0 || c.Damping != 0 || c.StepDecay != 0 || c.StepPower != 0 || c.Progress
}

// Affine reports whether the learner forms its scores itself (Intercept or
// Standardize) rather than through the loss's Grad.
func (c Config) Affine() bool { return c.Intercept || c.Standardize }

// outputs returns K ≥ 1.
func (c Config) outputs() int { return max(c.Outputs, 1) }

// stride returns the length of one output's block of parameters: d, or
// d + 1 with an intercept.
func (c Config) stride() int {
	if c.Intercept {
		return c.Dim + 1
	}
	return c.Dim
}

// ParamDim returns the parameter dimension: the length of w and of every
// curvature pair, K·(d + 1) with an intercept and K·d without
// (K = max(1, Outputs)).
func (c Config) ParamDim() int { return c.outputs() * c.stride() }

// stepPower returns the schedule's exponent c, with its default of 1.
func (c Config) stepPower() float64 {
	if c.StepPower == 0 {
		return 1
	}
	return c.StepPower
}

// StepAt returns the step size η_t of the insert that follows t earlier
// inserts: η for the constant schedule (StepDecay = 0); for c = 1 the
// schedule of the certified bound, η/(1 + a·η·t) — [Config.Schedule]'s
// bound.Schedule.At, the one evaluation both use (a = λ_η of
// docs/theory.md §16: η(t) = η₀/(1 + η₀λ_η·t) with η₀ = η); else
// η·(1 + a·η·t)^(−c), evaluated in float64 as
//
//	η · math.Pow(1 + (a·η)·t, −c)
//
// (each operation rounded, in this order; t converted exactly). It is
// non-increasing in t and at most η.
func (c Config) StepAt(t int) float64 {
	if c.StepDecay == 0 {
		return c.StepSize
	}
	if c.stepPower() == 1 {
		s, _ := c.Schedule()
		return s.At(t)
	}
	return c.StepSize * math.Pow(1+float64((c.StepDecay*c.StepSize)*float64(t)), -c.stepPower()) // no fused multiply-add: the same bits on every GOAMD64 level
}

// Schedule returns the step schedule as the certified bound states it,
// η(t) = η₀/(1 + η₀·λ_η·t) with η₀ = StepSize and λ_η = StepDecay (the
// learner's a), and whether the learner's schedule is of that form: a
// constant step, or StepPower c = 1. The exponent c < 1 of the
// practitioner's profile has no such form (ok = false).
func (c Config) Schedule() (s bound.Schedule, ok bool) {
	return bound.Schedule{Eta0: c.StepSize, Decay: c.StepDecay}, c.StepDecay == 0 || c.stepPower() == 1
}

// ForLoss returns c with Dim and Outputs set from the loss: its feature
// dimension, and its number of outputs when it has several (multinomial).
func (c Config) ForLoss(loss stream.Loss) Config {
	c.Dim = loss.Dim()
	c.Outputs = 0
	if k := stream.Outputs(loss); k > 1 {
		c.Outputs = k
	}
	return c
}

// stateFloats returns the learner's size in 8-byte words with a full
// memory of tau pairs: 7 work vectors and each pair's 2 vectors and 10
// words of bookkeeping at the parameter dimension p, and for the options
// the averaged iterate (p), the standardization's statistics and scratch
// (6d) and the scores' scratch (4K).
func (c Config) stateFloats(tau int) int {
	p, d := c.ParamDim(), c.Dim
	n := 7*p + tau*(2*p+10)
	if c.Average {
		n += p
	}
	if c.Standardize {
		n += 6 * d
	}
	if c.HasOptions() {
		n += 4 * c.outputs()
	}
	return n
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

// MaxStateFloats bounds the size of a learner in 8-byte words: at the
// parameter dimension p its work vectors take 7p and each of the τ pairs
// 2p + 10 (the two vectors and the per-pair bookkeeping), plus what the
// options keep (Config.Average: p; Standardize: 6d), and Validate rejects
// a configuration whose full learner would need more than 2³⁰ words
// (8 GiB) rather than let it fail in the allocator. (A large memory is
// allocated as pairs arrive, see Memory, so a learner that has stored few
// pairs is small whatever τ is.)
const MaxStateFloats = 1 << 30

// maxMemory returns the largest τ that Validate accepts for c's
// dimensions.
func (c Config) maxMemory() int {
	p := c.ParamDim()
	return (MaxStateFloats - c.stateFloats(0)) / (2*p + 10)
}

// Validate reports the first field out of range as a *ConfigError.
func (c Config) Validate() error {
	bad := func(field, symbol string, v any, want string) error {
		return &ConfigError{Field: field, Symbol: symbol, Value: v, Want: want}
	}
	switch {
	case c.Dim < 1:
		return bad("Dim", "d", c.Dim, "must be at least 1")
	case c.Outputs != 0 && (c.Outputs < 2 || c.Outputs > stream.MaxClasses):
		return bad("Outputs", "K", c.Outputs, fmt.Sprintf("must be 0 (one score) or a number of classes in [2, %d]", stream.MaxClasses))
	case c.Dim > MaxStateFloats/7 || c.stateFloats(0) > MaxStateFloats:
		return bad("Dim", "d", c.Dim, fmt.Sprintf("must be at most %d (a learner takes 7p + τ(2p+10) words at the parameter dimension p = %d, at most 2^30 words)", MaxStateFloats/7/c.outputs(), c.ParamDim()))
	case c.Memory < 0:
		return bad("Memory", "tau", c.Memory, "must be non-negative")
	case c.Memory > c.maxMemory():
		return bad("Memory", "tau", c.Memory, fmt.Sprintf("must be at most %d at d = %d (a learner takes 7p + τ(2p+10) words at the parameter dimension p = %d, at most 2^30 words)", c.maxMemory(), c.Dim, c.ParamDim()))
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
		return bad("PairMin", "pair curvature min", c.PairMin, "must be positive and finite with the pair guard (pair_angle > 0)")
	case c.PairAngle > 0 && (!(c.PairMax >= c.PairMin) || math.IsInf(c.PairMax, 0)):
		return bad("PairMax", "pair curvature max", c.PairMax, "must be finite and at least pair_min with the pair guard (pair_angle > 0)")
	// Unused without the guard, but a NaN would make the configuration
	// unequal to itself (Learner.Equal, CopyFrom compare configurations).
	case !(c.PairMin >= 0) || math.IsInf(c.PairMin, 0):
		return bad("PairMin", "pair curvature min", c.PairMin, "must be non-negative and finite")
	case !(c.PairMax >= 0) || math.IsInf(c.PairMax, 0):
		return bad("PairMax", "pair curvature max", c.PairMax, "must be non-negative and finite")
	case c.RidgeIntercept && !c.Intercept:
		return bad("RidgeIntercept", "intercept ridge", c.RidgeIntercept, "needs intercept")
	case c.AverageStart < 0:
		return bad("AverageStart", "averaging start", c.AverageStart, "must be non-negative")
	case c.AverageStart != 0 && !c.Average:
		return bad("AverageStart", "averaging start", c.AverageStart, "needs average")
	case !(c.AveragePower >= 0) || math.IsInf(c.AveragePower, 0):
		return bad("AveragePower", "gamma", c.AveragePower, "must be non-negative and finite (0: the uniform average)")
	case c.AveragePower != 0 && !c.Average:
		return bad("AveragePower", "gamma", c.AveragePower, "needs average")
	case !(c.Damping >= 0) || math.IsInf(c.Damping, 0):
		return bad("Damping", "delta", c.Damping, "must be non-negative and finite (0: no damping)")
	case !(c.StepDecay >= 0) || math.IsInf(c.StepDecay, 0):
		return bad("StepDecay", "a", c.StepDecay, "must be non-negative and finite (0: constant step)")
	case c.StepPower != 0 && c.StepDecay == 0:
		return bad("StepPower", "c", c.StepPower, "needs step_decay > 0")
	case !(c.StepPower >= 0) || c.StepPower > 1:
		return bad("StepPower", "c", c.StepPower, "must be in (0, 1] (0: 1)")
	}
	return nil
}

// The practitioner's profile (docs/spec.md §2.1, "Profiles"): the options
// and defaults that train a model worth deploying on raw features without
// tuning — measured on Fashion-MNIST's raw pixels (two and ten classes)
// and scikit-learn's breast-cancer CSV (docs/results-real.md).
const (
	// PractitionerStepSize is the profile's η.
	PractitionerStepSize = 0.1
	// PractitionerDamping is the profile's pair damping δ.
	PractitionerDamping = 10
	// PractitionerStepDecay is the profile's schedule decay a: the step
	// falls as η_t = η·(1 + t/t₀)^(−3/4) with t₀ = 1/(a·η) ≈ 3333 inserts
	// (a = 0.003, the profile's λ: Bottou's a = λ).
	PractitionerStepDecay = 0.003
	// PractitionerAveragePower is the profile's γ of polynomial-decay
	// averaging.
	PractitionerAveragePower = 10
	// PractitionerStepPower is the profile's schedule exponent c = 3/4
	// (Xu 2011; Bottou 2012, §5.3, for averaged SGD).
	PractitionerStepPower = 0.75
	// PractitionerLambda is the ridge λ the profile recommends for a data
	// set's loss (the CLI's --lambda default under --profile practitioner).
	PractitionerLambda = 3e-3
)

// Practitioner returns c with the practitioner's profile on: an intercept
// (not regularized), online standardization, polynomial-decay averaging of
// the iterates with γ = PractitionerAveragePower, pair damping
// δ = PractitionerDamping, the step η = PractitionerStepSize decaying as
// η_t = η·(1 + a·η·t)^(−3/4) with a = PractitionerStepDecay (the exponent of
// averaged SGD, Xu 2011), and progressive statistics. The other fields (τ, γ0, the certifiable
// options) are kept. The values were chosen on Fashion-MNIST's raw pixels
// (two and ten classes) and scikit-learn's breast-cancer CSV: test
// accuracy and its spread over shuffled orders (docs/results-real.md).
func (c Config) Practitioner() Config {
	c.Intercept, c.RidgeIntercept, c.Standardize = true, false, true
	c.Average, c.AverageStart, c.AveragePower, c.Progress = true, 0, PractitionerAveragePower, true
	c.Damping, c.StepSize = PractitionerDamping, PractitionerStepSize
	c.StepDecay, c.StepPower = PractitionerStepDecay, PractitionerStepPower
	return c
}
