package certify

import (
	"encoding/json"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"unlearn/bound"
	"unlearn/olbfgs"
	"unlearn/sign"
	"unlearn/stream"
	"unlearn/unlearn"
)

// issued is a signed certificate with its release bytes.
type issued struct {
	cert *Certificate
	rel  []byte
	key  *sign.Secret
}

// issue trains a guarded learner, deletes one sample and releases it
// through Wrap (no-op intervention: a derived, non-exact α), signed.
func issue(t testing.TB) issued {
	t.Helper()
	const d, tau = 3, 3
	loss := scalarLoss(t, d, 1, 1)
	cfg := guarded(d, tau, 0.3, 1, 1, 4, 2)
	events := randomInserts(rand.New(rand.NewPCG(2, 9)), d, 60, 1)
	actual, err := olbfgs.New(cfg, loss)
	require.NoError(t, err)
	require.NoError(t, actual.Run(events))
	c, err := Wrap(unlearn.NoOp(), Spec{Epsilon: 1, Delta: 1e-5, Sampler: seeded(8)})
	require.NoError(t, err)
	rel, cert, _, err := c.ApplyCertified(unlearn.Request{Actual: actual, Prefix: events, U: stream.NewIDSet(30)})
	require.NoError(t, err)
	key, err := sign.Generate()
	require.NoError(t, err)
	require.NoError(t, Sign(cert, key))
	b, err := rel.Marshal()
	require.NoError(t, err)
	return issued{cert: cert, rel: b, key: key}
}

// reissue re-seals and re-signs an edited certificate with the original
// key: what an insider who edits inputs and recomputes digest and
// signature would produce. Verify must still refuse edited inputs, since
// it recomputes everything from public data.
func (is issued) reissue(t *testing.T, edit func(c *Certificate)) *Certificate {
	t.Helper()
	b, err := json.Marshal(is.cert)
	require.NoError(t, err)
	var c Certificate
	require.NoError(t, json.Unmarshal(b, &c))
	edit(&c)
	require.NoError(t, c.seal())
	require.NoError(t, Sign(&c, is.key))
	return &c
}

func TestVerifyAcceptsGenuine(t *testing.T) {
	is := issue(t)
	rep, err := Verify(is.cert, is.rel, is.key.Public())
	require.NoError(t, err)
	require.NotEmpty(t, rep.Cannot, "the report must say what cannot be checked")
	require.Contains(t, rep.String(), "signature")
}

// Each forgery of issue 10, re-sealed and re-signed by the certifier's own
// key (the strongest forger), is refused with the field named.
func TestVerifyRefusesForgeries(t *testing.T) {
	is := issue(t)
	cases := []struct {
		name, field string
		sentinel    error
		edit        func(c *Certificate)
	}{
		{"G divided by 1e6 (a term)", "alpha.terms", ErrAlpha, func(c *Certificate) {
			for i := range c.Sensitivity.Terms {
				c.Sensitivity.Terms[i].Value /= 1e6
			}
		}},
		{"alpha divided", "alpha.value", ErrAlpha, func(c *Certificate) { c.Sensitivity.Alpha /= 1e6 }},
		{"alpha zero", "alpha.value", ErrAlpha, func(c *Certificate) { c.Sensitivity.Alpha = 0 }},
		{"sigma lowered", "sigma", ErrSigma, func(c *Certificate) { c.Sigma /= 2; c.SigmaApplied /= 2 }},
		{"relabelled assumed as proved", "alpha.recursion", ErrAlpha, func(c *Certificate) {
			c.Sensitivity.Source, c.Sensitivity.Provenance, c.Provenance = "assumed", bound.Proved, bound.Proved
		}},
		{"exact claimed", "alpha.method", ErrAlpha, func(c *Certificate) {
			c.Sensitivity.Source, c.Exact = "exact", true
		}},
		{"eta and tau of another learner", "config", ErrInconsistent, func(c *Certificate) { c.Config.StepSize, c.Config.Memory = 0.001, 77 }},
		{"radius enlarged", "config", ErrInconsistent, func(c *Certificate) { c.Config.Radius *= 10 }},
		{"seeded relabelled secure", "deployable", ErrInconsistent, func(c *Certificate) { c.Sampler = "secure" }},
		{"deployable flag", "deployable", ErrInconsistent, func(c *Certificate) { c.Deployable = true }},
		{"horizon 100000", "alpha.value", ErrAlpha, func(c *Certificate) { c.Sensitivity.Deletion.Horizon = 100000 }},
		{"ages edited", "alpha.value", ErrAlpha, func(c *Certificate) { c.Sensitivity.Deletion.Ages[0] += 1000 }},
		{"fewer deletions than ages", "deletions", ErrInconsistent, func(c *Certificate) { c.Deletions = 0 }},
		{"dimension", "dim", ErrInconsistent, func(c *Certificate) { c.Dim = 7 }},
		{"memory rebuild claimed", "memory", ErrCoverage, func(c *Certificate) { c.Memory, c.Retained = Rebuild, -1 }},
		{"beta on a derived bound", "beta", ErrBeta, func(c *Certificate) { c.Beta = 1e-6; c.Guarantee = guarantee(c.Epsilon, c.Delta, c.Beta) }},
		{"statement softened", "statement", ErrInconsistent, func(c *Certificate) {}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := is.reissue(t, tc.edit)
			if tc.name == "statement softened" {
				c.Statement = strings.Replace(c.Statement, "proved", "PROVED BEYOND DOUBT", 1)
				c.Digest, _ = c.digest()
				require.NoError(t, Sign(c, is.key))
			}
			_, err := Verify(c, is.rel, is.key.Public())
			wantVerifyError(t, err, tc.field, tc.sentinel)
		})
	}
}

func TestVerifyRefusesOtherKeyEditsAndRelease(t *testing.T) {
	is := issue(t)
	other, err := sign.Generate()
	require.NoError(t, err)
	_, err = Verify(is.cert, is.rel, other.Public())
	wantVerifyError(t, err, "key_id", ErrSignature)
	// Signed by another key and relabelled with ours.
	c := is.reissue(t, func(*Certificate) {})
	require.NoError(t, Sign(c, other))
	c.KeyID = is.key.KeyID()
	_, err = Verify(c, is.rel, is.key.Public())
	wantVerifyError(t, err, "signature", ErrSignature)
	// Edited after signing, digest recomputed.
	c = is.reissue(t, func(*Certificate) {})
	c.Epsilon = 10
	c.Digest, _ = c.digest()
	_, err = Verify(c, is.rel, is.key.Public())
	wantVerifyError(t, err, "signature", ErrSignature)
	// Unsigned, when a key is required.
	c = is.reissue(t, func(*Certificate) {})
	c.KeyID, c.Signature = "", ""
	_, err = Verify(c, is.rel, is.key.Public())
	wantVerifyError(t, err, "signature", ErrSignature)
	// Another release (one float changed).
	var r Release
	require.NoError(t, json.Unmarshal(is.rel, &r))
	r.W[0] += 1e-9
	b, err := r.Marshal()
	require.NoError(t, err)
	_, err = Verify(is.cert, b, is.key.Public())
	wantVerifyError(t, err, "release_sha256", ErrHash)
}

// The membership oracle of issue 10: the certificate carried the SHA-256
// of the un-noised state, so retraining with a candidate payload and
// hashing told whether it was the deleted one. Nothing in a certificate or
// a release depends on the un-noised state: two runs on the same data
// with different noise seeds publish certificates that differ only in the
// release hash and the digest (the regression test of issue 9 covers a
// different deleted payload).
func TestNoMembershipOracle(t *testing.T) {
	a, b := issue(t), issue(t)
	for _, c := range []*Certificate{a.cert, b.cert} {
		c.ReleaseSHA256, c.Digest, c.KeyID, c.Signature = "", "", "", ""
	}
	ja, _ := json.Marshal(a.cert)
	jb, _ := json.Marshal(b.cert)
	require.JSONEq(t, string(ja), string(jb))
	for _, word := range []string{"before", "snapshot", "\"deleted\""} {
		require.NotContains(t, string(ja), word)
	}
}

func TestParseCertificateRefusesV1(t *testing.T) {
	_, err := ParseCertificate([]byte(`{"format":"unlearn-certificate/v1"}`))
	require.ErrorIs(t, err, ErrFormat)
}

// Errors name the certificate's own fields.
func TestVerifyNamesCertificateFields(t *testing.T) {
	is := issue(t)
	c := is.reissue(t, func(c *Certificate) { c.Retained = 3 })
	_, err := Verify(c, is.rel, is.key.Public())
	wantVerifyError(t, err, "retained", ErrInconsistent)
	c = is.reissue(t, func(c *Certificate) { c.Sensitivity.Deletion.Ages = []int{-1} })
	_, err = Verify(c, is.rel, is.key.Public())
	var ve *VerifyError
	require.ErrorAs(t, err, &ve)
	require.True(t, strings.HasPrefix(ve.Field, "alpha.deletion."), "field %q", ve.Field)
}
