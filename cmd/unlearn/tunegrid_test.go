package main

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// TestGridEdgeWarnings: a best value on an edge of its grid is named with
// the flag and the direction to extend; an inner best, or a grid of one
// value, says nothing.
func TestGridEdgeWarnings(t *testing.T) {
	etas, lambdas := []float64{0.3, 0.03, 0.1}, []float64{1e-4, 1e-3, 1e-2}
	w := gridEdgeWarnings(etas, lambdas, tuneRow{Eta: 0.3, Lambda: 1e-4})
	require.Equal(t, []string{
		"the best η = 0.3 is the largest of --etas: the best may be larger; extend the grid upwards (add e.g. 0.9)",
		"the best λ = 0.0001 is the smallest of --lambdas: the best may be smaller; extend the grid downwards (add e.g. 3.3e-05)",
	}, w)
	w = gridEdgeWarnings(etas, lambdas, tuneRow{Eta: 0.03, Lambda: 1e-2})
	require.Len(t, w, 2)
	require.Contains(t, w[0], "smallest of --etas")
	require.Contains(t, w[1], "largest of --lambdas")
	require.Empty(t, gridEdgeWarnings(etas, lambdas, tuneRow{Eta: 0.1, Lambda: 1e-3}))
	require.Empty(t, gridEdgeWarnings([]float64{0.1}, []float64{1e-3, 1e-3}, tuneRow{Eta: 0.1, Lambda: 1e-3}))
}

// TestTuneWarnsOnEdge: tune says so on standard error when its pick is on
// the grid's edge; status and release give features and parameters apart.
func TestTuneWarnsOnEdgeAndModelSize(t *testing.T) {
	dir := t.TempDir()
	t.Chdir(dir)
	files := dataFiles(t, dir)
	csv := files["csv"][0]
	_, stderr, err := runCLISplit(t, "tune", "--data", csv, "--label", "label", "--id", "name", "--etas", "1e-9,2e-9", "--lambdas", "0.01", "--profile", "practitioner")
	require.NoError(t, err)
	require.Contains(t, stderr, "warning: the best η = 2e-09 is the largest of --etas")
	_, err = runCLI(t, "init", "--store", "m", "--data", csv, "--label", "label", "--id", "name", "--profile", "practitioner")
	require.NoError(t, err)
	_, err = runCLI(t, "ingest", "--store", "m", "--data", csv, "--label", "label", "--id", "name")
	require.NoError(t, err)
	out, err := runCLI(t, "status", "--store", "m")
	require.NoError(t, err)
	require.Contains(t, out, "3 features, 4 parameters")
	out, err = runCLI(t, "release", "--store", "m", "--epsilon", "1", "--delta", "1e-5", "--out", "r.json", "--certificate", "c.json")
	require.NoError(t, err)
	require.Contains(t, out, "4 parameters\n")
	require.Contains(t, out, "model        3 features, 4 parameters")
}
