package speccheck

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/require"

	"unlearn/certify"
)

// reseal recomputes a certificate's digest as docs/spec.md §9.4 defines
// it: the SHA-256 of its compact JSON with digest, key_id and signature
// empty. A forger can do this; only the signature needs the key.
func reseal(t *testing.T, c *certify.Certificate) {
	t.Helper()
	cp := *c
	cp.Digest, cp.KeyID, cp.Signature = "", "", ""
	b, err := json.Marshal(&cp)
	require.NoError(t, err)
	sum := sha256.Sum256(b)
	c.Digest = hex.EncodeToString(sum[:])
}

// TestCertificateSchemaRulesHoldInVerify checks that the conditions the
// certificate schema states beyond the parser's are rules the toolkit
// enforces, not stricter inventions: every hand-broken certificate that
// the schema rejects and certify.ParseCertificate accepts is refused by
// certify.Verify against its release — even when it is re-sealed (a fresh
// digest) and, if it was signed, re-signed with the certifier's own key,
// the strongest forger of issue 10. Edits of the signature itself are
// verified against the public key as they are. The exceptions are listed
// with the reason the toolkit accepts them.
func TestCertificateSchemaRulesHoldInVerify(t *testing.T) {
	o := realOutputs(t)
	// The documented digest is the toolkit's.
	for name, doc := range o.certificates {
		c, err := certify.ParseCertificate(doc)
		require.NoError(t, err)
		want := c.Digest
		reseal(t, c)
		require.Equal(t, want, c.Digest, "certificate %s: the digest of docs/spec.md §9.4 differs from the toolkit's", name)
	}
	const window = "the window is recorded for a reader; α does not depend on it (the ages at the checkpoint and the horizon do), so Verify does not check it"
	accepted := map[string]string{"window 0 written": window, "window of another intervention": window}
	unsealed := map[string]bool{"signature without key id": true, "signature not hex": true}
	var f format
	for _, g := range formats() {
		if g.name == "certificate" {
			f = g
		}
	}
	require.NotEmpty(t, f.broken)
	n := 0
	for _, b := range f.broken {
		if b.readerRejects {
			continue
		}
		t.Run(b.name, func(t *testing.T) {
			c, err := certify.ParseCertificate(b.edit(t, o.certificates[b.doc]))
			require.NoError(t, err)
			release, ok := o.releases[b.doc]
			require.True(t, ok, "no release for %s", b.doc)
			signed := c.Signature != "" || c.KeyID != ""
			if !unsealed[b.name] {
				reseal(t, c)
				if signed {
					require.NoError(t, certify.Sign(c, o.key))
				}
			}
			var pub certify.PublicKey
			if signed {
				pub = o.publicKey
			}
			_, err = certify.Verify(c, release, pub)
			if why, ok := accepted[b.name]; ok {
				require.NoError(t, err, "listed as accepted by Verify (%s)", why)
				return
			}
			require.Error(t, err, "Verify accepted a certificate the schema rejects")
			var ve *certify.VerifyError
			require.ErrorAs(t, err, &ve, "the refusal names a field")
			t.Logf("refused at %s: %v", ve.Field, err)
		})
		n++
	}
	require.Greater(t, n, 10, "the certificate format has schema-only breakages")
}
