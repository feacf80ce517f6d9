package bound

import "fmt"

// Provenance says where a quantity comes from, so that a certificate can
// state how much of it is a theorem. Its values are [Proved] (derived or
// enforced by the toolkit), [Estimated] (measured from data), [Assumed]
// (taken without proof or measurement, such as a number a user types) and
// the invalid zero value [Unspecified]; in JSON and on the command line they
// are "proved", "estimated" and "assumed". The same type, with the same
// words, labels every quantity in packages bound and certify.
//
// The zero value is [Unspecified], which every function refuses: a caller
// must say how its constants were obtained.
type Provenance int

const (
	// Unspecified is the zero value; it is never valid.
	Unspecified Provenance = iota
	// Proved: follows from the stated assumptions (the paper's appendix
	// "Convexity Assumptions" and those added in docs/theory.md) by a proof
	// given in docs/theory.md.
	Proved
	// Estimated: measured from data (a decay fit, trajectory pairs,
	// observed gradients); no guarantee beyond the data.
	Estimated
	// Assumed: taken as an assumption without proof or measurement, e.g.
	// the contraction factor ρ of the paper's Assumption "Contractive
	// update map".
	Assumed
)

// String returns "proved", "estimated", "assumed" or "unspecified".
func (p Provenance) String() string {
	switch p {
	case Unspecified:
		return "unspecified"
	case Proved:
		return "proved"
	case Estimated:
		return "estimated"
	case Assumed:
		return "assumed"
	}
	return fmt.Sprintf("Provenance(%d)", int(p))
}

// ParseProvenance is the inverse of String for the three valid values.
func ParseProvenance(s string) (Provenance, error) {
	switch s {
	case "proved":
		return Proved, nil
	case "estimated":
		return Estimated, nil
	case "assumed":
		return Assumed, nil
	}
	return Unspecified, fmt.Errorf("bound: ParseProvenance: %q: %w", s, ErrInvalid)
}

// MarshalText implements encoding.TextMarshaler (for certificates).
func (p Provenance) MarshalText() ([]byte, error) {
	if !p.valid() {
		return nil, fmt.Errorf("bound: Provenance.MarshalText: %d: %w", int(p), ErrInvalid)
	}
	return []byte(p.String()), nil
}

// UnmarshalText implements encoding.TextUnmarshaler with [ParseProvenance].
func (p *Provenance) UnmarshalText(b []byte) error {
	v, err := ParseProvenance(string(b))
	if err != nil {
		return err
	}
	*p = v
	return nil
}

func (p Provenance) valid() bool { return p == Proved || p == Estimated || p == Assumed }

// Combine returns the provenance of a quantity derived from quantities of
// the given provenances: the weakest of them, in the order Proved <
// Estimated < Assumed (a derivation is only as strong as its weakest
// input; an unmeasured assumption ranks below a measurement). It panics on
// an invalid provenance (a programmer error: validate inputs first).
func Combine(ps ...Provenance) Provenance {
	out := Proved
	for _, p := range ps {
		if !p.valid() {
			panic(fmt.Sprintf("bound: Combine: invalid provenance %d", int(p)))
		}
		out = max(out, p)
	}
	return out
}
