package noise

import "math"

// ZCDP returns the zero-concentrated differential privacy (zCDP) parameter
// of one release x + N(0, σ²I) of a vector with L2 sensitivity α:
//
//	ρ_zCDP = α² / (2σ²)
//
// (Bun & Steinke, "Concentrated Differential Privacy: Simplifications,
// Extensions, and Lower Bounds", TCC 2016, Proposition 1.6). zCDP composes
// additively: k releases with parameters ρ_1…ρ_k are (Σρ_i)-zCDP (Lemma 1.7),
// and [ZCDPEpsilon] converts the total to (ε, δ). ρ_zCDP is unrelated to the
// contraction factor ρ of package bound.
//
// α = 0 gives 0 for every σ ≥ 0. The result is inflated by a relative 2⁻⁴⁸
// to cover round-off. Errors (*ArgError): α < 0 or not finite
// (ErrSensitivity); σ < 0 or not finite (ErrSigma); σ = 0 with α > 0, or an
// overflowing ratio (ErrRange: the release is not private at all).
func ZCDP(alpha, sigma float64) (float64, error) {
	const fn = "ZCDP"
	if math.IsNaN(alpha) || math.IsInf(alpha, 0) || alpha < 0 {
		return 0, argErr(fn, "alpha", alpha, ErrSensitivity)
	}
	if math.IsNaN(sigma) || math.IsInf(sigma, 0) || sigma < 0 {
		return 0, argErr(fn, "sigma", sigma, ErrSigma)
	}
	if alpha == 0 {
		return 0, nil
	}
	r := alpha / sigma
	rho := r * r / 2 * (1 + 0x1p-48)
	if math.IsInf(rho, 0) {
		return 0, argErr(fn, "sigma", sigma, ErrRange)
	}
	return rho, nil
}

// ZCDPEpsilon returns the ε of the (ε, δ)-differential privacy implied by
// ρ-zCDP:
//
//	ε = ρ + 2·sqrt(ρ·ln(1/δ))
//
// (Bun & Steinke 2016, Proposition 1.3). The result is inflated by a
// relative 2⁻⁴⁸ to cover round-off. Errors (*ArgError): ρ < 0 or not finite
// (ErrZCDP); δ ∉ (0, 1) (ErrDelta).
func ZCDPEpsilon(rho, delta float64) (float64, error) {
	const fn = "ZCDPEpsilon"
	if math.IsNaN(rho) || math.IsInf(rho, 0) || rho < 0 {
		return 0, argErr(fn, "rho", rho, ErrZCDP)
	}
	if math.IsNaN(delta) || delta <= 0 || delta >= 1 {
		return 0, argErr(fn, "delta", delta, ErrDelta)
	}
	eps := (rho + 2*math.Sqrt(rho*math.Log(1/delta))) * (1 + 0x1p-48)
	if math.IsInf(eps, 0) {
		return 0, argErr(fn, "rho", rho, ErrRange)
	}
	return eps, nil
}
