package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"unlearn/experiment"
	"unlearn/report"
)

// bench of a whole grid writes the tightness of the certified α into the
// results folder and its report (tables and figure); the five summary
// tables are those of a run without it; a shard writes none.
func TestBenchWritesTightness(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "quick")
	out, err := runCLI(t, "bench", "--quick", "--zero-timing", "--out", dir)
	require.NoError(t, err, out)
	assert.Contains(t, out, "tightness: 8 configurations with the certifiable learner")
	assert.NotContains(t, out, "### Tightness", "stdout holds the five summary tables only")
	ts, err := experiment.ReadTightnessFiles(dir)
	require.NoError(t, err)
	require.Len(t, ts, 1, "the quick grid has no isotropic companion")
	for _, r := range ts[0].Records {
		for _, m := range r.Methods {
			assert.GreaterOrEqual(t, m.Alpha, m.Deviation, "%s %s", r.ID, m.Name)
		}
	}
	for _, kind := range []string{"quadratic", "logistic"} {
		_, err := os.Stat(filepath.Join(dir, "tables", "tightness-quick-"+kind+".csv"))
		require.NoError(t, err)
	}
	md := string(readFile(t, filepath.Join(dir, reportDirName, report.MarkdownFile)))
	assert.Contains(t, md, "Tightness of the certified α, grid \"quick\", quadratic streams")
	assert.Contains(t, md, "figures/"+report.TightnessFigureID+".png")
	tables := string(readFile(t, filepath.Join(dir, "tables.md")))
	assert.False(t, strings.Contains(tables, "Tightness"), "tables.md holds the benchmark's tables only")

	// unlearn report on the folder reads it back.
	rep := filepath.Join(t.TempDir(), "rep")
	out, err = runCLI(t, "report", dir, "--out", rep)
	require.NoError(t, err, out)
	assert.Contains(t, string(readFile(t, filepath.Join(rep, report.MarkdownFile))), "Tightness of the certified α")

	shard := filepath.Join(t.TempDir(), "shard")
	out, err = runCLI(t, "bench", "--quick", "--zero-timing", "--no-report", "--shard", "0/2", "--out", shard)
	require.NoError(t, err, out)
	_, err = os.Stat(filepath.Join(shard, experiment.TightnessFile))
	require.ErrorIs(t, err, os.ErrNotExist)
}
