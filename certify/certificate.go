package certify

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"unlearn/bound"
	"unlearn/internal/strictjson"
	"unlearn/noise"
)

// Format is the format tag (version) of a certificate. Version 2 certifies
// a [Release]; version 1 certified a snapshot and recorded the hash of the
// un-noised state, and is neither issued nor accepted.
const Format = "unlearn-certificate/v2"

// Guarantee is an (ε, δ) pair.
type Guarantee struct {
	Epsilon float64 `json:"epsilon"`
	Delta   float64 `json:"delta"`
}

// Certificate records one certified release. Every field is a function of
// public quantities — ε, δ, β, the learner's configuration, the loss
// header, the number and ages of the deletions, the intervention — and of
// the released (noised) data: nothing in it depends on the deleted
// payloads or on the un-noised state (spec §7). [Verify] recomputes every
// derived field from the recorded inputs and the release.
type Certificate struct {
	// Format is [Format].
	Format string `json:"format"`
	// Toolkit is the toolkit version that issued the certificate.
	Toolkit string `json:"toolkit"`
	// Memory is what was released of the memory: reset, rebuild or exact.
	Memory MemoryPolicy `json:"memory"`
	// Retained is the number of retained inserts a rebuild replayed.
	Retained int `json:"retained"`
	// Epsilon, Delta and Beta are the spec's ε, δ and β.
	Epsilon float64 `json:"epsilon"`
	Delta   float64 `json:"delta"`
	Beta    float64 `json:"beta"`
	// Guarantee is the certified (ε, δ + β) (docs/theory.md §9).
	Guarantee Guarantee `json:"guarantee"`
	// Sensitivity is α with its public inputs and provenance.
	Sensitivity Sensitivity `json:"alpha"`
	// Sigma is the σ calibrated for (α, ε, δ) (0 for an exact release).
	Sigma float64 `json:"sigma"`
	// SigmaApplied is the σ the sampler applied (≥ Sigma).
	SigmaApplied float64 `json:"sigma_applied"`
	// Calibration is how Sigma was computed: analytic or classic.
	Calibration noise.Calibration `json:"calibration"`
	// Sampler is "secure", "seeded", or "none" for an exact release.
	Sampler string `json:"sampler"`
	// Deployable is true for the secure sampler and for exact releases.
	Deployable bool `json:"deployable"`
	// Exact is true when the toolkit established α = 0 by replay.
	Exact bool `json:"exact"`
	// Intervention names the intervention that produced the state.
	Intervention string `json:"intervention"`
	// Deletions is the number of deleted samples certified.
	Deletions int `json:"deletions"`
	// Dim is the dimension d of w.
	Dim int `json:"dim"`
	// Config is the learner's configuration; it must equal the release's.
	Config ReleaseConfig `json:"config"`
	// ReleaseSHA256 is the SHA-256 (hex) of the release file's bytes
	// (public, noised data).
	ReleaseSHA256 string `json:"release_sha256"`
	// Provenance is α's provenance: proved, or assumed.
	Provenance bound.Provenance `json:"provenance"`
	// Statement says in words what is certified and on what it rests.
	Statement string `json:"statement"`
	// Warnings lists what a reader must not miss.
	Warnings []string `json:"warnings"`
	// Digest is the SHA-256 of the certificate's JSON with Digest, KeyID
	// and Signature empty: the certificate's identifier. Anyone can
	// recompute it; only a signature says who issued the certificate.
	Digest string `json:"digest"`
	// KeyID identifies the certifier's Ed25519 key (empty: unsigned).
	KeyID string `json:"key_id,omitempty"`
	// Signature is the certifier's Ed25519 signature (hex) over the
	// certificate's JSON with Signature empty (empty: unsigned).
	Signature string `json:"signature,omitempty"`
}

// digest returns the SHA-256 of the certificate's JSON with Digest, KeyID
// and Signature empty.
func (c *Certificate) digest() (string, error) {
	cp := *c
	cp.Digest, cp.KeyID, cp.Signature = "", "", ""
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

// SignedBytes returns the bytes a signature covers: the certificate's JSON
// with Signature empty (KeyID included).
func (c *Certificate) SignedBytes() ([]byte, error) {
	cp := *c
	cp.Signature = ""
	b, err := json.Marshal(&cp)
	if err != nil {
		return nil, fmt.Errorf("certify: certificate: %w", err)
	}
	return b, nil
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

// ParseCertificate decodes a certificate. Unknown fields, trailing data, a
// format other than [Format], a key that appears twice in an object, and a
// key spelled other than exactly as certify writes it (Go's decoder matches
// keys case-insensitively) are errors (*VerifyError wrapping ErrFormat): a
// signature covers the decoded certificate, so a file in which another
// reader could see different values — a duplicate or differently cased key —
// is refused rather than verified. The content is checked by [Verify].
func ParseCertificate(data []byte) (*Certificate, error) {
	var c Certificate
	if err := strictjson.Decode(bytes.NewReader(data), &c); err != nil {
		return nil, verifyErr("format", ErrFormat, "%v", err)
	}
	if c.Format != Format {
		return nil, verifyErr("format", ErrFormat, "%q, want %q", c.Format, Format)
	}
	if err := noDuplicateKeys(data); err != nil {
		return nil, verifyErr("format", ErrFormat, "%v", err)
	}
	canon, err := json.Marshal(&c)
	if err != nil {
		return nil, verifyErr("format", ErrFormat, "%v", err)
	}
	var in, out any
	if json.Unmarshal(data, &in) != nil || json.Unmarshal(canon, &out) != nil {
		return nil, verifyErr("format", ErrFormat, "not JSON")
	}
	if k, ok := sameKeys(in, out); !ok {
		return nil, verifyErr("format", ErrFormat, "key %q is not one certify writes (keys are case-sensitive)", k)
	}
	return &c, nil
}

// noDuplicateKeys reports an error if an object of the JSON document has a
// key twice.
func noDuplicateKeys(data []byte) error {
	dec := json.NewDecoder(bytes.NewReader(data))
	type frame struct {
		obj  bool
		keys map[string]bool
		key  bool // the next string token is a key
	}
	var stack []*frame
	for {
		t, err := dec.Token()
		if err != nil {
			if err == io.EOF {
				return nil
			}
			return err
		}
		var top *frame
		if len(stack) > 0 {
			top = stack[len(stack)-1]
		}
		switch v := t.(type) {
		case json.Delim:
			switch v {
			case '{':
				if top != nil && top.obj {
					top.key = true
				}
				stack = append(stack, &frame{obj: true, keys: map[string]bool{}, key: true})
				continue
			case '[':
				if top != nil && top.obj {
					top.key = true
				}
				stack = append(stack, &frame{})
				continue
			default:
				stack = stack[:len(stack)-1]
				continue
			}
		case string:
			if top != nil && top.obj && top.key {
				if top.keys[v] {
					return fmt.Errorf("key %q appears twice in an object", v)
				}
				top.keys[v] = true
				top.key = false
				continue
			}
		}
		if top != nil && top.obj {
			top.key = true
		}
	}
}

// sameKeys checks that every key of the decoded input a is spelled as in
// the canonical encoding b at every level — a key absent from b (a field
// the writer omits when zero) must hold a zero value — and that no object
// of a has two keys equal up to case (Go's decoder would merge them). It
// returns the first offending key.
func sameKeys(a, b any) (string, bool) {
	switch x := a.(type) {
	case map[string]any:
		y, _ := b.(map[string]any)
		seen := map[string]string{}
		for k, v := range x {
			if prev, ok := seen[strings.ToLower(k)]; ok {
				return prev + "/" + k, false
			}
			seen[strings.ToLower(k)] = k
			w, ok := y[k]
			if !ok {
				if !zeroJSON(v) {
					return k, false
				}
				continue
			}
			if kk, ok := sameKeys(v, w); !ok {
				return kk, false
			}
		}
	case []any:
		y, _ := b.([]any)
		for i := range x {
			var w any
			if i < len(y) {
				w = y[i]
			}
			if kk, ok := sameKeys(x[i], w); !ok {
				return kk, false
			}
		}
	}
	return "", true
}

// zeroJSON reports whether v is a JSON zero value: null, false, 0, "", an
// empty array or object.
func zeroJSON(v any) bool {
	switch x := v.(type) {
	case nil:
		return true
	case bool:
		return !x
	case float64:
		return x == 0
	case string:
		return x == ""
	case []any:
		return len(x) == 0
	case map[string]any:
		return len(x) == 0
	}
	return false
}

// Summary returns a few lines describing the certificate for a person.
func (c *Certificate) Summary() string {
	var b strings.Builder
	fmt.Fprintf(&b, "certificate %s (%s)\n", c.Format, c.Toolkit)
	fmt.Fprintf(&b, "  guarantee    (ε, δ) = (%.4g, %.4g)", c.Guarantee.Epsilon, c.Guarantee.Delta)
	if c.Beta > 0 {
		fmt.Fprintf(&b, "  [δ = %.4g + β = %.4g]", c.Delta, c.Beta)
	}
	b.WriteString("\n")
	if c.Sensitivity.Source == "assumed" {
		fmt.Fprintf(&b, "  alpha        %.6g (ASSUMED: %s)\n", c.Sensitivity.Alpha, c.Sensitivity.Method)
	} else if s := c.Sensitivity; s.Source == "derived" && s.Binding != "" && s.Binding != "recursion" {
		// Derived, but the recursion's bound was not the smaller one.
		fmt.Fprintf(&b, "  alpha        %.6g (%s: the %s bound, %s)\n", s.Alpha, s.Source, s.Binding, c.Provenance)
	} else {
		fmt.Fprintf(&b, "  alpha        %.6g (%s, %s)\n", c.Sensitivity.Alpha, c.Sensitivity.Source, c.Provenance)
	}
	if s := c.Sensitivity; s.Binding != "" && s.Binding != "recursion" {
		fmt.Fprintf(&b, "  bound by     the %s: %s\n", s.Binding, s.Why)
	}
	if c.Exact {
		fmt.Fprintf(&b, "  exact        %s: no noise\n", c.Sensitivity.Method)
	} else {
		fmt.Fprintf(&b, "  sigma        %.6g (%s calibration, %s sampler)\n", c.Sigma, c.Calibration, c.Sampler)
	}
	fmt.Fprintf(&b, "  memory       %s\n", c.Memory)
	fmt.Fprintf(&b, "  intervention %s, %d deletion(s), %d parameters\n", c.Intervention, c.Deletions, c.Dim)
	fmt.Fprintf(&b, "  release      sha256 %s\n", c.ReleaseSHA256)
	if c.KeyID != "" {
		fmt.Fprintf(&b, "  signed by    key %s\n", c.KeyID)
	} else {
		b.WriteString("  signed by    nobody (unsigned)\n")
	}
	for _, w := range c.Warnings {
		fmt.Fprintf(&b, "  WARNING      %s\n", w)
	}
	return b.String()
}
