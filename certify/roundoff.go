package certify

import (
	"math"

	"unlearn/olbfgs"
	"unlearn/stream"
)

// This file bounds ε₁, the forward error of one float step of the
// certifiable learner (olbfgs.Learner.Step on an insert): the distance
// between the state the code computes and the exact map
//
//	T(w) = P_W(w − η·H_Z ∇ℓ_z(w))
//
// of the same float w, the stored float pairs of Z (with their exact inner
// products) and the loss's exact gradient. Twice ε₁ is the per-step
// round-off of Profile.RoundOff (two float trajectories; docs/theory.md
// §15.6, which carries the derivation). The analysis follows the code
// operation by operation with the standard model of floating-point
// arithmetic without underflow or overflow (Higham, "Accuracy and Stability
// of Numerical Algorithms", 2nd ed., §2.2): fl(a ∘ b) = (a ∘ b)(1 + δ),
// |δ| ≤ u = 2⁻⁵³, and, for n factors, Π(1 + δᵢ)^{±1} = 1 + θₙ with
// |θₙ| ≤ γₙ = nu/(1 − nu) (Lemma 3.1) — a bound, not a first-order
// estimate: no term of higher order is dropped. An inner product of n terms
// in any order (the kernels' four interleaved sums, or an FMA) has
// |fl(xᵀy) − xᵀy| ≤ γₙ|x|ᵀ|y| (eq. 3.5). An overflow makes the step
// non-finite, which the learner refuses (ErrDiverged); underflow is the
// premise, shared with the pair guard's own test (§15.2).
//
// Every bound below is itself computed in float64 with each operation
// rounded upwards (bnd), so the result is an upper bound of the exact
// expression, not an estimate of it.

// bnd is float arithmetic on non-negative upper bounds, each result
// rounded up: with round-to-nearest the exact result of an operation lies
// within half a unit in the last place of the computed one, so the next
// float64 above it is an upper bound.
type bnd struct{}

func (bnd) up(x float64) float64       { return math.Nextafter(x, math.Inf(1)) }
func (b bnd) add(x, y float64) float64 { return b.up(x + y) }
func (b bnd) mul(x, y float64) float64 { return b.up(x * y) }

// div bounds x/y for an upper bound x ≥ 0 and a lower bound y > 0.
func (b bnd) div(x, y float64) float64 { return b.up(x / y) }

// oneMinus is a lower bound of 1 − x for 0 ≤ x < 1.
func (bnd) oneMinus(x float64) float64 { return math.Nextafter(1-x, 0) }

// gamma is γₙ = nu/(1 − nu), rounded up.
func (b bnd) gamma(n int) float64 {
	nu := float64(n) * unit // exact: a small integer times a power of two
	return b.div(nu, b.oneMinus(nu))
}

// stepBounds are the public quantities ε₁ rests on, each an upper bound
// (lower for mu).
type stepBounds struct {
	d, tau   int
	eta      float64 // η, exact
	w, b     float64 // the radius W and sample bound B of the configuration (exact)
	c        float64 // ≥ 1/cos∠(s, y) = √(1 + r̄²) of every stored pair
	muBar    float64 // PairMin: a = sᵀy/‖s‖² ≥ μ̄ for every stored pair
	hMax     float64 // ‖H_Z‖ ≤ hMax for every memory (Config.SpectralBounds)
	extra    float64 // how far outside the ball the step's start may be
	gradient func(bs *stepBounds, wr, br float64) (norm, err float64)
}

// norms returns bounds of the state and payload norms that hold whatever
// the rounding of the learner's own checks: kappa bounds the relative
// error of the computed Euclidean norm (gonum floats.Norm, the scaled sum of
// squares of LAPACK's dnrm2: each squared term takes at most 3 roundings
// when added and at most 6 more at each of the later rescalings and
// additions, then a square root and a product: |n̂ − n| ≤ γ_{6d+4}·n); an
// accepted payload has fl(‖x‖) ≤ B, so ‖x‖ ≤ B/(1 − κ); a projected state
// has norm at most W + eProj (see projectionError).
func (s *stepBounds) norms() (wr, br, kappa float64) {
	var b bnd
	kappa = b.gamma(6*s.d + 4)
	br = b.div(s.b, b.oneMinus(kappa))
	wr = b.add(s.w, s.projectionError(kappa))
	return wr, br, kappa
}

// projectionError bounds ‖P̂(v) − P_W(v)‖ for the learner's computed
// projection P̂(v) = fl(v·fl(W/fl(‖v‖))) when fl(‖v‖) > W, else v, of any
// float v: if ‖v‖ ≥ W and the test passes, the factor W/n̂ has relative
// error at most (κ + 2u)/(1 − κ) against W/‖v‖; if it passes with
// ‖v‖ < W, P_W(v) = v and the factor is within (2κ + 2u)/(1 − κ) of 1;
// if it fails with ‖v‖ > W, ‖v‖ − W ≤ W·κ/(1 − κ). So
// ‖P̂(v) − P_W(v)‖ ≤ W·(2κ + 3u)/(1 − κ).
func (s *stepBounds) projectionError(kappa float64) float64 {
	var b bnd
	return b.mul(s.w, b.div(b.add(b.mul(2, kappa), 3*unit), b.oneMinus(kappa)))
}

// stepRoundOff returns ε₁, an upper bound of ‖computed step − T(w)‖ for
// every state, stored memory of at most τ pairs and accepted payload.
func (s *stepBounds) stepRoundOff() float64 {
	var b bnd
	wr, br, kappa := s.norms()
	wr = b.add(wr, s.extra) // the start; the projection's error is of the radius W
	gNorm, gErr := s.gradient(s, wr, br)
	worst := 0.0
	for k := 0; k <= s.tau; k++ {
		pNorm, pErr := s.twoLoop(k, gNorm, gErr)
		// w − fl(η·p̂), each component rounded twice:
		// |v̂ⱼ − vⱼ| ≤ η|p̂ⱼ − pⱼ| + u·η|p̂ⱼ| + u·|wⱼ − fl(η p̂ⱼ)|.
		ep := b.mul(s.eta, pErr)
		etaP := b.mul(s.eta, b.add(pNorm, pErr))
		v := b.add(ep, b.add(b.mul(unit, etaP), b.mul(unit, b.add(wr, b.mul(etaP, 1+unit)))))
		worst = max(worst, v)
	}
	// The projection is non-expansive: ‖P̂(v̂) − P_W(v)‖ ≤ ‖v̂ − v‖ + eProj.
	return b.add(worst, s.projectionError(kappa))
}

// paramOnly bounds the float error of the parameter-only correction of n
// deleted samples (unlearn.ParamOnly: w̃ = w + η·Σᵤ H_Z ∇ℓᵤ(w), the terms
// accumulated from zero in id order, then w + fl(η·acc) componentwise)
// against its exact value at the same float state and memory: each term
// is a gradient and a two-loop (the errors of stepRoundOff's first part),
// the sum of n terms adds γₙ·Σ‖ĥᵤ‖ (recursive summation, Higham eq. 4.4),
// and the update two roundings.
func (s *stepBounds) paramOnly(n int) float64 {
	var b bnd
	wr, br, _ := s.norms()
	gNorm, gErr := s.gradient(s, wr, br)
	worst := 0.0
	for k := 0; k <= s.tau; k++ {
		pNorm, pErr := s.twoLoop(k, gNorm, gErr)
		fn := float64(n)
		terms := b.mul(fn, b.add(pNorm, pErr)) // Σ‖ĥᵤ‖
		accErr := b.add(b.mul(fn, pErr), b.mul(b.gamma(n), terms))
		acc := b.add(terms, accErr)
		v := b.add(b.mul(s.eta, accErr), b.add(b.mul(unit, b.mul(s.eta, acc)), b.mul(unit, b.add(wr, b.mul(b.mul(s.eta, acc), 1+unit)))))
		worst = max(worst, v)
	}
	return worst
}

// twoLoop bounds the two-loop recursion with k stored pairs (Memory.Apply):
// for the exact gradient g (‖g‖ ≤ gNorm) and its computed value ĝ
// (‖ĝ − g‖ ≤ gErr), it returns bounds of ‖H_Z g‖ and of ‖p̂ − H_Z g‖, p̂
// the computed result. The exact map uses the stored vectors' exact inner
// products: ρᵢ = 1/(sᵢᵀyᵢ), γ = sᵀy/yᵀy of the newest pair. The code divides
// by the stored fl(sᵢᵀyᵢ), within a relative t = γ_d·c of sᵢᵀyᵢ (since
// |s|ᵀ|y| ≤ ‖s‖‖y‖ ≤ c·sᵀy), and uses γ̂ = fl(fl(sᵀy)/fl(yᵀy)), within
// tG = (1 + t)(1 + u)/(1 − γ_d) − 1 of γ ≤ hMax.
//
// Scale-free magnitudes: for any vector r, |ρ sᵀr|·‖y‖ ≤ c‖r‖,
// |ρ yᵀr|·‖s‖ ≤ c‖r‖ and |ρ sᵀr|·‖s‖ ≤ ‖r‖/μ̄ (‖s‖²/sᵀy = 1/a ≤ 1/μ̄);
// ‖I − ρ y sᵀ‖ = ‖s‖‖y‖/sᵀy ≤ c. With â = fl(fl(sᵀr̂)/fl(sᵀy)):
//
//	|â − a|·sᵀy/‖s‖ ≤ ‖r‖(u + t)/(1 − t) + (‖r̂ − r‖ + γ_d(‖r‖ + ‖r̂ − r‖))(1 + u)/(1 − t) =: eA,
//
// so |â − a|‖y‖ ≤ c·eA and |â − a|‖s‖ ≤ eA/μ̄, and likewise for b̂ with
// eB and the factors c (for ‖s‖). An update r̂ ← fl(r̂ + fl(ĉ·v)) adds at
// most γ₂(‖r̂‖ + |ĉ|‖v‖) to the error of r̂ + ĉv.
func (s *stepBounds) twoLoop(k int, gNorm, gErr float64) (pNorm, pErr float64) {
	var b bnd
	if k == 0 {
		// fl(γ₀·ĝ): γ₀ is exact; γ₀ ≤ hMax.
		g0 := s.hMax
		return b.mul(g0, gNorm), b.add(b.mul(g0, gErr), b.mul(unit, b.mul(g0, b.add(gNorm, gErr))))
	}
	gd := b.gamma(s.d)
	g2 := b.gamma(2)
	t := b.mul(gd, s.c)
	omt := b.oneMinus(t)
	tG := b.add(b.div(b.mul(b.add(1, t), 1+unit), b.oneMinus(gd)), -1)
	scalarErr := func(n, e float64) float64 { // eA or eB for ‖r‖ ≤ n, ‖r̂ − r‖ ≤ e
		rel := b.div(b.mul(n, b.add(unit, t)), omt)
		abs := b.div(b.mul(b.add(e, b.mul(gd, b.add(n, e))), 1+unit), omt)
		return b.add(rel, abs)
	}
	// First loop, newest to oldest: r ← r − aᵢyᵢ.
	n, e := gNorm, gErr
	qNorm := make([]float64, k) // ‖r‖ before step i (aᵢ's vector)
	aErr := make([]float64, k)  // eA of step i
	for i := range k {
		qNorm[i] = n
		aErr[i] = scalarErr(n, e)
		aY := b.mul(s.c, b.add(n, aErr[i])) // |â|‖y‖
		e = b.add(e, b.add(b.mul(s.c, aErr[i]), b.mul(g2, b.add(b.add(n, e), aY))))
		n = b.mul(s.c, n)
	}
	// r ← fl(γ̂·r̂).
	// γ̂r̂ − γr = (γ̂ − γ)r̂ + γ(r̂ − r), and the product's rounding.
	e = b.add(b.mul(s.hMax, e), b.add(b.mul(b.mul(s.hMax, tG), b.add(n, e)), b.mul(unit, b.mul(b.mul(s.hMax, b.add(1, tG)), b.add(n, e)))))
	n = b.mul(s.hMax, n)
	// Second loop, oldest to newest: r ← r + (aᵢ − bᵢ)sᵢ, the coefficient
	// rounded once more.
	for i := k - 1; i >= 0; i-- {
		eB := scalarErr(n, e)
		aS := b.div(qNorm[i], s.muBar)                            // |a|‖s‖
		coefErr := b.add(b.div(aErr[i], s.muBar), b.mul(s.c, eB)) // |(â − b̂) − (a − b)|‖s‖
		coef := b.add(b.add(aS, b.mul(s.c, n)), coefErr)          // |â − b̂|‖s‖
		coefErr = b.add(coefErr, b.mul(unit, coef))
		coef = b.mul(coef, 1+unit)
		e = b.add(e, b.add(coefErr, b.mul(g2, b.add(b.add(n, e), coef))))
		n = b.add(b.mul(s.c, n), aS)
	}
	return min(n, b.mul(s.hMax, gNorm)), e
}

// logisticGradient bounds ‖∇ℓ(w)‖ and the error of its computation
// (stream.Logistic.Grad) for ‖w‖ ≤ wr, ‖x‖ ≤ br: the margin
// m = fl(xᵀw) is within γ_d·br·wr; the sigmoid, 1/(1 + e) or e/(1 + e)
// with e = exp(∓m) (Go's math.Exp is within one unit in the last place,
// a relative 2u), within a relative γ₆ of σ at m̂ and σ is ¼-Lipschitz, so
// the coefficient c = −y·σ(−y·m) is within dC = γ_d·br·wr/4 + γ₈; each
// component fl(fl(c·xᵢ) + fl(λ·wᵢ)) adds γ₂(|ĉxᵢ| + λ|wᵢ|). (The sigmoid
// takes at most six roundings with exp within one unit in the last place;
// γ₈ allows exp two.)
func logisticGradient(lambda float64) func(*stepBounds, float64, float64) (float64, float64) {
	return func(s *stepBounds, wr, br float64) (float64, float64) {
		var b bnd
		norm := b.add(br, b.mul(lambda, wr))
		dC := b.add(b.mul(b.mul(b.mul(b.gamma(s.d), br), wr), 0.25), b.gamma(8))
		cMax := b.add(1, dC)
		err := b.add(b.mul(dC, br), b.mul(b.gamma(2), b.add(b.mul(cMax, br), b.mul(lambda, wr))))
		return norm, err
	}
}

// quadraticGradient bounds ‖∇ℓ(w)‖ = ‖H(α)(w − a)‖ ≤ l·(wr + br) and the
// error of its computation (stream.Quadratic.Grad): each row sum
// Σⱼ hᵢⱼ·fl(wⱼ − aⱼ) takes at most d + 2 roundings per term, the factors
// fl(1 − α)·s₀ and α·s₁ and their sum three more: the computed component is
// Σⱼ ((1−α)h⁰ᵢⱼ + αh¹ᵢⱼ)(wⱼ − aⱼ)(1 + θ_{d+5}), so the error is at most
// γ_{d+5}·‖|H|‖₂·‖w − a‖ ≤ γ_{d+5}·fro·(wr + br), fro ≥ ‖H0‖_F, ‖H1‖_F.
func quadraticGradient(l, fro float64) func(*stepBounds, float64, float64) (float64, float64) {
	return func(s *stepBounds, wr, br float64) (float64, float64) {
		var b bnd
		r := b.add(wr, br)
		return b.mul(l, r), b.mul(b.mul(b.gamma(s.d+5), fro), r)
	}
}

// withIntercept bounds the gradient of a linear model with a regularized
// intercept (olbfgs.Config.Intercept and RidgeIntercept) by the gradient
// bounds of the model without one on the payload (x, 1) of d + 1
// coordinates (the step bounds' d is then the parameter dimension d + 1):
// the learner's affine path computes the score fl(Dot4(x, w) + b), a sum
// of d + 1 terms, the coefficient with the loss's own link, and the
// components fl(c·xⱼ) + fl(λ·wⱼ) and c + fl(λ·b) — the intercept's with
// fewer roundings than a payload coordinate's. ‖(x, 1)‖ = √(‖x‖² + 1),
// rounded up (math.Sqrt is correctly rounded).
func withIntercept(grad func(*stepBounds, float64, float64) (float64, float64)) func(*stepBounds, float64, float64) (float64, float64) {
	return func(s *stepBounds, wr, br float64) (float64, float64) {
		var b bnd
		return grad(s, wr, b.up(math.Sqrt(b.add(b.mul(br, br), 1))))
	}
}

// newStepBounds returns the step bounds of a certifiable, guarded
// configuration whose loss the header describes (logistic: the gradient
// from λ, with a regularized intercept if the configuration has one;
// quadratic: from l ≥ λmax and fro ≥ the Frobenius norms of H0 and H1),
// over the parameter dimension, or ok = false for a loss without a bound.
func newStepBounds(cfg olbfgs.Config, h stream.Header, hMax, l, fro float64) (*stepBounds, bool) {
	var b bnd
	s := &stepBounds{d: cfg.ParamDim(), tau: cfg.Memory, eta: cfg.StepSize, w: cfg.Radius, b: cfg.SampleBound,
		c: b.up(math.Sqrt(b.add(1, b.mul(cfg.PairAngle, cfg.PairAngle)))), muBar: cfg.PairMin, hMax: hMax}
	switch h.Kind {
	case stream.KindLogistic:
		s.gradient = logisticGradient(h.Lambda)
		if cfg.Intercept {
			s.gradient = withIntercept(s.gradient)
		}
	case stream.KindQuadratic:
		s.gradient = quadraticGradient(l, fro)
	default:
		return nil, false
	}
	return s, true
}

// roundOff returns 2ε₁ for a step that starts up to extra ≥ 0 outside the
// learner's ball (0: every state the learner itself produces; a
// parameter-only result, which is not projected, is up to its allowance
// outside).
func (s *stepBounds) roundOff(extra float64) float64 {
	t := *s
	t.extra = extra
	return bnd{}.mul(2, t.stepRoundOff())
}
