package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

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
	if err := json.Unmarshal(readFile(t, filepath.Join(dir, "manifest.json")), &m); err != nil {
		t.Fatal(err)
	}
	return m
}

func TestBenchWritesReport(t *testing.T) {
	dir := t.TempDir()
	res := filepath.Join(dir, "results")
	out, err := runCLI(t, "bench", "--quick", "--zero-timing", "--out", res)
	if err != nil {
		t.Fatalf("bench: %v\n%s", err, out)
	}
	t.Run("manifest records the command and version", func(t *testing.T) {
		p := readManifest(t, res).Provenance
		want := []string{"unlearn", "bench", "--out", res, "--quick", "--zero-timing"}
		if p == nil || !slices.Equal(p.Command, want) || p.Version != version {
			t.Fatalf("provenance %+v, want command %v and version %s", p, want, version)
		}
	})
	t.Run("report by default", func(t *testing.T) {
		md := string(readFile(t, filepath.Join(res, "report", report.MarkdownFile)))
		for _, want := range []string{"unlearn bench --out " + res + " --quick --zero-timing", "unlearn " + version,
			"### Global comparison", "bench-trajectories", "bench-efficiency-quadratic", "bench-modes"} {
			if !strings.Contains(md, want) {
				t.Errorf("report.md lacks %q", want)
			}
		}
		if !exists(t, filepath.Join(res, "report", report.HTMLFile)) || !exists(t, filepath.Join(res, "report", "figures", "bench-modes.png")) {
			t.Error("report.html or a figure is missing")
		}
		if !strings.Contains(out, "report: 4 figures") {
			t.Errorf("bench did not say it wrote the report:\n%s", out)
		}
	})
	t.Run("the representative configuration keeps its series", func(t *testing.T) {
		series, err := filepath.Glob(filepath.Join(res, "series", "*.csv"))
		if err != nil || len(series) != 1 || !strings.Contains(series[0], "quadratic-tau10-recent-kappa10-seed1") {
			t.Fatalf("series files %v (err %v), want the one of quadratic-tau10-recent-kappa10-seed1", series, err)
		}
	})
	t.Run("report command into another folder", func(t *testing.T) {
		other := filepath.Join(dir, "elsewhere")
		if out, err := runCLI(t, "report", res, "--out", other); err != nil {
			t.Fatalf("report: %v\n%s", err, out)
		}
		if !exists(t, filepath.Join(other, report.HTMLFile)) {
			t.Error("report --out wrote no report.html")
		}
		// The same records give the same report, byte for byte.
		for _, f := range []string{report.MarkdownFile, report.HTMLFile, "figures/bench-trajectories.svg"} {
			if string(readFile(t, filepath.Join(other, f))) != string(readFile(t, filepath.Join(res, "report", f))) {
				t.Errorf("%s differs between bench's report and the report command's", f)
			}
		}
	})
	t.Run("no-report", func(t *testing.T) {
		d := filepath.Join(dir, "bare")
		if out, err := runCLI(t, "bench", "--quick", "--zero-timing", "--no-report", "--shard", "0/4", "--out", d); err != nil {
			t.Fatalf("bench: %v\n%s", err, out)
		}
		if exists(t, filepath.Join(d, "report")) {
			t.Error("bench --no-report wrote a report")
		}
	})
}

func TestReportOfARunRecord(t *testing.T) {
	dir := t.TempDir()
	rec := filepath.Join(dir, "run.json")
	if out, err := runCLI(t, "run", "--kind", "logistic", "--d", "5", "--events", "200", "--t-del", "80", "--tau", "3",
		"--mq", "4", "--zero-timing", "--out", rec); err != nil {
		t.Fatalf("run: %v\n%s", err, out)
	}
	if out, err := runCLI(t, "report", rec); err != nil {
		t.Fatalf("report: %v\n%s", err, out)
	}
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
	if err := os.Mkdir(notResults, 0o755); err != nil {
		t.Fatal(err)
	}
	bad := filepath.Join(dir, "bad.json")
	if err := os.WriteFile(bad, []byte(`{"format":"something-else"}`), 0o644); err != nil {
		t.Fatal(err)
	}
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
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("err = %v, want one mentioning %q", err, tt.want)
			}
		})
	}
}

func TestMergeRecordsParts(t *testing.T) {
	dir := t.TempDir()
	var parts []string
	for k := range 2 {
		d := filepath.Join(dir, "s"+string(rune('0'+k)))
		if out, err := runCLI(t, "bench", "--quick", "--zero-timing", "--no-report", "--shard", string(rune('0'+k))+"/2", "--out", d); err != nil {
			t.Fatalf("bench: %v\n%s", err, out)
		}
		parts = append(parts, d)
	}
	merged := filepath.Join(dir, "merged")
	// --no-report: the report is bench's (writeResultsReport, tested
	// above), and drawing is slow under the race detector.
	if out, err := runCLI(t, append([]string{"merge", "--no-report", "--out", merged}, parts...)...); err != nil {
		t.Fatalf("merge: %v\n%s", err, out)
	}
	p := readManifest(t, merged).Provenance
	if p == nil || p.Command[1] != "merge" || len(p.Parts) != 2 || !slices.Contains(p.Parts[1].Command, "1/2") {
		t.Fatalf("merged provenance %+v, want the merge command and both shards' commands", p)
	}
	if exists(t, filepath.Join(merged, "report")) {
		t.Error("merge --no-report wrote a report")
	}
}
