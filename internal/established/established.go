// Package established is the capability by which the toolkit's own
// packages tell package certify that they established a fact about a
// state themselves — that it is the replay of a deletion-edited history,
// or how a deletion request was served — rather than taking it from a
// caller. It is internal: code outside this module cannot construct a
// Description, so a user of package certify cannot present a claim of
// its own as established (spec §7: "proved" and "exact" are established
// by the code, never a caller's word).
package established

// Description says how a fact was established. The zero value (and nil)
// establishes nothing.
type Description struct{ how string }

// New returns a Description of how the toolkit established a fact. how
// must say it in words, for the certificate.
func New(how string) *Description { return &Description{how: how} }

// How returns the description, or "" for nil or the zero value.
func (d *Description) How() string {
	if d == nil {
		return ""
	}
	return d.how
}
