package olbfgs

import (
	"errors"
	"math"

	"gonum.org/v1/gonum/floats"
)

// ErrSampleBound: an insert's payload exceeds Config.SampleBound.
var ErrSampleBound = errors.New("payload norm exceeds the learner's sample bound")

// unit is the unit round-off u = 2⁻⁵³ of float64.
const unit = 0x1p-53

// slack returns the relative inflation 2(d+8)u that turns a bound checked
// on a computed norm of a d-vector into a bound on its exact norm: a
// computed Euclidean norm (gonum floats.Norm, a scaled sum of squares) has
// relative error at most (d+2)u + O(u²), and a scaling by a computed ratio
// adds two roundings (docs/theory.md, "Floating point").
func slack(d int) float64 { return 2 * float64(d+8) * unit }

// RadiusBound returns W' = W·(1 + 2(p+8)u), a bound on the exact norm of
// every parameter vector the learner holds after an insert when Radius = W
// is set (the projection is computed in floating point), or +Inf when
// Radius is 0; p is the parameter dimension (ParamDim, d for the paper's
// learner).
func (c Config) RadiusBound() float64 {
	if c.Radius == 0 {
		return math.Inf(1)
	}
	return math.Nextafter(c.Radius*(1+slack(c.ParamDim())), math.Inf(1))
}

// SampleBoundExact returns B' = B·(1 + 2(d+8)u), a bound on the exact
// norm of every payload vector the learner accepts when SampleBound = B is
// set, or +Inf when SampleBound is 0.
func (c Config) SampleBoundExact() float64 {
	if c.SampleBound == 0 {
		return math.Inf(1)
	}
	return math.Nextafter(c.SampleBound*(1+slack(c.Dim)), math.Inf(1))
}

// project moves w onto the ball ‖w‖ ≤ r (r > 0): w ← w·r/‖w‖ if ‖w‖ > r.
func project(w []float64, r float64) {
	if n := floats.Norm(w, 2); n > r {
		floats.Scale(r/n, w)
	}
}

// acceptPair is the pair guard of a certifiable learner (PairAngle > 0):
// it reports whether the exact values of the float vectors s, y satisfy
// PairMin ≤ a ≤ PairMax with a = sᵀy/‖s‖², and tan²∠(s, y) ≤ r̄², from
// their computed inner products ss = fl(sᵀs), sy = fl(sᵀy), yy = fl(yᵀy).
//
// Each inner product of d terms has an absolute error at most
// γ_d·‖·‖‖·‖, γ_d = du/(1−du) (Higham, "Accuracy and Stability of
// Numerical Algorithms", 2nd ed., §3.1, eq. 3.5). With tan θ ≤ r̄ < 1,
// ‖s‖‖y‖ ≤ √2·sᵀy, so the computed a is within a relative 3γ_d + 2u of the
// exact one, and the computed 1 + tan²θ = ss·yy/sy² within 6γ_d + 4u; the
// test demands the computed values clear the bounds by a relative
// 4(d+2)u and an absolute 8(d+2)u·(1 + tan²θ), which exceed those errors.
func (c Config) acceptPair(ss, sy, yy float64) bool {
	if !(sy > 0) || !(ss > 0) || math.IsInf(yy, 0) || math.IsInf(ss, 0) {
		return false
	}
	d := float64(c.ParamDim())
	ma := 4 * (d + 2) * unit
	a := sy / ss
	if !(a >= c.PairMin*(1+ma)) || !(a <= c.PairMax*(1-ma)) {
		return false
	}
	ratio := (ss * yy) / (sy * sy) // 1 + tan²θ
	q := ratio - 1
	return q+ratio*8*(d+2)*unit <= c.PairAngle*c.PairAngle
}

// SpectralBounds returns bounds hMin ≤ λ(H_Z) ≤ hMax on the spectrum of
// every inverse-Hessian approximation H_Z a guarded learner (PairAngle > 0)
// can hold — the exact BFGS matrix of its stored pairs — and of the
// initial γ₀·I; ok is false if the guard is off (no such bound is known:
// the spectrum of an unguarded L-BFGS matrix can grow exponentially in τ).
//
// Derivation (docs/theory.md, "Spectral bounds of a guarded memory"): write
// y = a·s + e with e ⊥ s, a = sᵀy/‖s‖² ∈ [μ̄, L̄] and r = ‖e‖/(a‖s‖) =
// tan∠(s, y) ≤ r̄. For the BFGS inverse update
// H⁺ = (I − ρsyᵀ)H(I − ρysᵀ) + ρssᵀ, ρ = 1/sᵀy, and unit x = x⊥ + t·ŝ,
//
//	xᵀH⁺x = vᵀHv + t²/a,  v = x⊥ − t·e/(a‖s‖),  ‖e/(a‖s‖)‖ = r,
//
// and (p ± q)² bounds give, for H with spectrum in [lo, hi],
//
//	λmax(H⁺) ≤ max(hi·(1 + r), 1/μ̄ + hi·r·(1 + r)),
//	λmin(H⁺) ≥ min(lo·(1 − r), 1/L̄ − lo·r·(1 − r)).
//
// The two-loop starts from γI with γ = sᵀy/yᵀy = 1/(a(1 + r²)) of the
// newest pair, in [1/(L̄(1 + r̄²)), 1/μ̄]; applying the bounds τ times and
// including the empty memory's γ₀ gives the result, rounded outward. For
// r̄ → 0 (pairs from isotropic curvature) it tends to
// [min(γ₀, 1/L̄), max(γ₀, 1/μ̄)].
func (c Config) SpectralBounds() (hMin, hMax float64, ok bool) {
	if !c.Guarded() {
		return 0, 0, false
	}
	r := c.PairAngle
	up := func(x float64) float64 { return math.Nextafter(x*(1+4*unit), math.Inf(1)) }
	down := func(x float64) float64 { return math.Nextafter(x*(1-4*unit), 0) }
	hi := up(1 / c.PairMin)
	lo := down(1 / (c.PairMax * up(1+r*r)))
	for range c.Memory {
		hi = up(max(hi*(1+r), up(1/c.PairMin)+up(hi*r*(1+r))))
		lo = down(min(lo*(1-r), down(1/c.PairMax)-up(lo*r*(1-r))))
		if lo <= 0 {
			return 0, 0, false
		}
	}
	return min(lo, c.InitialScale), max(hi, c.InitialScale), true
}

// ClipToBound scales the payload vector v in place onto the ball of
// radius B = c.SampleBound when its computed norm exceeds B, and reports
// whether it did: v ← v·B/‖v‖, then shrunk by one ulp of the factor at a
// time until the norm Step computes is at most B, so that Step accepts
// the clipped payload and the proofs' ‖x‖ ≤ B' (SampleBoundExact) holds
// of it. The map depends on v alone (no other row), so a row's clipped
// form is a public function of the row; with SampleBound 0 it does
// nothing. v must be finite.
func (c Config) ClipToBound(v []float64) bool {
	b := c.SampleBound
	n := floats.Norm(v, 2)
	if b == 0 || n <= b {
		return false
	}
	floats.Scale(b/n, v)
	for floats.Norm(v, 2) > b {
		floats.Scale(math.Nextafter(1, 0), v)
	}
	return true
}
