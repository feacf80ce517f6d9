package certify

import (
	"math"
	"testing"

	"github.com/stretchr/testify/require"
	"gonum.org/v1/gonum/floats"
	"gonum.org/v1/gonum/stat/distuv"

	"unlearn/bound"
	"unlearn/noise"
	"unlearn/olbfgs"
)

// unitPhi is the standard normal CDF, Φ(x) = erfc(−x/√2)/2.
func unitPhi(x float64) float64 { return math.Erfc(-x/math.Sqrt2) / 2 }

// TestCertifiedReleaseEmpiricalPrivacy certifies two neighbouring states —
// equal memories, parameters at L2 distance α along a unit vector u — many
// times each through Certify (given α, memory reset, seeded sampler) and
// checks the definition of (ε, δ)-DP on the released states,
// P[M ∈ S] ≤ e^ε·P[M' ∈ S] + δ and with M, M' exchanged, on the sets that
// decide it: the released memories are both empty, the components of w
// orthogonal to u have the same law in both worlds, and the privacy loss is
// monotone in the projection uᵀw, so the worst sets are the half-spaces
// {uᵀ(w − x) ≤ c} and their complements (Neyman–Pearson). We test 61
// thresholds c ∈ [−3σ, 3σ + α] in both directions (the approach of noise's
// TestEmpiricalPrivacy, here through the whole Certify path).
//
// Tolerance: for each set, D̂ = P̂ − e^ε·P̂' has standard deviation
// sqrt(P(1−P) + e^{2ε}P'(1−P'))/sqrt(N) with P, P' the model
// probabilities; we allow δ + z·sd, z the two-sided normal quantile for a
// total false-rejection rate of 1e-5 over the 122 sets (Bonferroni). The
// run is seeded, so its outcome is fixed; the rate says how unusual a
// failure of a correct implementation would be.
//
// Power: the same check on a certificate that understates α by half (so σ
// is half the calibrated value; true δ ≈ 0.15 at ε = 1, against 0.01) must
// fail, so the check can fail.
func TestCertifiedReleaseEmpiricalPrivacy(t *testing.T) {
	const (
		alpha = 1.0
		eps   = 1.0
		delta = 0.01 // large enough that δ-sized effects are measurable with N releases
		sets  = 2 * 61
	)
	N := 20_000 // releases per world
	if raceEnabled {
		N = 5_000 // the race detector slows Certify ~10×; the tolerance follows N
	}
	f := newFixture(t)
	x := f.state
	u := []float64{0.5, -0.5, 0.5, 0.5} // a unit vector
	w2 := make([]float64, len(u))
	floats.AddScaledTo(w2, x.W(), alpha, u)
	x2 := x.Clone()
	x2.SetW(w2)
	if d := floats.Distance(x.W(), x2.W(), 2); !approx(d, alpha, 0, 1e-15) {
		t.Fatalf("the neighbouring states are %v apart, want %v", d, alpha)
	}
	z := distuv.UnitNormal.Quantile(1 - 1e-5/sets/2)

	// projections returns uᵀ(w_released − x.w) for N certified releases of
	// l whose certificates claim sensitivity claimed.
	projections := func(l *olbfgs.Learner, claimed float64, seed uint64) ([]float64, float64) {
		spec := Spec{Epsilon: eps, Delta: delta, Alpha: &Given{Alpha: claimed, Provenance: bound.Proved},
			Sampler: noise.NewSeededSampler(seed, noise.SamplerOptions{})}
		out := make([]float64, N)
		var sigma float64
		for k := range out {
			rel, c, err := Certify(l, spec)
			require.NoError(t, err)
			require.Zero(t, rel.Memory().Len(), "the released memory is not empty")
			sigma = c.SigmaApplied
			var p float64
			for i, v := range rel.W() {
				p += u[i] * (v - x.W()[i])
			}
			out[k] = p
		}
		return out, sigma
	}
	// worst returns the largest excess of D̂ over δ + z·sd over the sets
	// (positive: a violation) and the largest D̂.
	worst := func(s float64, p, q []float64) (excess, maxD float64) {
		excess, maxD = math.Inf(-1), math.Inf(-1)
		n := float64(N)
		for j := range 61 {
			c := -3*s + float64(j)*(6*s+alpha)/60
			var a, b float64
			for k := range p {
				if p[k] <= c {
					a++
				}
				if q[k] <= c {
					b++
				}
			}
			a, b = a/n, b/n
			pa, pb := unitPhi(c/s), unitPhi((c-alpha)/s)
			for _, dir := range []struct{ hat, hat2, p, p2 float64 }{
				{a, b, pa, pb},
				{1 - b, 1 - a, 1 - pb, 1 - pa},
			} {
				D := dir.hat - math.Exp(eps)*dir.hat2
				sd := math.Sqrt((dir.p*(1-dir.p) + math.Exp(2*eps)*dir.p2*(1-dir.p2)) / n)
				excess = max(excess, D-(delta+z*sd))
				maxD = max(maxD, D)
			}
		}
		return excess, maxD
	}
	t.Run("calibrated", func(t *testing.T) {
		p, s := projections(x, alpha, 1)
		q, _ := projections(x2, alpha, 2)
		excess, maxD := worst(s, p, q)
		t.Logf("σ = %.5f, N = %d: empirical δ(ε) = %.5f, margin to the tolerance %.5f", s, N, maxD, -excess)
		if excess > 0 {
			t.Errorf("empirical δ(ε = %v) = %.5f exceeds δ = %v beyond the tolerance by %.5f", eps, maxD, delta, excess)
		}
	})
	t.Run("understated-alpha-is-detected", func(t *testing.T) {
		p, s := projections(x, alpha/2, 3)
		q, _ := projections(x2, alpha/2, 4)
		excess, maxD := worst(s, p, q)
		t.Logf("σ = %.5f (α understated by half): empirical δ(ε) = %.5f, excess %.5f", s, maxD, excess)
		if excess <= 0 {
			t.Errorf("a certificate with half the sensitivity passed (empirical δ = %.5f): the check has no power", maxD)
		}
	})
}
