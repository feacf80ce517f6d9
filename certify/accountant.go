package certify

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"sync"

	"unlearn/internal/strictjson"
	"unlearn/noise"
)

// AccountantFormat is the format tag of a serialized [Accountant]. v2
// records each charge's α, σ and β (v1 recorded a zCDP cost) and is not
// compatible with v1.
const AccountantFormat = "unlearn-accountant/v2"

// Budget is the total (ε, δ) a sequence of releases may spend.
type Budget struct {
	// Epsilon is the total ε > 0. Required.
	Epsilon float64 `json:"epsilon"`
	// Delta is the total δ ∈ [2⁻¹⁰²², 1), which also absorbs the
	// releases' failure probabilities β. Required.
	Delta float64 `json:"delta"`
}

// Charge is one certified Gaussian release: what the accountant needs to
// compose it exactly.
type Charge struct {
	// Label identifies the release (e.g. the certificate's digest).
	Label string `json:"label"`
	// Alpha is the L2 sensitivity α ≥ 0 the release was calibrated to.
	Alpha float64 `json:"alpha"`
	// Sigma is the noise σ actually applied (Release.SigmaApplied); σ > 0
	// unless α = 0.
	Sigma float64 `json:"sigma"`
	// Beta is the failure probability β ∈ [0, 1) of the release's bound.
	Beta float64 `json:"beta"`
}

// ChargeOf returns the charge of a certified release: its sensitivity α,
// the σ applied and β, labelled with the certificate's digest.
func ChargeOf(c *Certificate) Charge {
	return Charge{Label: c.Digest, Alpha: c.Sensitivity.Alpha, Sigma: c.SigmaApplied, Beta: c.Beta}
}

// ChargeFor returns the charge of a Gaussian release with L2 sensitivity
// alpha, noise sigma and bound failure probability beta. Errors
// (*SpecError): α or σ refused by noise.GDPMu (field "Alpha" or "Sigma",
// wrapping noise.ErrSensitivity, noise.ErrSigma or noise.ErrRange for
// σ = 0 with α > 0); β ∉ [0, 1) (ErrBeta).
func ChargeFor(label string, alpha, sigma, beta float64) (Charge, error) {
	ch := Charge{Label: label, Alpha: alpha, Sigma: sigma, Beta: beta}
	_, err := ch.mu()
	return ch, err
}

// mu validates the charge and returns its GDP parameter μ = α/σ (rounded
// up) and, for comparison, its zCDP cost α²/(2σ²).
func (ch Charge) mu() (float64, error) {
	mu, err := noise.GDPMu(ch.Alpha, ch.Sigma)
	if err != nil {
		field, v := "Alpha", ch.Alpha
		var ae *noise.ArgError
		if errors.As(err, &ae) && ae.Arg == "sigma" {
			field, v = "Sigma", ch.Sigma
		}
		return 0, specErr(field, v, err)
	}
	if math.IsNaN(ch.Beta) || ch.Beta < 0 || ch.Beta >= 1 {
		return 0, specErr("Beta", ch.Beta, ErrBeta)
	}
	return mu, nil
}

// Spent is the privacy guarantee of a set of releases.
type Spent struct {
	// Releases is the number of releases.
	Releases int `json:"releases"`
	// Mu is the GDP parameter of their composition, sqrt(Σ μ_i²) with
	// μ_i = α_i/σ_i, rounded up (Dong, Roth & Su 2022, Corollary 3.3).
	Mu float64 `json:"mu"`
	// Beta is the total failure probability Σ β_i (union bound), rounded
	// up.
	Beta float64 `json:"beta"`
	// Epsilon is the exact ε of the composition at δ = Budget.Delta:
	// noise.GDPEpsilon(Mu, δ − Σβ) (rounded up); +Inf when Σβ ≥ δ or
	// δ − Σβ < 2⁻¹⁰²².
	Epsilon float64 `json:"-"`
	// ZCDP is Σ α_i²/(2σ_i²), rounded up, and ZCDPEpsilon the ε the zCDP
	// conversion (Bun & Steinke 2016, Proposition 1.3) would charge at the
	// same δ − Σβ: a comparison only, never used to refuse a charge.
	ZCDP        float64 `json:"zcdp"`
	ZCDPEpsilon float64 `json:"-"`
	// Exceeded reports Epsilon > Budget.Epsilon (which includes Σβ ≥ δ).
	Exceeded bool `json:"exceeded"`
}

// Accountant composes repeated certified releases under a budget (ε, δ)
// exactly, with Gaussian differential privacy (docs/theory.md §10.1):
//
//   - a release x + N(0, σ_i²I) with L2 sensitivity α_i is exactly
//     μ_i-GDP, μ_i = α_i/σ_i (Dong, Roth & Su, "Gaussian Differential
//     Privacy", JRSS-B 2022, Theorem 2.7);
//   - the releases together are μ-GDP with μ = sqrt(Σ μ_i²) (Corollary
//     3.3), which is exact, not a bound;
//   - μ-GDP is (ε, δ(ε))-DP for every ε with δ(ε) = Φ(−ε/μ + μ/2) −
//     e^ε·Φ(−ε/μ − μ/2) (Corollary 2.13), so at the budget's δ the
//     releases cost ε = noise.GDPEpsilon(μ, δ − Σβ_i): each release's
//     bound fails with probability β_i, and by the union bound (Boole's
//     inequality, as in docs/theory.md §9) the failures add Σβ_i to δ.
//
// A charge is refused when that ε would exceed the budget's. σ_i chosen
// adaptively — after seeing earlier releases — are covered because the
// accountant is a privacy filter for GDP: it halts before sqrt(Σ μ_i²)
// passes the largest μ the budget admits, and Smith & Thakurta ("Fully
// Adaptive Composition for Gaussian Differential Privacy",
// arXiv:2210.17520, 2022) prove that a filter that sums the squares of
// adaptively chosen μ_i and stops before a fixed threshold is μ-GDP at
// that threshold, exactly as non-adaptive composition. The threshold is
// fixed by the budget when the β_i are fixed in advance (in particular
// β_i = 0, every proved bound); adaptively chosen β_i are outside that
// theorem (docs/theory.md §10.1).
//
// k releases each certified at (ε, δ) = (1, 10⁻⁵) for α = 1 (σ = 3.7324)
// cost ε = 0.9995, 1.4644, 1.8340, 3.6166, 14.4204 for k = 1, 2, 3, 10,
// 100, where the zCDP conversion charged 1.32, 1.89, 2.33, 4.42, 16.45.
// μ, Σβ and ε are rounded up, so the reported ε is never below the exact
// one. zCDP is still reported, as a comparison ([Spent].ZCDP).
//
// The state depends only on the charges, in order, and serializes to
// JSON. An Accountant is safe for concurrent use: [Accountant.Spend] is
// [Accountant.WouldExceed] and the append under one lock, so the two agree
// by construction.
type Accountant struct {
	mu      sync.Mutex
	budget  Budget
	charges []Charge
	gdp     float64 // μ of the charges so far, rounded up
	rho     float64 // Σ ρ_i, rounded up
	beta    float64 // Σ β_i, rounded up
}

// NewAccountant returns an accountant with nothing spent. Errors
// (*SpecError): ε not finite and > 0 (ErrEpsilon, field "Epsilon"),
// δ ∉ [2⁻¹⁰²², 1) (ErrDelta, field "Delta").
func NewAccountant(b Budget) (*Accountant, error) {
	if math.IsNaN(b.Epsilon) || math.IsInf(b.Epsilon, 0) || b.Epsilon <= 0 {
		return nil, specErr("Epsilon", b.Epsilon, ErrEpsilon)
	}
	if math.IsNaN(b.Delta) || b.Delta < 0x1p-1022 || b.Delta >= 1 {
		return nil, specErr("Delta", b.Delta, ErrDelta)
	}
	return &Accountant{budget: b}, nil
}

// Budget returns the budget.
func (a *Accountant) Budget() Budget { return a.budget }

// Charges returns a copy of the charges spent, in order.
func (a *Accountant) Charges() []Charge {
	a.mu.Lock()
	defer a.mu.Unlock()
	return append([]Charge(nil), a.charges...)
}

// Spent returns the guarantee of the releases so far.
func (a *Accountant) Spent() Spent {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.spent(len(a.charges), a.gdp, a.rho, a.beta)
}

// sumUp returns an upper bound on x + y for x, y ≥ 0.
func sumUp(x, y float64) float64 {
	if y == 0 {
		return x
	}
	if x == 0 {
		return y
	}
	return math.Nextafter(x+y, math.Inf(1))
}

// spent evaluates the totals against the budget.
func (a *Accountant) spent(n int, gdp, rho, beta float64) Spent {
	s := Spent{Releases: n, Mu: gdp, ZCDP: rho, Beta: beta,
		Epsilon: math.Inf(1), ZCDPEpsilon: math.Inf(1), Exceeded: true}
	if beta >= a.budget.Delta {
		return s
	}
	d := a.budget.Delta
	if beta > 0 {
		d = math.Nextafter(d-beta, 0) // a lower bound on δ − Σβ
	}
	if z, err := noise.ZCDPEpsilon(rho, d); err == nil {
		s.ZCDPEpsilon = z
	}
	eps, err := noise.GDPEpsilon(gdp, d)
	if err != nil { // δ − Σβ below 2⁻¹⁰²², or μ so large ε overflows
		return s
	}
	s.Epsilon, s.Exceeded = eps, eps > a.budget.Epsilon
	return s
}

// next returns the totals after ch, unlocked; a.mu must be held.
func (a *Accountant) next(ch Charge) (Spent, error) {
	mu, err := ch.mu()
	if err != nil {
		return Spent{}, &AccountError{Label: ch.Label, Err: err}
	}
	rho, err := noise.ZCDP(ch.Alpha, ch.Sigma) // validated by ch.mu
	if err != nil {
		return Spent{}, &AccountError{Label: ch.Label, Err: specErr("Sigma", ch.Sigma, err)}
	}
	gdp, err := noise.GDPCompose(a.gdp, mu)
	if err != nil {
		return Spent{}, &AccountError{Label: ch.Label, Err: specErr("Sigma", ch.Sigma, err)}
	}
	return a.spent(len(a.charges)+1, gdp, sumUp(a.rho, rho), sumUp(a.beta, ch.Beta)), nil
}

// WouldExceed reports whether spending ch would exceed the budget, and the
// guarantee the releases would then have; the accountant is unchanged.
// Errors: a bad charge (*AccountError wrapping a *SpecError, see
// [ChargeFor]).
func (a *Accountant) WouldExceed(ch Charge) (bool, Spent, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	s, err := a.next(ch)
	if err != nil {
		return false, Spent{}, err
	}
	return s.Exceeded, s, nil
}

// Spend records ch if the releases stay within the budget and returns the
// new guarantee. It refuses (an *AccountError wrapping ErrBudget, the
// accountant unchanged, the current guarantee returned) a charge that would
// exceed the budget, and a bad charge as [Accountant.WouldExceed] does.
func (a *Accountant) Spend(ch Charge) (Spent, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	s, err := a.next(ch)
	if err != nil {
		return Spent{}, err
	}
	if s.Exceeded {
		return a.spent(len(a.charges), a.gdp, a.rho, a.beta), &AccountError{Label: ch.Label,
			Err: fmt.Errorf("%w: ε would be %v > %v (μ = %v, Σβ = %v, budget δ = %v)",
				ErrBudget, s.Epsilon, a.budget.Epsilon, s.Mu, s.Beta, a.budget.Delta)}
	}
	a.charges = append(a.charges, ch)
	a.gdp, a.rho, a.beta = s.Mu, s.ZCDP, s.Beta
	return s, nil
}

// accountantJSON is the serialized form.
type accountantJSON struct {
	Format  string   `json:"format"`
	Budget  Budget   `json:"budget"`
	Charges []Charge `json:"charges"`
	Spent   Spent    `json:"spent"`
}

// MarshalJSON implements json.Marshaler: the format tag, the budget, the
// charges in order and the totals (for a reader; they are recomputed on
// reading).
func (a *Accountant) MarshalJSON() ([]byte, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	ch := a.charges
	if ch == nil {
		ch = []Charge{}
	}
	return json.Marshal(accountantJSON{Format: AccountantFormat, Budget: a.budget, Charges: ch,
		Spent: a.spent(len(a.charges), a.gdp, a.rho, a.beta)})
}

// UnmarshalJSON implements json.Unmarshaler: it replays the charges in
// order (so the totals are recomputed, never trusted) and refuses unknown
// fields, another format (v1 included), a bad budget or charge, totals
// that differ from the recomputed ones, and charges that exceed the
// budget. It does not make a file tamper-evident: deleting a charge and
// its totals consistently, or raising the budget, is not detected here
// (the signed ledger is for that).
func (a *Accountant) UnmarshalJSON(b []byte) error {
	var v accountantJSON
	if err := strictjson.Decode(bytes.NewReader(b), &v); err != nil {
		return specErr("Accountant", nil, fmt.Errorf("%w: %w", ErrFormat, err))
	}
	if v.Format != AccountantFormat {
		return specErr("Accountant.format", v.Format, ErrFormat)
	}
	n, err := NewAccountant(v.Budget)
	if err != nil {
		return err
	}
	for _, ch := range v.Charges {
		if _, err := n.Spend(ch); err != nil {
			return err
		}
	}
	got := n.Spent()
	if got.Mu != v.Spent.Mu || got.ZCDP != v.Spent.ZCDP || got.Beta != v.Spent.Beta ||
		got.Releases != v.Spent.Releases || got.Exceeded != v.Spent.Exceeded {
		return specErr("Accountant.spent", nil, fmt.Errorf("%w: the totals differ from the charges", ErrInconsistent))
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	a.budget, a.charges, a.gdp, a.rho, a.beta = n.budget, n.charges, n.gdp, n.rho, n.beta
	return nil
}
