package certify

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"strings"

	"unlearn/bound"
	"unlearn/internal/strictjson"
	"unlearn/noise"
)

// Format is the format tag (version) of a certificate.
const Format = "unlearn-certificate/v1"

// Guarantee is an (ε, δ) pair.
type Guarantee struct {
	Epsilon float64 `json:"epsilon"`
	Delta   float64 `json:"delta"`
}

// RetainedRecord describes the data a memory rebuild replayed.
type RetainedRecord struct {
	// IDs are the ids of the replayed inserts, in replay order.
	IDs []int64 `json:"ids"`
	// SHA256 is the hash of the replayed events (their JSON Lines encoding
	// under the state's header, without the header line).
	SHA256 string `json:"sha256"`
}

// Certificate records one certified release: what it covers, the privacy
// guarantee, the sensitivity α and every input it was computed from, the
// noise, the intervention and the states before and after. It is JSON
// (format [Format]); [Verify] recomputes every derived field and rejects
// any tampering.
//
// A certificate is an audit record. Its BeforeSHA256 identifies the
// unlearned state BEFORE the noise, so anyone who can enumerate candidate
// states (e.g. by replaying known data) could test them against it and
// defeat the noise: publish only [Certificate.Public], which drops it.
type Certificate struct {
	// Format is [Format].
	Format string `json:"format"`
	// Toolkit is the toolkit version that issued the certificate.
	Toolkit string `json:"toolkit"`
	// Covers is "state" (w and Z) or "parameters" (w only).
	Covers Coverage `json:"covers"`
	// Memory is what happened to the memory: reset, rebuild or keep.
	Memory MemoryPolicy `json:"memory"`
	// Retained describes the data of a rebuild (Memory "rebuild" only).
	Retained *RetainedRecord `json:"retained,omitempty"`
	// Epsilon, Delta and Beta are the spec's ε, δ and β.
	Epsilon float64 `json:"epsilon"`
	Delta   float64 `json:"delta"`
	Beta    float64 `json:"beta"`
	// Guarantee is the certified (ε, δ + β) (docs/theory.md §9).
	Guarantee Guarantee `json:"guarantee"`
	// Sensitivity is α with its inputs and provenance.
	Sensitivity Sensitivity `json:"alpha"`
	// Sigma is the σ calibrated for (α, ε, δ).
	Sigma float64 `json:"sigma"`
	// SigmaApplied is the σ the sampler applied (≥ Sigma).
	SigmaApplied float64 `json:"sigma_applied"`
	// Calibration is how Sigma was computed: analytic or classic.
	Calibration noise.Calibration `json:"calibration"`
	// Sampler is "secure" or "seeded".
	Sampler string `json:"sampler"`
	// Deployable is true for the secure sampler only.
	Deployable bool `json:"deployable"`
	// ZCDP is the release's zCDP cost α²/(2·SigmaApplied²), for an
	// [Accountant].
	ZCDP float64 `json:"zcdp"`
	// Exact is true when α = 0: exact unlearning, no noise.
	Exact bool `json:"exact"`
	// Intervention names the intervention that produced the state.
	Intervention string `json:"intervention"`
	// Deletions is the number of deleted samples certified.
	Deletions int `json:"deletions"`
	// Dim is the dimension d of w.
	Dim int `json:"dim"`
	// BeforeSHA256 is the SHA-256 (hex) of the canonical snapshot
	// (olbfgs.MarshalSnapshot) of the unlearned state before the noise;
	// empty in a redacted certificate.
	BeforeSHA256 string `json:"before_sha256,omitempty"`
	// AfterSHA256 is the SHA-256 of the canonical snapshot of the released
	// state.
	AfterSHA256 string `json:"after_sha256"`
	// Redacted is true when BeforeSHA256 was removed for publication.
	Redacted bool `json:"redacted"`
	// Provenance is the weakest provenance of α's inputs.
	Provenance bound.Provenance `json:"provenance"`
	// Statement says in words what is certified and what is not, including
	// the weakest provenance and the sampler.
	Statement string `json:"statement"`
	// Warnings lists what a reader must not miss (estimated or assumed
	// inputs, a kept memory, the seeded sampler, redaction).
	Warnings []string `json:"warnings"`
	// Digest is the SHA-256 of the certificate's JSON with Digest empty. It
	// detects edits made without recomputing it; it is not a signature.
	Digest string `json:"digest"`
}

// digest returns the SHA-256 of the certificate's JSON with Digest empty.
func (c *Certificate) digest() (string, error) {
	cp := *c
	cp.Digest = ""
	b, err := json.Marshal(&cp)
	if err != nil {
		return "", fmt.Errorf("certify: certificate digest: %w", err)
	}
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:]), nil
}

// seal fills in the derived fields (statement, warnings, digest).
func (c *Certificate) seal() error {
	c.Statement, c.Warnings = statement(c)
	d, err := c.digest()
	if err != nil {
		return err
	}
	c.Digest = d
	return nil
}

// Public returns a copy for publication: without BeforeSHA256, marked
// redacted and resealed. [Verify] checks everything else of it and needs
// no before-state.
func (c *Certificate) Public() (*Certificate, error) {
	cp := c.clone()
	cp.BeforeSHA256 = ""
	cp.Redacted = true
	if err := cp.seal(); err != nil {
		return nil, err
	}
	return cp, nil
}

// clone returns a deep copy through JSON (the certificate is plain data).
func (c *Certificate) clone() *Certificate {
	b, err := json.Marshal(c)
	if err != nil {
		panic("certify: clone: " + err.Error()) // every field marshals
	}
	var cp Certificate
	if err := json.Unmarshal(b, &cp); err != nil {
		panic("certify: clone: " + err.Error())
	}
	return &cp
}

// MarshalIndent returns the certificate as indented JSON with a final
// newline, the form the command-line tool writes.
func (c *Certificate) MarshalIndent() ([]byte, error) {
	b, err := json.MarshalIndent(c, "", "  ")
	if err != nil {
		return nil, fmt.Errorf("certify: %w", err)
	}
	return append(b, '\n'), nil
}

// ParseCertificate decodes a certificate. Unknown fields, trailing data and
// a format other than [Format] are errors (*VerifyError wrapping
// ErrFormat); the content is checked by [Verify].
func ParseCertificate(data []byte) (*Certificate, error) {
	var c Certificate
	if err := strictjson.Decode(bytes.NewReader(data), &c); err != nil {
		return nil, verifyErr("format", ErrFormat, "%v", err)
	}
	if c.Format != Format {
		return nil, verifyErr("format", ErrFormat, "%q, want %q", c.Format, Format)
	}
	return &c, nil
}

// Summary returns a few lines describing the certificate for a person.
func (c *Certificate) Summary() string {
	var b strings.Builder
	fmt.Fprintf(&b, "certificate %s (%s)\n", c.Format, c.Toolkit)
	fmt.Fprintf(&b, "  covers      %s (memory %s)\n", c.Covers, c.Memory)
	fmt.Fprintf(&b, "  guarantee   (ε, δ) = (%v, %v)", c.Guarantee.Epsilon, c.Guarantee.Delta)
	if c.Beta > 0 {
		fmt.Fprintf(&b, "  [δ = %v + β = %v]", c.Delta, c.Beta)
	}
	b.WriteString("\n")
	fmt.Fprintf(&b, "  alpha       %.6g (%s, %s)\n", c.Sensitivity.Alpha, c.Sensitivity.Source, c.Provenance)
	fmt.Fprintf(&b, "  sigma       %.6g (%s calibration, %s sampler, applied %.6g)\n", c.Sigma, c.Calibration, c.Sampler, c.SigmaApplied)
	fmt.Fprintf(&b, "  zCDP        %.6g\n", c.ZCDP)
	fmt.Fprintf(&b, "  intervention %s, %d deletion(s), d = %d\n", c.Intervention, c.Deletions, c.Dim)
	if c.BeforeSHA256 != "" {
		fmt.Fprintf(&b, "  before      sha256 %s\n", c.BeforeSHA256)
	}
	fmt.Fprintf(&b, "  after       sha256 %s\n", c.AfterSHA256)
	for _, w := range c.Warnings {
		fmt.Fprintf(&b, "  WARNING     %s\n", w)
	}
	return b.String()
}
