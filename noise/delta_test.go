package noise

import (
	"math"
	"math/big"
	"testing"

	"github.com/stretchr/testify/require"
	"pgregory.net/rapid"

	"unlearn/internal/gaussref"
)

func TestBigErfcKnownValues(t *testing.T) {
	// erfc to 32 digits from mpmath 1.3.0 (mp.dps = 40); the reference must
	// reproduce them on both sides of its switch from series (u < 4) to
	// continued fraction.
	for _, tc := range []struct {
		u    float64
		want string
	}{
		{-1, "1.8427007929497148693412206350826"},
		{0.5, "0.47950012218695346231725334610804"},
		{1, "0.15729920705028513065877936491739"},
		{2, "0.0046777349810472658379307436327471"},
		{3.5, "7.4309837234141274552368375609564e-7"},
		{5, "1.5374597944280348501883434853834e-12"},
		{10, "2.0884875837625447570007862949578e-45"},
		{20, "5.3958656116079009289349991679053e-176"},
	} {
		got := bigErfc(bf(tc.u), refPrec)
		want, _, err := big.ParseFloat(tc.want, 10, refPrec, big.ToNearestEven)
		require.NoError(t, err)
		if rd := math.Abs(relDiff(got, want)); rd > 1e-31 {
			t.Errorf("erfc(%v) = %s, want %s (relative difference %.3g)", tc.u, got.Text('g', 32), tc.want, rd)
		}
	}
	// Against math.Erfc (a few ulps) over the float64 range, both branches.
	for u := -3.0; u <= 26; u += 0.37 {
		got := bigF64(bigErfc(bf(u), refPrec))
		if want := math.Erfc(u); math.Abs(got-want) > 1e-14*got {
			t.Errorf("erfc(%v): reference %v, math.Erfc %v", u, got, want)
		}
	}
}

func TestExactSigmaMatchesMpmath(t *testing.T) {
	// The bisection of the 256-bit reference reproduces the exact σ that
	// mpmath 1.3.0 gives at 50 digits (TestSigmaAnalyticReferenceValues),
	// to the 20 digits quoted there.
	for _, tc := range []struct{ eps, delta, want float64 }{
		{1, 1e-5, 3.7306316348159418322},
		{0.1, 1e-6, 36.304690426195784939},
		{5, 1e-10, 1.280777977893222186},
		{0.01, 1e-5, 243.78543767567802905},
	} {
		lo, hi := exactSigma(tc.eps, tc.delta, tc.want)
		if rd := relDiff(hi, bf(tc.want)); math.Abs(rd) > 1e-16 || relDiff(hi, lo) > 1e-20 {
			t.Errorf("ε = %v, δ = %v: exact σ ∈ [%s, %s], mpmath %v", tc.eps, tc.delta, lo.Text('g', 25), hi.Text('g', 25), tc.want)
		}
	}
}

// wantSoundSigma fails unless σ (for α = 1) satisfies the exact condition
// δ(1/σ, ε) ≤ δ, i.e. σ ≥ the exact σ, and violates it at σ/(1+1e-3),
// i.e. σ ≤ exact·(1+1e-3); both evaluated at 256 bits, no tolerance.
func wantSoundSigma(t testing.TB, sigma, eps, delta float64) {
	t.Helper()
	s := bf(sigma)
	if d := bigDeltaSigma(bf(1), s, bf(eps)); d.Cmp(bf(delta)) > 0 {
		t.Fatalf("ε = %v, δ = %v: σ = %v gives exact δ = %s > δ: below the exact σ", eps, delta, sigma, d.Text('g', 10))
	}
	shrunk := newF(refPrec).Quo(s, bf(1+analyticAccuracy))
	if d := bigDeltaSigma(bf(1), shrunk, bf(eps)); d.Cmp(bf(delta)) <= 0 {
		t.Fatalf("ε = %v, δ = %v: σ = %v is more than 0.1%% above the exact σ (δ(σ/1.001) = %s)", eps, delta, sigma, d.Text('g', 10))
	}
}

func TestSigmaAnalyticTinyEpsilonRegression(t *testing.T) {
	// Issue 9, finding 5: the DP library's δ(σ) cancels for small ε. The
	// library-based SigmaAnalytic returned (run against it before it was
	// replaced): 1.8747·10¹⁵ at ε = 2⁻⁵⁰, δ = 10⁻³⁰⁰ (0.046× the exact
	// 4.0421·10¹⁶); 2.7818·10¹⁴ at ε = 2⁻⁵⁰, δ = 10⁻¹⁵ (0.975× the exact
	// 2.8507·10¹⁴); 1.6691·10¹⁵ at ε = 10⁻¹⁵, δ = 10⁻³⁰⁰ (the exact σ is
	// 3.5905·10¹⁶). Exact values: exactSigma, 256 bits, rounded down.
	for _, tc := range []struct {
		name         string
		eps, delta   float64
		exactAtLeast float64
	}{
		{"eps=2^-50,delta=1e-300", 0x1p-50, 1e-300, 4.0421e16},
		{"eps=2^-50,delta=1e-15", 0x1p-50, 1e-15, 2.8506e14},
		{"eps=1e-15,delta=1e-300", 1e-15, 1e-300, 3.5904e16},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, err := SigmaAnalytic(1, tc.eps, tc.delta)
			require.NoError(t, err)
			require.GreaterOrEqual(t, s, tc.exactAtLeast)
			wantSoundSigma(t, s, tc.eps, tc.delta)
		})
	}
}

func TestDeltaUpperBoundsExact(t *testing.T) {
	// deltaUpper is never below the 256-bit δ and at most a relative 2⁻³²
	// (its margin) plus round-off above it, over μ from 10⁻¹⁸ to 100 and
	// ε from 0 to 60, with draws aimed at the continued-fraction region
	// (x = ε/μ − μ/2 up to 38, where δ reaches 2⁻¹⁰²²) and at the switches
	// between the three evaluations (x = cfMin, μ = taylorMax).
	rapid.Check(t, func(t *rapid.T) {
		var mu, eps float64
		switch rapid.IntRange(0, 3).Draw(t, "regime") {
		case 3:
			// Large μ, where ε/μ − μ/2 would cancel (big.Float's exponent
			// range bounds μ here: e^ε must stay below 2^(2³¹)).
			mu = genLog(30, 3e4).Draw(t, "mu")
			x := rapid.Float64Range(-2, 38).Draw(t, "x")
			eps = mu * (x + mu/2)
		case 0:
			mu = genLog(1e-18, 100).Draw(t, "mu")
			eps = rapid.SampledFrom([]float64{0, 1}).Draw(t, "zero") * genLog(1e-16, 60).Draw(t, "eps")
		case 1:
			mu = genLog(1e-18, 30).Draw(t, "mu")
			x := rapid.Float64Range(-2, 38).Draw(t, "x")
			eps = mu * (x + mu/2)
		default:
			mu = taylorMax * rapid.Float64Range(0.9, 1.1).Draw(t, "mu/taylorMax")
			x := rapid.Float64Range(-0.1, cfMin+0.1).Draw(t, "x")
			eps = mu * (x + mu/2)
		}
		if eps < 0 || (eps > 60 && mu < 30) {
			t.Skip("ε out of range")
		}
		got, err := GDPDelta(mu, eps)
		require.NoError(t, err)
		if x := eps/mu - mu/2; x > 1000 {
			// δ < φ(1000) = e^{−500000}/√(2π), beyond even big.Float's
			// exponent range near x = 5·10⁴; float64 holds nothing but
			// the subnormal slack.
			require.LessOrEqual(t, got, 0x1p-1070, "δ(μ=%v, ε=%v)", mu, eps)
			return
		}
		exact := bigDelta(bf(mu), bf(eps))
		if bf(got).Cmp(exact) < 0 {
			t.Fatalf("δ(μ=%v, ε=%v) = %v below the exact %s", mu, eps, got, exact.Text('g', 20))
		}
		if bigF64(exact) >= 0x1p-1022 && got < 1 {
			if rd := relDiff(bf(got), exact); rd > 2*deltaSlack {
				t.Fatalf("δ(μ=%v, ε=%v) = %v is a relative %.3g above the exact %s", mu, eps, got, rd, exact.Text('g', 20))
			}
		}
	})
}

func TestMillsContinuedFraction(t *testing.T) {
	// cfTerms terms of Laplace's continued fraction give Mills' ratio
	// R(s) = Φ(−s)/φ(s) to within 10⁻¹⁴ relative for s ≥ cfMin (the
	// 256-bit R: Φ(−s) from the reference erfc, φ(s) = e^{−s²/2}/√(2π)),
	// and the tail difference E₁ reproduces R(x) − R(x+μ) = R(x)R(y)E₁.
	mills := func(s *big.Float) *big.Float {
		q := gaussref.UpperTail(s, refPrec)
		half := newF(refPrec).Mul(s, s)
		half.Quo(half, bf(-2))
		phi := gaussref.Exp(half, refPrec)
		twoPi := newF(refPrec).Mul(gaussref.Pi(refPrec), bf(2))
		phi.Quo(phi, newF(refPrec).Sqrt(twoPi))
		return newF(refPrec).Quo(q, phi)
	}
	for s := cfMin; s <= 40; s += 0.25 {
		rx, _, _ := millsCF(s, 0)
		exact := mills(bf(s))
		if rd := math.Abs(relDiff(bf(rx), exact)); rd > 1e-14 {
			t.Errorf("R(%v) = %v, exact %s (relative %.3g)", s, rx, exact.Text('g', 20), rd)
		}
		for _, mu := range []float64{1e-15, 1e-6, 0.1, 3, 50} {
			rx, ry, e1 := millsCF(s, mu)
			exact := newF(refPrec).Sub(mills(bf(s)), mills(newF(refPrec).Add(bf(s), bf(mu))))
			if rd := math.Abs(relDiff(bf(rx*ry*e1), exact)); rd > 1e-13 {
				t.Errorf("R(%v) − R(%v + %v) = %v, exact %s (relative %.3g)", s, s, mu, rx*ry*e1, exact.Text('g', 20), rd)
			}
		}
	}
}
