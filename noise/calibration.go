package noise

import (
	"fmt"
	"math"
)

// Calibration selects how σ is computed from (α, ε, δ).
//
// The zero value is [Analytic], the default.
type Calibration int

const (
	// Analytic is the analytic Gaussian mechanism of Balle & Wang (2018),
	// tight for every ε > 0 and conservative in floating point. See
	// [SigmaAnalytic].
	Analytic Calibration = iota
	// Classic is σ = α·sqrt(2 ln(1.25/δ))/ε of Dwork & Roth (2014),
	// Theorem A.1, valid only for 0 < ε < 1. See [SigmaClassic].
	Classic
)

// String returns "analytic" or "classic" (the names [ParseCalibration]
// accepts), or "Calibration(n)" for an unknown value.
func (c Calibration) String() string {
	switch c {
	case Analytic:
		return "analytic"
	case Classic:
		return "classic"
	}
	return fmt.Sprintf("Calibration(%d)", int(c))
}

// ParseCalibration returns the calibration named s ("analytic" or
// "classic"). Other names give an error wrapping ErrCalibration (not an
// *ArgError: the refused value is a name, not a number).
func ParseCalibration(s string) (Calibration, error) {
	switch s {
	case "analytic":
		return Analytic, nil
	case "classic":
		return Classic, nil
	}
	return 0, fmt.Errorf("noise: ParseCalibration: %q: %w", s, ErrCalibration)
}

// MarshalText implements encoding.TextMarshaler, so a Calibration appears in
// JSON (e.g. a certificate) by name. Unknown values are an error.
func (c Calibration) MarshalText() ([]byte, error) {
	if c != Analytic && c != Classic {
		return nil, fmt.Errorf("noise: MarshalText: %d: %w", int(c), ErrCalibration)
	}
	return []byte(c.String()), nil
}

// UnmarshalText implements encoding.TextUnmarshaler with [ParseCalibration].
func (c *Calibration) UnmarshalText(b []byte) error {
	v, err := ParseCalibration(string(b))
	if err != nil {
		return err
	}
	*c = v
	return nil
}

// minEpsilonAnalytic is the smallest ε the analytic calibration accepts,
// 2⁻⁵⁰ (the DP library's own limit, checks.CheckEpsilonVeryStrict). The
// evaluation of δ in delta.go has no trouble below it; the limit keeps σ
// (≈ 0.8·sqrt(ln(1/δ))/ε and more) in a range where a release means
// something, and is where the tests' high-precision grid starts.
var minEpsilonAnalytic = math.Exp2(-50)

// minDelta is the smallest δ accepted, the smallest normal float64
// 2⁻¹⁰²². Below it δ itself has no relative precision in float64. (The DP
// library's own δ(σ) underflows there: at ε = 1, δ = 5e-324 its σ is 38.28
// against the exact 38.29.)
const minDelta = 0x1p-1022

// checkArgs validates the arguments shared by every calibration.
func checkArgs(fn string, alpha, epsilon, delta float64) error {
	if math.IsNaN(alpha) || math.IsInf(alpha, 0) || alpha < 0 {
		return argErr(fn, "alpha", alpha, ErrSensitivity)
	}
	if math.IsNaN(epsilon) || math.IsInf(epsilon, 0) || epsilon <= 0 {
		return argErr(fn, "epsilon", epsilon, ErrEpsilon)
	}
	if math.IsNaN(delta) || delta < minDelta || delta >= 1 {
		return argErr(fn, "delta", delta, ErrDelta)
	}
	return nil
}

// SigmaClassic returns the noise scale of the classic Gaussian mechanism,
//
//	σ = α·sqrt(2 ln(1.25/δ)) / ε,
//
// which makes the release x + N(0, σ²I) of a vector x with L2 sensitivity α
// (ε, δ)-differentially private for 0 < ε < 1 (Dwork & Roth, "The
// Algorithmic Foundations of Differential Privacy", 2014, Theorem A.1, p.
// 261). It is the calibration of the paper's Definition "(ε,δ)-State
// Certified Unlearning" and Theorem "o-LBFGS Unlearning Certificate".
//
// α = 0 is allowed and gives σ = 0: a state that equals its counterfactual
// (exact unlearning) needs no noise. The result is inflated by a relative
// 2⁻⁴⁸ to cover floating-point round-off, so it is never below the exact
// value of the formula.
//
// Errors (*ArgError): α < 0 or not finite (ErrSensitivity); ε ≤ 0 or not
// finite (ErrEpsilon); ε ≥ 1 (ErrClassicEpsilon: the theorem does not hold
// there, use [Analytic]); δ ∉ (0, 1) or below 2⁻¹⁰²², the limit shared with
// [SigmaAnalytic] (ErrDelta); a σ that overflows (ErrRange). Cost: O(1).
func SigmaClassic(alpha, epsilon, delta float64) (float64, error) {
	const fn = "SigmaClassic"
	if err := checkArgs(fn, alpha, epsilon, delta); err != nil {
		return 0, err
	}
	if epsilon >= 1 {
		return 0, argErr(fn, "epsilon", epsilon, ErrClassicEpsilon)
	}
	if alpha == 0 {
		return 0, nil
	}
	s := alpha * math.Sqrt(2*math.Log(1.25/delta)) / epsilon
	if math.IsInf(s, 0) {
		return 0, argErr(fn, "alpha", alpha, ErrRange)
	}
	// Round-off: 1.25/δ, ×α, /ε and the square root are correctly rounded
	// (≤ 2⁻⁵³ relative each) and math.Log is within 1 ulp; since
	// ln(1.25/δ) > ln 1.25 ≈ 0.22, the error of 1.25/δ is amplified at most
	// 4.5-fold in the logarithm. The total relative error is below
	// 8·2⁻⁵³ ≈ 9e-16; inflating by 2⁻⁴⁸ ≈ 3.6e-15 makes σ an upper bound.
	s *= 1 + 0x1p-48
	return s, nil
}

// SigmaAnalytic returns the noise scale of the analytic Gaussian mechanism
// of Balle & Wang ("Improving the Gaussian Mechanism for Differential
// Privacy: Analytical Calibration and Optimal Denoising", ICML 2018,
// Theorem 8): the smallest σ with
//
//	Φ(α/(2σ) − εσ/α) − e^ε·Φ(−α/(2σ) − εσ/α) ≤ δ,
//
// rounded up, for every accepted argument: the result is never below the
// exact σ and at most 0.1% above it. It is valid for every ε > 0 and never
// larger than [SigmaClassic] where both apply.
//
// The left side is δ(μ, ε) of [GDPDelta] at μ = α/σ; it depends on σ/α
// only, so the exact σ is linear in α. SigmaAnalytic bisects for
// q = σ/α at α = 1 exactly as the Google DP library's SigmaForGaussian
// does (start at 1, double until the condition holds, halve the bracket
// until its relative width is below 10⁻³, return its upper end), but tests
// the condition with the cancellation-free upper bound on δ of
// [GDPDelta] (docs/theory.md §8.1) at μ = 1/σ rounded up. The library's own
// test evaluates the formula as written, which cancels for small ε: at
// ε = 2⁻⁵⁰ its σ is 0.046 times the exact one. Every upper end therefore
// satisfies the exact condition, so q ≥ the exact value; and every lower
// end violates it up to the 2⁻³² margin of the bound, so q is within the
// bracket's 10⁻³ of the exact value. Where the library's evaluation is
// accurate (ε ≳ 10⁻³) the two bisections take the same steps and return
// the same float64 (3.7324… at α = 1, ε = 1, δ = 10⁻⁵).
//
// SigmaAnalytic returns q·α rounded up to the next float64: exactly
// monotone in α, never below the exact q·α. It is monotone in δ exactly
// (for δ₁ < δ₂ the two bisections take the same steps until the first
// where only δ₁'s goes up, after which its bracket lies above) and in ε
// wherever the bound on δ(μ, ε) is non-increasing in ε in floating point
// (checked by TestSigmaMonotone).
//
// α = 0 is allowed and gives σ = 0 (exact unlearning needs no noise).
//
// Errors (*ArgError): α < 0 or not finite (ErrSensitivity); ε not finite
// or ε < 2⁻⁵⁰ (ErrEpsilon); δ ∉ (0, 1) or δ below the smallest normal
// float64 2⁻¹⁰²² (ErrDelta); a σ that overflows (ErrRange).
//
// Cost: O(log(1/10⁻³) + |log σ|) evaluations of δ, each at most 120
// continued-fraction steps: 1.6–9 µs measured (BenchmarkSigmaAnalytic;
// the library's own bisection took 0.4 µs).
func SigmaAnalytic(alpha, epsilon, delta float64) (float64, error) {
	const fn = "SigmaAnalytic"
	if err := checkArgs(fn, alpha, epsilon, delta); err != nil {
		return 0, err
	}
	if epsilon < minEpsilonAnalytic {
		return 0, argErr(fn, "epsilon", epsilon, ErrEpsilon)
	}
	if alpha == 0 {
		return 0, nil
	}
	q := analyticSigmaUnit(epsilon, delta)
	if !(q > 0) || math.IsInf(q, 0) {
		return 0, argErr(fn, "epsilon", epsilon, ErrRange)
	}
	s := math.Nextafter(alpha*q, math.Inf(1))
	if !(s > 0) || math.IsInf(s, 0) {
		return 0, argErr(fn, "alpha", alpha, ErrRange)
	}
	return s, nil
}

// analyticAccuracy is the relative width of the bracket SigmaAnalytic
// bisects to: the DP library's gaussianSigmaAccuracy.
const analyticAccuracy = 1e-3

// analyticSigmaUnit returns the analytic σ at α = 1 for valid (ε, δ): the
// DP library's bisection (SigmaForGaussian in gaussian_noise.go, v3.0.0)
// with its δ test replaced by the upper bound deltaUpper at μ = 1/σ
// rounded up.
func analyticSigmaUnit(epsilon, delta float64) float64 {
	tooSmall := func(sigma float64) bool { return deltaUpper(quoUp(1, sigma), epsilon) > delta }
	upper, lower := 1.0, 0.0
	for tooSmall(upper) {
		lower = upper
		upper *= 2
		if math.IsInf(upper, 0) {
			return upper
		}
	}
	for upper-lower > analyticAccuracy*lower {
		middle := lower*0.5 + upper*0.5
		if middle <= lower || middle >= upper {
			break // adjacent floats (σ near the bottom of the range)
		}
		if tooSmall(middle) {
			lower = middle
		} else {
			upper = middle
		}
	}
	return upper
}

// Sigma dispatches to [SigmaAnalytic] or [SigmaClassic]. An unknown
// calibration gives an *ArgError wrapping ErrCalibration.
func Sigma(c Calibration, alpha, epsilon, delta float64) (float64, error) {
	switch c {
	case Analytic:
		return SigmaAnalytic(alpha, epsilon, delta)
	case Classic:
		return SigmaClassic(alpha, epsilon, delta)
	}
	return 0, argErr("Sigma", "calibration", float64(c), ErrCalibration)
}
