package bound

import (
	"errors"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"gonum.org/v1/gonum/mat"
	"pgregory.net/rapid"
)

func TestAnalyticContractionValues(t *testing.T) {
	for _, tc := range []struct {
		name string
		p    AnalyticParams
		want float64 // exact value of the formula
	}{
		// ρ₀ = max(|1 − 0.1·0.1·1|, |1 − 0.1·1·10|) = max(0.99, 0) = 0.99.
		{"commuting", AnalyticParams{Mu: 1, L: 10, Eta: 0.1, HMin: 0.1, HMax: 1, Case: Commuting}, 0.99},
		// Overshoot side: |1 − 0.3·1·5| = 0.5 > |1 − 0.3·0.5·1| = 0.85? no:
		// max(0.85, 0.5) = 0.85.
		{"commuting-overshoot-side", AnalyticParams{Mu: 1, L: 5, Eta: 0.3, HMin: 0.5, HMax: 1, Case: Commuting}, 0.85},
		// H = I: both cases agree, ρ = max(|1−0.1|, |1−0.1·4|) = 0.9.
		{"general-identity", AnalyticParams{Mu: 1, L: 4, Eta: 0.1, HMin: 1, HMax: 1}, 0.9},
		// sqrt(1.21/1)·max(|1 − 0.1·1·1|, |1 − 0.1·1.21·2|) = 1.1·0.9 = 0.99.
		{"general", AnalyticParams{Mu: 1, L: 2, Eta: 0.1, HMin: 1, HMax: 1.21}, 0.99},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, err := AnalyticContraction(tc.p)
			require.NoError(t, err)
			// Rounded up by at most 9 ulps.
			if c.Rho < tc.want || !near(c.Rho, tc.want, 0, 1e-14) {
				t.Errorf("ρ = %.17g, want %.17g (rounded up)", c.Rho, tc.want)
			}
			assert.Equal(t, Proved, c.Provenance, "provenance")
			assert.NotEmpty(t, c.Method, "method")
		})
	}
}

func TestAnalyticContractionRefuses(t *testing.T) {
	ok := AnalyticParams{Mu: 1, L: 10, Eta: 0.1, HMin: 0.1, HMax: 1, Case: Commuting}
	for _, tc := range []struct {
		name     string
		edit     func(p *AnalyticParams)
		arg      string
		sentinel error
	}{
		{"mu=0", func(p *AnalyticParams) { p.Mu = 0 }, "Mu", ErrValue},
		{"L=NaN", func(p *AnalyticParams) { p.L = math.NaN() }, "L", ErrValue},
		{"eta<0", func(p *AnalyticParams) { p.Eta = -0.1 }, "Eta", ErrValue},
		{"hMin=Inf", func(p *AnalyticParams) { p.HMin = math.Inf(1) }, "HMin", ErrValue},
		{"mu>L", func(p *AnalyticParams) { p.Mu = 20 }, "Mu", ErrInvalid},
		{"hMin>hMax", func(p *AnalyticParams) { p.HMin = 2 }, "HMin", ErrInvalid},
		{"unknown-case", func(p *AnalyticParams) { p.Case = 5 }, "Case", ErrInvalid},
		// η·hMax·L = 2: |1 − 2| = 1, no contraction.
		{"step-too-long", func(p *AnalyticParams) { p.Eta = 0.2 }, "rho", ErrNoContraction},
		// sqrt(10)·0.99 > 1.
		{"general-wide-spectrum", func(p *AnalyticParams) { p.Case = General }, "rho", ErrNoContraction},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := ok
			tc.edit(&p)
			_, err := AnalyticContraction(p)
			wantArgError(t, err, tc.arg, tc.sentinel)
		})
	}
}

// randomSPD returns Q·diag(eig)·Qᵀ for a Haar-random orthogonal Q (QR of a
// Gaussian matrix with the signs of R's diagonal fixed), symmetrized.
func randomSPD(r *rand.Rand, eig []float64) *mat.SymDense {
	d := len(eig)
	g := mat.NewDense(d, d, nil)
	for i := range d {
		for j := range d {
			g.Set(i, j, r.NormFloat64())
		}
	}
	var qr mat.QR
	qr.Factorize(g)
	var q, rr mat.Dense
	qr.QTo(&q)
	qr.RTo(&rr)
	for j := range d {
		if rr.At(j, j) < 0 {
			for i := range d {
				q.Set(i, j, -q.At(i, j))
			}
		}
	}
	var qd, m mat.Dense
	qd.Mul(&q, mat.NewDiagDense(d, eig))
	m.Mul(&qd, q.T())
	s := mat.NewSymDense(d, nil)
	for i := range d {
		for j := i; j < d; j++ {
			s.SetSym(i, j, (m.At(i, j)+m.At(j, i))/2)
		}
	}
	return s
}

// iterationNorm returns the spectral norm ‖I − η·H·A‖₂ (the largest
// singular value; mat.Norm(·, 2) would be the Frobenius norm).
func iterationNorm(eta float64, h, a mat.Matrix) float64 {
	d, _ := h.Dims()
	var ha mat.Dense
	ha.Mul(h, a)
	m := mat.NewDense(d, d, nil)
	for i := range d {
		for j := range d {
			m.Set(i, j, -eta*ha.At(i, j))
		}
		m.Set(i, i, m.At(i, i)+1)
	}
	var svd mat.SVD
	if !svd.Factorize(m, mat.SVDNone) {
		panic("bound test: SVD failed")
	}
	return svd.Values(nil)[0]
}

func TestAnalyticContractionHolds(t *testing.T) {
	// For random H and A with spectra in [hMin, hMax] and [μ, L], the
	// one-step factor of the linearized map, ‖I − ηHA‖₂, never exceeds the
	// analytic ρ: with diagonal (commuting) H and A for Commuting, with
	// random eigenvectors for General. 1e-12 covers the SVD's round-off.
	rapid.Check(t, func(t *rapid.T) {
		d := rapid.IntRange(1, 5).Draw(t, "d")
		mu := rapid.Float64Range(0.1, 2).Draw(t, "mu")
		L := mu * rapid.Float64Range(1, 20).Draw(t, "kappa")
		hMin := rapid.Float64Range(0.05, 2).Draw(t, "hMin")
		hMax := hMin * rapid.Float64Range(1, 1.5).Draw(t, "kappaH")
		eta := rapid.Float64Range(0.01, 1.99).Draw(t, "etaFrac") / (hMax * L)
		commuting := rapid.Bool().Draw(t, "commuting")
		seed := rapid.Uint64().Draw(t, "seed")
		r := rand.New(rand.NewPCG(seed, 1))
		spectrum := func(lo, hi float64) []float64 {
			e := make([]float64, d)
			for i := range e {
				e[i] = lo + (hi-lo)*r.Float64()
			}
			e[0], e[d-1] = lo, hi // reach the ends
			return e
		}
		p := AnalyticParams{Mu: mu, L: L, Eta: eta, HMin: hMin, HMax: hMax}
		var h, a mat.Matrix
		if commuting {
			p.Case = Commuting
			h = mat.NewDiagDense(d, spectrum(hMin, hMax))
			a = mat.NewDiagDense(d, spectrum(mu, L))
		} else {
			h = randomSPD(r, spectrum(hMin, hMax))
			a = randomSPD(r, spectrum(mu, L))
		}
		c, err := AnalyticContraction(p)
		if errors.Is(err, ErrNoContraction) {
			t.Skip("no contraction proved for these constants")
		}
		require.NoError(t, err)
		if n := iterationNorm(eta, h, a); n > c.Rho*(1+1e-12) {
			t.Fatalf("‖I − ηHA‖₂ = %v > ρ = %v (%s)", n, c.Rho, c.Method)
		}
	})
}

func TestNonCommutingEuclideanCounterexample(t *testing.T) {
	// Why General carries the factor sqrt(hMax/hMin): with H = diag(1, 0.1)
	// and A = R(45°)·diag(10, 1)·R(45°)ᵀ (μ = 1, L = 10), η = 0.1, the
	// commuting formula gives ρ₀ = max(|1 − 0.01|, |1 − 1|) = 0.99 < 1, yet
	// ‖I − ηHA‖₂ ≈ 1.0763 > 1: the Euclidean distance GROWS in one step.
	// (Hand computation: I − ηHA = [[0.45, −0.45], [−0.045, 0.945]]; the
	// eigenvalues of its Gram matrix are (1.30005 ± sqrt(1.03403))/2, the
	// larger 1.15846 = 1.07632².)
	h := mat.NewDiagDense(2, []float64{1, 0.1})
	a := mat.NewDense(2, 2, []float64{5.5, 4.5, 4.5, 5.5})
	n := iterationNorm(0.1, h, a)
	rho0 := math.Max(math.Abs(1-0.1*0.1*1), math.Abs(1-0.1*1*10))
	if !(rho0 < 1 && n > 1) {
		t.Fatalf("ρ₀ = %v, ‖I − ηHA‖₂ = %v: expected ρ₀ < 1 < norm", rho0, n)
	}
	if gen := math.Sqrt(1/0.1) * rho0; n > gen {
		t.Fatalf("norm %v exceeds the general bound %v", n, gen)
	}
	if !near(n, 1.07632, 1e-5, 0) { // hand value, 5 decimals
		t.Fatalf("norm %v, hand value 1.07632", n)
	}
}

func TestEstimateFromDecay(t *testing.T) {
	geo := func(c, rho float64, n int) []float64 {
		e := make([]float64, n)
		for k := range e {
			e[k] = c * math.Pow(rho, float64(k))
		}
		return e
	}
	t.Run("exact-geometric", func(t *testing.T) {
		// A pure geometric series is fitted exactly (to round-off, 1e-12).
		c, err := EstimateFromDecay(geo(3, 0.9, 50), DecayOptions{})
		require.NoError(t, err)
		require.Equal(t, Estimated, c.Provenance, "provenance")
		if !near(c.Rho, 0.9, 0, 1e-12) {
			t.Fatalf("ρ̂ = %v, want 0.9", c.Rho)
		}
	})
	t.Run("zeros-skipped-margin", func(t *testing.T) {
		e := geo(1, 0.5, 10)
		e[3], e[7] = 0, 0
		c, err := EstimateFromDecay(e, DecayOptions{Margin: 0.1})
		require.NoError(t, err)
		if !near(c.Rho, 0.55, 0, 1e-12) {
			t.Fatalf("ρ̂ = %v, want 0.5·1.1", c.Rho)
		}
	})
	for _, tc := range []struct {
		name     string
		errs     []float64
		opts     DecayOptions
		arg      string
		sentinel error
	}{
		{"growing", geo(1, 1.1, 5), DecayOptions{}, "rho", ErrNoContraction},
		{"margin-pushes-past-1", geo(1, 0.95, 5), DecayOptions{Margin: 0.1}, "rho", ErrNoContraction},
		{"one-point", []float64{0, 1, 0}, DecayOptions{}, "errs", ErrTooFewPoints},
		{"negative", []float64{1, -1}, DecayOptions{}, "errs[1]", ErrValue},
		{"NaN", []float64{math.NaN(), 1}, DecayOptions{}, "errs[0]", ErrValue},
		{"negative-margin", geo(1, 0.5, 5), DecayOptions{Margin: -0.1}, "Margin", ErrValue},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := EstimateFromDecay(tc.errs, tc.opts)
			wantArgError(t, err, tc.arg, tc.sentinel)
		})
	}
	t.Run("no-contraction-reports-estimate", func(t *testing.T) {
		_, err := EstimateFromDecay(geo(1, 1.1, 5), DecayOptions{})
		var ae *ArgError
		require.ErrorAs(t, err, &ae)
		if !near(ae.Value, 1.1, 0, 1e-12) {
			t.Fatalf("error %v does not carry ρ̂ = 1.1", err)
		}
	})
}

func TestEstimateFromPairs(t *testing.T) {
	// Ratios: pair 0: 0.5, 0.8; pair 1: 0.25, (0→0 skipped), 0.6 after a
	// restart is impossible (0 → positive is infinite), so pair 1 is
	// 0.25 only; pair 2: 0.9.
	dists := [][]float64{{4, 2, 1.6}, {4, 1, 0, 0}, {10, 9}}
	for _, tc := range []struct {
		name string
		opts PairOptions
		want float64
	}{
		{"max", PairOptions{}, 0.9},
		{"quantile-0.75", PairOptions{Quantile: 0.75}, 0.8}, // ⌈0.75·5⌉ = 4th of {0.25, 0, 0.5, 0.8, 0.9}
		{"quantile-small", PairOptions{Quantile: 0.01}, 0},  // the smallest ratio, 1→0
		{"margin", PairOptions{Margin: 0.05}, 0.945},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, err := EstimateFromPairs(dists, tc.opts)
			require.NoError(t, err)
			require.Equal(t, Estimated, c.Provenance, "provenance")
			if !near(c.Rho, tc.want, 0, 1e-12) {
				t.Fatalf("ρ̂ = %v, want %v", c.Rho, tc.want)
			}
		})
	}
	for _, tc := range []struct {
		name     string
		dists    [][]float64
		opts     PairOptions
		arg      string
		sentinel error
	}{
		{"growing", [][]float64{{1, 2}}, PairOptions{}, "rho", ErrNoContraction},
		{"zero-then-positive", [][]float64{{0, 1}}, PairOptions{}, "rho", ErrNoContraction},
		{"no-ratio", [][]float64{{1}, {0, 0}}, PairOptions{}, "dists", ErrTooFewPoints},
		{"negative", [][]float64{{1, -1}}, PairOptions{}, "dists[0][1]", ErrValue},
		{"quantile>1", [][]float64{{1, 0.5}}, PairOptions{Quantile: 1.5}, "Quantile", ErrInvalid},
		{"quantile<0", [][]float64{{1, 0.5}}, PairOptions{Quantile: -0.5}, "Quantile", ErrInvalid},
		{"negative-margin", [][]float64{{1, 0.5}}, PairOptions{Margin: -1}, "Margin", ErrValue},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := EstimateFromPairs(tc.dists, tc.opts)
			wantArgError(t, err, tc.arg, tc.sentinel)
		})
	}
}

func TestAssumedContraction(t *testing.T) {
	c, err := AssumedContraction(0.95)
	require.NoError(t, err, "AssumedContraction(0.95)")
	require.Equal(t, Assumed, c.Provenance, "provenance")
	if c.Rho != 0.95 {
		t.Fatalf("AssumedContraction(0.95): ρ = %v", c.Rho)
	}
	for _, rho := range []float64{1, -0.5, math.NaN()} {
		_, err := AssumedContraction(rho)
		wantArgError(t, err, "rho", ErrRho)
	}
	require.Error(t, Contraction{Rho: 0.5}.Validate(), "a contraction without provenance validated")
}
