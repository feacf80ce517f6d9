package main

import (
	"bytes"
	"fmt"
	"math"
	"strings"
	"testing"

	"unlearn/bound"
)

// TestRun runs the example end to end (secure noise, a fresh key) and
// checks what it must show: the certificate verified against the release
// with the certifier's key; α is derived and proved, and bounds the true
// deviation with no tolerance (computed exactly); the recursion beats the
// diameter bound; the exact paths carry α = 0 and σ = 0 and are the
// counterfactual bit for bit; and the lines a reader needs are printed.
func TestRun(t *testing.T) {
	var out bytes.Buffer
	res, err := run(&out)
	if err != nil {
		t.Fatal(err)
	}
	s := out.String()
	if !res.Verified {
		t.Fatal("the certificate was not verified")
	}
	c := res.Noised.Cert
	a := c.Sensitivity
	if a.Source != "derived" || a.Provenance != bound.Proved {
		t.Errorf("α is %s/%s, want derived/proved", a.Source, a.Provenance)
	}
	if !(res.Noised.Deviation <= a.Alpha) {
		t.Errorf("true deviation %v > α = %v", res.Noised.Deviation, a.Alpha)
	}
	if !(res.Noised.Deviation > 0) {
		t.Errorf("true deviation %v: the noised path should not be exact here", res.Noised.Deviation)
	}
	if !(a.Alpha < a.Diameter) {
		t.Errorf("α = %v does not beat the diameter bound %v: the example no longer shows the recursion", a.Alpha, a.Diameter)
	}
	if c.Exact || !(c.Sigma > 0) || c.Sampler != "secure" || !c.Deployable || c.KeyID == "" {
		t.Errorf("noised certificate: exact %v, σ %v, sampler %s, deployable %v, key %q", c.Exact, c.Sigma, c.Sampler, c.Deployable, c.KeyID)
	}
	if len(res.Exact) != 2 {
		t.Fatalf("%d exact paths, want 2 (window replay, oracle)", len(res.Exact))
	}
	for _, p := range res.Exact {
		if !p.Cert.Exact || p.Cert.Sigma != 0 || p.Cert.Sensitivity.Alpha != 0 || p.Cert.Sampler != "none" {
			t.Errorf("%s: exact %v, α %v, σ %v, sampler %s; want exact with α = σ = 0", p.Name, p.Cert.Exact, p.Cert.Sensitivity.Alpha, p.Cert.Sigma, p.Cert.Sampler)
		}
		if p.Deviation != 0 {
			t.Errorf("%s: deviation %v from the counterfactual, want 0", p.Name, p.Deviation)
		}
	}
	nsr := c.Sigma * math.Sqrt(d) / res.Noised.WNorm
	for _, want := range []string{
		"certificate VALID",
		"ok           Ed25519 signature by key " + c.KeyID,
		"alpha        " + fmt.Sprintf("%.6g", a.Alpha) + " (derived, proved)",
		"sampler secure",
		"intervention pair-drop, 5 deletion(s), 8 parameters",
		"cannot check that the noise was drawn",
		fmt.Sprintf("true deviation ‖w̃ − w⁻‖      %.4g", res.Noised.Deviation),
		fmt.Sprintf("looseness α / deviation      %.4g", a.Alpha/res.Noised.Deviation),
		fmt.Sprintf("noise-to-signal σ·√d/‖w̃‖     %.4g", nsr),
		"The bound is loose",
		"window-replay  0         0         0",
		"oracle         0         0         0",
	} {
		if !strings.Contains(s, want) {
			t.Errorf("output lacks %q:\n%s", want, s)
		}
	}
	if res.Pairs == 0 {
		t.Error("the learner stored no pair: the example no longer exercises the curvature memory")
	}

	// Same seeds, same public numbers and true deviation, bit for bit
	// (only the secure noise, the key and the hashes differ).
	res2, err := run(new(bytes.Buffer))
	if err != nil {
		t.Fatal(err)
	}
	if res2.Noised.Cert.Sensitivity.Alpha != a.Alpha || res2.Noised.Cert.Sigma != c.Sigma || res2.Noised.Deviation != res.Noised.Deviation {
		t.Errorf("a second run differs: α %v/%v, σ %v/%v, deviation %v/%v", a.Alpha, res2.Noised.Cert.Sensitivity.Alpha,
			c.Sigma, res2.Noised.Cert.Sigma, res.Noised.Deviation, res2.Noised.Deviation)
	}
}
