package audit

import (
	"fmt"
	"math"
	"math/big"
	"slices"

	"gonum.org/v1/gonum/mathext"
)

// ClopperPearsonUpper returns the one-sided Clopper–Pearson upper confidence
// bound at level 1 − a for the success probability p of a binomial with k
// successes in n trials (Clopper & Pearson 1934): the p at which
// P[Bin(n, p) ≤ k] = a (1 for k = n). Whatever the true p,
// P[p ≤ ClopperPearsonUpper(K, n, a)] ≥ 1 − a for K ~ Bin(n, p).
//
// The result is never below the exact bound and exceeds it by at most
// 10⁻¹⁰ relative to the smaller of p and 1 − p, or two units in the last
// place of p where that is more (k ≤ [MaxExactErrors]; beyond, see below):
// it is found by
// [cpEstimate] (a safeguarded Newton iteration on the binomial CDF, which is
// gonum's regularized incomplete beta function I_{1−p}(n − k, k + 1)) and
// then certified — the binomial CDF at the returned p is bounded from above
// in math/big with every rounding directed upwards ([cdfUpper]) and must be
// ≤ a, else p is moved up and certified again. gonum's Beta quantile, used
// before, was sound but lost its accuracy for large n: at n = 30000 it
// returned bounds 40–800 times too large for 3–6 errors, which made an
// audit with many trials powerless.
//
// For k > MaxExactErrors the exact tail sum is not formed; the bound is
// then Hoeffding's, min(1, k/n + √(ln(1/a)/(2n))), rounded up: valid, and
// looser, for tests that err that often.
//
// It panics, with an "audit: " prefix, unless 0 ≤ k ≤ n, n ≥ 1 and
// 0 < a < 1 (programmer errors).
func ClopperPearsonUpper(k, n int, a float64) float64 {
	if n < 1 || k < 0 || k > n || !(a > 0 && a < 1) {
		panic(fmt.Sprintf("audit: ClopperPearsonUpper(%d, %d, %v): want 0 ≤ k ≤ n, n ≥ 1, 0 < a < 1", k, n, a))
	}
	if k == n {
		return 1
	}
	if k > MaxExactErrors {
		return hoeffdingUpper(k, n, a)
	}
	return certifyUpper(k, n, a, cpEstimate(k, n, a, 0))
}

// MaxExactErrors is the largest count k for which ClopperPearsonUpper
// certifies the exact Clopper–Pearson bound (a sum of k + 1 terms in
// math/big); larger counts get Hoeffding's bound.
const MaxExactErrors = 1 << 16

// certifyUpper returns a certified upper bound of the Clopper–Pearson
// bound, starting from its estimate est: a float64 p with
// cdfUpper(k, n, p) ≤ a. Newton's method on the accurate CDF (cdfUpper is
// exact to about 2⁻¹²⁰) refines est to about a unit in the last place
// (the derivative, cdfSlope, only sets the rate), and p is then raised by
// one, two, four, … units in the last place until the certificate holds.
// So p is never below the exact bound and exceeds it by a few units in the
// last place of p or, where p is near 1, of 1 − p's scale.
func certifyUpper(k, n int, a, est float64) float64 {
	ba := new(big.Float).SetPrec(128).SetFloat64(a)
	excess := func(p float64) float64 { // F(p) − a, ≥ the exact difference
		d, _ := new(big.Float).SetPrec(128).Sub(cdfUpper(k, n, p), ba).Float64()
		return d
	}
	p := est
	for range 8 {
		next := p + excess(p)/cdfSlope(k, n, p)
		if !(next > 0 && next < 1) {
			break
		}
		if math.Abs(next-p) <= 0x1p-52*min(p, 1-p) {
			p = next
			break
		}
		p = next
	}
	for up := 1; p < 1 && excess(p) > 0; up *= 2 {
		for range up {
			p = math.Nextafter(p, 2)
		}
	}
	return min(p, 1)
}

// cdfSlope returns −F′(p) = n·C(n − 1, k)·p^k·(1 − p)^{n−1−k} > 0, the
// slope of the binomial CDF F(k; n, ·) (float64, from lgamma).
func cdfSlope(k, n int, p float64) float64 {
	fn, fk := float64(n), float64(k)
	lg := func(x float64) float64 { v, _ := math.Lgamma(x); return v }
	return math.Exp(math.Log(fn) + lg(fn) - lg(fk+1) - lg(fn-fk) + fk*math.Log(p) + (fn-1-fk)*math.Log1p(-p))
}

// hoeffdingUpper is min(1, k/n + √(ln(1/a)/(2n))) rounded up: by
// Hoeffding's inequality P[Bin(n, p) ≤ k] ≤ exp(−2n(p − k/n)²) ≤ a at
// every p at least that large. Every operation's relative error is at most
// 2⁻⁵² (a few ulps for the logarithm); the factor 1 + 2⁻⁴⁵ covers them.
func hoeffdingUpper(k, n int, a float64) float64 {
	b := float64(k)/float64(n) + math.Sqrt(-math.Log(a)/(2*float64(n)))
	return min(1, math.Nextafter(b*(1+0x1p-45), 2))
}

// cdfUpper returns an upper bound of the binomial CDF
// F(k; n, p) = Σ_{i=0}^{k} C(n, i) p^i (1 − p)^{n−i} at the float64 p ∈
// (0, 1), computed in math/big with every rounding directed upwards on
// non-negative quantities: (1 − p)^n from 1 − p rounded up by repeated
// squaring, then t_{i+1} = t_i·(n − i)/(i + 1)·r with r = p/(1 − p) (the
// divisor rounded down), and the sum. Each result is at least the exact
// value of the operation on operands at least as large, so the total is at
// least the exact F (no libm function is involved). Cost: O(k + log n)
// operations at 128 bits.
func cdfUpper(k, n int, p float64) *big.Float {
	const prec = 128
	up := func() *big.Float { return new(big.Float).SetPrec(prec).SetMode(big.ToPositiveInf) }
	bp := up().SetFloat64(p)
	one := up().SetInt64(1)
	qUp := up().Sub(one, bp)
	qDown := new(big.Float).SetPrec(prec).SetMode(big.ToNegativeInf).Sub(one, bp)
	r := up().Quo(bp, qDown)
	// t = qUp^n by squaring.
	t, base := up().SetInt64(1), up().Set(qUp)
	for e := n; e > 0; e >>= 1 {
		if e&1 == 1 {
			t.Mul(t, base)
		}
		if e > 1 {
			base.Mul(base, base)
		}
	}
	sum := up().Set(t)
	num, den := up(), up()
	for i := range k {
		t.Mul(t, num.SetInt64(int64(n-i)))
		t.Quo(t, den.SetInt64(int64(i+1)))
		t.Mul(t, r)
		sum.Add(sum, t)
	}
	return sum
}

// cpEstimate returns an estimate of the Clopper–Pearson upper bound (within
// about 10⁻¹³ relative), at least lo: the root of
// g(p) = ln F(k; n, p) − ln a by Newton's method, safeguarded by a
// bisection bracket. F(k; n, p) = I_{1−p}(n − k, k + 1) (gonum's
// mathext.RegIncBeta) and F′(p) = −n·C(n−1, k)·p^k (1 − p)^{n−1−k}. For
// k = 0 it is 1 − a^{1/n} in closed form.
func cpEstimate(k, n int, a, lo float64) float64 {
	if k == 0 {
		return -math.Expm1(math.Log(a) / float64(n))
	}
	fn, fk := float64(n), float64(k)
	logF := func(p float64) float64 { return math.Log(mathext.RegIncBeta(fn-fk, fk+1, 1-p)) }
	la := math.Log(a)
	hi := 1.0
	p := max(lo, min((fk+1)/fn, 0.5))
	for range 200 {
		g := logF(p) - la
		switch {
		case math.IsNaN(g):
			p = (lo + hi) / 2
			continue
		case g > 0:
			lo = p
		default:
			hi = p
		}
		if hi-lo <= 1e-15*hi {
			break
		}
		// g′(p) = F′(p)/F(p).
		next := p + g/math.Exp(math.Log(cdfSlope(k, n, p))-logF(p))
		if !(next > lo && next < hi) || math.Abs(next-p) > 0.5*(hi-lo) {
			next = lo + (hi-lo)/2
		}
		if math.Abs(next-p) <= 1e-15*p {
			return next
		}
		p = next
	}
	return hi
}

// EpsilonLowerBound returns the lower bound on ε implied by a test whose
// false-positive rate is at most fpr and false-negative rate at most fnr
// against a mechanism claimed (ε, δ)-indistinguishable:
//
//	ε_lb = max(0, ln((1 − δ − fnr)/fpr), ln((1 − δ − fpr)/fnr)),
//
// a term whose numerator is ≤ 0 counting as −∞. The source is the
// hypothesis-testing characterisation of (ε, δ)-DP (Kairouz, Oh &
// Viswanath 2015, Theorem 2.1; Wasserman & Zhou 2010): for every test
// between the outputs on two neighbouring inputs,
// FPR + e^ε·FNR ≥ 1 − δ and e^ε·FPR + FNR ≥ 1 − δ. Solving for ε gives the
// two terms; Jagielski, Ullman & Oprea (2020, "Auditing Differentially
// Private Machine Learning: How Private is Private SGD?", NeurIPS; their
// ε_LB) and Nasr, Song, Thakurta, Papernot & Carlini (2021, "Adversary
// Instantiation: Lower Bounds for Differentially Private Machine
// Learning", IEEE S&P) use it with Clopper–Pearson upper bounds for fpr
// and fnr, which
// makes ε_lb a lower confidence bound: the formula is decreasing in both
// rates, so ε_lb computed from upper bounds that hold is at most the true
// ε. δ is the certified δ: it is the probability mass the guarantee is
// allowed to lose, so it is subtracted from the success probability
// 1 − fnr (or 1 − fpr) before the ratio is taken; a larger δ gives a
// smaller ε_lb.
//
// fpr and fnr must be in (0, 1] (Clopper–Pearson upper bounds are) and δ
// in [0, 1); it panics otherwise (a programmer error).
func EpsilonLowerBound(fpr, fnr, delta float64) float64 {
	if !(fpr > 0 && fpr <= 1) || !(fnr > 0 && fnr <= 1) || !(delta >= 0 && delta < 1) {
		panic(fmt.Sprintf("audit: EpsilonLowerBound(%v, %v, %v): want rates in (0, 1], δ in [0, 1)", fpr, fnr, delta))
	}
	eps := 0.0
	if num := 1 - delta - fnr; num > 0 {
		eps = max(eps, math.Log(num/fpr))
	}
	if num := 1 - delta - fpr; num > 0 {
		eps = max(eps, math.Log(num/fnr))
	}
	return eps
}

// cpTable returns the Clopper–Pearson upper bounds for k = 0..n errors in
// n trials at level a, as estimated by cpEstimate (Hoeffding's bound beyond
// MaxExactErrors), for the selection split: they only rank candidate tests,
// which need no guarantee (the evaluation split's bounds are certified by
// ClopperPearsonUpper), and certifying n + 1 of them would cost O(n²)
// operations in math/big.
func cpTable(n int, a float64) []float64 {
	t := make([]float64, n+1)
	lo := 0.0
	for k := range t {
		switch {
		case k == n:
			t[k] = 1
		case k > MaxExactErrors:
			t[k] = hoeffdingUpper(k, n, a)
		default:
			t[k] = cpEstimate(k, n, a, lo)
			lo = t[k]
		}
	}
	return t
}

// rule is a threshold test on a scalar statistic s: it guesses world A when
// s > Threshold (Above) or when s ≤ Threshold (!Above), world B otherwise.
type rule struct {
	threshold float64
	above     bool
}

// guessA applies the rule.
func (r rule) guessA(s float64) bool { return (s > r.threshold) == r.above }

// bestRule returns the threshold rule on the statistic values a (world A)
// and b (world B) that maximises the ε lower bound computed from the
// Clopper–Pearson tables upA (indexed by the number of false negatives,
// over len(a) trials) and upB (false positives, over len(b) trials), and
// that score. Candidate thresholds are the distinct values v_j of a ∪ b
// (the rule s > t with t the midpoint of v_j and the next value, or
// t = v_j for the largest, which puts everything on one side), each in both orientations; ties go to the
// first candidate (smallest threshold, Above before below), so the choice
// is deterministic. a and b are sorted in place.
func bestRule(a, b []float64, upA, upB []float64, delta float64) (rule, float64) {
	slices.Sort(a)
	slices.Sort(b)
	nA, nB := len(a), len(b)
	best, bestScore := rule{threshold: math.Inf(1)}, -1.0
	i, j := 0, 0 // a[:i] and b[:j] are ≤ the current threshold
	for i < nA || j < nB {
		var t float64
		switch {
		case i == nA:
			t = b[j]
		case j == nB:
			t = a[i]
		default:
			t = min(a[i], b[j])
		}
		for i < nA && a[i] <= t {
			i++
		}
		for j < nB && b[j] <= t {
			j++
		}
		// Every threshold in [t, next) splits the trials the same way;
		// report the midpoint, which is robust to fresh trials.
		if i < nA || j < nB {
			next := math.Inf(1)
			if i < nA {
				next = a[i]
			}
			if j < nB {
				next = min(next, b[j])
			}
			if mid := t + (next-t)/2; mid < next && !math.IsInf(mid, 0) {
				t = mid
			}
		}
		// Above: guess A when s > t. FN = A trials ≤ t, FP = B trials > t.
		if s := EpsilonLowerBound(upB[nB-j], upA[i], delta); s > bestScore {
			best, bestScore = rule{threshold: t, above: true}, s
		}
		// Below: guess A when s ≤ t. FN = A trials > t, FP = B trials ≤ t.
		if s := EpsilonLowerBound(upB[j], upA[nA-i], delta); s > bestScore {
			best, bestScore = rule{threshold: t, above: false}, s
		}
	}
	return best, bestScore
}
