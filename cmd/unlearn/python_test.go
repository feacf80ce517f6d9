package main

import (
	"bytes"
	"encoding/csv"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// pythonWithNumPy returns a Python 3 interpreter that imports NumPy, or ""
// (the test is then skipped: .ci/run installs Debian's python3-numpy).
func pythonWithNumPy() string {
	candidates := []string{"/usr/bin/python3"}
	if p, err := exec.LookPath("python3"); err == nil {
		candidates = append([]string{p}, candidates...)
	}
	for _, p := range candidates {
		if exec.Command(p, "-c", "import numpy").Run() == nil {
			return p
		}
	}
	return ""
}

// applyPy returns the Python program of docs/getting-started.md's "Use
// your model" section: its first python code block.
func applyPy(t *testing.T) string {
	t.Helper()
	doc := string(mustRead(t, filepath.Join("..", "..", "docs", "getting-started.md")))
	_, section, ok := strings.Cut(doc, "## 8. Use your model")
	require.True(t, ok, "the section is gone")
	_, code, ok := strings.Cut(section, "```python\n")
	require.True(t, ok, "the section has no python block")
	code, _, ok = strings.Cut(code, "```")
	require.True(t, ok)
	return code
}

// TestGettingStartedPython runs the documented Python program on a release
// of each format, of the practitioner's profile (intercepts,
// standardization, the average) and of multinomial models, and checks
// that it predicts what unlearn predict does:
// the same ids and labels, probabilities within 1e-12 (NumPy sums x @ w in
// another order).
func TestGettingStartedPython(t *testing.T) {
	py := pythonWithNumPy()
	if py == "" {
		t.Skip("no python3 with NumPy")
	}
	dir := t.TempDir()
	program := filepath.Join(dir, "apply.py")
	require.NoError(t, os.WriteFile(program, []byte(applyPy(t)), 0o644))
	files := dataFiles(t, dir)
	idx := filepath.Join("..", "..", "dataset", "testdata", "fashion-t10k-16-images-idx3-ubyte.gz")
	sp := species(t, dir, 60)
	for name, c := range map[string][]string{
		"idx":    {idx, "--classes", "0,6", "--scale", "7140"},
		"csv":    {files["csv"][0], "--label", "label", "--id", "name", "--classes", "0,1"},
		"libsvm": {files["libsvm"][0], "--d", "12"},
		// The practitioner's profile: intercept, standardization and the
		// average in the release.
		"idx practitioner": {idx, "--classes", "0,6", "--profile", "practitioner"},
		"csv multinomial":  {sp, "--label", "species", "--id", "name", "--kind", "multinomial", "--classes", "all"},
		"csv multinomial practitioner": {sp, "--label", "species", "--id", "name", "--kind", "multinomial", "--classes", "all",
			"--profile", "practitioner"},
		"idx multinomial practitioner": {idx, "--kind", "multinomial", "--classes", "all", "--profile", "practitioner"},
	} {
		t.Run(name, func(t *testing.T) {
			st := filepath.Join(dir, "store-"+strings.ReplaceAll(name, " ", "-"))
			o, err := runCLI(t, append([]string{"init", "--store", st, "--tau", "3", "--data"}, c...)...)
			require.NoError(t, err, o)
			o, err = runCLI(t, "ingest", "--store", st, "--data", c[0])
			require.NoError(t, err, o)
			rel := filepath.Join(dir, strings.ReplaceAll(name, " ", "-")+".release.json")
			o, err = runCLI(t, "release", "--store", st, "--epsilon", "1", "--delta", "1e-5", "--out", rel, "--certificate", rel+".cert")
			require.NoError(t, err, o)
			want := readCSV(t, predictOut(t, "--release", rel, "--unverified", "--data", c[0]))

			cmd := exec.Command(py, program, rel, c[0])
			var stderr bytes.Buffer
			cmd.Stderr = &stderr
			out, err := cmd.Output()
			require.NoError(t, err, stderr.String())
			got := readCSV(t, string(out))
			require.Equal(t, want[0], got[0], "the header row")
			require.Len(t, got, len(want))
			for i := 1; i < len(want); i++ {
				require.Equal(t, want[i][:2], got[i][:2], "row %d: id and label", i)
				for k := 2; k < len(want[i]); k++ {
					a, err := strconv.ParseFloat(want[i][k], 64)
					require.NoError(t, err)
					b, err := strconv.ParseFloat(got[i][k], 64)
					require.NoError(t, err)
					require.LessOrEqual(t, math.Abs(a-b), 1e-12, "row %d, %s", i, want[0][k])
				}
			}
		})
	}
}

func readCSV(t *testing.T, s string) [][]string {
	t.Helper()
	recs, err := csv.NewReader(strings.NewReader(s)).ReadAll()
	require.NoError(t, err)
	return recs
}
