package bound

import (
	"fmt"
	"math"
)

// Schedule is a step-size schedule indexed by the learner's own count of
// applied update steps t = 0, 1, 2, … (the step that turns the state after t
// steps into the state after t+1 uses η(t)):
//
//	η(t) = η₀ / (1 + η₀·λ_η·t),
//
// the schedule of L. Bottou, "Stochastic Gradient Descent Tricks" (Neural
// Networks: Tricks of the Trade, 2nd ed., LNCS 7700, Springer 2012, §5.2,
// "γ_t = γ₀(1 + γ₀λt)⁻¹" for a λ-regularized objective). Decay = 0 is the
// constant step η₀ of the paper's learner.
//
// The count is the learner's own: the counterfactual, which never applied
// the deleted inserts, is behind the actual learner by the number of deleted
// inserts before a step, and so takes larger steps; [Dynamics.Bound]
// accounts for the shift (docs/theory.md, "Decaying steps").
type Schedule struct {
	// Eta0 is η₀ > 0, finite. Required.
	Eta0 float64 `json:"eta0"`
	// Decay is λ_η ≥ 0, finite. Defaults to 0: the constant step η₀.
	Decay float64 `json:"decay"`
}

// scheduleSlack is the relative half-width of [Schedule.Enclose] around
// [Schedule.At]: the exact η(t) and a learner's float are within 6u of it
// and of the exact value respectively, so within 13u of At; 16u covers it.
const scheduleSlack = 16 * u

// Validate reports an invalid field as an *ArgError (ErrValue).
func (s Schedule) Validate() error {
	const fn = "Schedule.Validate"
	if !(s.Eta0 > 0) || math.IsInf(s.Eta0, 0) {
		return argErr(fn, "Eta0", s.Eta0, fmt.Errorf("%w: η₀ must be > 0", ErrValue))
	}
	if bad(s.Decay) {
		return argErr(fn, "Decay", s.Decay, ErrValue)
	}
	return nil
}

// At returns η(t) evaluated as η₀/(1 + c·t) with c = η₀·λ_η, four correctly
// rounded operations (c may be computed once); Decay = 0 returns η₀ itself,
// bit for bit. It is the reference evaluation for a learner with this
// schedule: [Schedule.Enclose] holds every float η(t)·(1+θ) with |θ| ≤ 6u,
// which this evaluation satisfies (|θ| < 5u, see Enclose). t must be ≥ 0
// and below 2⁵³.
func (s Schedule) At(t int) float64 {
	if s.Decay == 0 {
		return s.Eta0
	}
	c := float64(s.Eta0 * s.Decay)
	return float64(s.Eta0 / float64(1+float64(c*float64(t))))
}

// Enclose returns lo ≤ hi such that the exact η(t) and every float
// η(t)·(1+θ) with |θ| ≤ 6u — the value of [Schedule.At], the learner's
// evaluation — lie in [lo, hi]. With Decay = 0, lo = hi = η₀ (the learner
// uses η₀ itself).
//
// Proof: with x = η₀λ_η·t ≥ 0, At's denominator is
// (1 + x(1+δ₁)(1+δ₂))(1+δ₃), |δ_i| ≤ u, whose ratio to 1 + x lies in
// (1 ± γ₂)(1 ± u) because x/(1+x) ≤ 1; the division adds (1 + δ₄). So
// At(t) = η(t)·(1+θ) with |θ| < 5u. Hence η(t) ∈ At(t)·[1 − 6u, 1 + 6u], a
// learner's value within At(t)·[1 − 13u, 1 + 13u], and the enclosure widens
// At(t) by a relative 16u each side, rounded outward.
func (s Schedule) Enclose(t int) (lo, hi float64) {
	if s.Decay == 0 {
		return s.Eta0, s.Eta0
	}
	v := s.At(t)
	return dMul(v, 1-scheduleSlack), uMul(v, 1+scheduleSlack)
}
