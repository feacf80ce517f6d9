package audit

import (
	"fmt"
	"math"
	"slices"

	"gonum.org/v1/gonum/stat/distuv"
)

// ClopperPearsonUpper returns the one-sided Clopper–Pearson upper confidence
// bound at level 1 − a for the success probability p of a binomial with k
// successes in n trials (Clopper & Pearson 1934): the p at which
// P[Bin(n, p) ≤ k] = a, which is the (1 − a)-quantile of Beta(k + 1, n − k)
// for k < n, and 1 for k = n. For k = 0 it is 1 − a^{1/n} in closed form,
// which is what it returns there. Whatever the true p,
// P[p ≤ ClopperPearsonUpper(K, n, a)] ≥ 1 − a for K ~ Bin(n, p): the bound
// is exact (conservative), never an approximation. The Beta quantile is
// gonum's stat/distuv.Beta; the same form is the upper bound of the
// auditing library of google-deepmind/jax_privacy (auditing.py,
// _clopper_pearson_upper).
//
// It panics, with an "audit: " prefix, unless 0 ≤ k ≤ n, n ≥ 1 and
// 0 < a < 1 (programmer errors).
func ClopperPearsonUpper(k, n int, a float64) float64 {
	if n < 1 || k < 0 || k > n || !(a > 0 && a < 1) {
		panic(fmt.Sprintf("audit: ClopperPearsonUpper(%d, %d, %v): want 0 ≤ k ≤ n, n ≥ 1, 0 < a < 1", k, n, a))
	}
	switch k {
	case n:
		return 1
	case 0:
		return -math.Expm1(math.Log(a) / float64(n))
	}
	return distuv.Beta{Alpha: float64(k + 1), Beta: float64(n - k)}.Quantile(1 - a)
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

// cpTable returns ClopperPearsonUpper(k, n, a) for k = 0..n.
func cpTable(n int, a float64) []float64 {
	t := make([]float64, n+1)
	for k := range t {
		t[k] = ClopperPearsonUpper(k, n, a)
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
