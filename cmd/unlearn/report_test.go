package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"unlearn/experiment"
	"unlearn/report"
)

// exists reports whether path exists.
func exists(t *testing.T, path string) bool {
	t.Helper()
	_, err := os.Stat(path)
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	return err == nil
}

func readManifest(t *testing.T, dir string) experiment.Manifest {
	t.Helper()
	var m experiment.Manifest
	require.NoError(t, json.Unmarshal(readFile(t, filepath.Join(dir, "manifest.json")), &m))
	return m
}

func TestBenchWritesReport(t *testing.T) {
	dir := t.TempDir()
	res := filepath.Join(dir, "results")
	out, err := runCLI(t, "bench", "--quick", "--zero-timing", "--out", res)
	require.NoError(t, err, "bench output:\n%s", out)
	t.Run("manifest records the command and version", func(t *testing.T) {
		p := readManifest(t, res).Provenance
		want := []string{"unlearn", "bench", "--out", res, "--quick", "--zero-timing"}
		require.NotNil(t, p, "provenance")
		require.Equal(t, want, p.Command, "provenance: command")
		require.Equal(t, version, p.Version, "provenance: version")
	})
	t.Run("report by default", func(t *testing.T) {
		md := string(readFile(t, filepath.Join(res, "report", report.MarkdownFile)))
		for _, want := range []string{"unlearn bench --out " + res + " --quick --zero-timing", "unlearn " + version,
			"### Global comparison", "bench-trajectories", "bench-efficiency-quadratic", "bench-modes"} {
			if !strings.Contains(md, want) {
				t.Errorf("report.md lacks %q", want)
			}
		}
		assert.True(t, exists(t, filepath.Join(res, "report", report.HTMLFile)), "report.html is missing")
		assert.True(t, exists(t, filepath.Join(res, "report", "figures", "bench-modes.png")), "a figure is missing")
		// The four figures of the benchmark's records, and the tightness
		// figure of the certified α (bench-tightness).
		assert.Contains(t, out, "report: 5 figures", "bench did not say it wrote the report")
		assert.True(t, exists(t, filepath.Join(res, "report", "figures", "bench-tightness.png")), "the tightness figure is missing")
	})
	t.Run("the representative configuration keeps its series", func(t *testing.T) {
		series, err := filepath.Glob(filepath.Join(res, "series", "*.csv"))
		require.NoError(t, err)
		require.Len(t, series, 1, "series files")
		require.Contains(t, series[0], "quadratic-tau10-recent-kappa10-seed1", "series file")
	})
	t.Run("report command into another folder", func(t *testing.T) {
		other := filepath.Join(dir, "elsewhere")
		out, err := runCLI(t, "report", res, "--out", other)
		require.NoError(t, err, "report output:\n%s", out)
		assert.True(t, exists(t, filepath.Join(other, report.HTMLFile)), "report --out wrote no report.html")
		// The same records give the same report, byte for byte.
		for _, f := range []string{report.MarkdownFile, report.HTMLFile, "figures/bench-trajectories.svg"} {
			if string(readFile(t, filepath.Join(other, f))) != string(readFile(t, filepath.Join(res, "report", f))) {
				t.Errorf("%s differs between bench's report and the report command's", f)
			}
		}
	})
	t.Run("no-report", func(t *testing.T) {
		d := filepath.Join(dir, "bare")
		out, err := runCLI(t, "bench", "--quick", "--zero-timing", "--no-report", "--shard", "0/4", "--out", d)
		require.NoError(t, err, "bench output:\n%s", out)
		assert.False(t, exists(t, filepath.Join(d, "report")), "bench --no-report wrote a report")
	})
}

func TestReportOfARunRecord(t *testing.T) {
	dir := t.TempDir()
	rec := filepath.Join(dir, "run.json")
	out, err := runCLI(t, "run", "--kind", "logistic", "--d", "5", "--events", "200", "--t-del", "80", "--tau", "3",
		"--mq", "4", "--zero-timing", "--out", rec)
	require.NoError(t, err, "run output:\n%s", out)
	out, err = runCLI(t, "report", rec)
	require.NoError(t, err, "report output:\n%s", out)
	md := string(readFile(t, filepath.Join(dir, "run-report", report.MarkdownFile)))
	for _, want := range []string{"unlearn run --d 5 --events 200 --kind logistic --mq 4 --out " + rec + " --t-del 80 --tau 3 --zero-timing",
		"bench-trajectories", "stream 1, deletions 1, probes 1"} {
		if !strings.Contains(md, want) {
			t.Errorf("report of a run record lacks %q", want)
		}
	}
}

func TestReportErrors(t *testing.T) {
	dir := t.TempDir()
	notResults := filepath.Join(dir, "notes")
	require.NoError(t, os.Mkdir(notResults, 0o755))
	bad := filepath.Join(dir, "bad.json")
	require.NoError(t, os.WriteFile(bad, []byte(`{"format":"something-else"}`), 0o644))
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"missing path", []string{"report", filepath.Join(dir, "nothing")}, "no such file"},
		{"folder without manifest", []string{"report", notResults}, "manifest.json"},
		{"not a record", []string{"report", bad}, "format"},
		{"no argument", []string{"report"}, "arg"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := runCLI(t, tt.args...)
			require.ErrorContains(t, err, tt.want)
		})
	}
}

func TestMergeRecordsParts(t *testing.T) {
	dir := t.TempDir()
	var parts []string
	for k := range 2 {
		d := filepath.Join(dir, "s"+string(rune('0'+k)))
		out, err := runCLI(t, "bench", "--quick", "--zero-timing", "--no-report", "--shard", string(rune('0'+k))+"/2", "--out", d)
		require.NoError(t, err, "bench output:\n%s", out)
		parts = append(parts, d)
	}
	merged := filepath.Join(dir, "merged")
	// --no-report: the report is bench's (writeResultsReport, tested
	// above), and drawing is slow under the race detector.
	out, err := runCLI(t, append([]string{"merge", "--no-report", "--out", merged}, parts...)...)
	require.NoError(t, err, "merge output:\n%s", out)
	p := readManifest(t, merged).Provenance
	require.NotNil(t, p, "merged provenance")
	require.Equal(t, "merge", p.Command[1], "merged provenance: command")
	require.Len(t, p.Parts, 2, "merged provenance: parts")
	require.Contains(t, p.Parts[1].Command, "1/2", "merged provenance: the second shard's command")
	assert.False(t, exists(t, filepath.Join(merged, "report")), "merge --no-report wrote a report")
}

// TestReportOfAFileRun: the report of a run on a stream file shows the
// seed the file's header records, not the zero Seed of the record's empty
// Config.Stream (issue 14: it showed "stream 0").
func TestReportOfAFileRun(t *testing.T) {
	dir := t.TempDir()
	streamFile := filepath.Join(dir, "q.jsonl")
	rec := filepath.Join(dir, "run.json")
	_, err := runCLI(t, "gen", "--events", "120", "--d", "4", "--seed", "7", "--out", streamFile)
	require.NoError(t, err)
	out, err := runCLI(t, "run", "--stream", streamFile, "--t-del", "60", "--tau", "3", "--mq", "4", "--seed", "2",
		"--zero-timing", "--out", rec)
	require.NoError(t, err, "run output:\n%s", out)
	_, err = runCLI(t, "report", rec)
	require.NoError(t, err)
	md := string(readFile(t, filepath.Join(dir, "run-report", report.MarkdownFile)))
	assert.Contains(t, md, "stream 7 (from the file's header), deletions 2, probes 2")
	assert.NotContains(t, md, "stream 0")
}
