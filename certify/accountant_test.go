package certify

import (
	"encoding/json"
	"math"
	"math/big"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"pgregory.net/rapid"

	"unlearn/internal/gaussref"
	"unlearn/noise"
)

// unitRelease is the charge of one release certified at (ε, δ) = (1, 1e-5)
// for α = 1: σ = SigmaAnalytic(1, 1, 1e-5) = 3.7324… (exact 3.73063).
func unitRelease(t testing.TB) Charge {
	t.Helper()
	s, err := noise.SigmaAnalytic(1, 1, 1e-5)
	require.NoError(t, err)
	require.InDelta(t, 3.7324, s, 5e-5, "σ of the (1, 1e-5) release")
	ch, err := ChargeFor("unit", 1, s, 0)
	require.NoError(t, err)
	return ch
}

func TestAccountantComposesExactly(t *testing.T) {
	// Issue 10: k releases each certified at (1, 1e-5) with α = 1 compose
	// to ε = 0.9995, 1.4644, 1.8340, 3.6166, 14.4204 at δ = 1e-5 (exact
	// GDP, four decimals), where zCDP gives 1.32, 1.89, 2.33, 4.42, 16.45.
	// Each ε is also checked against the 256-bit δ at μ = sqrt(k)/σ: it
	// must satisfy δ(ε) ≤ 1e-5 exactly (never below the exact ε).
	ch := unitRelease(t)
	a, err := NewAccountant(Budget{Epsilon: 100, Delta: 1e-5})
	require.NoError(t, err)
	want := map[int][2]float64{1: {0.9995, 1.32}, 2: {1.4644, 1.89}, 3: {1.8340, 2.33}, 10: {3.6166, 4.42}, 100: {14.4204, 16.45}}
	for k := 1; k <= 100; k++ {
		s, err := a.Spend(ch)
		require.NoError(t, err, "release %d", k)
		w, ok := want[k]
		if !ok {
			continue
		}
		assert.InDelta(t, w[0], s.Epsilon, 5e-5, "k = %d: GDP ε", k)
		assert.InDelta(t, w[1], s.ZCDPEpsilon, 5e-3, "k = %d: zCDP ε", k)
		mu := new(big.Float).SetPrec(gaussref.Prec).Quo(gaussref.F(math.Sqrt(float64(k))), gaussref.F(ch.Sigma))
		if math.Sqrt(float64(k))*math.Sqrt(float64(k)) != float64(k) {
			// sqrt(k) is not exact: use the exact root.
			mu.Sqrt(new(big.Float).SetPrec(gaussref.Prec).SetInt64(int64(k)))
			mu.Quo(mu, gaussref.F(ch.Sigma))
		}
		if d := gaussref.Delta(mu, gaussref.F(s.Epsilon)); d.Cmp(gaussref.F(1e-5)) > 0 {
			t.Errorf("k = %d: ε = %v gives exact δ = %s > 1e-5", k, s.Epsilon, d.Text('g', 10))
		}
	}
}

func TestAccountantAdmitsExactly(t *testing.T) {
	// A (1, 1e-5) budget admits exactly one (1, 1e-5) release (zCDP
	// admitted none: 1.32 > 1); a (2, 1e-5) budget exactly three. Every
	// refusal is predicted by WouldExceed and leaves the accountant
	// unchanged.
	ch := unitRelease(t)
	for _, tc := range []struct {
		budget   float64
		accepted int
	}{{1, 1}, {2, 3}} {
		a, err := NewAccountant(Budget{Epsilon: tc.budget, Delta: 1e-5})
		require.NoError(t, err)
		for i := range tc.accepted + 2 {
			would, next, err := a.WouldExceed(ch)
			require.NoError(t, err)
			s, err := a.Spend(ch)
			require.Equal(t, err != nil, would, "budget %v, release %d: WouldExceed must predict Spend", tc.budget, i+1)
			if i < tc.accepted {
				require.NoError(t, err, "budget %v, release %d", tc.budget, i+1)
				require.Equal(t, next, s, "WouldExceed and Spend disagree")
				continue
			}
			require.ErrorIs(t, err, ErrBudget, "budget %v, release %d", tc.budget, i+1)
			var ae *AccountError
			require.ErrorAs(t, err, &ae)
			require.Equal(t, "unit", ae.Label)
			require.Equal(t, tc.accepted, s.Releases, "a refusal returns the current guarantee")
			require.Equal(t, a.Spent(), s)
		}
		assert.Equal(t, tc.accepted, len(a.Charges()), "budget %v", tc.budget)
	}
}

func TestAccountantBetasAddUp(t *testing.T) {
	// Budget δ = 1e-5 absorbs the releases' β: two releases with β = 4e-6
	// leave δ' = 2e-6 (rounded down) for the GDP conversion; a third
	// (Σβ = 1.2e-5 ≥ δ) is refused whatever its μ, even μ = 0.
	a, err := NewAccountant(Budget{Epsilon: 10, Delta: 1e-5})
	require.NoError(t, err)
	ch, err := ChargeFor("b", 0.1, 1, 4e-6)
	require.NoError(t, err)
	for range 2 {
		_, err := a.Spend(ch)
		require.NoError(t, err)
	}
	s := a.Spent()
	mu, err := noise.GDPCompose(0.1, 0.1)
	require.NoError(t, err)
	want, err := noise.GDPEpsilon(mu, 2e-6)
	require.NoError(t, err)
	assert.InDelta(t, want, s.Epsilon, 1e-6*want, "ε at δ − Σβ")
	assert.GreaterOrEqual(t, s.Epsilon, want, "δ − Σβ is rounded down, so ε is not below its value at 2e-6")
	assert.InDelta(t, 8e-6, s.Beta, 1e-20)
	free, err := ChargeFor("c", 0, 0, 4e-6)
	require.NoError(t, err)
	_, err = a.Spend(free)
	assert.ErrorIs(t, err, ErrBudget, "a release that pushes Σβ past δ was accepted")
}

func TestAccountantProperty(t *testing.T) {
	// For random heterogeneous releases (α_i, σ_i) the accountant's ε at δ
	// is never below the exact ε* of sqrt(Σ(α_i/σ_i)²)-GDP (the 256-bit δ
	// at the reported ε is ≤ δ; δ decreases in ε) and within a relative
	// 1e-6 of it (the 256-bit δ at ε/(1+1e-6) − 1e-9 exceeds δ; the 1e-9
	// covers ε* near 0, see noise.GDPEpsilon). Exact μ* = sqrt(Σ α_i²/σ_i²)
	// in big.Float.
	rapid.Check(t, func(t *rapid.T) {
		delta := rapid.Float64Range(math.Log(1e-12), math.Log(0.1)).Draw(t, "log delta")
		delta = math.Exp(delta)
		a, err := NewAccountant(Budget{Epsilon: math.MaxFloat64, Delta: delta})
		require.NoError(t, err)
		n := rapid.IntRange(1, 20).Draw(t, "releases")
		sum := new(big.Float).SetPrec(gaussref.Prec)
		for i := range n {
			alpha := math.Exp(rapid.Float64Range(math.Log(1e-3), math.Log(10)).Draw(t, "log alpha"))
			sigma := alpha * math.Exp(rapid.Float64Range(math.Log(0.3), math.Log(1e3)).Draw(t, "log sigma/alpha"))
			_, err := a.Spend(Charge{Label: "r", Alpha: alpha, Sigma: sigma})
			require.NoError(t, err, "release %d", i)
			r := new(big.Float).SetPrec(gaussref.Prec).Quo(gaussref.F(alpha), gaussref.F(sigma))
			sum.Add(sum, r.Mul(r, r))
		}
		mu := sum.Sqrt(sum)
		s := a.Spent()
		if d := gaussref.Delta(mu, gaussref.F(s.Epsilon)); d.Cmp(gaussref.F(delta)) > 0 {
			t.Fatalf("ε = %v below the exact ε (δ(ε) = %s > %v)", s.Epsilon, d.Text('g', 10), delta)
		}
		if s.Epsilon == 0 {
			return
		}
		lower := max(0, s.Epsilon/(1+1e-6)-1e-9)
		if d := gaussref.Delta(mu, gaussref.F(lower)); d.Cmp(gaussref.F(delta)) <= 0 {
			t.Fatalf("ε = %v more than 1e-6 above the exact ε (μ* = %s)", s.Epsilon, mu.Text('g', 17))
		}
	})
}

func TestAccountantConcurrent(t *testing.T) {
	// 16 goroutines try to spend 4 releases each under a (2, 1e-5) budget
	// that admits exactly three: exactly three succeed, the others get
	// ErrBudget, and the totals equal a sequential replay. Readers run
	// alongside (go test -race checks the locking).
	ch := unitRelease(t)
	a, err := NewAccountant(Budget{Epsilon: 2, Delta: 1e-5})
	require.NoError(t, err)
	var wg sync.WaitGroup
	var mu sync.Mutex
	ok, refused := 0, 0
	for range 16 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 4 {
				_, err := a.Spend(ch)
				_, _, _ = a.WouldExceed(ch)
				_ = a.Spent()
				_ = a.Charges()
				_, _ = json.Marshal(a)
				mu.Lock()
				if err == nil {
					ok++
				} else if assert.ErrorIs(t, err, ErrBudget) {
					refused++
				}
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	assert.Equal(t, 3, ok, "accepted")
	assert.Equal(t, 61, refused, "refused")
	seq, err := NewAccountant(Budget{Epsilon: 2, Delta: 1e-5})
	require.NoError(t, err)
	for range 3 {
		_, err := seq.Spend(ch)
		require.NoError(t, err)
	}
	assert.Equal(t, seq.Spent(), a.Spent())
}

func TestAccountantJSON(t *testing.T) {
	a, err := NewAccountant(Budget{Epsilon: 5, Delta: 1e-6})
	require.NoError(t, err)
	for i, ch := range []Charge{{"x", 0.5, 1, 0}, {"y", 0.2, 2, 1e-8}, {"z", 0, 0, 0}} {
		_, err := a.Spend(ch)
		require.NoError(t, err, "charge %d", i)
	}
	js, err := json.Marshal(a)
	require.NoError(t, err)
	var b Accountant
	require.NoError(t, json.Unmarshal(js, &b))
	if b.Spent() != a.Spent() || len(b.Charges()) != 3 || b.Budget() != a.Budget() {
		t.Fatalf("round trip: %+v vs %+v", b.Spent(), a.Spent())
	}
	js2, err := json.Marshal(&b)
	require.NoError(t, err)
	require.Equal(t, string(js), string(js2), "not deterministic")
	for _, tc := range []struct {
		name, from, to string
		sentinel       error
	}{
		{"tampered-beta", `"beta":1e-8,"zcdp"`, `"beta":0,"zcdp"`, ErrInconsistent},
		{"v1", AccountantFormat, "unlearn-accountant/v1", ErrFormat},
		{"unknown-field", `"budget"`, `"extra":1,"budget"`, ErrFormat},
		{"bad-budget", `"epsilon":5`, `"epsilon":-5`, ErrEpsilon},
		{"negative-sigma", `"sigma":1,`, `"sigma":-1,`, noise.ErrSigma},
		{"over-budget", `"epsilon":5`, `"epsilon":0.01`, ErrBudget},
	} {
		t.Run(tc.name, func(t *testing.T) {
			require.Contains(t, string(js), tc.from, "test setup: the text to replace")
			bad := strings.Replace(string(js), tc.from, tc.to, 1)
			var c Accountant
			assert.ErrorIs(t, json.Unmarshal([]byte(bad), &c), tc.sentinel, "%s", bad)
		})
	}
	t.Run("trailing", func(t *testing.T) {
		var c Accountant
		assert.ErrorIs(t, c.UnmarshalJSON(append(js, ']')), ErrFormat)
	})
	t.Run("tampered-mu", func(t *testing.T) {
		var v map[string]any
		require.NoError(t, json.Unmarshal(js, &v))
		v["spent"].(map[string]any)["mu"] = 0.01
		bad, err := json.Marshal(v)
		require.NoError(t, err)
		var c Accountant
		assert.ErrorIs(t, json.Unmarshal(bad, &c), ErrInconsistent)
	})
}

func TestAccountantRefusesBadInput(t *testing.T) {
	for _, tc := range []struct {
		name     string
		budget   Budget
		field    string
		sentinel error
	}{
		{"epsilon=0", Budget{0, 1e-5}, "Epsilon", ErrEpsilon},
		{"epsilon=NaN", Budget{math.NaN(), 1e-5}, "Epsilon", ErrEpsilon},
		{"epsilon=Inf", Budget{math.Inf(1), 1e-5}, "Epsilon", ErrEpsilon},
		{"delta=1", Budget{1, 1}, "Delta", ErrDelta},
		{"delta=0", Budget{1, 0}, "Delta", ErrDelta},
		{"delta-subnormal", Budget{1, 5e-324}, "Delta", ErrDelta},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := NewAccountant(tc.budget)
			wantSpecError(t, err, tc.field, tc.sentinel)
		})
	}
	a, err := NewAccountant(Budget{1, 1e-5})
	require.NoError(t, err)
	for _, tc := range []struct {
		name     string
		ch       Charge
		field    string
		sentinel error
	}{
		{"alpha<0", Charge{Alpha: -1, Sigma: 1}, "Alpha", noise.ErrSensitivity},
		{"alpha=Inf", Charge{Alpha: math.Inf(1), Sigma: 1}, "Alpha", noise.ErrSensitivity},
		{"sigma=NaN", Charge{Alpha: 1, Sigma: math.NaN()}, "Sigma", noise.ErrSigma},
		{"sigma=0", Charge{Alpha: 1, Sigma: 0}, "Sigma", noise.ErrRange},
		{"beta=1", Charge{Alpha: 1, Sigma: 10, Beta: 1}, "Beta", ErrBeta},
		{"beta<0", Charge{Alpha: 1, Sigma: 10, Beta: -1e-9}, "Beta", ErrBeta},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := a.Spend(tc.ch)
			var ae *AccountError
			require.ErrorAs(t, err, &ae)
			wantSpecError(t, ae.Err, tc.field, tc.sentinel)
			_, _, err = a.WouldExceed(tc.ch)
			require.ErrorAs(t, err, &ae)
			_, err = ChargeFor("x", tc.ch.Alpha, tc.ch.Sigma, tc.ch.Beta)
			wantSpecError(t, err, tc.field, tc.sentinel)
		})
	}
	assert.Zero(t, a.Spent().Releases, "bad charges were recorded")
}

func TestChargeOfCertificate(t *testing.T) {
	c := &Certificate{Sensitivity: Sensitivity{Alpha: 0.5}, SigmaApplied: 2, Beta: 1e-9, Digest: "abc123"}
	assert.Equal(t, Charge{Label: "abc123", Alpha: 0.5, Sigma: 2, Beta: 1e-9}, ChargeOf(c))
}

// TestChargeAtTheCertificatesDelta: one release calibrated (analytic σ)
// to (ε, δ) is charged by a ledger at the same δ an ε at most the stated
// one — σ is rounded up, so the mechanism is at least as private as
// stated — and within the calibration's 10⁻³ bracket of it (never a
// material under-charge); at a 10 times larger budget δ it spends a
// smaller ε and at a 10 times smaller one a larger ε, each the exact
// conversion of the same μ = α/σ (noise.GDPEpsilon). For (1, 10⁻⁵) at a
// budget δ of 10⁻⁴: 0.8362 (docs/deployment.md).
func TestChargeAtTheCertificatesDelta(t *testing.T) {
	spend := func(alpha, sigma, delta float64) float64 {
		a, err := NewAccountant(Budget{Epsilon: 1e6, Delta: delta})
		require.NoError(t, err)
		sp, err := a.Spend(Charge{Label: "r", Alpha: alpha, Sigma: sigma})
		require.NoError(t, err)
		return sp.Epsilon
	}
	rapid.Check(t, func(rt *rapid.T) {
		alpha := rapid.Float64Range(1e-4, 10).Draw(rt, "alpha")
		eps := rapid.Float64Range(0.05, 8).Draw(rt, "epsilon")
		delta := rapid.SampledFrom([]float64{1e-3, 1e-5, 1e-7, 1e-9}).Draw(rt, "delta")
		sigma, err := noise.SigmaAnalytic(alpha, eps, delta)
		require.NoError(rt, err)
		got := spend(alpha, sigma, delta)
		if got > eps || got < eps*(1-2e-3) {
			rt.Fatalf("charged ε = %v at δ = %v for a release stated at ε = %v", got, delta, eps)
		}
		if up, down := spend(alpha, sigma, 10*delta), spend(alpha, sigma, delta/10); !(up < got && got < down) {
			rt.Fatalf("ε at 10δ, δ, δ/10: %v, %v, %v: want decreasing in δ", up, got, down)
		}
	})
	sigma, err := noise.SigmaAnalytic(0.006093, 1, 1e-5)
	require.NoError(t, err)
	require.InDelta(t, 0.8362, spend(0.006093, sigma, 1e-4), 5e-5)
}
