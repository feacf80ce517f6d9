package main

import (
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"gonum.org/v1/gonum/floats/scalar"

	"unlearn/bound"
	"unlearn/certify"
)

func TestSigmaCmd(t *testing.T) {
	tests := []struct {
		name      string
		args      []string
		want      float64 // exact σ (mpmath values of docs/theory.md §8)
		tolerance float64 // relative: the analytic σ is ≤ 0.1% above exact (the library's bisection); classic is exact to round-off
	}{
		{"analytic-default", []string{"--alpha", "1", "--epsilon", "1", "--delta", "1e-5"}, 3.730632, 1e-3},
		{"analytic-scaled", []string{"--alpha", "2", "--epsilon", "0.5", "--delta", "1e-3"}, 2 * 4.610128, 1e-3},
		{"classic", []string{"--alpha", "1", "--epsilon", "0.1", "--delta", "1e-6", "--calibration", "classic"}, 52.98803, 1e-6},
		{"zero-alpha", []string{"--alpha", "0", "--epsilon", "1", "--delta", "1e-5"}, 0, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, err := runCLI(t, append([]string{"sigma"}, tt.args...)...)
			require.NoError(t, err)
			got, err := strconv.ParseFloat(strings.TrimSpace(out), 64)
			require.NoError(t, err, "output %q is not a number", out)
			if got < tt.want*(1-1e-6) || !scalar.EqualWithinAbsOrRel(got, tt.want, 0, tt.tolerance) {
				t.Errorf("σ = %v, want %v (within %v, never below)", got, tt.want, tt.tolerance)
			}
		})
	}
}

// certifyFixture writes a quadratic stream with two realized deletions,
// trains a certifiable learner on it and returns the directory, the stream
// and the state file.
func certifyFixture(t *testing.T) (dir, streamFile, stateFile string) {
	t.Helper()
	dir = t.TempDir()
	streamFile = filepath.Join(dir, "q.jsonl")
	stateFile = filepath.Join(dir, "state.json")
	_, err := runCLI(t, "gen", "--events", "120", "--d", "4", "--seed", "3", "--out", streamFile)
	require.NoError(t, err)
	f, err := os.OpenFile(streamFile, os.O_APPEND|os.O_WRONLY, 0)
	require.NoError(t, err)
	_, err = f.WriteString("{\"op\":\"delete\",\"id\":100}\n{\"op\":\"delete\",\"id\":7}\n")
	require.NoError(t, err)
	require.NoError(t, f.Close())
	_, err = runCLI(t, "train", "--stream", streamFile, "--tau", "5", "--radius", "5", "--sample-bound", "10", "--out", stateFile)
	require.NoError(t, err)
	return dir, streamFile, stateFile
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
	res, err := bound.Scenario{Constants: bound.Constants{G: 3, HMin: 0.1, HMax: 1, Eta: 0.1, Tau: 10, Source: bound.Assumed},
		Contraction: k, Ages: []int{0, 5}, Horizon: 3}.Bound()
	require.NoError(t, err)
	want := "alpha       " + strconv.FormatFloat(res.Alpha[3], 'g', -1, 64)
	assert.Contains(t, out, want, "bound output")
	assert.Contains(t, out, "provenance  assumed", "bound output")
	for k := 0; k <= 3; k++ {
		assert.Contains(t, out, "\n"+strconv.Itoa(k)+"  ", "the series lacks row %d", k)
	}
	// The analytic contraction from μ and L.
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

func TestCertifyVerifyRoundTrip(t *testing.T) {
	dir, streamFile, stateFile := certifyFixture(t)
	rel, cert := filepath.Join(dir, "release.json"), filepath.Join(dir, "cert.json")
	key := filepath.Join(dir, "k")
	_, err := runCLI(t, "keygen", "--out", key)
	require.NoError(t, err)
	for _, tc := range []struct {
		name, source string
		args         []string
	}{
		{"derived", "derived", []string{"--stream", streamFile}},
		{"diameter", "diameter", nil},
		{"assumed", "assumed", []string{"--alpha", "0.3", "--alpha-method", "my estimate"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			args := append([]string{"certify", "--state", stateFile, "--out", rel, "--certificate", cert, "--epsilon", "1", "--delta", "1e-5",
				"--insecure-seeded", "1", "--key", key + ".key"}, tc.args...)
			out, err := runCLI(t, args...)
			require.NoError(t, err)
			assert.Contains(t, out, "("+tc.source+",")
			c, err := certify.ParseCertificate(mustRead(t, cert))
			require.NoError(t, err)
			require.Equal(t, tc.source, c.Sensitivity.Source)
			if tc.source == "assumed" {
				assert.Contains(t, c.Statement, "ASSUMED")
			}
			out, err = runCLI(t, "verify", "--certificate", cert, "--release", rel, "--public-key", key+".pub")
			require.NoError(t, err)
			assert.Contains(t, out, "VALID")
		})
	}
	// An edited release or certificate is refused, naming the field.
	b := mustRead(t, rel)
	require.NoError(t, os.WriteFile(rel, []byte(strings.Replace(string(b), "\"w\": [", "\"w\": [1,", 1)), 0o644))
	_, err = runCLI(t, "verify", "--certificate", cert, "--release", rel)
	require.ErrorContains(t, err, "release_sha256")
	require.NoError(t, os.WriteFile(rel, b, 0o644))
	cb := mustRead(t, cert)
	require.NoError(t, os.WriteFile(cert, []byte(strings.Replace(string(cb), "\"epsilon\": 1,", "\"epsilon\": 2,", 1)), 0o644))
	_, err = runCLI(t, "verify", "--certificate", cert, "--release", rel, "--public-key", key+".pub")
	require.ErrorContains(t, err, "signature")
	// Another key is refused.
	require.NoError(t, os.WriteFile(cert, cb, 0o644))
	other := filepath.Join(dir, "other")
	_, err = runCLI(t, "keygen", "--out", other)
	require.NoError(t, err)
	_, err = runCLI(t, "verify", "--certificate", cert, "--release", rel, "--public-key", other+".pub")
	require.ErrorContains(t, err, "key_id")
}

func mustRead(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	return b
}

func TestCertifyCLIErrorsNameTheFlag(t *testing.T) {
	dir, streamFile, stateFile := certifyFixture(t)
	plain := filepath.Join(dir, "plain.json")
	_, err := runCLI(t, "train", "--stream", streamFile, "--tau", "5", "--out", plain)
	require.NoError(t, err)
	base := []string{"certify", "--out", filepath.Join(dir, "r.json"), "--certificate", filepath.Join(dir, "c.json"), "--epsilon", "1", "--delta", "1e-5"}
	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"keep-refused", []string{"--state", stateFile, "--memory", "keep"}, "--memory"},
		{"no-radius", []string{"--state", plain}, "radius"},
		{"alpha-and-stream", []string{"--state", stateFile, "--alpha", "1", "--stream", streamFile}, "--stream"},
		{"unknown-intervention", []string{"--state", stateFile, "--stream", streamFile, "--intervention", "oracle"}, "--intervention"},
		{"intervention-without-stream", []string{"--state", stateFile, "--intervention", "param-only"}, "--intervention"},
		{"method-without-alpha", []string{"--state", stateFile, "--alpha-method", "x"}, "--alpha-method"},
		{"zero-alpha", []string{"--state", stateFile, "--alpha", "0"}, "--alpha"},
		{"no-epsilon", []string{"--state", stateFile, "--epsilon", "0"}, "--epsilon"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := runCLI(t, append(slices.Clone(base), tc.args...)...)
			require.ErrorContains(t, err, tc.want)
		})
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
