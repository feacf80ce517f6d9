package noise

import (
	"fmt"
	"math"

	dpnoise "github.com/google/differential-privacy/go/v3/noise"
)

// Calibration selects how σ is computed from (α, ε, δ).
//
// The zero value is [Analytic], the default.
type Calibration int

const (
	// Analytic is the analytic Gaussian mechanism of Balle & Wang (2018),
	// computed by the Google DP library; tight for every ε > 0. See
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

// minEpsilonAnalytic is the DP library's own lower limit on ε
// (checks.CheckEpsilonVeryStrict: ε ≥ 2⁻⁵⁰). Below it the library's
// bisection for σ may not terminate in reasonable time.
var minEpsilonAnalytic = math.Exp2(-50)

// minDelta is the smallest normal float64, 2⁻¹⁰²². Below it the library's
// δ(σ) underflows: measured at ε = 1, δ = 5e-324 it returns σ = 38.28 while
// the exact value (mpmath bisection on Balle–Wang Theorem 8) is 38.29 — not
// conservative. At δ = 1e-300 it is still correct (36.875 ≥ 36.8655).
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
// computed by the Google DP library's noise.SigmaForGaussian, whose
// bisection returns the upper end of a bracket of relative width 10⁻³: the
// result is ≥ the exact σ and at most 0.1% above it. It is valid for every
// ε > 0 and never larger than [SigmaClassic] where both apply.
//
// The exact σ is linear in α (δ(σ) depends on σ/α only), and so is the
// library's bisection, which compares only ratios σ/α: its value at α
// equals α times its value at α = 1 up to round-off. SigmaAnalytic returns
// q·α rounded up to the next float64, with q = SigmaForGaussian(1, 1, ε, δ):
// the library's value to within one ulp (checked by the tests), exactly
// monotone in α, ε and δ, never below the exact q·α, and free of the
// precision loss the library's own bisection would suffer at an α near the
// ends of the float64 range.
//
// The library validates nothing (NaN ε gives σ = 0; negative ε never
// returns), so every argument is checked first and the result is checked to
// be positive and finite after.
//
// α = 0 is allowed and gives σ = 0 (exact unlearning needs no noise).
//
// Errors (*ArgError): α < 0 or not finite (ErrSensitivity); ε not finite or
// ε < 2⁻⁵⁰, the library's own limit (ErrEpsilon); δ ∉ (0, 1) or δ below the
// smallest normal float64 2⁻¹⁰²², where the library's δ(σ) underflows and
// its σ is no longer conservative (ErrDelta); a σ that overflows or cannot
// be computed, e.g. for ε > 709 where e^ε overflows (ErrRange).
//
// Cost: O(log(1/10⁻³) + |log σ|) evaluations of Φ, about 0.4–1.4 µs.
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
	q := dpnoise.SigmaForGaussian(1, 1, epsilon, delta)
	if !(q > 0) || math.IsInf(q, 0) {
		return 0, argErr(fn, "epsilon", epsilon, ErrRange)
	}
	s := math.Nextafter(alpha*q, math.Inf(1))
	if !(s > 0) || math.IsInf(s, 0) {
		return 0, argErr(fn, "alpha", alpha, ErrRange)
	}
	return s, nil
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
