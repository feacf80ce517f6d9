package noise

import "math"

// This file holds the one implementation of the privacy profile of the
// Gaussian mechanism,
//
//	δ(μ, ε) = Φ(−ε/μ + μ/2) − e^ε·Φ(−ε/μ − μ/2),                      (1)
//
// which is Balle & Wang's (ICML 2018, Theorem 8) condition with μ = α/σ and
// Dong, Roth & Su's (JRSS-B 2022, Corollary 2.13) δ(ε) of μ-GDP. Every
// caller (SigmaAnalytic, GDPDelta, GDPEpsilon) goes through deltaUpper.
//
// # Why not evaluate (1) as written
//
// For small ε the two terms of (1) agree to almost all their digits: at
// ε = 10⁻¹⁵, δ = 10⁻³⁰⁰ the exact σ is 3.59·10¹⁶, μ = 2.8·10⁻¹⁷, and
// Φ(−x) and e^ε·Φ(−y) differ in their 18th significant digit, so a float64
// evaluation returns noise and a bisection on it a σ 20 times too small.
//
// # The stable form
//
// Write x = ε/μ − μ/2 and y = x + μ = ε/μ + μ/2 (so y² − x² = 2ε), φ the
// standard normal density and R(s) = Φ(−s)/φ(s) Mills' ratio. Since
// e^ε·φ(y) = φ(x),
//
//	δ = φ(x)·D,   D = R(x) − R(y) = ∫₀^∞ e^{−xt − t²/2}·(1 − e^{−μt}) dt,  (2)
//
// the second form because R(s) = ∫₀^∞ e^{−st − t²/2} dt. The integrand of (2)
// is positive: δ is an integral of positive terms, and the cancellation of
// (1) is an artefact of splitting it. D is computed in one of three ways:
//
//   - x ≥ cfMin: Laplace's continued fraction R(s) = 1/(s + T₁(s)),
//     T_k(s) = k/(s + T_{k+1}(s)) (Abramowitz & Stegun 26.2.14), evaluated
//     for x and y together. The difference of the tails obeys the exact
//     recurrence E_k = μ − c_k·E_{k+1}, E_{N+1} = μ, c_k = T_k(x)·T_k(y)/k,
//     where E_k = μ + T_k(y) − T_k(x), and D = R(x)·R(y)·E₁ — no
//     difference of nearly equal numbers is ever formed.
//   - x < cfMin and κ = μ·max(1, −x) ≤ taylorMax: the pointwise inequality
//     1 − e^{−u} ≤ u − u²/2 + u³/6 − u⁴/24 + u⁵/120 (u ≥ 0; the Taylor
//     remainder −u⁶e^{−ξ}/720 is ≤ 0) integrated against (2) gives the
//     upper bound D ≤ Σ_{k=1}^{5} (−1)^{k+1} μ^k M_k(x)/k!, M_k(x) =
//     ∫₀^∞ t^k e^{−xt−t²/2} dt, with M₀ = R(x), M₁ = 1 − x·R(x),
//     M_{k+1} = k·M_{k−1} − x·M_k (integration by parts). The neglected term
//     is below μ⁶M₆/720, a relative 10⁻¹² of D at κ = 10⁻².
//   - otherwise (κ > taylorMax): (1) as written, Φ(−x) − e^ε·Φ(−y) with
//     erfc, or Φ(−x) − φ(x)·R(y) when y ≥ cfMin; the two terms then differ
//     by more than a relative 0.3·κ ≥ 3·10⁻³, so at most 9 bits cancel.
//
// φ(x) is exp(−x²/2)/√(2π) with x² split exactly by an FMA; R(s) for
// s < cfMin is erfc(s/√2)/(2φ(s)).
//
// # Rounding
//
// The float64 error of each branch is a few hundred units of round-off at
// most (the largest factors: the argument x = (ε − μ²/2)/μ, computed with
// one FMA, carries a relative error 2u, which moves δ by a relative
// 2x²·u ≤ 3200u for the x ≤ 40 that give δ ≥ 2⁻¹⁰²²; the direct branch
// loses ≤ 9 bits). deltaUpper multiplies by
// 1 + deltaSlack, deltaSlack = 2⁻³² ≈ 2.3·10⁻¹⁰, about 100 times the
// largest error measured against a 256-bit reference (2.5·10⁻¹², at the
// switch μ = taylorMax between the Taylor bound and the direct formula;
// internal/gaussref, TestDeltaUpperBoundsExact), and adds 2⁻¹⁰⁷² where the
// result is subnormal. The result is an upper bound on the exact δ, the property the
// calibration needs.

// cfMin is the smallest x at which the continued fraction is used; cfTerms
// terms give R(s) to within 10⁻¹⁴ relative for s ≥ cfMin (measured
// against the 256-bit reference: TestMillsContinuedFraction).
const (
	cfMin   = 5.0
	cfTerms = 120
)

// taylorMax is the largest κ = μ·max(1, −x) at which D is taken from its
// fifth-order Taylor upper bound.
const taylorMax = 1e-2

// deltaSlack is the relative margin that turns the float64 value of δ into
// an upper bound (see the comment at the top of this file).
const deltaSlack = 0x1p-32

// invSqrt2Pi is 1/√(2π), correctly rounded.
const invSqrt2Pi = 0.398942280401432677939946059934381868475858631164934657665925

// phi returns the standard normal density φ(x) = exp(−x²/2)/√(2π), with x²
// split as hi + lo exactly (FMA) so that the error does not grow with x².
func phi(x float64) float64 {
	hi := x * x
	lo := math.FMA(x, x, -hi)
	return math.Exp(-hi/2) * math.Exp(-lo/2) * invSqrt2Pi
}

// upperTail returns Φ(−s) = erfc(s/√2)/2.
func upperTail(s float64) float64 { return math.Erfc(s/math.Sqrt2) / 2 }

// millsErfc returns Mills' ratio R(s) = Φ(−s)/φ(s) for −37 ≤ s < cfMin.
func millsErfc(s float64) float64 { return upperTail(s) / phi(s) }

// millsCF returns R(x), R(y) and E₁ = μ + T₁(y) − T₁(x) for cfMin ≤ x < y
// = x + μ, by the continued fraction evaluated backwards from cfTerms
// terms (see the comment at the top of this file).
func millsCF(x, mu float64) (rx, ry, e1 float64) {
	y := x + mu
	var tx, ty float64 // T_{k+1}(x), T_{k+1}(y); zero past the last term
	e := mu            // E_{k+1}
	for k := cfTerms; k >= 1; k-- {
		fk := float64(k)
		tx = fk / (x + tx)
		ty = fk / (y + ty)
		e = mu - tx*(ty/fk)*e
	}
	return 1 / (x + tx), 1 / (y + ty), e
}

// xNegligible is the x beyond which δ(μ, ε) ≤ Φ(−x) is below the smallest
// positive float64 (see deltaUpper).
const xNegligible = 40

// gaussX returns x = (ε − μ²/2)/μ = ε/μ − μ/2 for finite μ > 0 and ε ≥ 0,
// with one rounding in the numerator (FMA): computed as ε/μ − μ/2 it would
// lose an absolute 2⁻⁵³·μ/2 to cancellation, which at μ = 10⁵ moves δ by
// more than deltaUpper's margin. Where μ²/2 would overflow (μ > 2⁵⁰⁰; the
// σ of ε near the top of the float64 range has μ ≈ √(2ε) ≈ 2⁵¹²), μ and ε
// are scaled by 2⁻⁵¹² and 2⁻¹⁰²⁴ first — exact, powers of two — and the
// quotient scaled back: (ε' − μ'²/2)/μ' · 2⁵¹² is x with the same single
// rounding (ε' may lose bits to underflow only when ε < 4 ≪ μ²/2, where x ≈
// −μ/2 does not depend on them).
func gaussX(mu, eps float64) float64 {
	if mu <= 0x1p500 {
		return math.FMA(-0.5*mu, mu, eps) / mu
	}
	m, e := math.Ldexp(mu, -512), math.Ldexp(eps, -1024)
	return math.Ldexp(math.FMA(-0.5*m, m, e)/m, 512)
}

// deltaUpper returns an upper bound on δ(μ, ε) of (1) for finite μ ≥ 0 and
// ε ≥ 0 (the callers validate). It is never below the exact value, is at
// most a relative 2⁻³² (plus 2⁻¹⁰⁷² absolute) above it, and never above 1.
func deltaUpper(mu, eps float64) float64 {
	if mu == 0 {
		return 0 // identical distributions: δ = 0 exactly
	}
	x := gaussX(mu, eps)
	if x >= xNegligible {
		// δ ≤ Φ(−x) < φ(x)/x ≤ φ(40)/40 ≈ 2.7·10⁻³⁵⁰ (Mills' ratio
		// R(x) < 1/x for x > 0): below every float64, so the smallest
		// positive one bounds it. (Also x = +Inf.)
		return 0x1p-1074
	}
	var d float64 // δ before the margin
	switch {
	case x >= cfMin:
		rx, ry, e1 := millsCF(x, mu)
		// δ = φ(x)·R(x)·R(y)·E₁; exp(−x²/2) alone may underflow, so the
		// factors are combined in the log domain when it is small.
		hi := x * x
		lo := math.FMA(x, x, -hi)
		rest := rx * ry * e1 * invSqrt2Pi
		if mu > 0x1p500 {
			// R(y) ≈ 1/y and E₁ ≈ μ: their product is near R(x), but R(y)
			// alone may be subnormal; multiply them first.
			rest = rx * (ry * e1) * invSqrt2Pi
		}
		if hi/2 < 700 {
			d = math.Exp(-hi/2) * (math.Exp(-lo/2) * rest)
		} else {
			// exp(−x²/2) alone would underflow; the exponent's rounding
			// (a relative 2⁻⁵³·x²/2 of δ, 10⁻¹³ while δ is still above
			// 2⁻¹⁰⁷⁴) is far inside the margin.
			d = math.Exp(-hi/2 - lo/2 + math.Log(rest))
		}
	case mu*max(1, -x) <= taylorMax:
		m0 := millsErfc(x)
		m1 := 1 - x*m0
		m2 := m0 - x*m1
		m3 := 2*m1 - x*m2
		m4 := 3*m2 - x*m3
		m5 := 4*m3 - x*m4
		// Horner form of μM₁ − μ²M₂/2 + μ³M₃/6 − μ⁴M₄/24 + μ⁵M₅/120.
		dd := mu * (m1 - mu*(m2/2-mu*(m3/6-mu*(m4/24-mu*m5/120))))
		d = phi(x) * dd
	default:
		y := math.FMA(0.5*mu, mu, eps) / mu
		var second float64 // e^ε·Φ(−y)
		if y < cfMin {
			second = math.Exp(eps) * upperTail(y)
		} else {
			_, ry, _ := millsCF(y, 0)
			second = phi(x) * ry
		}
		d = upperTail(x) - second
		if !(d > 0) {
			// Not reached for valid arguments (here δ > 0 and the terms
			// differ by a relative 3·10⁻³ or more); were it reached, 1 is
			// the only bound left.
			return 1
		}
	}
	if math.IsNaN(d) || d < 0 {
		return 1 // not reached: the other branches multiply positive factors
	}
	d *= 1 + deltaSlack
	if d < 0x1p-1020 {
		d += 0x1p-1072 // a subnormal result carries an absolute error
	}
	return min(d, 1)
}
