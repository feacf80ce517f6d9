package align

import (
	"fmt"
	"math"
)

// Range is an inclusive range of post-deletion steps [From, To]; it is
// empty when From > To.
type Range struct{ From, To int }

// Phases returns the decay phases of spec §8 for memory size τ ≥ 1 and
// horizon H ≥ 0, inclusive and clipped to [0, H]:
//
//	P1 = [0, τ−1]   the deleted data may still be in the curvature pairs,
//	P2 = [τ, 2τ−1]  direct memory has cleared, within 2τ of the deletion,
//	P3 = [2τ, H]    the indirect tail.
//
// A phase that starts after H is empty. It panics if tau < 1 or h < 0.
func Phases(tau, h int) [3]Range {
	if tau < 1 || h < 0 {
		panic(fmt.Sprintf("align: Phases(tau=%d, h=%d): need tau ≥ 1 and h ≥ 0", tau, h))
	}
	return [3]Range{
		{0, min(tau-1, h)},
		{tau, min(2*tau-1, h)},
		{2 * tau, h},
	}
}

// Fit is a least-squares exponential envelope E(k) ≈ C·ρ̂^k over a range
// of steps (spec §3, the paper's decay-rate fit).
type Fit struct {
	// From and To are the inclusive range of k that was fitted.
	From, To int
	// Points is the number of steps used (those with E(k) > 0 and finite).
	Points int
	// OK reports that at least two points were used; otherwise the fit has
	// no value and the fields below are 0.
	OK bool
	// LogC and LogRho are the intercept and slope of the line
	// log E(k) ≈ LogC + k·LogRho (k is the step itself, not its offset in
	// the range).
	LogC, LogRho float64
	// Rho is ρ̂ = exp(LogRho).
	Rho float64
}

// FitDecay fits log series[k] ≈ log C + k·log ρ̂ by ordinary least squares
// over the steps k ∈ [from, to] where series[k] is positive and finite
// (zeros — exact agreement — have no logarithm and are skipped, spec §8):
//
//	log ρ̂ = Σ (k − k̄)(y_k − ȳ) / Σ (k − k̄)²,   log C = ȳ − k̄·log ρ̂,
//
// with y_k = log series[k] and the means over the points used (two passes,
// in increasing k). Fewer than two points give a Fit with OK false. It is
// a general tool for any non-negative series (state errors, bounds). It
// panics if from < 0 or to ≥ len(series) (an empty range, from > to, is
// fine).
func FitDecay(series []float64, from, to int) Fit {
	f := Fit{From: from, To: to}
	if from > to {
		return f
	}
	if from < 0 || to >= len(series) {
		panic(fmt.Sprintf("align: FitDecay: range [%d, %d] outside the series of length %d", from, to, len(series)))
	}
	usable := func(v float64) bool { return v > 0 && !math.IsInf(v, 1) }
	var sk, sy float64
	for k := from; k <= to; k++ {
		if v := series[k]; usable(v) {
			f.Points++
			sk += float64(k)
			sy += math.Log(v)
		}
	}
	if f.Points < 2 {
		return f
	}
	kbar, ybar := sk/float64(f.Points), sy/float64(f.Points)
	var sxx, sxy float64
	for k := from; k <= to; k++ {
		if v := series[k]; usable(v) {
			dk := float64(k) - kbar
			sxx += dk * dk
			sxy += dk * (math.Log(v) - ybar)
		}
	}
	f.OK = true
	f.LogRho = sxy / sxx
	f.LogC = ybar - kbar*f.LogRho
	f.Rho = math.Exp(f.LogRho)
	return f
}
