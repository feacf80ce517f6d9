package certify

import (
	"encoding/hex"
	"errors"
	"fmt"
	"math"
	"reflect"
	"slices"
	"strings"

	"gonum.org/v1/gonum/floats"
	"gonum.org/v1/gonum/floats/scalar"

	"unlearn/bound"
	"unlearn/noise"
)

// recomputeTol is the relative tolerance for the values Verify recomputes
// with transcendental functions (α through exp and log, σ through a
// bisection): they are deterministic on one platform, and 10⁻¹² leaves
// room for a different libm on another (a few ulps) while any deliberate
// change beyond it is refused.
const recomputeTol = 1e-12

// Report is the outcome of a successful verification.
type Report struct {
	// Certificate is the verified certificate.
	Certificate *Certificate
	// Checked lists what was checked.
	Checked []string
	// Cannot lists what no verifier can check from public data, and, for
	// a verification without a public key, who issued the certificate.
	Cannot []string
	// Authenticated says that the certificate's Ed25519 signature was
	// checked against the public key given to Verify. Without it nothing
	// says who made the certificate: anyone can write one that passes every
	// other check (a forged "exact" certificate for a release of their
	// own included). Code that acts on a verification must require it.
	Authenticated bool
}

// String returns the report as text: the certificate's summary, then the
// checks.
func (r *Report) String() string {
	var b strings.Builder
	b.WriteString(r.Certificate.Summary())
	for _, c := range r.Checked {
		fmt.Fprintf(&b, "  ok           %s\n", c)
	}
	for _, s := range r.Cannot {
		fmt.Fprintf(&b, "  cannot check %s\n", s)
	}
	return b.String()
}

// Signer signs certificates with the certifier's Ed25519 key
// (sign.Secret implements it).
type Signer interface {
	// Sign returns the Ed25519 signature of msg.
	Sign(msg []byte) []byte
	// KeyID identifies the public key.
	KeyID() string
}

// PublicKey checks certificate signatures (sign.Public implements it).
type PublicKey interface {
	// Verify returns nil if sig is the key's signature of msg.
	Verify(msg, sig []byte) error
	// KeyID identifies the key.
	KeyID() string
}

// Sign signs the certificate: it sets KeyID and Signature (hex, over
// [Certificate.SignedBytes]). The digest is unchanged.
func Sign(c *Certificate, key Signer) error {
	c.KeyID, c.Signature = key.KeyID(), ""
	b, err := c.SignedBytes()
	if err != nil {
		return err
	}
	c.Signature = hex.EncodeToString(key.Sign(b))
	return nil
}

// Verify checks a certificate against the release it covers (the bytes of
// the release file). With a public key, it first checks that the
// certificate is signed by that key (ErrSignature otherwise) and sets
// Report.Authenticated. Without one (pub nil) it is an integrity check
// only: it checks everything else, and Report.Authenticated is false and
// Report.Cannot says that who issued the certificate was not checked —
// anyone can write a certificate that passes, a forged exact one
// included, so a caller that accepts a release on the strength of the
// verification must give the certifier's key (the command-line tool exits
// with an error, NOT VERIFIED, unless --integrity-only asks for just this
// check).
//
// It then recomputes from the recorded public inputs everything that
// follows from them: the sensitivity α (the profile is derived again from
// the RELEASE's configuration and loss header, so no constant can be
// edited: G, hMin, hMax, ρ are not inputs), σ from α, ε, δ and the
// calibration, the guarantee, the provenance, the statement and the
// warnings; and it cross-checks the certificate against the release:
// format, SHA-256, configuration (η, τ, γ₀, radius, guard), dimension, the
// deletion count against the ages, the sampler against "deployable", the
// released memory against the memory policy, and the released w against
// the radius. It returns a *VerifyError naming the first field that fails.
//
// What no verifier can check from public data — that the noise was drawn
// as stated, that the state was the learner's, that the history was the
// one described — is listed in the report: a signature says who claims it.
func Verify(cert *Certificate, release []byte, pub PublicKey) (*Report, error) {
	if cert == nil {
		return nil, verifyErr("certificate", ErrFormat, "missing")
	}
	rep := &Report{Certificate: cert}
	ok := func(s string, args ...any) { rep.Checked = append(rep.Checked, fmt.Sprintf(s, args...)) }
	if err := verifySignature(cert, pub, ok); err != nil {
		return nil, err
	}
	if cert.Format != Format {
		return nil, verifyErr("format", ErrFormat, "%q, want %q", cert.Format, Format)
	}
	d, err := cert.digest()
	if err != nil {
		return nil, &VerifyError{Field: "digest", Err: fmt.Errorf("%w: %w", ErrFormat, err)}
	}
	if d != cert.Digest {
		return nil, verifyErr("digest", ErrDigest, "the content hashes to %s, the certificate says %q", d, cert.Digest)
	}
	if got := sha256Hex(release); got != cert.ReleaseSHA256 {
		return nil, verifyErr("release_sha256", ErrHash, "the release hashes to %s, the certificate says %q", got, cert.ReleaseSHA256)
	}
	rel, err := ParseRelease(release)
	if err != nil {
		return nil, err
	}
	ok("format %s, digest, release SHA-256 %s", cert.Format, cert.ReleaseSHA256[:12])
	if err := verifyCertificate(cert, rel, ok); err != nil {
		return nil, err
	}
	rep.Cannot = []string{
		"that the noise was drawn from the stated sampler with the stated σ (the un-noised state is not public)",
		"that the state came from the stated history and intervention (the events are not public)",
	}
	switch {
	case pub != nil:
		rep.Authenticated = true
	case cert.KeyID == "":
		rep.Cannot = append(rep.Cannot, "who issued the certificate: it is unsigned")
	default:
		rep.Cannot = append(rep.Cannot, fmt.Sprintf("who issued the certificate: it names key %s, but no public key was given to check the signature", cert.KeyID))
	}
	return rep, nil
}

// VerifySignature checks that c is signed by pub (ErrSignature otherwise)
// and nothing else: what a ledger needs before charging a certificate
// (its owner vouches for it); [Verify] checks the rest against the release.
func VerifySignature(c *Certificate, pub PublicKey) error {
	if pub == nil {
		return verifyErr("public key", ErrSignature, "missing")
	}
	return verifySignature(c, pub, func(string, ...any) {})
}

// verifySignature checks the signature when a public key is given.
func verifySignature(c *Certificate, pub PublicKey, ok func(string, ...any)) error {
	if pub == nil {
		return nil
	}
	if c.Signature == "" {
		return verifyErr("signature", ErrSignature, "the certificate is unsigned")
	}
	if c.KeyID != pub.KeyID() {
		return verifyErr("key_id", ErrSignature, "signed by key %q, not by the given key %s", c.KeyID, pub.KeyID())
	}
	sig, err := hex.DecodeString(c.Signature)
	if err != nil {
		return verifyErr("signature", ErrSignature, "not hex")
	}
	b, err := c.SignedBytes()
	if err != nil {
		return &VerifyError{Field: "signature", Err: err}
	}
	if err := pub.Verify(b, sig); err != nil {
		return verifyErr("signature", ErrSignature, "does not verify (the certificate was edited after signing, or signed by another key): %v", err)
	}
	ok("Ed25519 signature by key %s", c.KeyID)
	return nil
}

// near compares recomputed values: equal within recomputeTol relative;
// NaN is never near anything.
func near(a, b float64) bool {
	if math.IsNaN(a) || math.IsNaN(b) {
		return false
	}
	return scalar.EqualWithinAbsOrRel(a, b, 0, recomputeTol)
}

// jsonField maps a Spec field to the certificate's JSON name.
func jsonField(specField string) string {
	switch specField {
	case "Epsilon":
		return "epsilon"
	case "Delta":
		return "delta"
	case "Beta":
		return "beta"
	case "Calibration":
		return "calibration"
	}
	return "alpha"
}

// verifyCertificate recomputes the certificate's derived fields from its
// public inputs and cross-checks it against the release.
func verifyCertificate(c *Certificate, rel *Release, ok func(string, ...any)) error {
	if err := checkPrivacy(c.Epsilon, c.Delta, c.Beta); err != nil {
		var se *SpecError
		errors.As(err, &se)
		return &VerifyError{Field: jsonField(se.Field), Err: err}
	}
	if g := guarantee(c.Epsilon, c.Delta, c.Beta); g != c.Guarantee {
		return verifyErr("guarantee", ErrInconsistent, "(%v, %v), but (ε, δ + β) = (%v, %v)", c.Guarantee.Epsilon, c.Guarantee.Delta, g.Epsilon, g.Delta)
	}
	// Cross-checks against the release.
	switch {
	case c.Config != rel.Config:
		return verifyErr("config", ErrInconsistent, "%s differs from the release's", configDiff(c.Config, rel.Config))
	case c.Dim != len(rel.W):
		return verifyErr("dim", ErrInconsistent, "%d, but the release has d = %d", c.Dim, len(rel.W))
	}
	cfg := rel.Config.Olbfgs()
	s := c.Sensitivity
	spec := Spec{Epsilon: c.Epsilon, Delta: c.Delta, Beta: c.Beta}
	exact := ""
	switch s.Source {
	case "exact":
		exact = s.Method
		if exact == "" {
			return verifyErr("alpha.method", ErrAlpha, "an exact release must say how exactness was established")
		}
		if c.Beta != 0 {
			return verifyErr("beta", ErrInconsistent, "an exact release has β = 0")
		}
	case "assumed":
		spec.Alpha = &Given{Alpha: s.Alpha, Method: s.Method}
	case "derived":
		if s.Deletion == nil {
			return verifyErr("alpha.deletion", ErrAlpha, "a derived α records its deletion")
		}
		spec.Deletion = s.Deletion
	case "diameter":
	default:
		return verifyErr("alpha.source", ErrAlpha, "%q, want derived, diameter, exact or assumed", s.Source)
	}
	if s.Source != "assumed" && c.Beta != 0 {
		return verifyErr("beta", ErrBeta, "a derived bound holds with β = 0; β is for an assumed α only")
	}
	want, err := sensitivity(&spec, cfg, rel.Loss, exact)
	if err != nil {
		var se *SpecError
		if errors.As(err, &se) {
			// The certificate records the request under alpha.deletion.
			f := strings.Replace(strings.ToLower(se.Field), "scenario.", "deletion.", 1)
			return &VerifyError{Field: "alpha." + f, Err: fmt.Errorf("%w: %w", ErrAlpha, err)}
		}
		return &VerifyError{Field: "alpha", Err: fmt.Errorf("%w: %w", ErrAlpha, err)}
	}
	switch {
	case !near(s.Alpha, want.Alpha) || (s.Alpha == 0) != (want.Alpha == 0):
		return verifyErr("alpha.value", ErrAlpha, "α = %v, but its public inputs give %v", s.Alpha, want.Alpha)
	case !near(s.Recursion, want.Recursion):
		return verifyErr("alpha.recursion", ErrAlpha, "%v, but the inputs give %v", s.Recursion, want.Recursion)
	case !near(s.Allowance, want.Allowance):
		return verifyErr("alpha.allowance", ErrAlpha, "%v, but the intervention's allowance is %v", s.Allowance, want.Allowance)
	case !near(s.Diameter, want.Diameter):
		return verifyErr("alpha.diameter", ErrAlpha, "%v, but the release's radius gives %v", s.Diameter, want.Diameter)
	case s.Provenance != want.Provenance:
		return verifyErr("alpha.provenance", ErrAlpha, "%v, but α from these inputs is %v", s.Provenance, want.Provenance)
	case s.Binding != want.Binding || s.Why != want.Why:
		return verifyErr("alpha.binding", ErrAlpha, "%q (%s), but the inputs give %q (%s)", s.Binding, s.Why, want.Binding, want.Why)
	case s.Metric != want.Metric || s.Method != want.Method:
		return verifyErr("alpha.metric", ErrAlpha, "metric or method differ from the recomputed ones")
	case !termsNear(s.Terms, want.Terms):
		return verifyErr("alpha.terms", ErrAlpha, "the terms differ from the recomputed ones")
	}
	if c.Provenance != s.Provenance {
		return verifyErr("provenance", ErrInconsistent, "%v, but α is %v", c.Provenance, s.Provenance)
	}
	ok("α = %.6g recomputed from its public inputs (%s, %s)", s.Alpha, s.Source, s.Provenance)
	if d := s.Deletion; d != nil && c.Deletions != d.count() {
		return verifyErr("deletions", ErrInconsistent, "%d deletions, but the deletion describes %d (%d ages, %d in a window, %d in earlier requests)", c.Deletions, d.count(), len(d.Ages), d.InWindow, d.count()-len(d.Ages)-d.InWindow)
	}
	if c.Deletions < 0 {
		return verifyErr("deletions", ErrInconsistent, "%d", c.Deletions)
	}

	if c.Exact {
		switch {
		case s.Source != "exact":
			return verifyErr("exact", ErrInconsistent, "exact with an α of source %q", s.Source)
		case c.Sigma != 0 || c.SigmaApplied != 0 || c.Sampler != "none" || !c.Deployable || c.Memory != Exact:
			return verifyErr("sigma", ErrInconsistent, "an exact release has σ = 0, sampler none, memory exact")
		}
		ok("exact release (%s): no noise", s.Method)
	} else {
		if s.Source == "exact" || c.Memory == Exact {
			return verifyErr("exact", ErrInconsistent, "false with an exact α or memory")
		}
		req, err := noise.Sigma(c.Calibration, want.Alpha, c.Epsilon, c.Delta)
		if err != nil {
			return &VerifyError{Field: jsonField(noiseField(err, "Alpha")), Err: err}
		}
		switch {
		case c.Sigma < req && !near(c.Sigma, req):
			return verifyErr("sigma", ErrSigma, "σ = %v is below the required %v (%s, α = %v, ε = %v, δ = %v)", c.Sigma, req, c.Calibration, want.Alpha, c.Epsilon, c.Delta)
		case !near(c.Sigma, req):
			return verifyErr("sigma", ErrSigma, "σ = %v is not the calibrated %v", c.Sigma, req)
		case c.SigmaApplied < c.Sigma:
			return verifyErr("sigma_applied", ErrSigma, "the applied σ = %v is below σ = %v", c.SigmaApplied, c.Sigma)
		case !near(c.SigmaApplied, c.Sigma):
			return verifyErr("sigma_applied", ErrSigma, "the applied σ = %v differs from σ = %v beyond round-off", c.SigmaApplied, c.Sigma)
		}
		if rad := cfg.RadiusBound(); !math.IsInf(rad, 0) && c.Sigma < resolution*rad {
			return verifyErr("sigma", ErrResolution, "σ = %v < 2⁻³⁰·W' = %v", c.Sigma, resolution*rad)
		}
		ok("σ = %.6g ≥ the required %.6g (%s)", c.Sigma, req, c.Calibration)
		switch {
		case c.Sampler != noise.NameSecure && c.Sampler != noise.NameSeeded:
			return verifyErr("sampler", ErrInconsistent, "%q, want %q or %q", c.Sampler, noise.NameSecure, noise.NameSeeded)
		case c.Deployable != (c.Sampler == noise.NameSecure):
			return verifyErr("deployable", ErrInconsistent, "%v with the %s sampler", c.Deployable, c.Sampler)
		}
	}
	switch c.Memory {
	case Reset:
		if len(rel.Memory) != 0 {
			return verifyErr("memory", ErrCoverage, "reset, but the release holds %d pairs", len(rel.Memory))
		}
		if c.Retained != 0 {
			return verifyErr("retained", ErrInconsistent, "%d retained inserts with a reset memory (only a rebuild replays retained data)", c.Retained)
		}
	case Rebuild:
		if c.Retained < 0 || len(rel.Memory) > min(c.Retained, cfg.Memory) {
			return verifyErr("memory", ErrCoverage, "rebuilt from %d retained inserts, but the release holds %d pairs", c.Retained, len(rel.Memory))
		}
	case Exact:
		if c.Retained != 0 {
			return verifyErr("retained", ErrInconsistent, "%d with an exact release", c.Retained)
		}
	default:
		return verifyErr("memory", ErrCoverage, "%v", c.Memory)
	}
	if rad := cfg.RadiusBound(); !math.IsInf(rad, 0) && c.Exact && floats.Norm(rel.W, 2) > rad {
		return verifyErr("release.w", ErrInconsistent, "‖w‖ = %v exceeds the radius %v of an exact learner state", floats.Norm(rel.W, 2), rad)
	}
	st, warn := statement(c)
	if st != c.Statement {
		return verifyErr("statement", ErrInconsistent, "does not match the certificate's fields")
	}
	if !slices.Equal(warn, c.Warnings) {
		return verifyErr("warnings", ErrInconsistent, "%q, but the fields call for %q", c.Warnings, warn)
	}
	ok("memory %s against the release, sampler %s, statement and warnings", c.Memory, c.Sampler)
	return nil
}

// termsNear compares term lists: same names, provenances and papers,
// values within recomputeTol.
func termsNear(a, b []bound.Term) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		x, y := a[i], b[i]
		if x.Name != y.Name || x.Provenance != y.Provenance || x.Paper != y.Paper || !(near(x.Value, y.Value) || x.Value == y.Value) {
			return false
		}
	}
	return true
}

// configDiff names the first configuration field that differs.
func configDiff(a, b ReleaseConfig) string {
	va, vb := reflect.ValueOf(a), reflect.ValueOf(b)
	t := va.Type()
	for i := range t.NumField() {
		if va.Field(i).Interface() != vb.Field(i).Interface() {
			return fmt.Sprintf("config.%s = %v (release: %v)", t.Field(i).Tag.Get("json"), va.Field(i).Interface(), vb.Field(i).Interface())
		}
	}
	return "config"
}
