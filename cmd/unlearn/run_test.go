package main

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"unlearn/experiment"
)

func readRecord(t *testing.T, path string) *experiment.Record {
	t.Helper()
	r, err := readRecordFile(path)
	require.NoError(t, err)
	return r
}

// TestRunReproducesFromRecord checks that a run record holds everything
// needed to reproduce its series from the stream file: re-running with the
// record's U (--deleted) and probes (--probes) gives the same series bit
// for bit.
func TestRunReproducesFromRecord(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "q.jsonl")
	out, err := runCLI(t, "gen", "--kind", "quadratic", "--events", "240", "--d", "5", "--seed", "3", "--out", file)
	require.NoError(t, err, "gen output:\n%s", out)
	first := filepath.Join(dir, "first.json")
	out, err = runCLI(t, "run", "--stream", file, "--t-del", "100", "--horizon", "140", "--tau", "4", "--eta", "0.1",
		"--mode", "random", "--seed", "7", "--mq", "6", "--zero-timing", "--out", first)
	require.NoError(t, err, "run output:\n%s", out)
	require.Contains(t, out, "| Oracle replay |", "run output lacks the summary table")
	require.Contains(t, out, "U=[", "run output lacks U")
	rec := readRecord(t, first)
	sum := sha256File(t, file)
	assert.Equal(t, file, rec.Source.File, "source file")
	assert.Equal(t, sum, rec.Source.SHA256, "source SHA-256")
	assert.Equal(t, 240, rec.Source.T, "source T")
	require.Len(t, rec.U, 5, "U")
	require.NotNil(t, rec.ProbeSpec, "probe_spec")
	require.Equal(t, 6, rec.NumProbes(), "probes")
	require.NotNil(t, rec.Methods[0].Series, "series")
	require.Equal(t, "first.series.csv", rec.SeriesFile, "series file")

	probes := filepath.Join(dir, "probes.json")
	pv, err := rec.ProbeVectors()
	require.NoError(t, err)
	pj, err := json.Marshal(pv)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(probes, pj, 0o600))
	ids := make([]string, len(rec.U))
	for i, id := range rec.U {
		ids[i] = strconv.FormatInt(id, 10)
	}
	second := filepath.Join(dir, "second.json")
	out, err = runCLI(t, "run", "--stream", file, "--t-del", "100", "--horizon", "140", "--tau", "4", "--eta", "0.1",
		"--deleted", strings.Join(ids, ","), "--probes", probes, "--zero-timing", "--out", second)
	require.NoError(t, err, "second run output:\n%s", out)
	again := readRecord(t, second)
	require.Equal(t, rec.U, again.U, "U")
	for i, m := range rec.Methods {
		var a, b bytes.Buffer
		require.NoError(t, json.NewEncoder(&a).Encode(m.Series))
		require.NoError(t, json.NewEncoder(&b).Encode(again.Methods[i].Series))
		if !bytes.Equal(a.Bytes(), b.Bytes()) {
			t.Errorf("%s: series differ when reproduced from the record's U and probes", m.Name)
		}
	}
}

// sha256File hashes path independently of experiment.StreamFile, so that
// the record's checksum is checked against a second implementation.
func sha256File(t *testing.T, path string) string {
	t.Helper()
	sum := sha256.Sum256(readFile(t, path))
	return hex.EncodeToString(sum[:])
}

func TestRunGeneratedAndSeriesCSV(t *testing.T) {
	csvFile := filepath.Join(t.TempDir(), "series.csv")
	out, err := runCLI(t, "run", "--kind", "logistic", "--kappa", "100", "--seed", "2", "--events", "200", "--d", "4",
		"--t-del", "80", "--tau", "5", "--mode", "high-gradient", "--mq", "4", "--series-csv", csvFile)
	require.NoError(t, err, "run output:\n%s", out)
	lines := strings.Split(strings.TrimSpace(string(readFile(t, csvFile))), "\n")
	// Horizon 0 means T − t_del = 120: 121 rows per method, 9 methods.
	assert.Equal(t, 1+9*121, len(lines), "series CSV lines")
}

func TestRunFlagErrors(t *testing.T) {
	file := filepath.Join(t.TempDir(), "q.jsonl")
	_, err := runCLI(t, "gen", "--events", "100", "--d", "3", "--out", file)
	require.NoError(t, err)
	tests := []struct {
		name string
		args []string
		flag string
	}{
		{"horizon beyond the stream", []string{"--stream", file, "--t-del", "50", "--horizon", "51"}, "--horizon"},
		{"unknown mode", []string{"--stream", file, "--t-del", "50", "--mode", "newest"}, "--mode"},
		{"deleted and mode", []string{"--stream", file, "--t-del", "50", "--deleted", "3", "--mode", "old"}, "--deleted"},
		{"deleted id after t_del", []string{"--stream", file, "--t-del", "50", "--deleted", "60"}, "--deleted"},
		{"generator flag with a file", []string{"--stream", file, "--kappa", "100"}, "--kappa"},
		{"tau", []string{"--stream", file, "--t-del", "50", "--tau", "0"}, "--tau"},
		{"probes file", []string{"--stream", file, "--t-del", "50", "--probes", file}, "--probes"},
		{"generated horizon", []string{"--events", "100", "--t-del", "90", "--horizon", "20"}, "--horizon"},
		{"huge mq", []string{"--stream", file, "--t-del", "50", "--mq", "1000000000000"}, "--mq"},
		{"huge tau", []string{"--stream", file, "--t-del", "50", "--tau", "100000000000"}, "--tau"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := runCLI(t, append([]string{"run"}, tt.args...)...)
			require.ErrorContains(t, err, tt.flag, "the error must name the flag")
		})
	}
}
