package certify

import (
	"bytes"
	"encoding/json"
	"math"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"unlearn/bound"
	"unlearn/noise"
	"unlearn/olbfgs"
	"unlearn/stream"
)

// issued is a genuine certified release of the fixture.
type issued struct {
	f             fixture
	cert          *Certificate
	before, after *olbfgs.Learner
}

func issue(t testing.TB, edit func(*Spec)) issued {
	t.Helper()
	f := newFixture(t)
	spec := seededSpec(t, 11)
	spec.Intervention = "noop"
	if edit != nil {
		edit(&spec)
	}
	out, c, err := Certify(f.state, spec)
	require.NoError(t, err)
	return issued{f: f, cert: c, before: f.state.Clone(), after: out}
}

func snapshot(t testing.TB, l *olbfgs.Learner, h stream.Header) []byte {
	t.Helper()
	b, err := olbfgs.MarshalSnapshot(l, h)
	require.NoError(t, err)
	return b
}

func TestVerifyAcceptsGenuine(t *testing.T) {
	retained := newFixture(t).prefix[8:] // ids 9–12, none deleted
	for _, tc := range []struct {
		name string
		edit func(*Spec)
	}{
		{"reset", nil},
		{"rebuild", func(s *Spec) { s.Memory, s.Retained = Rebuild, retained }},
		{"keep", func(s *Spec) { s.Memory = Keep }},
		{"given-estimated-alpha", func(s *Spec) {
			s.Scenario, s.Alpha = nil, &Given{Alpha: 0.3, Provenance: bound.Estimated, Method: "measured"}
		}},
		{"beta-and-classic", func(s *Spec) { s.Epsilon, s.Beta, s.Calibration = 0.5, 1e-7, noise.Classic }},
		{"shift", func(s *Spec) { s.Shift = 0.25 }},
		{"secure", func(s *Spec) { s.Sampler = nil }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			is := issue(t, tc.edit)
			before, after := snapshot(t, is.before, is.f.header), snapshot(t, is.after, is.f.header)
			rep, err := Verify(is.cert, before, after)
			require.NoError(t, err)
			assert.GreaterOrEqual(t, len(rep.Checked), 5, "checks in the report %q", rep)
			assert.Contains(t, rep.String(), "ok", "report")
			// The hashes are of the canonical snapshot: re-indented files
			// verify too.
			var buf bytes.Buffer
			require.NoError(t, json.Compact(&buf, after))
			_, err = Verify(is.cert, before, buf.Bytes())
			require.NoError(t, err, "a compacted snapshot does not verify")
			// A certificate read back from its JSON verifies.
			js, err := is.cert.MarshalIndent()
			require.NoError(t, err)
			back, err := ParseCertificate(js)
			require.NoError(t, err)
			_, err = Verify(back, before, after)
			require.NoError(t, err, "a parsed certificate does not verify")
			// The public (redacted) form verifies without the before-state.
			pub, err := is.cert.Public()
			require.NoError(t, err)
			rep, err = Verify(pub, nil, after)
			require.NoError(t, err)
			assert.Empty(t, pub.BeforeSHA256, "public form: hash of the before state")
			assert.True(t, pub.Redacted, "public form: redacted")
			assert.NotEmpty(t, rep.Skipped, "public form: skipped checks")
			assert.NotEmpty(t, is.cert.BeforeSHA256, "the original must keep its hash")
		})
	}
}

// rehash makes the certificate's after-hash that of a (tampered) state, as
// an attacker who edits the released state would.
func rehash(t *testing.T, c *Certificate, a *olbfgs.Learner, h stream.Header) {
	t.Helper()
	s, err := hashState(a, h, "test")
	require.NoError(t, err)
	c.AfterSHA256 = s
}

func TestVerifyRejectsTampering(t *testing.T) {
	// Each case edits one thing of a genuine release. "resealed" cases also
	// recompute the digest, as an attacker who knows the format would; the
	// others are caught by the digest alone.
	type state struct {
		c             *Certificate
		before, after *olbfgs.Learner
		h             stream.Header
	}
	for _, tc := range []struct {
		name     string
		reseal   bool
		edit     func(t *testing.T, s *state)
		field    string
		sentinel error
	}{
		{"intervention-renamed", false, func(_ *testing.T, s *state) { s.c.Intervention = "oracle" }, "digest", ErrDigest},
		{"format-version", false, func(_ *testing.T, s *state) { s.c.Format = "unlearn-certificate/v2" }, "format", ErrFormat},
		{"alpha-lowered", true, func(_ *testing.T, s *state) { s.c.Sensitivity.Alpha /= 2 }, "alpha.value", ErrAlpha},
		{"bound-alpha-lowered", true, func(_ *testing.T, s *state) { s.c.Sensitivity.BoundAlpha /= 2 }, "alpha.bound_alpha", ErrAlpha},
		{"G-lowered", true, func(_ *testing.T, s *state) { s.c.Sensitivity.Bound.G /= 2 }, "alpha.value", ErrAlpha},
		{"age-removed", true, func(_ *testing.T, s *state) { s.c.Sensitivity.Bound.Ages = []int{} }, "alpha.value", ErrAlpha},
		{"rho-out-of-range", true, func(_ *testing.T, s *state) { s.c.Sensitivity.Bound.Contraction.Rho = 1 }, "alpha", bound.ErrRho},
		{"source-unknown", true, func(_ *testing.T, s *state) { s.c.Sensitivity.Source = "oracle" }, "alpha.source", ErrAlpha},
		{"term-provenance-upgraded", true, func(_ *testing.T, s *state) { s.c.Sensitivity.Terms[1].Provenance = bound.Assumed }, "alpha.terms", ErrAlpha},
		{"provenance-summary", true, func(_ *testing.T, s *state) { s.c.Provenance = bound.Assumed }, "provenance", ErrInconsistent},
		{"sigma-lowered", true, func(_ *testing.T, s *state) { s.c.Sigma /= 2 }, "sigma", ErrSigma},
		{"sigma-raised", true, func(_ *testing.T, s *state) { s.c.Sigma *= 2 }, "sigma", ErrSigma},
		{"sigma-applied-lowered", true, func(_ *testing.T, s *state) { s.c.SigmaApplied *= 0.9 }, "sigma_applied", ErrSigma},
		{"zcdp-lowered", true, func(_ *testing.T, s *state) { s.c.ZCDP /= 2 }, "zcdp", ErrSigma},
		{"calibration-switched", true, func(_ *testing.T, s *state) { s.c.Calibration = noise.Classic }, "epsilon", ErrClassicEpsilon},
		{"epsilon-raised", true, func(_ *testing.T, s *state) { s.c.Epsilon = 2 }, "guarantee", ErrInconsistent},
		{"epsilon-and-guarantee-raised", true, func(_ *testing.T, s *state) { s.c.Epsilon, s.c.Guarantee.Epsilon = 2, 2 }, "sigma", ErrSigma},
		{"delta-out-of-range", true, func(_ *testing.T, s *state) { s.c.Delta = 0 }, "delta", ErrDelta},
		{"beta-out-of-range", true, func(_ *testing.T, s *state) { s.c.Beta = -1 }, "beta", ErrBeta},
		{"beta-hidden", true, func(_ *testing.T, s *state) { s.c.Beta = 1e-3 }, "guarantee", ErrInconsistent},
		{"exact-claimed", true, func(_ *testing.T, s *state) { s.c.Exact = true }, "exact", ErrInconsistent},
		{"sampler-renamed", true, func(_ *testing.T, s *state) { s.c.Sampler = noise.NameSecure }, "deployable", ErrInconsistent},
		{"sampler-unknown", true, func(_ *testing.T, s *state) { s.c.Sampler = "laplace" }, "sampler", ErrInconsistent},
		{"deployable-claimed", true, func(_ *testing.T, s *state) { s.c.Deployable = true }, "deployable", ErrInconsistent},
		{"covers-state-with-kept-memory", true, func(_ *testing.T, s *state) { s.c.Memory = Keep }, "covers", ErrCoverage},
		{"retained-without-rebuild", true, func(_ *testing.T, s *state) { s.c.Retained = &RetainedRecord{IDs: []int64{}} }, "retained", ErrInconsistent},
		{"deletions", true, func(_ *testing.T, s *state) { s.c.Deletions = 3 }, "deletions", ErrInconsistent},
		{"statement", true, func(_ *testing.T, s *state) { s.c.Statement = "certified" }, "statement", ErrInconsistent},
		{"warnings-removed", true, func(_ *testing.T, s *state) { s.c.Warnings = []string{} }, "warnings", ErrInconsistent},
		{"redacted-flag", true, func(_ *testing.T, s *state) { s.c.Redacted = true }, "redacted", ErrInconsistent},
		{"dim", true, func(_ *testing.T, s *state) { s.c.Dim = 5 }, "dim", ErrInconsistent},
		{"before-hash", true, func(_ *testing.T, s *state) { s.c.BeforeSHA256 = strings.Repeat("0", 64) }, "before_sha256", ErrHash},
		{"after-hash", true, func(_ *testing.T, s *state) { s.c.AfterSHA256 = strings.Repeat("ab", 32) }, "after_sha256", ErrHash},
		{"after-hash-not-hex", true, func(_ *testing.T, s *state) { s.c.AfterSHA256 = "xyz" }, "after_sha256", ErrHash},
		{"released-w-edited", false, func(_ *testing.T, s *state) {
			w := append([]float64(nil), s.after.W()...)
			w[0] += 1e-9
			s.after.SetW(w)
		}, "after_sha256", ErrHash},
		{"another-before-state", false, func(_ *testing.T, s *state) { s.before.MarkDeleted(1) }, "before_sha256", ErrHash},
		{"no-noise", true, func(t *testing.T, s *state) {
			s.after.SetW(s.before.W())
			rehash(t, s.c, s.after, s.h)
		}, "after.w", ErrNoise},
		{"ten-times-the-noise", true, func(t *testing.T, s *state) {
			w := append([]float64(nil), s.after.W()...)
			for i := range w {
				w[i] = s.before.W()[i] + 10*(w[i]-s.before.W()[i])
			}
			s.after.SetW(w)
			rehash(t, s.c, s.after, s.h)
		}, "after.w", ErrNoise},
		{"memory-not-reset", true, func(t *testing.T, s *state) {
			s.after.Memory().CopyFrom(s.before.Memory())
			rehash(t, s.c, s.after, s.h)
		}, "after.memory", ErrCoverage},
		{"counters-changed", true, func(t *testing.T, s *state) {
			s.after.MarkDeleted(2)
			rehash(t, s.c, s.after, s.h)
		}, "after.deleted", ErrInconsistent},
		{"before-missing", false, func(_ *testing.T, s *state) { s.before = nil }, "before", ErrSnapshot},
	} {
		t.Run(tc.name, func(t *testing.T) {
			is := issue(t, nil)
			s := &state{c: is.cert.clone(), before: is.before, after: is.after, h: is.f.header}
			tc.edit(t, s)
			if tc.reseal {
				require.NoError(t, s.c.seal())
				// Resealing rewrites the statement and warnings; restore a
				// tampered one so that those cases test the check.
				switch tc.name {
				case "statement":
					s.c.Statement = "certified"
				case "warnings-removed":
					s.c.Warnings = []string{}
				}
				if tc.name == "statement" || tc.name == "warnings-removed" {
					d, err := s.c.digest()
					require.NoError(t, err)
					s.c.Digest = d
				}
			}
			var before []byte
			if s.before != nil {
				before = snapshot(t, s.before, s.h)
			}
			_, err := Verify(s.c, before, snapshot(t, s.after, s.h))
			wantVerifyError(t, err, tc.field, tc.sentinel)
		})
	}
}

func TestVerifyKeptMemoryMustBeUnchanged(t *testing.T) {
	is := issue(t, func(s *Spec) { s.Memory = Keep })
	is.after.Memory().Reset()
	rehash(t, is.cert, is.after, is.f.header)
	require.NoError(t, is.cert.seal())
	_, err := VerifyStates(is.cert, is.before, is.after, nil)
	wantVerifyError(t, err, "after.memory", ErrCoverage)
}

func TestVerifyRebuiltMemoryMustComeFromRetainedData(t *testing.T) {
	f := newFixture(t)
	is := issue(t, func(s *Spec) { s.Memory, s.Retained = Rebuild, f.prefix[9:] })
	// Replace the rebuilt memory (from ids 10–12) by one built from ids 1–3,
	// which are not retained data (and 3 is deleted).
	early, err := olbfgs.Replay(is.before.Config(), f.loss, f.prefix[:3])
	require.NoError(t, err)
	is.after.Memory().CopyFrom(early.Memory())
	rehash(t, is.cert, is.after, f.header)
	require.NoError(t, is.cert.seal())
	_, err = VerifyStates(is.cert, is.before, is.after, nil)
	wantVerifyError(t, err, "after.memory", ErrCoverage)
}

func TestVerifySmallSigmaSkipsNoiseTest(t *testing.T) {
	// σ far below the float resolution of w cannot be measured: the noise
	// test is skipped (and reported), not failed.
	is := issue(t, func(s *Spec) {
		s.Scenario, s.Alpha = nil, &Given{Alpha: 1e-30, Provenance: bound.Proved}
	})
	rep, err := VerifyStates(is.cert, is.before, is.after, nil)
	require.NoError(t, err)
	require.Len(t, rep.Skipped, 1, "skipped checks")
	assert.Contains(t, rep.Skipped[0], "round-off", "skipped check")
}

func TestParseCertificateRejectsMalformed(t *testing.T) {
	is := issue(t, nil)
	js, err := is.cert.MarshalIndent()
	require.NoError(t, err)
	for _, tc := range []struct {
		name string
		data []byte
	}{
		{"unknown-field", bytes.Replace(js, []byte(`"format"`), []byte(`"extra": 1, "format"`), 1)},
		{"trailing-data", append(append([]byte(nil), js...), []byte("{}")...)},
		{"trailing-brace", append(append([]byte(nil), js...), '}')},
		{"trailing-brackets", append(append([]byte(nil), js...), []byte("]]]garbage")...)},
		{"other-format", bytes.Replace(js, []byte(Format), []byte("unlearn-certificate/v0"), 1)},
		{"not-json", []byte("certificate")},
		{"bad-memory-policy", bytes.Replace(js, []byte(`"memory": "reset"`), []byte(`"memory": "forget"`), 1)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ParseCertificate(tc.data)
			wantVerifyError(t, err, "format", ErrFormat)
		})
	}
	t.Run("unreadable-snapshot", func(t *testing.T) {
		_, err := Verify(is.cert, nil, []byte("{}"))
		wantVerifyError(t, err, "after", ErrSnapshot)
	})
}

func TestNoiseCheckFalseRejectionIsRare(t *testing.T) {
	// checkNoise on genuine N(0, σ²) noise from the seeded sampler passes in
	// 2000 of 2000 draws at each d (its false-rejection rate is 1e-10), and
	// rejects zero noise and tenfold noise.
	for _, d := range []int{1, 3, 100} {
		x := make([]float64, d)
		for i := range x {
			x[i] = float64(i)
		}
		s := noise.NewSeededSampler(uint64(d), noise.SamplerOptions{})
		y := make([]float64, d)
		for range 2000 {
			_, err := s.AddNoise(y, x, 0.5)
			require.NoError(t, err)
			_, err = checkNoise(x, y, 0.5)
			require.NoError(t, err, "d = %d: genuine noise rejected", d)
		}
		_, err := checkNoise(x, x, 0.5)
		assert.Error(t, err, "d = %d: zero noise accepted", d)
		_, err = checkNoise(x, y, 0.05)
		assert.Error(t, err, "d = %d: noise ten times σ accepted", d)
	}
	_, err := checkNoise([]float64{1}, []float64{math.Nextafter(1, 2)}, 0)
	assert.ErrorIs(t, err, ErrNoise, "σ = 0 with a changed w accepted")
}
