package certify

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"

	"unlearn/noise"
)

// AccountantFormat is the format tag of a serialized [Accountant].
const AccountantFormat = "unlearn-accountant/v1"

// Budget is the total (ε, δ) a sequence of releases may spend.
type Budget struct {
	// Epsilon is the total ε > 0. Required.
	Epsilon float64 `json:"epsilon"`
	// Delta is the total δ ∈ (0, 1), which also absorbs the releases'
	// failure probabilities β. Required.
	Delta float64 `json:"delta"`
}

// Charge is what one certified release costs: its zCDP parameter and the
// failure probability of its bound.
type Charge struct {
	// Label identifies the release (e.g. the certificate's digest).
	Label string `json:"label"`
	// ZCDP is ρ_zCDP = α²/(2σ²) of the release (Bun & Steinke 2016,
	// Proposition 1.6), finite and ≥ 0.
	ZCDP float64 `json:"zcdp"`
	// Beta is the failure probability β ∈ [0, 1) of its bound.
	Beta float64 `json:"beta"`
}

// ChargeOf returns the charge of a certified release: its zCDP cost and β,
// labelled with its intervention and digest.
func ChargeOf(c *Certificate) Charge {
	d := c.Digest
	if len(d) > 12 {
		d = d[:12]
	}
	z := 0.0
	if c.Sensitivity.Alpha > 0 && c.SigmaApplied > 0 {
		z, _ = noise.ZCDP(c.Sensitivity.Alpha, c.SigmaApplied)
	}
	return Charge{Label: c.Intervention + "@" + d, ZCDP: z, Beta: c.Beta}
}

// ChargeFor returns the charge of a Gaussian release with L2 sensitivity
// alpha, noise sigma and bound failure probability beta. Errors: those of
// noise.ZCDP (as a *SpecError), β ∉ [0, 1) (ErrBeta).
func ChargeFor(label string, alpha, sigma, beta float64) (Charge, error) {
	z, err := noise.ZCDP(alpha, sigma)
	if err != nil {
		return Charge{}, specErr(noiseField(err, "alpha"), nil, err)
	}
	ch := Charge{Label: label, ZCDP: z, Beta: beta}
	return ch, ch.validate()
}

func (ch Charge) validate() error {
	if !finiteNonNeg(ch.ZCDP) {
		return specErr("ZCDP", ch.ZCDP, noise.ErrZCDP)
	}
	if math.IsNaN(ch.Beta) || ch.Beta < 0 || ch.Beta >= 1 {
		return specErr("Beta", ch.Beta, ErrBeta)
	}
	return nil
}

// Spent is the privacy guarantee of a set of releases.
type Spent struct {
	// Releases is the number of releases.
	Releases int `json:"releases"`
	// ZCDP is the total ρ_zCDP = Σ ρ_i (Bun & Steinke 2016, Lemma 1.7).
	ZCDP float64 `json:"zcdp"`
	// Beta is the total failure probability Σ β_i (union bound).
	Beta float64 `json:"beta"`
	// Epsilon is the ε of the composition at δ = Budget.Delta:
	// ε = ρ + 2·sqrt(ρ·ln(1/(δ − Σβ))) (Proposition 1.3 at δ − Σβ, plus
	// Σβ: docs/theory.md §10); +Inf when Σβ ≥ δ.
	Epsilon float64 `json:"-"`
	// Exceeded reports Epsilon > Budget.Epsilon or Σβ ≥ Budget.Delta.
	Exceeded bool `json:"exceeded"`
}

// Accountant composes repeated certified releases under a budget (ε, δ)
// (docs/theory.md §10). Each Gaussian release with sensitivity α and noise
// σ is ρ_i-zCDP with ρ_i = α²/(2σ²); zCDP composes additively, adaptively
// (Bun & Steinke 2016, Lemma 1.7); ρ-zCDP is (ρ + 2·sqrt(ρ·ln(1/δ')),
// δ')-DP for every δ' > 0 (Proposition 1.3); and each release's bound
// fails with probability β_i, which adds to δ (union bound, §9). With the
// budget's δ split as δ' = δ − Σβ_i, the releases together are
// (ε_total, δ)-certified with
//
//	ε_total = ρ + 2·sqrt(ρ·ln(1/(δ − Σβ_i))),   ρ = Σρ_i,
//
// which must not exceed the budget's ε. Sums are rounded up. The state is
// deterministic (it depends only on the charges, in order) and serializes
// to JSON. An Accountant is not safe for concurrent use.
type Accountant struct {
	budget  Budget
	charges []Charge
	rho     float64
	beta    float64
}

// NewAccountant returns an accountant with nothing spent. Errors
// (*SpecError): ε not finite and > 0 (ErrEpsilon), δ ∉ (0, 1) (ErrDelta).
func NewAccountant(b Budget) (*Accountant, error) {
	if err := checkPrivacy(b.Epsilon, b.Delta, 0); err != nil {
		return nil, err
	}
	return &Accountant{budget: b}, nil
}

// Budget returns the budget.
func (a *Accountant) Budget() Budget { return a.budget }

// Charges returns a copy of the charges spent, in order.
func (a *Accountant) Charges() []Charge { return append([]Charge(nil), a.charges...) }

// Spent returns the guarantee of the releases so far.
func (a *Accountant) Spent() Spent { return a.spent(len(a.charges), a.rho, a.beta) }

// addUp returns an upper bound on x + y for x, y ≥ 0.
func addUp(x, y float64) float64 {
	if y == 0 {
		return x
	}
	return roundUp(x + y)
}

func (a *Accountant) spent(n int, rho, beta float64) Spent {
	s := Spent{Releases: n, ZCDP: rho, Beta: beta, Epsilon: math.Inf(1), Exceeded: true}
	if beta >= a.budget.Delta {
		return s
	}
	eps, err := noise.ZCDPEpsilon(rho, a.budget.Delta-beta)
	if err != nil { // ρ overflowed
		return s
	}
	s.Epsilon, s.Exceeded = eps, eps > a.budget.Epsilon
	return s
}

// WouldExceed reports whether spending ch would exceed the budget, and the
// guarantee the releases would then have; the accountant is unchanged.
// Errors: a bad charge (*SpecError: ErrZCDP, ErrBeta).
func (a *Accountant) WouldExceed(ch Charge) (bool, Spent, error) {
	if err := ch.validate(); err != nil {
		return false, Spent{}, &AccountError{Label: ch.Label, Err: err}
	}
	s := a.spent(len(a.charges)+1, addUp(a.rho, ch.ZCDP), addUp(a.beta, ch.Beta))
	return s.Exceeded, s, nil
}

// Spend records ch if the releases stay within the budget and returns the
// new guarantee. It refuses (an *AccountError wrapping ErrBudget, the
// accountant unchanged) a charge that would exceed the budget.
func (a *Accountant) Spend(ch Charge) (Spent, error) {
	exceed, s, err := a.WouldExceed(ch)
	if err != nil {
		return Spent{}, err
	}
	if exceed {
		return a.Spent(), &AccountError{Label: ch.Label, Err: fmt.Errorf("%w: ε would be %v > %v (ρ = %v, Σβ = %v, budget δ = %v)",
			ErrBudget, s.Epsilon, a.budget.Epsilon, s.ZCDP, s.Beta, a.budget.Delta)}
	}
	a.charges = append(a.charges, ch)
	a.rho, a.beta = s.ZCDP, s.Beta
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
	ch := a.charges
	if ch == nil {
		ch = []Charge{}
	}
	return json.Marshal(accountantJSON{Format: AccountantFormat, Budget: a.budget, Charges: ch, Spent: a.Spent()})
}

// UnmarshalJSON implements json.Unmarshaler: it replays the charges in
// order (so the totals are recomputed, never trusted) and refuses unknown
// fields, another format, a bad budget or charge, totals that differ from
// the recomputed ones, and charges that exceed the budget.
func (a *Accountant) UnmarshalJSON(b []byte) error {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	var v accountantJSON
	if err := dec.Decode(&v); err != nil {
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
	if got := n.Spent(); got.ZCDP != v.Spent.ZCDP || got.Beta != v.Spent.Beta || got.Releases != v.Spent.Releases || got.Exceeded != v.Spent.Exceeded {
		return specErr("Accountant.spent", nil, fmt.Errorf("%w: the totals differ from the charges", ErrInconsistent))
	}
	*a = *n
	return nil
}
