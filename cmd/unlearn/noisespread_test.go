package main

import (
	"encoding/csv"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/stretchr/testify/require"

	"unlearn/certify"
	"unlearn/model"
)

// TestEvaluateNoiseOnScores: the noised release an approximate forget of
// a certifiable-profile store publishes, evaluated with its certificate,
// reports the observed spread of its scores xᵀw and, beside it, the spread
// of the noise's effect xᵀn that the certificate's σ implies — σ·√(mean
// ‖x‖²) over the held-out rows, ‖x‖ of the row as the model scores it
// (with the intercept's 1), computed here from the CSV independently — and
// its 99th percentile, which lies between the smallest and the largest
// row's own; the forget prints the bound σ·B of every accepted row in the
// same terms, and release, while the request is pending, refuses and
// names that release.
func TestEvaluateNoiseOnScores(t *testing.T) {
	dir := t.TempDir()
	data := practitionerCSV(t, "data.csv", 80, nil)
	st, key := filepath.Join(dir, "model"), filepath.Join(dir, "certifier")
	flags := []string{"--label", "y", "--id", "id"}
	out, err := runCLI(t, append([]string{"init", "--store", st, "--data", data, "--profile", "certifiable", "--sample-bound", "5000"}, flags...)...)
	require.NoError(t, err, out)
	out, err = runCLI(t, append([]string{"ingest", "--store", st, "--data", data}, flags...)...)
	require.NoError(t, err, out)
	_, err = runCLI(t, "keygen", "--out", key)
	require.NoError(t, err)
	out, err = runCLI(t, "forget", "--store", st, "--ids", "40", "--max-replay", "1", "--intervention", "noop",
		"--epsilon", "1", "--delta", "1e-5", "--key", key+".key", "--insecure-seeded", "3", "--no-ledger")
	require.NoError(t, err, out)
	require.Contains(t, out, "kept only noised: release 1 (")
	require.Contains(t, out, ", derived; σ = ")
	require.Contains(t, out, "sd(xᵀn) ≤ σ·B")
	rel, cert := filepath.Join(dir, "r.json"), filepath.Join(dir, "c.json")
	_, err = runCLI(t, "release", "--store", st, "--epsilon", "1", "--delta", "1e-5", "--out", rel, "--certificate", cert,
		"--key", key+".key", "--insecure-seeded", "3", "--no-ledger")
	require.ErrorContains(t, err, "approximate forgets are pending")
	require.ErrorContains(t, err, "'unlearn releases --get 1'")
	_, err = runCLI(t, "releases", "--store", st, "--get", "1", "--out", rel, "--certificate", cert)
	require.NoError(t, err)
	c, err := certify.ParseCertificate(mustRead(t, cert))
	require.NoError(t, err)

	out, stderr, err := runCLISplit(t, append([]string{"evaluate", "--store", st, "--release", rel, "--certificate", cert, "--public-key", key + ".pub", "--data", data, "--json"}, flags...)...)
	require.NoError(t, err, stderr)
	var rep model.Report
	require.NoError(t, json.Unmarshal([]byte(out), &rep))
	require.Len(t, rep.Models, 3)
	for _, m := range rep.Models[1:] {
		require.Nil(t, m.NoiseOnScores, "%s: no noise", m.Model)
		require.Greater(t, m.Scores.SD, 0.0)
	}
	r := rep.Models[0]
	require.Equal(t, c.SigmaApplied, r.Sigma)
	require.NotNil(t, r.NoiseOnScores)

	// ‖x‖² + 1 of every row, read from the CSV itself.
	f, err := os.Open(data)
	require.NoError(t, err)
	defer f.Close()
	rows, err := csv.NewReader(f).ReadAll()
	require.NoError(t, err)
	var sum, lo, hi float64
	lo = math.Inf(1)
	for _, row := range rows[1:] {
		n2 := 1.0
		for _, v := range row[1:4] {
			x, err := strconv.ParseFloat(v, 64)
			require.NoError(t, err)
			n2 += x * x
		}
		sum += n2
		lo, hi = min(lo, math.Sqrt(n2)), max(hi, math.Sqrt(n2))
	}
	sd := c.SigmaApplied * math.Sqrt(sum/float64(len(rows)-1))
	require.InEpsilon(t, sd, r.NoiseOnScores.SD, 1e-12)
	require.GreaterOrEqual(t, r.NoiseOnScores.P99, model.P99Factor*c.SigmaApplied*lo*(1-1e-9))
	require.LessOrEqual(t, r.NoiseOnScores.P99, model.P99Factor*c.SigmaApplied*hi*(1+1e-9))

	out, err = runCLI(t, append([]string{"evaluate", "--store", st, "--release", rel, "--certificate", cert, "--public-key", key + ".pub", "--data", data}, flags...)...)
	require.NoError(t, err, out)
	require.Contains(t, out, "xᵀn the noise's effect implied by the certificate's σ")
	require.Contains(t, out, "sd(xᵀn)")
}
