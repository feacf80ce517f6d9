package bound

import (
	"fmt"
	"math"
	"slices"
)

// Contraction is a contraction factor ρ ∈ [0, 1) for the recursion
// Δ_{t+1} ≤ ρΔ_t + η_tε_t, with where it came from.
type Contraction struct {
	// Rho is the factor, in [0, 1).
	Rho float64 `json:"rho"`
	// Provenance says whether Rho is proved (analytic), estimated or
	// assumed.
	Provenance Provenance `json:"provenance"`
	// Method describes how Rho was obtained, for a certificate.
	Method string `json:"method"`
}

// Validate reports whether c can be used in a bound: Rho ∈ [0, 1) (ErrRho)
// and a valid Provenance (ErrInvalid).
func (c Contraction) Validate() error {
	const fn = "Contraction.Validate"
	if err := checkRho(fn, c.Rho); err != nil {
		return err
	}
	if !c.Provenance.valid() {
		return argErr(fn, "Provenance", float64(c.Provenance), ErrInvalid)
	}
	return nil
}

// AssumedContraction labels ρ as assumed: the paper's Assumption
// "Contractive update map", d(Φ_t(Z), Φ_t(Z')) ≤ ρ·d(Z, Z') for some
// ρ < 1, which the paper states without a value or a proof. Errors:
// ρ ∉ [0, 1) (ErrRho).
func AssumedContraction(rho float64) (Contraction, error) {
	if err := checkRho("AssumedContraction", rho); err != nil {
		return Contraction{}, err
	}
	return Contraction{Rho: rho, Provenance: Assumed, Method: "assumed (paper: Assumption \"Contractive update map\")"}, nil
}

// Case selects which analytic contraction argument applies; see
// [AnalyticContraction].
type Case int

const (
	// General makes no assumption on how the preconditioner H and the
	// Hessians relate. The zero value, because it is always valid.
	General Case = iota
	// Commuting requires that every preconditioner H the learner uses
	// commutes with every Hessian ∇²ℓ_t(w) (they share eigenvectors): for
	// example d = 1, isotropic losses (∇²ℓ_t(w) = a·I, which commutes with
	// any H), or a fixed H = γI.
	Commuting
)

// String returns "general" or "commuting".
func (c Case) String() string {
	switch c {
	case General:
		return "general"
	case Commuting:
		return "commuting"
	}
	return fmt.Sprintf("Case(%d)", int(c))
}

// AnalyticParams are the constants of the analytic contraction.
type AnalyticParams struct {
	// Mu and L are the strong-convexity and smoothness constants of every
	// loss (paper: Assumption "Strong convexity and smoothness"),
	// 0 < Mu ≤ L. Required. The losses must also be twice continuously
	// differentiable (both the spec loss kinds are).
	Mu, L float64
	// Eta is the step size η > 0. Required.
	Eta float64
	// HMin and HMax bound the spectrum of every preconditioner,
	// hMin·I ⪯ H ⪯ hMax·I, 0 < HMin ≤ HMax (paper: Assumption "Bounded
	// inverse-Hessian approximations", its m and M). Required.
	HMin, HMax float64
	// Case selects the argument. Defaults to General.
	Case Case
}

// AnalyticContraction returns a proved contraction factor, in the Euclidean
// norm, of the parameter map T(w) = w − η·H·∇ℓ(w) for ANY fixed symmetric
// preconditioner H with hMin·I ⪯ H ⪯ hMax·I and any μ-strongly convex,
// L-smooth, C² loss ℓ. With
//
//	ρ₀ = max(|1 − η·hMin·μ|, |1 − η·hMax·L|),
//
// it returns, by Case (proofs in docs/theory.md, "Analytic contraction"):
//
//   - Commuting: ρ = ρ₀. T(w) − T(w') = (I − ηHA)(w − w') with A the mean
//     Hessian on the segment, μI ⪯ A ⪯ LI; if H and A commute, I − ηHA is
//     symmetric with eigenvalues 1 − η·h_i·a_i ∈ [1 − η·hMax·L,
//     1 − η·hMin·μ], so its norm is at most ρ₀.
//   - General: ρ = sqrt(hMax/hMin)·ρ₀. Without commutation the Euclidean
//     norm of I − ηHA can exceed 1 even when ρ₀ < 1 (the tests exhibit a
//     2×2 case), but I − ηHA = H^{1/2}(I − ηB)H^{−1/2} with
//     B = H^{1/2}AH^{1/2} symmetric, spectrum in [hMin·μ, hMax·L], so
//     ‖I − ηHA‖₂ ≤ ‖H^{1/2}‖·ρ₀·‖H^{−1/2}‖ = sqrt(hMax/hMin)·ρ₀. (ρ₀ alone
//     is a contraction in the H⁻¹-norm ‖v‖² = vᵀH⁻¹v, but only for one
//     fixed H; o-LBFGS changes H every step, so the Euclidean factor is the
//     one that chains.)
//
// The result is rounded up. It is the contraction of the parameter map with
// the memory held fixed; the memory's own drift enters the bound as a
// perturbation (see [Scenario]), not through ρ. Errors (*ArgError): a
// constant not finite and positive, or μ > L, hMin > hMax (ErrValue,
// ErrInvalid); an unknown Case (ErrInvalid); ρ ≥ 1 (ErrNoContraction, with
// the factor in Value): then no contraction is proved, e.g. η·hMax·L ≥ 2,
// or a General case with too wide a spectrum.
func AnalyticContraction(p AnalyticParams) (Contraction, error) {
	const fn = "AnalyticContraction"
	for _, a := range []struct {
		name string
		v    float64
	}{{"Mu", p.Mu}, {"L", p.L}, {"Eta", p.Eta}, {"HMin", p.HMin}, {"HMax", p.HMax}} {
		if math.IsNaN(a.v) || math.IsInf(a.v, 0) || a.v <= 0 {
			return Contraction{}, argErr(fn, a.name, a.v, ErrValue)
		}
	}
	if p.Mu > p.L {
		return Contraction{}, argErr(fn, "Mu", p.Mu, fmt.Errorf("%w: μ > L = %v", ErrInvalid, p.L))
	}
	if p.HMin > p.HMax {
		return Contraction{}, argErr(fn, "HMin", p.HMin, fmt.Errorf("%w: h_min > h_max = %v", ErrInvalid, p.HMax))
	}
	rho0 := max(math.Abs(1-p.Eta*p.HMin*p.Mu), math.Abs(1-p.Eta*p.HMax*p.L))
	var rho float64
	var method string
	switch p.Case {
	case Commuting:
		rho = rho0
		method = "analytic, commuting H and Hessians: max(|1−η·hMin·μ|, |1−η·hMax·L|)"
	case General:
		rho = math.Sqrt(p.HMax/p.HMin) * rho0
		method = "analytic, general H: sqrt(hMax/hMin)·max(|1−η·hMin·μ|, |1−η·hMax·L|)"
	default:
		return Contraction{}, argErr(fn, "Case", float64(p.Case), ErrInvalid)
	}
	rho = nextUp(rho*(1+8*u), rho == 0)
	if rho >= 1 {
		return Contraction{}, argErr(fn, "rho", rho, ErrNoContraction)
	}
	return Contraction{Rho: rho, Provenance: Proved, Method: method}, nil
}

// DecayOptions configures [EstimateFromDecay].
type DecayOptions struct {
	// Margin is a relative safety margin ≥ 0: the estimate is multiplied
	// by 1 + Margin. Defaults to 0.
	Margin float64
}

// EstimateFromDecay estimates ρ from a series of errors e_0, e_1, … of
// one trajectory against its counterfactual at successive steps (e.g. the
// state errors E_Θ(k) of spec §3 over one phase): the least-squares fit
// log e_k ≈ log C + k·log ρ̂, skipping zeros (spec §8), gives
// ρ̂ = exp(slope)·(1 + Margin). The caller selects the range by slicing.
//
// The result is Estimated: an average decay rate over the range, not a
// per-step bound. It can be optimistic where decay is uneven (the paper
// reports ρ̂ > 1 right after a deletion and ρ̂ < 1 later); prefer
// [EstimateFromPairs] or a margin for certification.
//
// Errors (*ArgError): a negative or non-finite e_k (ErrValue); a negative
// Margin (ErrValue); fewer than 2 positive points (ErrTooFewPoints);
// ρ̂ ≥ 1 (ErrNoContraction, with ρ̂ in Value).
func EstimateFromDecay(errs []float64, opts DecayOptions) (Contraction, error) {
	const fn = "EstimateFromDecay"
	if err := checkNonNeg(fn, "Margin", opts.Margin); err != nil {
		return Contraction{}, err
	}
	var n, sk, sy float64
	for k, e := range errs {
		if bad(e) {
			return Contraction{}, argErr(fn, fmt.Sprintf("errs[%d]", k), e, ErrValue)
		}
		if e > 0 {
			n++
			sk += float64(k)
			sy += math.Log(e)
		}
	}
	if n < 2 {
		return Contraction{}, argErr(fn, "errs", n, ErrTooFewPoints)
	}
	kBar, yBar := sk/n, sy/n
	var sxx, sxy float64
	for k, e := range errs {
		if e > 0 {
			dk := float64(k) - kBar
			sxx += dk * dk
			sxy += dk * (math.Log(e) - yBar)
		}
	}
	rho := math.Exp(sxy/sxx) * (1 + opts.Margin)
	if !(rho < 1) {
		return Contraction{}, argErr(fn, "rho", rho, ErrNoContraction)
	}
	return Contraction{Rho: rho, Provenance: Estimated,
		Method: fmt.Sprintf("estimated: least-squares decay fit over %d points, margin %g", int(n), opts.Margin)}, nil
}

// PairOptions configures [EstimateFromPairs].
type PairOptions struct {
	// Quantile q ∈ (0, 1] of the one-step ratios to report. If 0, it
	// defaults to 1: the largest ratio observed.
	Quantile float64
	// Margin is a relative safety margin ≥ 0: the estimate is multiplied
	// by 1 + Margin. Defaults to 0.
	Margin float64
}

// EstimateFromPairs estimates the one-step contraction from pairs of
// trajectories driven by the same events from different starting states:
// each dists[j] holds the distances d_0, d_1, … between the two
// trajectories of pair j at successive steps. The one-step ratios
// r = d_{k+1}/d_k (for d_k > 0; d_k = d_{k+1} = 0 is skipped, d_k = 0 <
// d_{k+1} is an infinite ratio) are pooled and ρ̂ is their q-quantile — the
// ⌈q·m⌉-th smallest of m ratios, the conservative choice — times
// 1 + Margin. q = 1 gives the largest ratio, the empirical counterpart of
// the paper's Assumption "Contractive update map" (a sup over state
// pairs).
//
// The result is Estimated: it covers the observed pairs only.
//
// Errors (*ArgError): a negative or non-finite distance (ErrValue); q ∉
// (0, 1] or a negative Margin (ErrInvalid, ErrValue); no ratio
// (ErrTooFewPoints); ρ̂ ≥ 1 (ErrNoContraction, with ρ̂ in Value).
func EstimateFromPairs(dists [][]float64, opts PairOptions) (Contraction, error) {
	const fn = "EstimateFromPairs"
	q := opts.Quantile
	if q == 0 {
		q = 1
	}
	if math.IsNaN(q) || q <= 0 || q > 1 {
		return Contraction{}, argErr(fn, "Quantile", opts.Quantile, ErrInvalid)
	}
	if err := checkNonNeg(fn, "Margin", opts.Margin); err != nil {
		return Contraction{}, err
	}
	var ratios []float64
	for j, d := range dists {
		for k, v := range d {
			if bad(v) {
				return Contraction{}, argErr(fn, fmt.Sprintf("dists[%d][%d]", j, k), v, ErrValue)
			}
			if k == 0 {
				continue
			}
			switch prev := d[k-1]; {
			case prev > 0:
				ratios = append(ratios, v/prev)
			case v > 0:
				ratios = append(ratios, math.Inf(1))
			}
		}
	}
	if len(ratios) == 0 {
		return Contraction{}, argErr(fn, "dists", 0, ErrTooFewPoints)
	}
	slices.Sort(ratios)
	i := int(math.Ceil(q*float64(len(ratios)))) - 1
	rho := ratios[max(i, 0)] * (1 + opts.Margin)
	if !(rho < 1) {
		return Contraction{}, argErr(fn, "rho", rho, ErrNoContraction)
	}
	return Contraction{Rho: rho, Provenance: Estimated,
		Method: fmt.Sprintf("estimated: %g-quantile of %d one-step ratios from %d trajectory pairs, margin %g",
			q, len(ratios), len(dists), opts.Margin)}, nil
}
