package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"unlearn/experiment"
)

func readRecord(t *testing.T, path string) *experiment.Record {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	r, err := experiment.ReadRecord(f)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// TestRunReproducesFromRecord checks that a run record holds everything
// needed to reproduce its series from the stream file: re-running with the
// record's U (--deleted) and probes (--probes) gives the same series bit
// for bit.
func TestRunReproducesFromRecord(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "q.jsonl")
	if out, err := runCLI(t, "gen", "--kind", "quadratic", "--events", "240", "--d", "5", "--seed", "3", "--out", file); err != nil {
		t.Fatalf("gen: %v\n%s", err, out)
	}
	first := filepath.Join(dir, "first.json")
	out, err := runCLI(t, "run", "--stream", file, "--t-del", "100", "--horizon", "140", "--tau", "4", "--eta", "0.1",
		"--mode", "random", "--seed", "7", "--mq", "6", "--zero-timing", "--out", first)
	if err != nil {
		t.Fatalf("run: %v\n%s", err, out)
	}
	if !strings.Contains(out, "| Oracle replay |") || !strings.Contains(out, "U=[") {
		t.Fatalf("run output lacks the summary table:\n%s", out)
	}
	rec := readRecord(t, first)
	sum := sha256File(t, file)
	if rec.Source.File != file || rec.Source.SHA256 != sum || rec.Source.T != 240 {
		t.Errorf("source %+v, want the file, its SHA-256 %s and T = 240", rec.Source, sum)
	}
	if len(rec.U) != 5 || len(rec.Probes) != 6 || rec.Methods[0].Series == nil {
		t.Fatalf("record lacks U (%v), the 6 probes (%d) or the series", rec.U, len(rec.Probes))
	}

	probes := filepath.Join(dir, "probes.json")
	pj, err := json.Marshal(rec.Probes)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(probes, pj, 0o600); err != nil {
		t.Fatal(err)
	}
	ids := make([]string, len(rec.U))
	for i, id := range rec.U {
		ids[i] = strconv.FormatInt(id, 10)
	}
	second := filepath.Join(dir, "second.json")
	if out, err := runCLI(t, "run", "--stream", file, "--t-del", "100", "--horizon", "140", "--tau", "4", "--eta", "0.1",
		"--deleted", strings.Join(ids, ","), "--probes", probes, "--zero-timing", "--out", second); err != nil {
		t.Fatalf("second run: %v\n%s", err, out)
	}
	again := readRecord(t, second)
	if !slices.Equal(again.U, rec.U) {
		t.Fatalf("U = %v, want %v", again.U, rec.U)
	}
	for i, m := range rec.Methods {
		var a, b bytes.Buffer
		if err := json.NewEncoder(&a).Encode(m.Series); err != nil {
			t.Fatal(err)
		}
		if err := json.NewEncoder(&b).Encode(again.Methods[i].Series); err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(a.Bytes(), b.Bytes()) {
			t.Errorf("%s: series differ when reproduced from the record's U and probes", m.Name)
		}
	}
}

func sha256File(t *testing.T, path string) string {
	t.Helper()
	_, src, err := experiment.StreamFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return src.SHA256
}

func TestRunGeneratedAndSeriesCSV(t *testing.T) {
	csvFile := filepath.Join(t.TempDir(), "series.csv")
	out, err := runCLI(t, "run", "--kind", "logistic", "--kappa", "100", "--seed", "2", "--events", "200", "--d", "4",
		"--t-del", "80", "--tau", "5", "--mode", "high-gradient", "--mq", "4", "--series-csv", csvFile)
	if err != nil {
		t.Fatalf("run: %v\n%s", err, out)
	}
	lines := strings.Split(strings.TrimSpace(string(readFile(t, csvFile))), "\n")
	// Horizon 0 means T − t_del = 120: 121 rows per method, 9 methods.
	if want := 1 + 9*121; len(lines) != want {
		t.Errorf("series CSV has %d lines, want %d", len(lines), want)
	}
}

func TestRunFlagErrors(t *testing.T) {
	file := filepath.Join(t.TempDir(), "q.jsonl")
	if _, err := runCLI(t, "gen", "--events", "100", "--d", "3", "--out", file); err != nil {
		t.Fatal(err)
	}
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
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := runCLI(t, append([]string{"run"}, tt.args...)...)
			if err == nil || !strings.Contains(err.Error(), tt.flag) {
				t.Fatalf("err = %v, want one naming %s", err, tt.flag)
			}
		})
	}
}
