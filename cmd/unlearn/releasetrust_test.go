package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestReleaseUsedOnlyVerified: predict and evaluate use a release only once
// it verifies against its certificate and the certifier's key; every file an
// attacker could hand over — w edited, the loss kind changed, w = 1e308, a
// certificate signed by another key, the release of another certificate —
// is refused before any row is written, and --unverified uses the file
// unchecked only with a warning.
func TestReleaseUsedOnlyVerified(t *testing.T) {
	dir := t.TempDir()
	files := dataFiles(t, dir)
	csvFile := files["csv"][0]
	st := filepath.Join(dir, "model")
	out, err := runCLI(t, "init", "--store", st, "--tau", "3", "--data", csvFile, "--label", "label", "--id", "name", "--classes", "0,1")
	require.NoError(t, err, out)
	out, err = runCLI(t, "ingest", "--store", st, "--data", csvFile)
	require.NoError(t, err, out)
	key, other := filepath.Join(dir, "certifier"), filepath.Join(dir, "other")
	for _, k := range []string{key, other} {
		_, err = runCLI(t, "keygen", "--out", k)
		require.NoError(t, err)
	}
	rel, cert := filepath.Join(dir, "r.json"), filepath.Join(dir, "c.json")
	out, err = runCLI(t, "release", "--store", st, "--epsilon", "1", "--delta", "1e-5", "--out", rel, "--certificate", cert, "--key", key+".key")
	require.NoError(t, err, out)
	good := mustRead(t, rel)

	predict := func(relFile string, trust ...string) (string, error) {
		return runCLI(t, append(append([]string{"predict", "--release", relFile}, trust...), "--data", csvFile)...)
	}
	evaluate := func(relFile string, trust ...string) (string, error) {
		return runCLI(t, append(append([]string{"evaluate", "--release", relFile}, trust...), "--data", csvFile)...)
	}
	checked := []string{"--certificate", cert, "--public-key", key + ".pub"}
	want, err := predict(rel, checked...)
	require.NoError(t, err, want)
	require.Contains(t, want, "id,label")
	_, err = evaluate(rel, checked...)
	require.NoError(t, err)

	forged := func(name, old, new string) string {
		t.Helper()
		require.Contains(t, string(good), old)
		p := filepath.Join(dir, name)
		require.NoError(t, os.WriteFile(p, []byte(strings.Replace(string(good), old, new, 1)), 0o644))
		return p
	}
	wEdited := filepath.Join(dir, "w.json")
	for name, tc := range map[string]struct {
		rel   string
		trust []string
		want  string
	}{
		"no certificate":          {rel, nil, "--certificate"},
		"no public key":           {rel, []string{"--certificate", cert}, "--public-key"},
		"other key":               {rel, []string{"--certificate", cert, "--public-key", other + ".pub"}, "INVALID"},
		"loss kind changed":       {forged("kind.json", `"kind": "logistic"`, `"kind": "quadratic"`), checked, "INVALID"},
		"w huge":                  {forged("huge.json", `"w": [`, `"w": [1e308, `), checked, "INVALID"},
		"unverified with cert":    {rel, append([]string{"--unverified"}, checked...), "--unverified"},
		"two certificates":        {rel, []string{"--certificate", cert, "--certificate", cert, "--public-key", key + ".pub"}, "--certificate"},
		"certificate is the file": {rel, []string{"--certificate", rel, "--public-key", key + ".pub"}, "--certificate"},
	} {
		t.Run(name, func(t *testing.T) {
			out, err := predict(tc.rel, tc.trust...)
			require.ErrorContains(t, err, tc.want, out)
			require.NotContains(t, out, "id,label", "nothing is predicted from a file that does not verify")
			_, err = evaluate(tc.rel, tc.trust...)
			require.ErrorContains(t, err, tc.want)
		})
	}
	// A w edited within its length: the digest refuses it.
	require.NoError(t, os.WriteFile(wEdited, []byte(editFirstW(t, good)), 0o644))
	_, err = predict(wEdited, checked...)
	require.ErrorContains(t, err, "INVALID")

	// --unverified: used as it is, with a warning on standard error.
	_, err = runCLI(t, "predict", "--store", st, "--unverified", "--data", csvFile)
	require.ErrorContains(t, err, "only with --release")
	o, e := predictBoth(t, "--release", wEdited, "--unverified", "--data", csvFile)
	require.Contains(t, o, "id,label")
	require.Contains(t, e, "WARNING: --unverified")
	require.Contains(t, e, "unchecked file")
}

// editFirstW changes the first value of a release's w.
func editFirstW(t *testing.T, release []byte) string {
	t.Helper()
	s := string(release)
	i := strings.Index(s, `"w": [`)
	require.GreaterOrEqual(t, i, 0)
	j := i + len(`"w": [`)
	k := strings.IndexAny(s[j:], ",]")
	return s[:j] + "\n  0.123456789" + s[j+k:]
}

// predictBoth runs predict and returns its standard output and error.
func predictBoth(t *testing.T, args ...string) (string, string) {
	t.Helper()
	root := newRootCmd()
	var out, errs strings.Builder
	root.SetOut(&out)
	root.SetErr(&errs)
	root.SetArgs(append([]string{"predict"}, args...))
	require.NoError(t, root.Execute(), errs.String())
	return out.String(), errs.String()
}
