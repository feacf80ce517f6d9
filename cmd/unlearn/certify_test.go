package main

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"unlearn/bound"
	"unlearn/certify"
	"unlearn/sign"
	"unlearn/unlearn"
)

// certifiableArgs train a certifiable learner on the fixture's stream:
// radius 3, sample bound 2 (the generator's minimizers have norm < 1.8),
// and a pair guard whose window holds the curvature of the stream's
// Hessians (κ = 1: every Hessian is I up to round-off).
var certifiableArgs = []string{"--tau", "5", "--eta", "0.5", "--radius", "3", "--sample-bound", "2",
	"--pair-angle", "0.01", "--pair-min", "0.99", "--pair-max", "1.01"}

// certifyFixture writes a quadratic stream (d = 3, κ = 1) of 120 inserts
// with two realized deletions (ids 100 and 7, ages 20 and 113), and trains
// on it the certifiable learner of certifiableArgs (stateFile) and the
// paper's learner without a radius (plainFile).
func certifyFixture(t *testing.T) (dir, streamFile, stateFile, plainFile string) {
	t.Helper()
	dir = t.TempDir()
	streamFile = filepath.Join(dir, "q.jsonl")
	stateFile = filepath.Join(dir, "state.json")
	plainFile = filepath.Join(dir, "plain.json")
	_, err := runCLI(t, "gen", "--events", "120", "--d", "3", "--kappa", "1", "--seed", "3", "--out", streamFile)
	require.NoError(t, err)
	f, err := os.OpenFile(streamFile, os.O_APPEND|os.O_WRONLY, 0)
	require.NoError(t, err)
	_, err = f.WriteString("{\"op\":\"delete\",\"id\":100}\n{\"op\":\"delete\",\"id\":7}\n")
	require.NoError(t, err)
	require.NoError(t, f.Close())
	_, err = runCLI(t, append([]string{"train", "--stream", streamFile, "--out", stateFile}, certifiableArgs...)...)
	require.NoError(t, err)
	_, err = runCLI(t, "train", "--stream", streamFile, "--tau", "5", "--out", plainFile)
	require.NoError(t, err)
	return dir, streamFile, stateFile, plainFile
}

// certifyArgs returns the arguments of a seeded certify run writing
// NAME.release.json and NAME.cert.json in dir.
func certifyArgs(dir, name, stateFile string, extra ...string) (args []string, release, cert string) {
	release = filepath.Join(dir, name+".release.json")
	cert = filepath.Join(dir, name+".cert.json")
	args = append([]string{"certify", "--state", stateFile, "--out", release, "--certificate", cert,
		"--epsilon", "1", "--delta", "1e-5", "--insecure-seeded", "42"}, extra...)
	return args, release, cert
}

func readCert(t *testing.T, path string) *certify.Certificate {
	t.Helper()
	c, err := certify.ParseCertificate(mustRead(t, path))
	require.NoError(t, err)
	return c
}

// TestCertifySources: the three sources of α on the command line. With
// --stream α is derived (proved) from the state's configuration, the loss
// header and the deletions' ages read from the stream, and equals what
// certify.DerivedAlpha computes from those public inputs; without it α is
// the diameter 2W' (proved); --alpha is assumed, and the output says so.
// Every pair verifies.
func TestCertifySources(t *testing.T) {
	dir, streamFile, stateFile, _ := certifyFixture(t)
	state, header, err := readSnapshot(stateFile)
	require.NoError(t, err)
	header.Meta = nil
	cfg := state.Config()
	noop := unlearn.Builtin{Kind: unlearn.KindNoop}
	derived, err := certify.DerivedAlpha(cfg, header, &certify.Deletion{Ages: []int{113, 20}, Intervention: noop})
	require.NoError(t, err)
	require.Less(t, derived.Alpha, derived.Diameter, "the fixture should give a recursion below the diameter")
	paramOnly, err := certify.DerivedAlpha(cfg, header, &certify.Deletion{Ages: []int{113, 20}, Intervention: unlearn.Builtin{Kind: unlearn.KindParamOnly}})
	require.NoError(t, err)
	require.Greater(t, paramOnly.Alpha, derived.Alpha, "param-only carries an allowance")

	for _, tc := range []struct {
		name       string
		args       []string
		source     string
		provenance bound.Provenance
		alpha      float64
		memory     certify.MemoryPolicy
		say        string // in the certify output
	}{
		{"derived", []string{"--stream", streamFile}, "derived", bound.Proved, derived.Alpha, certify.Reset, "(derived, proved)"},
		{"derived-rebuild", []string{"--stream", streamFile, "--memory", "rebuild", "--retained", streamFile},
			"derived", bound.Proved, derived.Alpha, certify.Rebuild, "(derived, proved)"},
		{"diameter", nil, "diameter", bound.Proved, 2 * cfg.RadiusBound(), certify.Reset, "(diameter, proved)"},
		{"assumed", []string{"--alpha", "0.25", "--alpha-method", "my audit", "--beta", "0.001"}, "assumed", bound.Assumed, 0.25, certify.Reset,
			"WARNING      α is assumed, not proved"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			args, release, cert := certifyArgs(dir, tc.name, stateFile, tc.args...)
			out, err := runCLI(t, args...)
			require.NoError(t, err, "certify output:\n%s", out)
			assert.Contains(t, out, tc.say, "certify output")
			assert.Contains(t, out, "NOT for deployment", "certify output (seeded sampler)")
			assert.Contains(t, out, "wrote "+release, "certify status")
			c := readCert(t, cert)
			assert.Equal(t, tc.source, c.Sensitivity.Source, "α source")
			assert.Equal(t, tc.provenance, c.Provenance, "provenance")
			assert.Equal(t, tc.memory, c.Memory, "memory policy")
			assert.Equal(t, 2, c.Deletions, "deletions")
			switch tc.source {
			case "diameter":
				// 2W' plus the projection's round-off allowance.
				assert.GreaterOrEqual(t, c.Sensitivity.Alpha, tc.alpha)
				assert.InDelta(t, tc.alpha, c.Sensitivity.Alpha, 1e-12*tc.alpha)
			default:
				assert.Equal(t, tc.alpha, c.Sensitivity.Alpha, "α")
			}
			if tc.source == "derived" {
				assert.Equal(t, []int{113, 20}, c.Sensitivity.Deletion.Ages, "ages read from the stream")
			}
			if tc.source == "assumed" {
				assert.Contains(t, c.Statement, "ASSUMED", "statement")
				assert.GreaterOrEqual(t, c.Guarantee.Delta, 1e-5+0.001, "δ + β, rounded up")
				assert.InDelta(t, 1e-5+0.001, c.Guarantee.Delta, 1e-15, "δ + β")
			}
			sigma, err := runCLI(t, "sigma", "--json", "--alpha", strconv.FormatFloat(c.Sensitivity.Alpha, 'g', -1, 64), "--epsilon", "1", "--delta", "1e-5")
			require.NoError(t, err)
			var got struct{ Sigma float64 }
			require.NoError(t, json.Unmarshal([]byte(sigma), &got))
			assert.InDelta(t, got.Sigma, c.Sigma, 1e-9*got.Sigma, "σ is the sigma command's for α")

			out, err = runCLI(t, "verify", "--certificate", cert, "--release", release)
			require.ErrorIs(t, err, errNotVerified, "verify without a key must fail:\n%s", out)
			assert.Contains(t, out, "NOT VERIFIED: "+cert)
			assert.NotContains(t, out, "VALID: ")
			out, err = runCLI(t, "verify", "--certificate", cert, "--release", release, "--integrity-only")
			require.NoError(t, err, "verify output:\n%s", out)
			assert.Contains(t, out, "CONSISTENT (integrity only): "+cert)
			assert.NotContains(t, out, "VALID: ")
			assert.Contains(t, out, "cannot check who issued the certificate: it is unsigned")
		})
	}
}

// TestCertifyRefusals: what certify must refuse, with a usage error naming
// the flag and saying what to do.
func TestCertifyRefusals(t *testing.T) {
	dir, streamFile, stateFile, plainFile := certifyFixture(t)
	t.Run("keep", func(t *testing.T) {
		args, release, _ := certifyArgs(dir, "keep", stateFile, "--memory", "keep")
		_, err := runCLI(t, args...)
		var ue usageError
		require.ErrorAs(t, err, &ue)
		require.ErrorContains(t, err, "--memory")
		require.ErrorContains(t, err, "never released")
		_, err = os.Stat(release)
		require.ErrorIs(t, err, os.ErrNotExist, "a refused certify wrote a release")
	})
	t.Run("no-radius", func(t *testing.T) {
		for _, extra := range [][]string{nil, {"--stream", streamFile}} {
			args, release, _ := certifyArgs(dir, "plain", plainFile, extra...)
			_, err := runCLI(t, args...)
			var ue usageError
			require.ErrorAs(t, err, &ue, "want a usage error")
			require.ErrorContains(t, err, "--state: not certifiable", "the error names the flag")
			require.ErrorContains(t, err, "unlearn train --radius", "the error says what to do")
			_, err = os.Stat(release)
			require.ErrorIs(t, err, os.ErrNotExist, "a refused certify wrote a release")
		}
		// An assumed α is the only way to certify such a state, and says so.
		args, _, cert := certifyArgs(dir, "plain-assumed", plainFile, "--alpha", "0.5")
		_, err := runCLI(t, args...)
		require.NoError(t, err)
		assert.Equal(t, bound.Assumed, readCert(t, cert).Provenance)
	})
}

// TestVerifyRefusesTampering: verify accepts a signed pair, and refuses an
// edited release, an edited certificate field (with and without a
// recomputed digest) and a certificate signed by another key, each with a
// non-zero status (not a usage error) naming the field.
func TestVerifyRefusesTampering(t *testing.T) {
	dir, streamFile, stateFile, _ := certifyFixture(t)
	keyFile, pubFile := writeKey(t, dir, "certifier")
	_, otherPub := writeKey(t, dir, "other")
	args, release, cert := certifyArgs(dir, "signed", stateFile, "--stream", streamFile, "--key", keyFile)
	out, err := runCLI(t, args...)
	require.NoError(t, err, "certify output:\n%s", out)
	require.Contains(t, out, "signed by    key ")

	out, err = runCLI(t, "verify", "--certificate", cert, "--release", release, "--public-key", pubFile)
	require.NoError(t, err, "verify output:\n%s", out)
	assert.Contains(t, out, "ok           Ed25519 signature by key ")
	assert.Contains(t, out, "VALID: "+cert)
	assert.NotContains(t, out, "note: no --public-key")

	refused := func(t *testing.T, field string, args ...string) error {
		t.Helper()
		_, err := runCLI(t, append([]string{"verify"}, args...)...)
		require.Error(t, err)
		var ue usageError
		assert.NotErrorAs(t, err, &ue, "a failed verification is not a usage error")
		var ve *certify.VerifyError
		require.ErrorAs(t, err, &ve)
		assert.Equal(t, field, ve.Field, "field named by %q", err)
		assert.ErrorContains(t, err, "INVALID certificate ")
		return err
	}
	t.Run("edited-release", func(t *testing.T) {
		r, err := certify.ParseRelease(mustRead(t, release))
		require.NoError(t, err)
		r.W[0] += 1e-3
		b, err := r.Marshal()
		require.NoError(t, err)
		bad := filepath.Join(dir, "edited.release.json")
		require.NoError(t, os.WriteFile(bad, b, 0o644))
		err = refused(t, "release_sha256", "--certificate", cert, "--release", bad)
		assert.ErrorIs(t, err, certify.ErrHash)
	})
	t.Run("edited-epsilon", func(t *testing.T) {
		c := readCert(t, cert)
		c.Epsilon = 2
		bad := writeCertificate(t, dir, "edited-epsilon", c)
		err := refused(t, "digest", "--certificate", bad, "--release", release)
		assert.ErrorIs(t, err, certify.ErrDigest)
		// An editor who recomputes the digest: the guarantee no longer
		// follows from ε, δ, β.
		c.Digest = digestOf(t, c)
		bad = writeCertificate(t, dir, "edited-epsilon-redigested", c)
		err = refused(t, "guarantee", "--certificate", bad, "--release", release)
		assert.ErrorIs(t, err, certify.ErrInconsistent)
		// ... and with the guarantee edited too, σ no longer follows.
		c.Guarantee.Epsilon = 2
		c.Digest = digestOf(t, c)
		bad = writeCertificate(t, dir, "edited-epsilon-guarantee", c)
		err = refused(t, "sigma", "--certificate", bad, "--release", release)
		assert.ErrorIs(t, err, certify.ErrSigma)
		// The signature covers the edit even when the digest is redone.
		err = refused(t, "signature", "--certificate", bad, "--release", release, "--public-key", pubFile)
		assert.ErrorIs(t, err, certify.ErrSignature)
	})
	t.Run("other-key", func(t *testing.T) {
		err := refused(t, "key_id", "--certificate", cert, "--release", release, "--public-key", otherPub)
		assert.ErrorIs(t, err, certify.ErrSignature)
	})
	t.Run("unsigned-with-key", func(t *testing.T) {
		args, release, cert := certifyArgs(dir, "unsigned", stateFile)
		_, err := runCLI(t, args...)
		require.NoError(t, err)
		_, err = runCLI(t, "verify", "--certificate", cert, "--release", release, "--public-key", pubFile)
		require.ErrorIs(t, err, certify.ErrSignature)
		require.ErrorContains(t, err, "unsigned")
	})
}

// writeKey writes NAME.key and NAME.pub in dir with the sign package (the
// files `unlearn keygen` writes) and returns their paths.
func writeKey(t *testing.T, dir, name string) (keyFile, pubFile string) {
	t.Helper()
	k, err := sign.Generate()
	require.NoError(t, err)
	keyFile, pubFile, err = k.WriteFiles(filepath.Join(dir, name), false)
	require.NoError(t, err)
	return keyFile, pubFile
}

// writeCert writes c as dir/NAME.cert.json.
func writeCertificate(t *testing.T, dir, name string, c *certify.Certificate) string {
	t.Helper()
	b, err := c.MarshalIndent()
	require.NoError(t, err)
	path := filepath.Join(dir, name+".cert.json")
	require.NoError(t, os.WriteFile(path, b, 0o644))
	return path
}

// digestOf recomputes a certificate's digest as anyone can (certify's
// Certificate.Digest doc): the SHA-256 of its JSON with Digest, KeyID and
// Signature empty.
func digestOf(t *testing.T, c *certify.Certificate) string {
	t.Helper()
	cp := *c
	cp.Digest, cp.KeyID, cp.Signature = "", "", ""
	b, err := json.Marshal(&cp)
	require.NoError(t, err)
	s := sha256.Sum256(b)
	return hex.EncodeToString(s[:])
}

func mustRead(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	return b
}

// boundArgs are bound inputs with an assumed contraction.
var boundArgs = []string{"--G", "3", "--hmin", "0.1", "--hmax", "1", "--constants-source", "assumed", "--rho", "0.9"}

func TestBoundCmd(t *testing.T) {
	// Ages 0 and 5 with ρ = 0.9 (assumed), η = 0.1: the CLI prints the
	// scenario's α.
	out, err := runCLI(t, append([]string{"bound", "--ages", "0,5", "--horizon", "3", "--series"}, boundArgs...)...)
	require.NoError(t, err)
	k, err := bound.AssumedContraction(0.9)
	require.NoError(t, err)
	res, err := bound.Scenario{Constants: bound.Constants{G: 3, HMin: 0.1, HMax: 1, Eta: 0.1, Tau: 10, Provenance: bound.Assumed},
		Contraction: k, Ages: []int{0, 5}, Horizon: 3}.Bound()
	require.NoError(t, err)
	want := "alpha       " + strconv.FormatFloat(res.Alpha[3], 'g', -1, 64)
	assert.Contains(t, out, want, "bound output")
	assert.Contains(t, out, "provenance  assumed", "bound output")
	for k := 0; k <= 3; k++ {
		assert.Contains(t, out, "\n"+strconv.Itoa(k)+"  ", "the series lacks row %d", k)
	}
	// A typed number is never "proved" (issue 9, finding 4); an asserted
	// commutation makes ρ assumed.
	_, err = runCLI(t, "bound", "--G", "10", "--hmin", "0.25", "--hmax", "1", "--eta", "0.2", "--constants-source", "proved",
		"--mu", "1", "--L", "4", "--ages", "3")
	require.ErrorContains(t, err, "--constants-source")
	_, err = runCLI(t, "bound", "--G", "1", "--hmin", "0.1", "--hmax", "1", "--constants-source", "estimated", "--rho", "0.01", "--rho-source", "proved", "--ages", "3")
	require.ErrorContains(t, err, "--rho-source")
	out, err = runCLI(t, "bound", "--G", "2", "--hmin", "0.25", "--hmax", "1", "--eta", "0.2", "--constants-source", "estimated",
		"--mu", "1", "--L", "4", "--commuting", "--ages", "3")
	require.NoError(t, err)
	assert.Contains(t, out, "provenance  assumed", "analytic contraction output")
	assert.Contains(t, out, "commutation asserted", "analytic contraction output")
}

func TestCertifyCLIErrorsNameTheFlag(t *testing.T) {
	dir, streamFile, stateFile, _ := certifyFixture(t)
	out := filepath.Join(dir, "out.json")
	cert := filepath.Join(dir, "cert.json")
	base := []string{"--state", stateFile, "--out", out, "--certificate", cert}
	given := []string{"--alpha", "0.5"}
	certifyWith := func(args ...string) []string { return append(append([]string{"certify"}, base...), args...) }
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"sigma-missing-alpha", []string{"sigma", "--epsilon", "1", "--delta", "1e-5"}, "--alpha"},
		{"sigma-negative-alpha", []string{"sigma", "--alpha", "-1", "--epsilon", "1", "--delta", "1e-5"}, "--alpha"},
		{"sigma-epsilon-zero", []string{"sigma", "--alpha", "1", "--epsilon", "0", "--delta", "1e-5"}, "--epsilon"},
		{"sigma-delta-one", []string{"sigma", "--alpha", "1", "--epsilon", "1", "--delta", "1"}, "--delta"},
		{"sigma-classic-epsilon-1", []string{"sigma", "--alpha", "1", "--epsilon", "1", "--delta", "1e-5", "--calibration", "classic"}, "--epsilon"},
		{"sigma-bad-calibration", []string{"sigma", "--alpha", "1", "--epsilon", "1", "--delta", "1e-5", "--calibration", "laplace"}, "--calibration"},
		{"bound-missing-G", []string{"bound", "--rho", "0.5", "--constants-source", "proved"}, "--G"},
		{"bound-rho-1", []string{"bound", "--G", "1", "--hmax", "1", "--constants-source", "assumed", "--rho", "1"}, "--rho"},
		{"certify-missing-state", []string{"certify", "--out", out, "--certificate", cert, "--epsilon", "1", "--delta", "1e-5"}, "--state"},
		{"certify-missing-out", []string{"certify", "--state", stateFile, "--certificate", cert, "--epsilon", "1", "--delta", "1e-5"}, "--out"},
		{"certify-missing-certificate", []string{"certify", "--state", stateFile, "--out", out, "--epsilon", "1", "--delta", "1e-5"}, "--certificate"},
		{"certify-missing-epsilon", certifyWith(append([]string{"--delta", "1e-5"}, given...)...), "--epsilon"},
		{"certify-missing-delta", certifyWith(append([]string{"--epsilon", "1"}, given...)...), "--delta"},
		{"certify-epsilon", certifyWith(append([]string{"--epsilon", "-1", "--delta", "1e-5"}, given...)...), "--epsilon"},
		{"certify-delta", certifyWith(append([]string{"--epsilon", "1", "--delta", "1.5"}, given...)...), "--delta"},
		{"certify-beta", certifyWith(append([]string{"--epsilon", "1", "--delta", "1e-5", "--beta", "1"}, given...)...), "--beta"},
		{"certify-beta-derived", certifyWith("--epsilon", "1", "--delta", "1e-5", "--beta", "0.01", "--stream", streamFile), "--beta"},
		{"certify-alpha-negative", certifyWith("--epsilon", "1", "--delta", "1e-5", "--alpha", "-1"), "--alpha"},
		{"certify-alpha-zero", certifyWith("--epsilon", "1", "--delta", "1e-5", "--alpha", "0"), "--alpha"},
		{"certify-alpha-method-alone", certifyWith("--epsilon", "1", "--delta", "1e-5", "--alpha-method", "by hand"), "--alpha-method"},
		{"certify-alpha-and-stream", certifyWith(append([]string{"--epsilon", "1", "--delta", "1e-5", "--stream", streamFile}, given...)...), "--stream"},
		{"certify-alpha-and-intervention", certifyWith(append([]string{"--epsilon", "1", "--delta", "1e-5", "--intervention", "noop"}, given...)...), "--intervention"},
		{"certify-intervention-without-stream", certifyWith("--epsilon", "1", "--delta", "1e-5", "--intervention", "param-only"), "--intervention"},
		{"certify-unknown-intervention", certifyWith("--epsilon", "1", "--delta", "1e-5", "--stream", streamFile, "--intervention", "forget"), "--intervention"},
		{"certify-oracle-claimed", certifyWith("--epsilon", "1", "--delta", "1e-5", "--stream", streamFile, "--intervention", "oracle"), "--intervention"},
		{"certify-classic", certifyWith(append([]string{"--epsilon", "2", "--delta", "1e-5", "--calibration", "classic"}, given...)...), "--epsilon"},
		{"certify-calibration", certifyWith(append([]string{"--epsilon", "1", "--delta", "1e-5", "--calibration", "laplace"}, given...)...), "--calibration"},
		{"certify-memory", certifyWith(append([]string{"--epsilon", "1", "--delta", "1e-5", "--memory", "forget"}, given...)...), "--memory"},
		{"certify-memory-exact", certifyWith(append([]string{"--epsilon", "1", "--delta", "1e-5", "--memory", "exact"}, given...)...), "--memory"},
		{"certify-rebuild-without-data", certifyWith(append([]string{"--epsilon", "1", "--delta", "1e-5", "--memory", "rebuild"}, given...)...), "--retained"},
		{"certify-retained-without-rebuild", certifyWith(append([]string{"--epsilon", "1", "--delta", "1e-5", "--retained", streamFile}, given...)...), "--retained"},
		{"certify-retained-last", certifyWith(append([]string{"--epsilon", "1", "--delta", "1e-5", "--memory", "rebuild", "--retained", streamFile, "--retained-last", "-1"}, given...)...), "--retained-last"},
		{"certify-key-missing", certifyWith(append([]string{"--epsilon", "1", "--delta", "1e-5", "--key", filepath.Join(dir, "none.key")}, given...)...), "--key"},
		{"verify-missing-certificate", []string{"verify", "--release", out}, "--certificate"},
		{"verify-missing-release", []string{"verify", "--certificate", cert}, "--release"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := runCLI(t, tt.args...)
			require.Error(t, err, "command succeeded")
			var ue usageError
			require.ErrorAs(t, err, &ue, "want a usage error (exit status 2)")
			require.ErrorContains(t, err, tt.want, "the error must name the flag")
		})
	}
	_, err := os.Stat(out)
	assert.ErrorIs(t, err, os.ErrNotExist, "a failed certify left an output file behind")
}

// TestVerifyPublicKeyFlag: a bad --public-key file is a usage error naming
// the flag, before anything is verified.
func TestVerifyPublicKeyFlag(t *testing.T) {
	dir, _, stateFile, _ := certifyFixture(t)
	args, release, cert := certifyArgs(dir, "c", stateFile)
	_, err := runCLI(t, args...)
	require.NoError(t, err)
	bad := filepath.Join(dir, "bad.pub")
	require.NoError(t, os.WriteFile(bad, []byte("{}\n"), 0o644))
	for _, pub := range []string{bad, filepath.Join(dir, "missing.pub")} {
		_, err := runCLI(t, "verify", "--certificate", cert, "--release", release, "--public-key", pub)
		var ue usageError
		require.ErrorAs(t, err, &ue)
		require.ErrorContains(t, err, "--public-key")
	}
}

func TestCertifyCommandsHaveHelp(t *testing.T) {
	for _, name := range []string{"sigma", "bound", "certify", "verify"} {
		t.Run(name, func(t *testing.T) {
			out, err := runCLI(t, name, "--help")
			require.NoError(t, err)
			assert.Contains(t, out, "Examples:", "%s --help lacks examples", name)
			assert.Contains(t, out, "unlearn "+name, "%s --help lacks examples", name)
		})
	}
}
