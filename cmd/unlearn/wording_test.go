package main

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestValueWords: a refused flag value is said in words, never with
// strconv's or time's; the element of a list is named in the list.
func TestValueWords(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"forget", "--store", "m", "--ids", "2x"}, `--ids: "2x" is not a whole number`},
		{[]string{"forget", "--store", "m", "--ids", "1,2x"}, `--ids: "2x" is not a whole number (in "1,2x")`},
		{[]string{"forget", "--store", "m", "--ids", "99999999999999999999"}, `--ids: "99999999999999999999" is out of range`},
		{[]string{"sigma", "--alpha", "one", "--epsilon", "1", "--delta", "1e-5"}, `--alpha: "one" is not a number`},
		{[]string{"serve", "--store", "m", "--forget-within", "10"}, `--forget-within: "10" is not a duration: write a number with its unit, e.g. 10m`},
		{[]string{"serve", "--store", "m", "--write-wait", "5 s"}, `--write-wait: "5 s" is not a duration`},
	} {
		_, err := runCLI(t, c.args...)
		require.Error(t, err, c.args)
		require.Equal(t, "", goWordIn(err.Error()), err.Error())
		require.Empty(t, goNamesIn(err.Error()), err.Error())
		require.Contains(t, err.Error(), c.want)
		var ue usageError
		require.True(t, errors.As(err, &ue), "a bad flag is a usage error (exit status 2)")
	}
}

// goWordIn returns the first of Go's own words in msg, or "".
func goWordIn(msg string) string {
	for _, w := range goWordsInMessages {
		if strings.Contains(msg, w) {
			return w
		}
	}
	return ""
}

// TestPlainText: what the libraries say in Go's words is rewritten.
func TestPlainText(t *testing.T) {
	for in, want := range map[string]string{
		`x: strconv.ParseInt: parsing "2x": invalid syntax`:                                    `x: "2x" is not a whole number`,
		`x: strconv.ParseFloat: parsing "a": invalid syntax`:                                   `x: "a" is not a number`,
		`x: strconv.ParseFloat: parsing "1e999": value out of range`:                           `x: "1e999" is out of range`,
		`time: missing unit in duration "10"`:                                                  `"10" is not a duration: write a number with its unit, e.g. 10m, 90s, 1h30m or 500ms`,
		`r.json: malformed release: json: unknown field "toolkit"`:                             `r.json: malformed release: unknown field "toolkit"`,
		`json: cannot unmarshal string into Go struct field cert.alpha.value of type float64`:  `field "alpha.value": a JSON string where a number is wanted`,
		`json: cannot unmarshal object into Go value of type []float64`:                        `a JSON object where a list of numbers is wanted`,
		`unlearn: store: release: bound: rho = 61502.131947125235: no contraction: factor ≥ 1`: `release: the contraction factor ρ = 6.2e4 is not below 1: the update map does not contract, so no bound on the distance holds`,
		`certify: verify: release_sha256: digest mismatch`:                                     `the certificate does not check at its field "release_sha256": digest mismatch`,
		`unlearn: dataset: open d.csv: no such file or directory`:                              `cannot open d.csv: no such file or directory`,
		`experiment: open s.jsonl: permission denied`:                                          `cannot open s.jsonl: permission denied`,
		`noise: sigma = 1e-300: result out of floating-point range`:                            `the noise scale σ = 1e-300: result out of floating-point range`,
		`forget: applied noop: Release refuses until the request is resolved`:                  `forget: applied noop: a release is refused until the request is resolved`,
		`--ids: store: world A: forget: store: forget: id 0 was never ingested`:                `--ids: world A: forget: id 0 was never ingested`,
		`--store: m is a directory`:                                                            `--store: m is a directory`,
	} {
		require.Equal(t, want, plainText(in), in)
	}
}

// TestFileKinds: a file of another of the toolkit's kinds given to a flag
// is named as what it is; a directory where a file is wanted names the
// flag (and a store's, --store); a file given as --store says what it is.
func TestFileKinds(t *testing.T) {
	dir := t.TempDir()
	t.Chdir(dir)
	files := dataFiles(t, dir)
	run := func(args ...string) {
		t.Helper()
		out, err := runCLI(t, args...)
		require.NoError(t, err, out)
	}
	run("train", "--data", files["csv"][0], "--label", "label", "--id", "name", "--out", "s.json")
	run("init", "--store", "m", "--data", files["csv"][0], "--label", "label", "--id", "name")
	run("release", "--store", "m", "--epsilon", "1", "--delta", "1e-5", "--out", "r.json", "--certificate", "c.json", "--no-ledger", "--insecure-seeded", "1")
	run("keygen", "--out", "k")
	csv := files["csv"][0]
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"predict", "--release", "c.json", "--data", csv}, "--release: c.json is a certificate (unlearn release --certificate), not a release"},
		{[]string{"predict", "--state", "r.json", "--data", csv}, "--state: r.json is a release (unlearn release --out, unlearn certify --out), not a state snapshot"},
		{[]string{"predict", "--state", "m", "--data", csv}, "--state: m is a directory, not a state snapshot; it is a model store: give it as --store m"},
		{[]string{"predict", "--store", "c.json", "--data", csv}, "--store: c.json is a certificate (unlearn release --certificate), not a model store"},
		{[]string{"predict", "--store", "m", "--data", "s.json"}, "--data: s.json is a state snapshot (unlearn train --out, unlearn export), not a data file (CSV, LIBSVM or IDX) or an event stream"},
		{[]string{"predict", "--store", "m", "--data", "m"}, "--data: m is a directory, not a data file"},
		{[]string{"verify", "--certificate", "r.json", "--release", "r.json", "--public-key", "k.pub"}, "--certificate: r.json is a release"},
		{[]string{"verify", "--certificate", "c.json", "--release", "r.json", "--public-key", "k.key"}, "--public-key: k.key is a secret key (unlearn keygen), not a public key"},
		{[]string{"evaluate", "--state", "s.json", "--stream", "c.json"}, "--stream: c.json is a certificate"},
		{[]string{"forget", "--store", "nosuch", "--ids", "1"}, "create one with unlearn init --store nosuch"},
		{[]string{"predict", "--store", "m", "--data", "nosuch.csv"}, "nosuch.csv"},
		{[]string{"verify", "--certificate", "c.json", "--release", "nosuch.rel", "--integrity-only"}, "cannot open nosuch.rel"},
	} {
		_, err := runCLI(t, c.args...)
		require.Error(t, err, c.args)
		require.Contains(t, err.Error(), c.want, c.args)
		require.Equal(t, "", goWordIn(err.Error()), err.Error())
		require.Empty(t, goNamesIn(err.Error()), err.Error())
	}
	// The right kinds pass the check.
	_, err := os.Stat(filepath.Join(dir, "k.pub"))
	require.NoError(t, err)
	run("verify", "--certificate", "c.json", "--release", "r.json", "--integrity-only")
}
