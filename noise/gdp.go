package noise

import (
	"fmt"
	"math"
)

// Gaussian differential privacy (GDP; Dong, Roth & Su, "Gaussian
// Differential Privacy", J. R. Stat. Soc. B 84(1):3–37, 2022; arXiv
// 1905.02383). A mechanism is μ-GDP when distinguishing its outputs on
// neighbouring inputs is at least as hard as telling N(0, 1) from N(μ, 1).
//
//   - The Gaussian mechanism x + N(0, σ²I) with L2 sensitivity α is exactly
//     μ-GDP with μ = α/σ (Theorem 2.7): [GDPMu].
//   - Composition is exact: μ_i-GDP mechanisms compose to
//     sqrt(Σ μ_i²)-GDP (Corollary 3.3), and with adaptively chosen μ_i as
//     well, as long as the sum of squares is held below a fixed budget (the
//     GDP privacy filter of Smith & Thakurta, "Fully Adaptive Composition
//     for Gaussian Differential Privacy", arXiv 2210.17520, 2022):
//     [GDPCompose].
//   - μ-GDP is equivalent to (ε, δ(ε))-DP for every ε ≥ 0 with
//     δ(ε) = Φ(−ε/μ + μ/2) − e^ε·Φ(−ε/μ − μ/2) (Corollary 2.13), the same
//     curve as the analytic Gaussian mechanism of Balle & Wang (2018,
//     Theorem 8): [GDPDelta] and its inverse [GDPEpsilon].
//
// All four round so that the privacy claim is never understated: μ up, δ
// up, ε up.

// GDPMu returns the GDP parameter μ = α/σ of one release x + N(0, σ²I) of a
// vector with L2 sensitivity α (Dong, Roth & Su 2022, Theorem 2.7), rounded
// up: the correctly rounded quotient, moved up one ulp when it is below
// α/σ (checked exactly with an FMA).
//
// α = 0 gives 0 for every σ ≥ 0. Errors (*ArgError): α < 0 or not finite
// (ErrSensitivity); σ < 0 or not finite (ErrSigma); σ = 0 with α > 0, or a
// quotient that overflows (ErrRange: the release is not private at all).
func GDPMu(alpha, sigma float64) (float64, error) {
	const fn = "GDPMu"
	if math.IsNaN(alpha) || math.IsInf(alpha, 0) || alpha < 0 {
		return 0, argErr(fn, "alpha", alpha, ErrSensitivity)
	}
	if math.IsNaN(sigma) || math.IsInf(sigma, 0) || sigma < 0 {
		return 0, argErr(fn, "sigma", sigma, ErrSigma)
	}
	if alpha == 0 {
		return 0, nil
	}
	if sigma == 0 {
		return 0, argErr(fn, "sigma", sigma, ErrRange)
	}
	mu := quoUp(alpha, sigma)
	if math.IsInf(mu, 0) {
		return 0, argErr(fn, "sigma", sigma, ErrRange)
	}
	return mu, nil
}

// quoUp returns a float64 ≥ a/b for a, b > 0 finite: the correctly rounded
// quotient, or the next float64 up when it is below a/b. The residual
// q·b − a is exact by FMA when it does not underflow; otherwise the step up
// is taken anyway.
func quoUp(a, b float64) float64 {
	q := a / b
	if math.IsInf(q, 0) {
		return q
	}
	r := math.FMA(q, b, -a)
	if r < 0 || math.Abs(a) < 0x1p-960 || q < 0x1p-960 {
		q = math.Nextafter(q, math.Inf(1))
	}
	return q
}

// GDPCompose returns μ = sqrt(Σ μ_i²), the GDP parameter of the
// composition of μ_i-GDP mechanisms (Dong, Roth & Su 2022, Corollary 3.3),
// rounded up: every square, partial sum and the root are rounded up, so
// the result is never below the exact value. No arguments give 0.
//
// Errors (*ArgError): a μ_i < 0 or not finite (ErrMu, naming "mu[i]"); a
// sum that overflows (ErrRange).
func GDPCompose(mu ...float64) (float64, error) {
	const fn = "GDPCompose"
	var s float64
	for i, m := range mu {
		if math.IsNaN(m) || math.IsInf(m, 0) || m < 0 {
			return 0, argErr(fn, fmt.Sprintf("mu[%d]", i), m, ErrMu)
		}
		s = addUp(s, mulUp(m, m))
	}
	if math.IsInf(s, 0) {
		return 0, argErr(fn, "mu", s, ErrRange)
	}
	return sqrtUp(s), nil
}

// mulUp returns a float64 ≥ a·b for a, b ≥ 0.
func mulUp(a, b float64) float64 {
	p := a * b
	if p == 0 && a != 0 && b != 0 {
		return 0x1p-1074
	}
	if math.FMA(a, b, -p) > 0 || (p != 0 && p < 0x1p-960) {
		p = math.Nextafter(p, math.Inf(1))
	}
	return p
}

// addUp returns a float64 ≥ a + b for a, b ≥ 0 (TwoSum error term).
func addUp(a, b float64) float64 {
	s := a + b
	if math.IsInf(s, 0) {
		return s
	}
	bb := s - a
	err := (a - (s - bb)) + (b - bb)
	if err > 0 {
		s = math.Nextafter(s, math.Inf(1))
	}
	return s
}

// sqrtUp returns a float64 ≥ sqrt(s) for s ≥ 0.
func sqrtUp(s float64) float64 {
	r := math.Sqrt(s)
	if r != 0 && (math.FMA(r, r, -s) < 0 || r < 0x1p-480) {
		r = math.Nextafter(r, math.Inf(1))
	}
	return r
}

// checkMu validates μ for fn.
func checkMu(fn string, mu float64) error {
	if math.IsNaN(mu) || math.IsInf(mu, 0) || mu < 0 {
		return argErr(fn, "mu", mu, ErrMu)
	}
	return nil
}

// GDPDelta returns an upper bound on δ(ε) of μ-GDP,
//
//	δ(ε) = Φ(−ε/μ + μ/2) − e^ε·Φ(−ε/μ − μ/2)
//
// (Dong, Roth & Su 2022, Corollary 2.13; Balle & Wang 2018, Theorem 8 with
// μ = α/σ): a μ-GDP mechanism is (ε, GDPDelta(μ, ε))-DP. The value is
// computed without the cancellation of the formula as written (see
// delta.go and docs/theory.md §8.1) and is at most a relative 2⁻³² above the
// exact one (plus 2⁻¹⁰⁷² where it is subnormal). μ = 0 gives 0.
//
// Errors (*ArgError): μ < 0 or not finite (ErrMu); ε < 0 or not finite
// (ErrEpsilon). Cost: O(1), at most 120 continued-fraction steps.
func GDPDelta(mu, eps float64) (float64, error) {
	const fn = "GDPDelta"
	if err := checkMu(fn, mu); err != nil {
		return 0, err
	}
	if math.IsNaN(eps) || math.IsInf(eps, 0) || eps < 0 {
		return 0, argErr(fn, "epsilon", eps, ErrEpsilon)
	}
	return deltaUpper(mu, eps), nil
}

// gdpEpsilonAccuracy is the relative width of the bracket GDPEpsilon
// bisects to; its result is the upper end.
const gdpEpsilonAccuracy = 1e-9

// GDPEpsilon returns the smallest ε ≥ 0 with δ(ε) ≤ δ for μ-GDP (the
// inverse of [GDPDelta]; Dong, Roth & Su 2022, Corollary 2.13), rounded
// up: the upper end of a bisection bracket of relative width 10⁻⁹ whose
// upper end satisfies GDPDelta(μ, ε) ≤ δ. Since GDPDelta bounds δ(ε) from
// above, the result is never below the exact ε*; it is at most
// ε*·(1 + 10⁻⁷) + 10⁻⁹ (TestGDPEpsilonExact): the 2⁻³² margin of GDPDelta
// moves ε by about 2⁻³²·δ/|dδ/dε|, which is only visible as an absolute
// error where ε* is near 0. It is 0 when δ(0) = 2Φ(μ/2) − 1 ≤ δ already,
// in particular for μ = 0. δ(ε) decreases in ε, so ε is found by
// bisection, started from the zCDP bound ε ≤ μ²/2 + μ·sqrt(2 ln(1/δ)) (Bun
// & Steinke 2016, Propositions 1.3 and 1.6).
//
// Errors (*ArgError): μ < 0 or not finite (ErrMu); δ ∉ (0, 1) or below
// 2⁻¹⁰²² (ErrDelta); an ε that overflows (ErrRange). Cost: about 30–90
// evaluations of GDPDelta.
func GDPEpsilon(mu, delta float64) (float64, error) {
	const fn = "GDPEpsilon"
	if err := checkMu(fn, mu); err != nil {
		return 0, err
	}
	if math.IsNaN(delta) || delta < minDelta || delta >= 1 {
		return 0, argErr(fn, "delta", delta, ErrDelta)
	}
	if deltaUpper(mu, 0) <= delta {
		return 0, nil
	}
	lo := 0.0
	hi := mu*mu/2 + mu*math.Sqrt(2*math.Log(1/delta))
	for !(deltaUpper(mu, hi) <= delta) {
		if math.IsInf(hi, 0) {
			return 0, argErr(fn, "mu", mu, ErrRange)
		}
		lo = hi
		hi *= 2
	}
	for hi-lo > gdpEpsilonAccuracy*hi {
		mid := lo/2 + hi/2
		if mid <= lo || mid >= hi {
			break // adjacent floats
		}
		if deltaUpper(mu, mid) <= delta {
			hi = mid
		} else {
			lo = mid
		}
	}
	return hi, nil
}
