package olbfgs

import (
	"fmt"
	"math"

	"unlearn/stream"
)

// minNormal is the smallest normal float64, 2⁻¹⁰²².
const minNormal = 0x1p-1022

// CheckFirstSteps reports, as a *ConfigError, a configuration (valid for
// Validate) whose learner cannot take a finite, meaningful step on the
// loss that header h describes, whatever the data: a store created with it
// would refuse or diverge on every insert. The criteria, each derived in
// docs/theory.md ("Configurations that cannot learn"), refuse only what no
// data can rescue:
//
//   - SampleBound and Radius, when set, must be normal floats, and B' and
//     the diameter 2W' finite. Below 2⁻¹⁰²² every accepted payload (every
//     state) has all its coordinates subnormal: fewer than 53 significant
//     bits, squares that underflow to 0 — nothing but zero payloads and
//     zero states; above, the learner's own bounds overflow.
//   - With the pair guard, its spectral bounds [hMin, hMax] must be finite
//     and hMin normal.
//   - The loss's curvature floor μ (the ridge λ of a logistic or regression
//     loss; a Gershgorin lower bound of the smallest eigenvalue of H0 and
//     H1 for a quadratic one) must have 1/μ normal, μ ≤ 2¹⁰²²: every
//     curvature pair (s, y) of a μ-strongly convex loss has y = H̄s with
//     H̄ ⪰ μI, so its scale γ = sᵀy/yᵀy ≤ 1/μ would be subnormal.
//   - Without a radius, η·γ₀·μ < 2. The first step, from w₀ = 0 with an
//     empty memory, is w₁ = −η·γ₀·g₀, g₀ = ∇ℓ(0). For a μ-strongly convex
//     loss the sample's minimizer w* satisfies ‖g₀‖ = ‖∇ℓ(0) − ∇ℓ(w*)‖ ≥
//     μ‖w*‖, so ‖w₁ − w*‖ ≥ η·γ₀·‖g₀‖ − ‖w*‖ ≥ (η·γ₀·μ − 1)·‖w*‖: with
//     η·γ₀·μ ≥ 2 the first step lands at least as far from every sample's
//     minimizer as it started, and overshoots it η·γ₀·μ − 1 times (at
//     η = 10³⁰⁸ the next gradient overflows). With τ = 0 and a constant
//     step every step is such a step. A radius projects the step back and
//     is exempt, and so is an unregularized intercept (Intercept without
//     RidgeIntercept): the loss is then not strongly convex in the
//     intercept, and a sample may have no minimizer at all. A step
//     schedule starts at η_0 = η, so its first step is the same.
//
// Every criterion is computed with a margin for its own rounding, so that
// it refuses only configurations for which the exact statement holds. The
// default configuration passes for every loss whose floor is below 20.
// A header of another kind (a registered loss) is checked for the first
// two criteria only.
func (c Config) CheckFirstSteps(h stream.Header) error {
	bad := func(field, symbol string, v any, want string) error {
		return &ConfigError{Field: field, Symbol: symbol, Value: v, Want: want}
	}
	// B' is computed over the d features of a payload, W' over the
	// parameter dimension (Config.SampleBoundExact, Config.RadiusBound).
	sb, sr := 1+slack(c.Dim), 1+slack(c.ParamDim())
	switch {
	case c.SampleBound > 0 && c.SampleBound < minNormal:
		return bad("SampleBound", "B", c.SampleBound, "must be 0 (off) or at least 2⁻¹⁰²², the smallest normal float64: below it every accepted payload has only subnormal coordinates (fewer than 53 significant bits, squares that underflow), so no real data can be ingested")
	case c.SampleBound > math.MaxFloat64/sb:
		return bad("SampleBound", "B", c.SampleBound, fmt.Sprintf("must be at most %.6g: the exact bound B' = B·(1 + 2(d+8)u) would overflow", math.MaxFloat64/sb))
	case c.Radius > 0 && c.Radius < minNormal:
		return bad("Radius", "W", c.Radius, "must be 0 (off) or at least 2⁻¹⁰²², the smallest normal float64: below it every state has only subnormal coordinates")
	case c.Radius > math.MaxFloat64/(2*sr):
		return bad("Radius", "W", c.Radius, fmt.Sprintf("must be at most %.6g: the diameter 2W' of the ball every state lies in would overflow", math.MaxFloat64/(2*sr)))
	}
	if c.Guarded() {
		if lo, hi, ok := c.SpectralBounds(); !ok || !(lo >= minNormal) || math.IsInf(hi, 0) {
			return bad("PairMin", "pair curvature min", c.PairMin, fmt.Sprintf("with pair max %v, angle %v and τ = %d, gives spectral bounds [%v, %v]: they must be finite and normal (a smaller PairMin or a larger PairMax makes them overflow or vanish)", c.PairMax, c.PairAngle, c.Memory, lo, hi))
		}
	}
	mu, field := curvatureFloor(h)
	if mu == 0 {
		return nil
	}
	if mu > 0x1p1022 {
		return bad(field, "μ", mu, "the loss's curvature floor must be at most 2¹⁰²²: every curvature pair's scale sᵀy/yᵀy ≤ 1/μ would be subnormal")
	}
	if c.Radius == 0 && (!c.Intercept || c.RidgeIntercept) {
		// fl(η·γ₀·μ) ≥ 2(1 + 4u) implies η·γ₀·μ ≥ 2 exactly (two
		// roundings); an overflow to +Inf is ≥ 2 as well.
		if p := c.StepSize * c.InitialScale * mu; p >= 2*(1+4*unit) {
			return bad("StepSize", "eta", c.StepSize, fmt.Sprintf("η·γ₀·μ = %v × %v × %v = %.4g, and must be below 2 without a radius: the first step (a gradient step of size η·γ₀ from w = 0, the memory empty) would land at least as far from every sample's minimizer as it started (η·γ₀·μ − 1 times its distance; docs/theory.md); γ₀ ≈ 1/μ, the scale of the loss's inverse curvature, and η ≤ 1 are safe", c.StepSize, c.InitialScale, mu, p))
		}
	}
	return nil
}

// curvatureFloor returns a lower bound μ ≥ 0 of the smallest eigenvalue
// of every Hessian of the loss that h describes, and the header field it
// comes from: the ridge λ of a logistic, multinomial or regression loss
// (the softmax loss's Hessian is positive semidefinite); for a
// quadratic loss (Hessians (1−α)H0 + αH1, α ∈ [0, 1], whose smallest
// eigenvalue is at least the smaller of H0's and H1's, λmin being
// concave) the Gershgorin bound min_i (H_ii − Σ_{j≠i} |H_ij|) of the
// symmetric part of each, rounded down. 0 when none is known.
func curvatureFloor(h stream.Header) (float64, string) {
	switch h.Kind {
	case stream.KindLogistic, stream.KindRegression, stream.KindMultinomial:
		return max(h.Lambda, 0), "Loss.Lambda"
	case stream.KindQuadratic:
		mu := math.Inf(1)
		for _, m := range [][][]float64{h.H0, h.H1} {
			mu = min(mu, gershgorinFloor(m))
		}
		if !(mu > 0) || math.IsInf(mu, 0) {
			return 0, ""
		}
		return mu, "Loss.H0"
	}
	return 0, ""
}

// gershgorinFloor returns a lower bound of the smallest eigenvalue of the
// symmetric part of m, rounded down (or −Inf for a malformed m): each
// off-diagonal sum of d−1 terms is inflated by a relative 2du, each
// difference by 4u of its operands.
func gershgorinFloor(m [][]float64) float64 {
	d := len(m)
	lo := math.Inf(1)
	for i := range d {
		if len(m[i]) != d {
			return math.Inf(-1)
		}
		var r float64
		for j := range d {
			if j != i {
				r += math.Abs(m[i][j]+m[j][i]) / 2
			}
		}
		r *= 1 + 2*float64(d)*unit
		lo = min(lo, m[i][i]-r-4*unit*(math.Abs(m[i][i])+r))
	}
	return lo
}
