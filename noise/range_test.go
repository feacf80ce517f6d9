package noise

import (
	"math"
	"math/big"
	"testing"

	"pgregory.net/rapid"

	"unlearn/internal/gaussref"
)

// largeEpsilonBracket returns a bracket [lo, hi] of δ(μ, ε) for μ = 1/σ,
// for ε large enough that e^ε does not fit a big.Float (the 256-bit
// reference gaussref.Delta forms it). It uses the stable form
// δ = Φ(−x) − φ(x)·R(y), x = ε/μ − μ/2, y = ε/μ + μ/2, with Mills' ratio
// bounded by y/(y² + 1) ≤ R(y) ≤ 1/y (y > 0; Gordon 1941):
//
//	Φ(−x) − φ(x)/y ≤ δ ≤ Φ(−x) − φ(x)·y/(y² + 1).
//
// x and y are computed from the float64 σ and ε in 512-bit arithmetic, Φ
// and φ by the reference's erfc and exp (which never see ε itself). The
// bracket's relative width is about 1/y² (below 10⁻⁹ for the y ≥ 4·10⁴
// of ε ≥ 2³⁰), shares no code with noise/delta.go, and is exact but for
// the reference's own 2⁻²⁵⁰-relative rounding.
func largeEpsilonBracket(sigma, eps float64) (lo, hi *big.Float) {
	const prec = 512
	f := func(v float64) *big.Float { return new(big.Float).SetPrec(prec).SetFloat64(v) }
	mu := new(big.Float).SetPrec(prec).Quo(f(1), f(sigma))
	b := new(big.Float).SetPrec(prec).Quo(f(eps), mu)
	half := new(big.Float).SetPrec(prec).Quo(mu, f(2))
	x := new(big.Float).SetPrec(prec).Sub(b, half)
	y := new(big.Float).SetPrec(prec).Add(b, half)
	var tail *big.Float // Φ(−x), by the reference's erfc of |x| (its series for a negative argument needs ≈ 1.45x² bits)
	if x.Sign() >= 0 {
		tail = gaussref.UpperTail(x, prec)
	} else {
		tail = new(big.Float).SetPrec(prec).Sub(f(1), gaussref.UpperTail(new(big.Float).Neg(x), prec))
	}
	// φ(x) = exp(−x²/2)/√(2π).
	e := new(big.Float).SetPrec(prec).Mul(x, x)
	e.Quo(e, f(-2))
	phi := gaussref.Exp(e, prec)
	twoPi := new(big.Float).SetPrec(prec).Mul(gaussref.Pi(prec), f(2))
	phi.Quo(phi, new(big.Float).SetPrec(prec).Sqrt(twoPi))
	lo = new(big.Float).SetPrec(prec).Quo(phi, y)
	lo.Sub(tail, lo)
	y2 := new(big.Float).SetPrec(prec).Mul(y, y)
	y2.Add(y2, f(1))
	hi = new(big.Float).SetPrec(prec).Mul(phi, y)
	hi.Quo(hi, y2)
	hi.Sub(tail, hi)
	return lo, hi
}

// wantSoundSigmaAnyEpsilon checks σ (at α = 1) against the exact δ: the
// 256-bit reference up to ε = 2³⁰, the bracket of largeEpsilonBracket
// above. σ must be valid (δ(σ) ≤ δ; above 2³⁰ the bracket's upper end,
// with a relative 10⁻¹² for its width) and tight (δ(σ/1.001) > δ).
func wantSoundSigmaAnyEpsilon(t testing.TB, sigma, eps, delta float64) {
	t.Helper()
	if eps <= 0x1p30 {
		wantSoundSigma(t, sigma, eps, delta)
		return
	}
	d := new(big.Float).SetPrec(512).SetFloat64(delta)
	if _, hi := largeEpsilonBracket(sigma, eps); hi.Cmp(new(big.Float).Mul(d, big.NewFloat(1+1e-12))) > 0 {
		t.Fatalf("ε = %v, δ = %v: σ = %v gives δ up to %s > δ: below the exact σ", eps, delta, sigma, hi.Text('g', 12))
	}
	if lo, _ := largeEpsilonBracket(sigma/(1+analyticAccuracy), eps); lo.Cmp(d) <= 0 {
		t.Fatalf("ε = %v, δ = %v: σ = %v is more than 0.1%% above the exact σ (δ(σ/1.001) ≥ %s)", eps, delta, sigma, lo.Text('g', 12))
	}
}

// TestSigmaAnalyticWholeRange: the analytic σ is finite, valid, within
// 0.1% of the exact value and non-increasing in ε over the whole float64
// range of ε, from 2⁻⁵⁰ to the largest float64, at δ from 0.5 to the
// smallest accepted 2⁻¹⁰²². Before: above ε ≈ 10¹⁵⁴, μ²/2 overflowed in
// the evaluation of δ, every σ looked too small, and σ came out 10¹⁸⁶
// times too large (1.8·10¹⁰⁸ at ε = 10²⁰⁰; the exact σ is 7.07·10⁻¹⁰¹).
func TestSigmaAnalyticWholeRange(t *testing.T) {
	step := 12
	if testing.Short() {
		step = 32
	}
	for _, delta := range []float64{0.5, 1e-5, 0x1p-1022} {
		prev := math.Inf(1)
		for k := -50; k <= 1023; k += step {
			eps := math.Ldexp(1, k)
			if k == 1023 {
				eps = math.MaxFloat64
			}
			s, err := SigmaAnalytic(1, eps, delta)
			if err != nil {
				t.Fatalf("ε = 2^%d, δ = %v: %v", k, delta, err)
			}
			if !(s > 0) || math.IsInf(s, 0) {
				t.Fatalf("ε = 2^%d, δ = %v: σ = %v", k, delta, s)
			}
			if s > prev {
				t.Fatalf("δ = %v: σ(2^%d) = %v > σ(2^%d) = %v: not non-increasing in ε", delta, k, s, k-step, prev)
			}
			prev = s
			wantSoundSigmaAnyEpsilon(t, s, eps, delta)
		}
	}
	// The case of the issue, against its exact value 1/√(2·10²⁰⁰)·(1 +
	// O(10⁻¹⁰⁰)) ≈ 7.0711·10⁻¹⁰¹ at δ = 10⁻⁵ (x ≈ 4.265 ≪ μ).
	s, err := SigmaAnalytic(1, 1e200, 1e-5)
	if err != nil || s < 7.0710e-101 || s > 7.0711e-101*1.001 {
		t.Fatalf("σ(ε = 10²⁰⁰) = %v, %v; want ≈ 7.0711e-101", s, err)
	}
}

// TestSigmaAnalyticLargeEpsilonMonotoneProperty: for random pairs
// ε₁ < ε₂ anywhere above 1, σ(ε₁) ≥ σ(ε₂) exactly, and σ is linear in α
// (one rounding up of α·σ(1)).
func TestSigmaAnalyticLargeEpsilonMonotoneProperty(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		e1 := math.Exp(rapid.Float64Range(0, math.Log(math.MaxFloat64)).Draw(t, "log eps1"))
		e2 := math.Exp(rapid.Float64Range(0, math.Log(math.MaxFloat64)).Draw(t, "log eps2"))
		d := math.Exp(rapid.Float64Range(math.Log(0x1p-1022), math.Log(0.9)).Draw(t, "log delta"))
		// exp of log(MaxFloat64) may round up to +Inf: cap both draws.
		e1, e2 = min(e1, e2, math.MaxFloat64), min(max(e1, e2), math.MaxFloat64)
		s1, err1 := SigmaAnalytic(1, e1, d)
		s2, err2 := SigmaAnalytic(1, e2, d)
		if err1 != nil || err2 != nil {
			t.Fatalf("ε = %v, %v, δ = %v: %v, %v", e1, e2, d, err1, err2)
		}
		if s1 < s2 {
			t.Fatalf("δ = %v: σ(ε = %v) = %v < σ(ε = %v) = %v", d, e1, s1, e2, s2)
		}
	})
}
