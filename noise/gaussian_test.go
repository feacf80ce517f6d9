package noise

import (
	"encoding/json"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestNewGaussian(t *testing.T) {
	t.Run("defaults", func(t *testing.T) {
		opts := GaussianOptions{Alpha: 1, Epsilon: 1, Delta: 1e-5}
		g, err := NewGaussian(opts)
		require.NoError(t, err)
		assert.Nil(t, opts.Sampler, "NewGaussian wrote its default into the caller's options")
		got := g.Options()
		assert.Equal(t, Analytic, got.Calibration, "resolved calibration")
		if assert.NotNil(t, got.Sampler, "resolved sampler") {
			assert.Equal(t, NameSecure, got.Sampler.Name(), "resolved sampler")
		}
		want, _ := SigmaAnalytic(1, 1, 1e-5)
		if g.Sigma() != want {
			t.Errorf("σ = %v, want %v", g.Sigma(), want)
		}
	})
	t.Run("classic", func(t *testing.T) {
		g, err := NewGaussian(GaussianOptions{Alpha: 2, Epsilon: 0.5, Delta: 1e-3, Calibration: Classic})
		require.NoError(t, err)
		want, _ := SigmaClassic(2, 0.5, 1e-3)
		if g.Sigma() != want {
			t.Errorf("σ = %v, want %v", g.Sigma(), want)
		}
	})
	for _, tc := range []struct {
		name     string
		opts     GaussianOptions
		arg      string
		sentinel error
	}{
		{"missing-epsilon", GaussianOptions{Alpha: 1, Delta: 1e-5}, "epsilon", ErrEpsilon},
		{"missing-delta", GaussianOptions{Alpha: 1, Epsilon: 1}, "delta", ErrDelta},
		{"negative-alpha", GaussianOptions{Alpha: -1, Epsilon: 1, Delta: 1e-5}, "alpha", ErrSensitivity},
		{"classic-eps>=1", GaussianOptions{Alpha: 1, Epsilon: 1, Delta: 1e-5, Calibration: Classic}, "epsilon", ErrClassicEpsilon},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := NewGaussian(tc.opts)
			wantArgError(t, err, tc.arg, tc.sentinel)
		})
	}
}

func TestGaussianRelease(t *testing.T) {
	t.Run("record", func(t *testing.T) {
		g, err := NewGaussian(GaussianOptions{Alpha: 0.5, Epsilon: 1, Delta: 1e-5, Sampler: NewSeededSampler(3, SamplerOptions{})})
		require.NoError(t, err)
		x := []float64{1, 2, 3}
		dst := make([]float64, 3)
		r, err := g.Release(dst, x)
		require.NoError(t, err)
		assert.Equal(t, "seeded", r.Sampler, "sampler")
		assert.Equal(t, 3, r.Dim, "d")
		assert.Equal(t, Analytic, r.Calibration, "calibration")
		if r.Sigma != g.Sigma() || r.SigmaApplied != g.Sigma() {
			t.Errorf("release σ = %v, applied %v; want %v", r.Sigma, r.SigmaApplied, g.Sigma())
		}
		// ZCDP = α²/(2σ²) (Bun & Steinke Prop. 1.6), inflated by ≤ 1e-14.
		if want := 0.25 / (2 * r.SigmaApplied * r.SigmaApplied); !near(r.ZCDP, want, 0, 1e-14) {
			t.Errorf("ZCDP = %v, want %v", r.ZCDP, want)
		}
		b, err := json.Marshal(r)
		require.NoError(t, err)
		var back Release
		assert.NoError(t, json.Unmarshal(b, &back), "JSON round trip")
		if back != r {
			t.Errorf("JSON round trip %s gave %+v", b, back)
		}
	})
	t.Run("exact-unlearning-adds-no-noise", func(t *testing.T) {
		g, err := NewGaussian(GaussianOptions{Alpha: 0, Epsilon: 1, Delta: 1e-5})
		require.NoError(t, err)
		x := []float64{1, -2}
		dst := make([]float64, 2)
		r, err := g.Release(dst, x)
		require.NoError(t, err)
		if r.Sigma != 0 || r.SigmaApplied != 0 || r.ZCDP != 0 || dst[0] != 1 || dst[1] != -2 {
			t.Errorf("α = 0 release %+v, dst %v", r, dst)
		}
	})
	t.Run("bad-vector", func(t *testing.T) {
		g, err := NewGaussian(GaussianOptions{Alpha: 1, Epsilon: 1, Delta: 1e-5, Sampler: NewSeededSampler(1, SamplerOptions{})})
		require.NoError(t, err)
		_, err = g.Release(make([]float64, 2), []float64{0, math.NaN()})
		wantArgError(t, err, "x[1]", ErrNonFinite)
		wantPanic(t, func() { _, _ = g.Release(make([]float64, 1), make([]float64, 2)) })
	})
}

// TestEmpiricalPrivacy releases many noised copies of two vectors x and
// x' = x + α·u at L2 distance α and checks the definition of (ε, δ)-DP,
// P[M(x) ∈ S] ≤ e^ε·P[M(x') ∈ S] + δ (and with x, x' swapped), on the sets
// S that decide it. All the privacy loss lies along u (the orthogonal
// components have the same law under x and x'), and the worst sets are the
// half-spaces {y : uᵀ(y−x) ≤ c} (Neyman–Pearson: the loss is monotone in
// the projection), so we test a grid of 61 thresholds c ∈ [−3σ, 3σ+α] in
// both directions.
//
// Tolerance: for each set, D̂ = P̂ − e^ε·P̂' has standard deviation
// sqrt(P(1−P) + e^{2ε}P'(1−P'))/sqrt(N) with P, P' the model
// probabilities; we allow δ + z·sd with z the two-sided normal quantile for
// a total false-rejection rate of 1e-5 over the 122 sets (Bonferroni). The
// run is seeded, so the outcome is fixed; the rate states how unusual a
// failure of a correct sampler would be.
//
// Power: the same procedure with σ/2 (true δ ≈ 0.15 at ε = 1, against
// δ = 0.01) must be rejected, so the check can fail.
func TestEmpiricalPrivacy(t *testing.T) {
	const (
		d     = 5
		N     = 100_000 // releases per vector
		alpha = 1.0
		eps   = 1.0
		delta = 0.01 // large enough that δ-sized effects are measurable with N
	)
	r := rand.New(rand.NewPCG(11, 12))
	x := make([]float64, d)
	for i := range x {
		x[i] = r.NormFloat64()
	}
	u := randomUnit(r, d)
	x2 := make([]float64, d)
	for i := range x2 {
		x2[i] = x[i] + alpha*u[i]
	}
	sigma, err := SigmaAnalytic(alpha, eps, delta)
	require.NoError(t, err)
	// projections returns uᵀ(M(v)−x) for N releases of v at noise s.
	projections := func(v []float64, s float64, seed uint64) []float64 {
		g := NewSeededSampler(seed, SamplerOptions{})
		out := make([]float64, N)
		y := make([]float64, d)
		for k := range out {
			_, err := g.AddNoise(y, v, s)
			require.NoError(t, err)
			var p float64
			for i := range y {
				p += u[i] * (y[i] - x[i])
			}
			out[k] = p
		}
		return out
	}
	const sets = 2 * 61
	z := zTwoSided(1e-5 / sets)
	// worst returns the largest excess of D̂ over δ + z·sd across the sets
	// (positive means a violation), the largest D̂, the largest model
	// D = P − e^ε·P' over the same sets and the largest sd.
	worst := func(s float64, p, q []float64) (excess, maxD, modelD, sdMax float64) {
		excess, maxD, modelD = math.Inf(-1), math.Inf(-1), math.Inf(-1)
		for j := range 61 {
			c := -3*s + float64(j)*(6*s+alpha)/60
			var a, b float64 // P̂[proj ≤ c] under x and under x'
			for k := range p {
				if p[k] <= c {
					a++
				}
				if q[k] <= c {
					b++
				}
			}
			a, b = a/N, b/N
			pa, pb := unitPhi(c/s), unitPhi((c-alpha)/s) // model probabilities
			for _, dir := range []struct{ hat, hat2, p, p2 float64 }{
				{a, b, pa, pb},                 // S = {proj ≤ c}: x is favoured
				{1 - b, 1 - a, 1 - pb, 1 - pa}, // S = {proj > c}: x' is favoured
			} {
				D := dir.hat - math.Exp(eps)*dir.hat2
				sd := math.Sqrt((dir.p*(1-dir.p) + math.Exp(2*eps)*dir.p2*(1-dir.p2)) / N)
				excess = max(excess, D-(delta+z*sd))
				maxD = max(maxD, D)
				modelD = max(modelD, dir.p-math.Exp(eps)*dir.p2)
				sdMax = max(sdMax, sd)
			}
		}
		return excess, maxD, modelD, sdMax
	}
	t.Run("calibrated", func(t *testing.T) {
		excess, maxD, modelD, sdMax := worst(sigma, projections(x, sigma, 1), projections(x2, sigma, 2))
		t.Logf("σ = %.5f: empirical δ(ε) = %.5f (model %.5f on the grid), margin to the tolerance %.5f", sigma, maxD, modelD, -excess)
		if excess > 0 {
			t.Errorf("empirical δ(ε=%v) = %.5f exceeds δ = %v beyond the tolerance by %.5f", eps, maxD, delta, excess)
		}
		// Two-sided: the analytic calibration is tight, so the empirical δ
		// must also reach the model's (≈ δ): noise much larger than claimed
		// would fail here. Same z, at the largest sd of the grid.
		if maxD < modelD-z*sdMax {
			t.Errorf("empirical δ = %.5f below the model's %.5f by more than %.5f: the noise is larger than σ", maxD, modelD, z*sdMax)
		}
	})
	t.Run("half-noise-is-detected", func(t *testing.T) {
		s := sigma / 2
		excess, maxD, _, _ := worst(s, projections(x, s, 3), projections(x2, s, 4))
		t.Logf("σ/2 = %.5f: empirical δ(ε) = %.5f, excess over the tolerance %.5f", s, maxD, excess)
		if excess <= 0 {
			t.Errorf("σ/2 passed the privacy check (empirical δ = %.5f); the check has no power", maxD)
		}
	})
}

// WithSampler keeps σ and the options and only changes the sampler: with
// the same seeded sampler it releases what the original does.
func TestGaussianWithSampler(t *testing.T) {
	g, err := NewGaussian(GaussianOptions{Alpha: 0.5, Epsilon: 1, Delta: 1e-5, Sampler: NewSeededSampler(1, SamplerOptions{})})
	if err != nil {
		t.Fatal(err)
	}
	h := g.WithSampler(NewSeededSampler(9, SamplerOptions{}))
	if h.Sigma() != g.Sigma() || h.Options().Alpha != 0.5 || h.Options().Sampler == g.Options().Sampler {
		t.Fatalf("WithSampler changed σ or the options: %v vs %v", h.Sigma(), g.Sigma())
	}
	ref, _ := NewGaussian(GaussianOptions{Alpha: 0.5, Epsilon: 1, Delta: 1e-5, Sampler: NewSeededSampler(9, SamplerOptions{})})
	x := []float64{1, 2, 3}
	a, b := make([]float64, 3), make([]float64, 3)
	if _, err := h.Release(a, x); err != nil {
		t.Fatal(err)
	}
	if _, err := ref.Release(b, x); err != nil {
		t.Fatal(err)
	}
	for i := range a {
		if a[i] != b[i] {
			t.Fatalf("coordinate %d: %v vs %v", i, a[i], b[i])
		}
	}
	if _, ok := g.WithSampler(nil).Options().Sampler.(*SecureSampler); !ok {
		t.Fatal("nil sampler: want the secure sampler")
	}
}
