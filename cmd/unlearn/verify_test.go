package main

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"unlearn/certify"
)

// TestVerifyForgedExactCertificate is the attacker's case of issue 19: a
// release of the attacker's own parameters with an unsigned "exact"
// certificate (α = 0, no noise) that is consistent in every field — the
// release hash and the digest recomputed. verify without a key used to exit
// 0 printing VALID, so a script that checks the exit status accepted it.
// It must fail (NOT VERIFIED) unless --integrity-only asks for the
// consistency check alone, which never prints VALID; with the certifier's
// key the forgery is refused as unsigned.
func TestVerifyForgedExactCertificate(t *testing.T) {
	dir := t.TempDir()
	at := func(name string) string { return filepath.Join(dir, name) }
	run := func(args ...string) string {
		t.Helper()
		out, err := runCLI(t, args...)
		require.NoError(t, err, "%v: %s", args, out)
		return out
	}
	run("gen", "--kind", "logistic", "--events", "30", "--d", "2", "--seed", "5", "--out", at("l.jsonl"))
	run("init", "--store", at("model"), "--header", at("l.jsonl"), "--tau", "3")
	run("ingest", "--store", at("model"), at("l.jsonl"))
	run("keygen", "--out", at("certifier"))
	// A genuine exact release, unsigned: the attacker's template.
	run("release", "--store", at("model"), "--epsilon", "1", "--delta", "1e-5", "--out", at("rel.json"), "--certificate", at("cert.json"))

	var rel map[string]any
	require.NoError(t, json.Unmarshal(mustReadFile(t, at("rel.json")), &rel))
	w := rel["w"].([]any)
	w[0] = 123.456 // the attacker's model
	forged, err := json.Marshal(rel)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(at("forged.json"), forged, 0o644))
	c, err := certify.ParseCertificate(mustReadFile(t, at("cert.json")))
	require.NoError(t, err)
	require.True(t, c.Exact, "the template is an exact certificate")
	sum := sha256.Sum256(forged)
	c.ReleaseSHA256 = hex.EncodeToString(sum[:])
	cp := *c
	cp.Digest, cp.KeyID, cp.Signature = "", "", ""
	b, err := json.Marshal(&cp)
	require.NoError(t, err)
	d := sha256.Sum256(b)
	c.Digest = hex.EncodeToString(d[:])
	cb, err := c.MarshalIndent()
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(at("forged-cert.json"), cb, 0o644))

	out, err := runCLI(t, "verify", "--certificate", at("forged-cert.json"), "--release", at("forged.json"))
	require.ErrorIs(t, err, errNotVerified, "a forged exact certificate passed verify without a key:\n%s", out)
	assert.Contains(t, out, "NOT VERIFIED")
	assert.NotContains(t, out, "VALID:")

	out, err = runCLI(t, "verify", "--certificate", at("forged-cert.json"), "--release", at("forged.json"), "--integrity-only")
	require.NoError(t, err, out)
	assert.Contains(t, out, "CONSISTENT (integrity only)")
	assert.Contains(t, out, "who issued it was NOT verified")
	assert.NotContains(t, out, "VALID:")

	out, err = runCLI(t, "verify", "--certificate", at("forged-cert.json"), "--release", at("forged.json"), "--public-key", at("certifier.pub"))
	require.ErrorIs(t, err, certify.ErrSignature, out)
	assert.ErrorContains(t, err, "INVALID")

	_, err = runCLI(t, "verify", "--certificate", at("forged-cert.json"), "--release", at("forged.json"), "--public-key", at("certifier.pub"), "--integrity-only")
	var ue usageError
	require.ErrorAs(t, err, &ue, "--integrity-only with a key is a usage error")
	assert.ErrorContains(t, err, "--integrity-only")
}

func mustReadFile(t *testing.T, p string) []byte {
	t.Helper()
	b, err := os.ReadFile(p)
	require.NoError(t, err)
	return b
}
