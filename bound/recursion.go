package bound

import (
	"fmt"
	"math"
)

// Floating-point policy. Every α this package returns is an upper bound on
// the exact-arithmetic value of the formula it evaluates (given the inputs
// as represented), so round-off never makes a bound smaller:
//
//   - one step of the recursion is evaluated as ρΔ + c with a single
//     rounding (math.FMA) and then moved up one ulp; since ρ, Δ, c ≥ 0,
//     induction makes every iterate an upper bound. An exact 0 stays 0
//     (exact unlearning needs no noise).
//   - a power ρᵏ is evaluated as exp(k·ln ρ), whose relative error is at
//     most (2|k·ln ρ| + 2)·u, u = 2⁻⁵³ (ln and exp are within one ulp in
//     Go's math package; the product k·ln ρ adds one rounding, which exp
//     turns into a relative error |k·ln ρ|·2u). This stays below 1500u
//     wherever ρᵏ does not underflow, unlike math.Pow's binary powering,
//     whose error grows like k·u. Each term is inflated by its own error
//     bound, a sum of m non-negative terms by a further 2(m+1)u, and the
//     result is moved up one ulp (so a positive value never underflows to
//     0).
const u = 0x1p-53

// powUp returns ρᵏ and an upper bound on its relative error, for ρ ∈ [0, 1),
// k ≥ 0 (ρ⁰ = 1, also for ρ = 0).
func powUp(rho float64, k int) (pow, relErr float64) {
	switch {
	case k == 0:
		return 1, 0
	case rho == 0:
		return 0, 0
	}
	z := float64(k) * math.Log(rho)
	return math.Exp(z), (2*math.Abs(z) + 4) * u
}

// nextUp returns the next float64 above a ≥ 0, or 0 for a = 0 when exact
// is true.
func nextUp(a float64, exactZero bool) float64 {
	if a == 0 && exactZero {
		return 0
	}
	return math.Nextafter(a, math.Inf(1))
}

// up returns an upper bound on the exact ρΔ + c for ρ ∈ [0, 1), Δ, c ≥ 0.
// With c = 0 it never exceeds Δ (ρΔ ≤ Δ), so a bound without perturbation
// never grows.
func up(rho, delta, c float64) float64 {
	v := math.FMA(rho, delta, c)
	if v == 0 && (rho == 0 || delta == 0) && c == 0 {
		return 0
	}
	v = math.Nextafter(v, math.Inf(1))
	if c == 0 {
		v = min(v, delta)
	}
	return v
}

func checkRho(fn string, rho float64) error {
	if math.IsNaN(rho) || rho < 0 || rho >= 1 {
		return argErr(fn, "rho", rho, ErrRho)
	}
	return nil
}

func checkNonNeg(fn, arg string, v float64) error {
	if bad(v) {
		return argErr(fn, arg, v, ErrValue)
	}
	return nil
}

func bad(v float64) bool { return math.IsNaN(v) || math.IsInf(v, 0) || v < 0 }

func checkSeries(fn string, etaEps []float64) error {
	for s, c := range etaEps {
		if bad(c) {
			return argErr(fn, fmt.Sprintf("etaEps[%d]", s), c, ErrValue)
		}
	}
	return nil
}

// Recursion is the streaming form of the paper's Lemma "One-step
// state-error recursion",
//
//	Δ_{t+1} ≤ ρ·Δ_t + η_t·ε_t,
//
// holding the current bound α_t on Δ_t. Each [Recursion.Step] applies one
// update; after n steps from α_{t0} = Δ_{t0} it holds the α_{t0+n} of
// Theorem "Bounded counterfactual state deviation" (rounded up). Cost O(1)
// per step. A Recursion is not safe for concurrent use.
type Recursion struct {
	rho, alpha float64
	steps      int
}

// NewRecursion starts the recursion at α_{t0} = delta0 ≥ 0 with contraction
// ρ ∈ [0, 1). Errors (*ArgError): ρ ∉ [0, 1) (ErrRho); delta0 negative or
// not finite (ErrValue).
func NewRecursion(rho, delta0 float64) (*Recursion, error) {
	const fn = "NewRecursion"
	if err := checkRho(fn, rho); err != nil {
		return nil, err
	}
	if err := checkNonNeg(fn, "delta0", delta0); err != nil {
		return nil, err
	}
	return &Recursion{rho: rho, alpha: delta0}, nil
}

// Step applies α ← ρα + etaEps, where etaEps = η_t·ε_t ≥ 0 bounds the
// deletion-induced perturbation of this step, and returns the new α. On an
// error (etaEps negative or not finite: ErrValue; overflow: ErrRange) the
// state is unchanged.
func (r *Recursion) Step(etaEps float64) (float64, error) {
	const fn = "Recursion.Step"
	if err := checkNonNeg(fn, "etaEps", etaEps); err != nil {
		return r.alpha, err
	}
	a := up(r.rho, r.alpha, etaEps)
	if math.IsInf(a, 0) {
		return r.alpha, argErr(fn, "etaEps", etaEps, ErrRange)
	}
	r.alpha = a
	r.steps++
	return a, nil
}

// Alpha returns the current bound α.
func (r *Recursion) Alpha() float64 { return r.alpha }

// Steps returns the number of steps applied.
func (r *Recursion) Steps() int { return r.steps }

// Rho returns the contraction factor.
func (r *Recursion) Rho() float64 { return r.rho }

// Series returns the whole series α_{t0}, α_{t0+1}, …, α_{t0+n} of the
// recursion started at α_{t0} = delta0, where etaEps[s] = η_{t0+s}·ε_{t0+s}
// (n = len(etaEps)): dst[k] bounds Δ_{t0+k}. If dst is nil a new slice is
// allocated; otherwise it must have length n+1 and is returned. Cost O(n),
// no allocation when dst is given.
//
// It panics if dst is non-nil with the wrong length. Errors (*ArgError): ρ ∉
// [0, 1) (ErrRho); delta0 or any etaEps[s] negative or not finite
// (ErrValue); overflow (ErrRange).
func Series(dst []float64, rho, delta0 float64, etaEps []float64) ([]float64, error) {
	const fn = "Series"
	if dst != nil && len(dst) != len(etaEps)+1 {
		panic(fmt.Sprintf("bound: Series: len(dst) = %d, want len(etaEps)+1 = %d", len(dst), len(etaEps)+1))
	}
	if err := checkRho(fn, rho); err != nil {
		return nil, err
	}
	if err := checkNonNeg(fn, "delta0", delta0); err != nil {
		return nil, err
	}
	if err := checkSeries(fn, etaEps); err != nil {
		return nil, err
	}
	if dst == nil {
		dst = make([]float64, len(etaEps)+1)
	}
	dst[0] = delta0
	for s, c := range etaEps {
		dst[s+1] = up(rho, dst[s], c)
		if math.IsInf(dst[s+1], 0) {
			return nil, argErr(fn, fmt.Sprintf("etaEps[%d]", s), c, ErrRange)
		}
	}
	return dst, nil
}

// ClosedForm evaluates the bound of Theorem "Bounded counterfactual state
// deviation" directly,
//
//	α_t = ρ^{t−t0}·Δ_{t0} + Σ_{s=t0}^{t−1} ρ^{t−1−s}·η_s·ε_s,
//
// with t − t0 = n = len(etaEps) and etaEps[s−t0] = η_s·ε_s, one power per
// term (O(n) calls of exp and log), rounded up as described above (a
// relative margin of about (n + 3|n·ln ρ|)·2⁻⁵² at most). It equals the last
// element of [Series] to round-off; it exists as the theorem's formula and
// as an independent check of the recursion.
// ρ^0 = 1 also for ρ = 0. Errors as for [Series].
func ClosedForm(rho, delta0 float64, etaEps []float64) (float64, error) {
	const fn = "ClosedForm"
	if err := checkRho(fn, rho); err != nil {
		return 0, err
	}
	if err := checkNonNeg(fn, "delta0", delta0); err != nil {
		return 0, err
	}
	if err := checkSeries(fn, etaEps); err != nil {
		return 0, err
	}
	n := len(etaEps)
	// zero: the exact value is 0 (a power ρᵏ is exactly 0 only for ρ = 0,
	// k > 0; an underflowed one is not).
	p, e := powUp(rho, n)
	a := p * delta0 * (1 + e)
	zero := (rho == 0 && n > 0) || delta0 == 0
	for s, c := range etaEps {
		k := n - 1 - s
		p, e := powUp(rho, k)
		a += p * c * (1 + e)
		zero = zero && ((rho == 0 && k > 0) || c == 0)
	}
	a = nextUp(a*(1+2*float64(n+2)*u), zero)
	if math.IsInf(a, 0) {
		return 0, argErr(fn, "delta0", delta0, ErrRange)
	}
	return a, nil
}

// Constant returns α after n steps of constant perturbation c = η·ε from
// α_0 = delta0: the geometric closed form
//
//	α_n = ρⁿ·Δ_0 + c·(1 − ρⁿ)/(1 − ρ),
//
// evaluated stably for every ρ ∈ [0, 1): (1 − ρⁿ)/(1 − ρ) is computed as
// −expm1(n·ln ρ)/(1 − ρ), which keeps full relative accuracy as ρ → 1⁻
// (where it tends to n; 1 − ρ is exact for ρ ≥ ½) and as ρⁿ underflows; ρ = 0
// gives c for n ≥ 1. n = 0 gives delta0. The result is rounded up as
// described above. Cost O(1).
//
// Errors (*ArgError): ρ ∉ [0, 1) (ErrRho); delta0 or c negative or not
// finite (ErrValue); n < 0 (ErrInvalid); overflow (ErrRange).
func Constant(rho, delta0, etaEps float64, n int) (float64, error) {
	const fn = "Constant"
	if err := checkRho(fn, rho); err != nil {
		return 0, err
	}
	if err := checkNonNeg(fn, "delta0", delta0); err != nil {
		return 0, err
	}
	if err := checkNonNeg(fn, "etaEps", etaEps); err != nil {
		return 0, err
	}
	if n < 0 {
		return 0, argErr(fn, "n", float64(n), ErrInvalid)
	}
	a := constant(rho, delta0, etaEps, n)
	if math.IsInf(a, 0) {
		return 0, argErr(fn, "etaEps", etaEps, ErrRange)
	}
	return a, nil
}

// constant is Constant without validation.
func constant(rho, delta0, c float64, n int) float64 {
	if n == 0 {
		return delta0
	}
	p, e := powUp(rho, n)
	var geo float64 // (1−ρⁿ)/(1−ρ) = Σ_{j<n} ρʲ
	if rho == 0 {
		geo = 1
	} else {
		// −expm1(z) has relative error ≤ 2u + |z|e^z/(1−e^z)·2u ≤ 4u for
		// z = n·ln ρ < 0; 1 − ρ and the division add ≤ 2u.
		geo = -math.Expm1(float64(n)*math.Log(rho)) / (1 - rho) * (1 + 8*u)
	}
	a := nextUp((p*delta0*(1+e)+c*geo)*(1+4*u), (rho == 0 || delta0 == 0) && c == 0)
	if c == 0 {
		a = min(a, delta0) // ρⁿΔ₀ ≤ Δ₀: without perturbation the bound never grows
	}
	return a
}

// Limit returns the t → ∞ limit of the bound under a constant perturbation
// c = η·ε: c/(1 − ρ), rounded up. It bounds every α_t of [Constant] with
// delta0 ≤ c/(1 − ρ). Errors as for [Constant].
func Limit(rho, etaEps float64) (float64, error) {
	const fn = "Limit"
	if err := checkRho(fn, rho); err != nil {
		return 0, err
	}
	if err := checkNonNeg(fn, "etaEps", etaEps); err != nil {
		return 0, err
	}
	a := nextUp(etaEps/(1-rho)*(1+2*u), etaEps == 0)
	if math.IsInf(a, 0) {
		return 0, argErr(fn, "etaEps", etaEps, ErrRange)
	}
	return a, nil
}
