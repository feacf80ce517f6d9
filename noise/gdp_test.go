package noise

import (
	"math"
	"testing"

	"github.com/stretchr/testify/require"
	"pgregory.net/rapid"
)

func TestGDPMuRoundsUp(t *testing.T) {
	// μ = α/σ is exact when the quotient is (1/0.5 = 2, 3/4 = 0.75) and
	// otherwise the float64 just above it (1/3, 0.1/0.7): checked in
	// big.Float, no tolerance.
	for _, tc := range []struct{ alpha, sigma, exact float64 }{
		{1, 0.5, 2}, {3, 4, 0.75}, {1, 3, 0}, {0.1, 0.7, 0}, {1e-300, 1e300, 0},
	} {
		mu, err := GDPMu(tc.alpha, tc.sigma)
		require.NoError(t, err)
		if tc.exact != 0 {
			require.Equal(t, tc.exact, mu, "GDPMu(%v, %v)", tc.alpha, tc.sigma)
			continue
		}
		q := newF(refPrec).Quo(bf(tc.alpha), bf(tc.sigma))
		if bf(mu).Cmp(q) < 0 || math.Nextafter(mu, 0) >= bigF64(q) && bf(math.Nextafter(mu, 0)).Cmp(q) >= 0 {
			t.Errorf("GDPMu(%v, %v) = %v, exact %s: not the float64 just above", tc.alpha, tc.sigma, mu, q.Text('g', 20))
		}
	}
	mu, err := GDPMu(0, 0)
	require.NoError(t, err)
	require.Zero(t, mu, "α = 0 needs no noise")
}

func TestGDPComposeRoundsUp(t *testing.T) {
	mu, err := GDPCompose(3, 4)
	require.NoError(t, err)
	require.Equal(t, 5.0, mu, "sqrt(3² + 4²) is exact")
	mu, err = GDPCompose()
	require.NoError(t, err)
	require.Zero(t, mu)
	rapid.Check(t, func(t *rapid.T) {
		ms := rapid.SliceOfN(genLog(1e-6, 1e3), 1, 50).Draw(t, "mu")
		got, err := GDPCompose(ms...)
		require.NoError(t, err)
		sum := newF(refPrec)
		for _, m := range ms {
			sum.Add(sum, newF(refPrec).Mul(bf(m), bf(m)))
		}
		exact := newF(refPrec).Sqrt(sum)
		if bf(got).Cmp(exact) < 0 {
			t.Fatalf("GDPCompose = %v below the exact %s", got, exact.Text('g', 20))
		}
		if rd := relDiff(bf(got), exact); rd > 1e-14 {
			t.Fatalf("GDPCompose = %v, a relative %.3g above the exact %s", got, rd, exact.Text('g', 20))
		}
	})
}

func TestGDPEpsilonExact(t *testing.T) {
	// GDPEpsilon is never below the exact ε* (δ(ε) at its result, evaluated
	// at 256 bits, is ≤ δ: δ decreases in ε) and within 10⁻⁷ relative plus
	// 10⁻⁹ absolute of it (δ(ε/(1+10⁻⁷) − 10⁻⁹) > δ); no tolerance beyond
	// those. The absolute term covers ε* near 0, where the 2⁻³² margin on δ
	// moves ε by up to ≈ 2⁻³²·δ/|dδ/dε|.
	rapid.Check(t, func(t *rapid.T) {
		mu := genLog(1e-3, 30).Draw(t, "mu")
		delta := genLog(1e-15, 0.5).Draw(t, "delta")
		eps, err := GDPEpsilon(mu, delta)
		require.NoError(t, err)
		if d := bigDelta(bf(mu), bf(eps)); d.Cmp(bf(delta)) > 0 {
			t.Fatalf("μ = %v, δ = %v: ε = %v gives exact δ = %s: below the exact ε", mu, delta, eps, d.Text('g', 10))
		}
		if eps == 0 {
			return
		}
		if d := bigDelta(bf(mu), bf(max(0, eps/(1+1e-7)-1e-9))); d.Cmp(bf(delta)) <= 0 {
			t.Fatalf("μ = %v, δ = %v: ε = %v is more than 1e-7 above the exact ε", mu, delta, eps)
		}
	})
}

func TestGDPEpsilonZero(t *testing.T) {
	// δ(0) = 2Φ(μ/2) − 1: μ = 0.1 gives 0.0398776…, so δ = 0.04 needs no ε.
	eps, err := GDPEpsilon(0.1, 0.04)
	require.NoError(t, err)
	require.Zero(t, eps)
	eps, err = GDPEpsilon(0, 1e-10)
	require.NoError(t, err)
	require.Zero(t, eps)
	eps, err = GDPEpsilon(0.1, 0.039)
	require.NoError(t, err)
	require.Positive(t, eps)
}

func TestGDPRefusesBadInput(t *testing.T) {
	nan, inf := math.NaN(), math.Inf(1)
	for _, tc := range []struct {
		name     string
		call     func() error
		arg      string
		sentinel error
	}{
		{"mu/alpha<0", func() error { _, err := GDPMu(-1, 1); return err }, "alpha", ErrSensitivity},
		{"mu/alpha=NaN", func() error { _, err := GDPMu(nan, 1); return err }, "alpha", ErrSensitivity},
		{"mu/sigma=Inf", func() error { _, err := GDPMu(1, inf); return err }, "sigma", ErrSigma},
		{"mu/sigma<0", func() error { _, err := GDPMu(1, -1); return err }, "sigma", ErrSigma},
		{"mu/sigma=0", func() error { _, err := GDPMu(1, 0); return err }, "sigma", ErrRange},
		{"mu/overflow", func() error { _, err := GDPMu(1e300, 1e-300); return err }, "sigma", ErrRange},
		{"compose/negative", func() error { _, err := GDPCompose(1, -1); return err }, "mu[1]", ErrMu},
		{"compose/NaN", func() error { _, err := GDPCompose(nan); return err }, "mu[0]", ErrMu},
		{"compose/overflow", func() error { _, err := GDPCompose(1e200, 1e200); return err }, "mu", ErrRange},
		{"delta/mu<0", func() error { _, err := GDPDelta(-1, 1); return err }, "mu", ErrMu},
		{"delta/mu=Inf", func() error { _, err := GDPDelta(inf, 1); return err }, "mu", ErrMu},
		{"delta/eps<0", func() error { _, err := GDPDelta(1, -1); return err }, "epsilon", ErrEpsilon},
		{"delta/eps=NaN", func() error { _, err := GDPDelta(1, nan); return err }, "epsilon", ErrEpsilon},
		{"delta/eps=Inf", func() error { _, err := GDPDelta(1, inf); return err }, "epsilon", ErrEpsilon},
		{"epsilon/mu=NaN", func() error { _, err := GDPEpsilon(nan, 1e-5); return err }, "mu", ErrMu},
		{"epsilon/delta=0", func() error { _, err := GDPEpsilon(1, 0); return err }, "delta", ErrDelta},
		{"epsilon/delta=1", func() error { _, err := GDPEpsilon(1, 1); return err }, "delta", ErrDelta},
		{"epsilon/delta-subnormal", func() error { _, err := GDPEpsilon(1, 5e-324); return err }, "delta", ErrDelta},
		{"epsilon/delta=NaN", func() error { _, err := GDPEpsilon(1, nan); return err }, "delta", ErrDelta},
	} {
		t.Run(tc.name, func(t *testing.T) { wantArgError(t, tc.call(), tc.arg, tc.sentinel) })
	}
}

func TestGDPDeltaMatchesAnalyticSigma(t *testing.T) {
	// The two directions of the one formula agree: at σ = SigmaAnalytic(α,
	// ε, δ), GDPDelta(α/σ, ε) ≤ δ.
	rapid.Check(t, func(t *rapid.T) {
		alpha := genLog(1e-3, 1e3).Draw(t, "alpha")
		eps := genLog(1e-6, 50).Draw(t, "epsilon")
		delta := genLog(1e-100, 0.5).Draw(t, "delta")
		s, err := SigmaAnalytic(alpha, eps, delta)
		require.NoError(t, err)
		mu, err := GDPMu(alpha, s)
		require.NoError(t, err)
		d, err := GDPDelta(mu, eps)
		require.NoError(t, err)
		if d > delta {
			t.Fatalf("GDPDelta(α/σ) = %v > δ = %v at σ = %v", d, delta, s)
		}
	})
}
