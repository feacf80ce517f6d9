package noise

import (
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"gonum.org/v1/gonum/stat/distuv"

	"unlearn/internal/testutil"
)

// near is testutil.Near.
func near(got, want, absTol, relTol float64) bool { return testutil.Near(got, want, absTol, relTol) }

// wantArgError fails the test unless err is an *ArgError for argument arg
// wrapping sentinel.
func wantArgError(t *testing.T, err error, arg string, sentinel error) {
	t.Helper()
	require.ErrorIs(t, err, sentinel, "want an error for %s", arg)
	var ae *ArgError
	require.ErrorAs(t, err, &ae)
	require.Equal(t, arg, ae.Arg, "argument named by the error %q", err)
	require.True(t, strings.HasPrefix(err.Error(), "noise: "), "error %q lacks the package prefix", err)
}

// wantPanic fails the test unless f panics with a "noise: " message.
func wantPanic(t *testing.T, f func()) {
	t.Helper()
	testutil.WantPanic(t, "noise: ", f)
}

// unitPhi is the standard normal CDF in the erfc form, accurate in both
// tails: Φ(x) = erfc(−x/√2)/2.
func unitPhi(x float64) float64 { return math.Erfc(-x/math.Sqrt2) / 2 }

// deltaBW is Balle & Wang's (ICML 2018, Theorem 8) exact δ of the Gaussian
// mechanism with noise σ, L2 sensitivity alpha and privacy ε, evaluated
// independently of the DP library (which uses gonum's UnitNormal.CDF):
//
//	δ(σ) = Φ(α/(2σ) − εσ/α) − e^ε Φ(−α/(2σ) − εσ/α).
func deltaBW(sigma, alpha, eps float64) float64 {
	a := alpha / (2 * sigma)
	b := eps * sigma / alpha
	return unitPhi(a-b) - math.Exp(eps)*unitPhi(-a-b)
}

// zTwoSided returns the z with P(|N(0,1)| > z) = p.
func zTwoSided(p float64) float64 { return distuv.UnitNormal.Quantile(1 - p/2) }

// gaussianStats holds the outcome of checkGaussianSample.
type gaussianStats struct {
	mean, variance, ks float64
}

// checkGaussianSample tests that z (noise values, already centred: z = y−x)
// are i.i.d. N(0, σ²) with a total false-rejection probability of at most
// 3·p (p per test), using three tests whose tolerances are exact or
// conservative at every sample size:
//
//   - mean: |z̄| ≤ z_p·σ/√n, z_p the two-sided normal quantile (exact for
//     Gaussian data). For p = 1e-5, z_p = 4.41717, the Google DP library's
//     tolerance.
//   - variance: Σz²/σ² must lie between the p/2 and 1−p/2 quantiles of
//     χ²_n (exact for Gaussian data with known mean 0).
//   - normality: the Kolmogorov–Smirnov distance to N(0, σ²) must be at
//     most sqrt(ln(2/p)/(2n)), by the Dvoretzky–Kiefer–Wolfowitz
//     inequality with Massart's constant (P(D_n > t) ≤ 2e^{−2nt²}, valid
//     for every n).
func checkGaussianSample(t *testing.T, z []float64, sigma, p float64) gaussianStats {
	t.Helper()
	n := float64(len(z))
	var sum, sumSq float64
	for _, v := range z {
		sum += v
		sumSq += v * v
	}
	st := gaussianStats{mean: sum / n, variance: sumSq / n}
	if tol := zTwoSided(p) * sigma / math.Sqrt(n); math.Abs(st.mean) > tol {
		t.Errorf("mean %.6g outside ±%.6g (σ = %g, n = %v, false-rejection rate %g)", st.mean, tol, sigma, n, p)
	}
	chi := distuv.ChiSquared{K: n}
	lo, hi := chi.Quantile(p/2), chi.Quantile(1-p/2)
	if q := sumSq / (sigma * sigma); q < lo || q > hi {
		t.Errorf("Σz²/σ² = %.6g outside the χ²_%v interval [%.6g, %.6g] (false-rejection rate %g)", q, n, lo, hi, p)
	}
	st.ks = ksDistance(z, sigma)
	if tol := math.Sqrt(math.Log(2/p) / (2 * n)); st.ks > tol {
		t.Errorf("Kolmogorov–Smirnov distance %.6g > %.6g (DKW bound, false-rejection rate %g)", st.ks, tol, p)
	}
	return st
}

// ksDistance returns sup_x |F_n(x) − Φ(x/σ)| for the sample z.
func ksDistance(z []float64, sigma float64) float64 {
	s := append([]float64(nil), z...)
	slices.Sort(s)
	n := float64(len(s))
	var d float64
	for i, v := range s {
		f := unitPhi(v / sigma)
		d = max(d, math.Abs(float64(i+1)/n-f), math.Abs(f-float64(i)/n))
	}
	return d
}
