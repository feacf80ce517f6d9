package certify

import (
	"encoding/json"
	"math"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"unlearn/noise"
)

func TestAccountantHandValues(t *testing.T) {
	// Ten releases at α = 0.05, σ = 0.2 (docs/theory.md §10): each costs
	// ρ = 0.05²/(2·0.2²) = 0.03125, together 0.3125, and at δ = 1e-5
	// ε = 0.3125 + 2·sqrt(0.3125·ln(1e5)) = 4.10608… A budget ε = 4.2 takes
	// all ten; a budget ε = 4 takes nine (ε_9 = 0.28125 + 2·sqrt(0.28125·ln(1e5))
	// = 3.8801…) and refuses the tenth.
	wantEps := func(rho, delta float64) float64 { return rho + 2*math.Sqrt(rho*math.Log(1/delta)) }
	ch, err := ChargeFor("r", 0.05, 0.2, 0)
	require.NoError(t, err)
	if !approx(ch.ZCDP, 0.03125, 0, 1e-14) {
		t.Fatalf("ρ = %v, want 0.03125", ch.ZCDP)
	}
	for _, tc := range []struct {
		name     string
		budget   float64
		accepted int
	}{
		{"all-ten", 4.2, 10},
		{"nine", 4, 9},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a, err := NewAccountant(Budget{Epsilon: tc.budget, Delta: 1e-5})
			require.NoError(t, err)
			for i := range 10 {
				would, next, err := a.WouldExceed(ch)
				require.NoError(t, err)
				s, err := a.Spend(ch)
				if i < tc.accepted {
					require.NoError(t, err, "release %d", i+1)
				} else {
					require.ErrorIs(t, err, ErrBudget, "release %d", i+1)
				}
				require.Equal(t, err != nil, would, "release %d: WouldExceed must predict the refusal", i+1)
				if err != nil {
					require.Equal(t, tc.accepted, a.Spent().Releases, "refusal %v changed the accountant", err)
					continue
				}
				if next != s {
					t.Fatalf("WouldExceed predicted %+v, Spend gave %+v", next, s)
				}
				rho := 0.03125 * float64(i+1)
				if !approx(s.ZCDP, rho, 0, 1e-13) || !approx(s.Epsilon, wantEps(rho, 1e-5), 0, 1e-13) {
					t.Fatalf("after %d: ρ = %v, ε = %v; want %v, %v", i+1, s.ZCDP, s.Epsilon, rho, wantEps(rho, 1e-5))
				}
			}
			s := a.Spent()
			assert.Equal(t, tc.accepted, s.Releases, "releases spent")
			assert.False(t, s.Exceeded, "spent %+v is exceeded", s)
		})
	}
	if got := wantEps(0.3125, 1e-5); !approx(got, 4.10608, 0, 1e-5) { // the value docs/theory.md quotes
		t.Errorf("ε(0.3125, 1e-5) = %v", got)
	}
}

func TestAccountantBetasAddUp(t *testing.T) {
	// Budget δ = 1e-5 absorbs the releases' β: two releases with β = 4e-6
	// leave δ' = 2e-6 for the zCDP conversion, ε = ρ + 2·sqrt(ρ·ln(1/2e-6));
	// a third (Σβ = 1.2e-5 ≥ δ) is refused whatever its ρ.
	a, err := NewAccountant(Budget{Epsilon: 10, Delta: 1e-5})
	require.NoError(t, err)
	ch := Charge{Label: "b", ZCDP: 0.01, Beta: 4e-6}
	for range 2 {
		_, err := a.Spend(ch)
		require.NoError(t, err)
	}
	s := a.Spent()
	wantDelta := 1e-5 - 8e-6
	if want := 0.02 + 2*math.Sqrt(0.02*math.Log(1/wantDelta)); !approx(s.Epsilon, want, 0, 1e-9) || !approx(s.Beta, 8e-6, 0, 1e-15) {
		t.Errorf("spent %+v, want ε %v, Σβ 8e-6", s, want)
	}
	_, err = a.Spend(Charge{Label: "c", ZCDP: 0, Beta: 4e-6})
	assert.ErrorIs(t, err, ErrBudget, "a release that pushes Σβ past δ was accepted")
}

func TestAccountantJSON(t *testing.T) {
	a, err := NewAccountant(Budget{Epsilon: 5, Delta: 1e-6})
	require.NoError(t, err)
	for i, ch := range []Charge{{"x", 0.1, 0}, {"y", 0.02, 1e-8}, {"z", 0, 0}} {
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
		{"tampered-total", `"zcdp":0.12`, `"zcdp":0.01`, ErrInconsistent},
		{"other-format", AccountantFormat, "unlearn-accountant/v0", ErrFormat},
		{"unknown-field", `"budget"`, `"extra":1,"budget"`, ErrFormat},
		{"bad-budget", `"epsilon":5`, `"epsilon":-5`, ErrEpsilon},
		{"negative-charge", `"zcdp":0.1,`, `"zcdp":-0.1,`, noise.ErrZCDP},
	} {
		t.Run(tc.name, func(t *testing.T) {
			require.Contains(t, string(js), tc.from, "test setup: the text to replace")
			bad := strings.Replace(string(js), tc.from, tc.to, 1)
			var c Accountant
			assert.ErrorIs(t, json.Unmarshal([]byte(bad), &c), tc.sentinel)
		})
	}
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
		{"delta=1", Budget{1, 1}, "Delta", ErrDelta},
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
		{"zcdp<0", Charge{ZCDP: -1}, "ZCDP", noise.ErrZCDP},
		{"zcdp=Inf", Charge{ZCDP: math.Inf(1)}, "ZCDP", noise.ErrZCDP},
		{"beta=1", Charge{Beta: 1}, "Beta", ErrBeta},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := a.Spend(tc.ch)
			var ae *AccountError
			require.ErrorAs(t, err, &ae)
			wantSpecError(t, ae.Err, tc.field, tc.sentinel)
		})
	}
	_, err = ChargeFor("x", 1, 0, 0)
	assert.ErrorIs(t, err, noise.ErrRange, "σ = 0 with α > 0")
}
