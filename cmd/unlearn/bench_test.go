package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"unlearn/experiment"
)

// readFile returns the content of path.
func readFile(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestBenchShardsMergeToTheSingleRun(t *testing.T) {
	dir := t.TempDir()
	single := filepath.Join(dir, "single")
	out, err := runCLI(t, "bench", "--quick", "--zero-timing", "--workers", "2", "--out", single)
	if err != nil {
		t.Fatalf("bench: %v\n%s", err, out)
	}
	if !strings.Contains(out, "### Global comparison") || !strings.Contains(out, "Window replay 5τ") {
		t.Fatalf("bench output lacks the tables:\n%s", out)
	}
	var shards []string
	for k := range 3 {
		d := filepath.Join(dir, "shard"+string(rune('0'+k)))
		if out, err := runCLI(t, "bench", "--quick", "--zero-timing", "--workers", "1", "--no-report",
			"--shard", string(rune('0'+k))+"/3", "--out", d); err != nil {
			t.Fatalf("bench shard %d: %v\n%s", k, err, out)
		}
		shards = append(shards, d)
	}
	merged := filepath.Join(dir, "merged")
	mout, err := runCLI(t, append([]string{"merge", "--zero-timing", "--no-report", "--out", merged}, shards...)...)
	if err != nil {
		t.Fatalf("merge: %v\n%s", err, mout)
	}
	t.Run("tables byte for byte", func(t *testing.T) {
		if !bytes.Equal(readFile(t, filepath.Join(single, "tables.md")), readFile(t, filepath.Join(merged, "tables.md"))) {
			t.Fatal("tables.md of the merged shards differs from the single run's")
		}
		for _, name := range []string{"global", "ratios", "horizon", "mode", "stream"} {
			f := filepath.Join("tables", name+".csv")
			if !bytes.Equal(readFile(t, filepath.Join(single, f)), readFile(t, filepath.Join(merged, f))) {
				t.Errorf("%s differs", f)
			}
		}
	})
	t.Run("records and manifest byte for byte", func(t *testing.T) {
		recs, err := filepath.Glob(filepath.Join(single, "records", "*.json"))
		if err != nil || len(recs) != len(experiment.QuickGrid().Configs) {
			t.Fatalf("%d records (err %v), want %d", len(recs), err, len(experiment.QuickGrid().Configs))
		}
		for _, r := range recs {
			if !bytes.Equal(readFile(t, r), readFile(t, filepath.Join(merged, "records", filepath.Base(r)))) {
				t.Errorf("%s differs", filepath.Base(r))
			}
		}
		var a, b experiment.Manifest
		if err := json.Unmarshal(readFile(t, filepath.Join(single, "manifest.json")), &a); err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal(readFile(t, filepath.Join(merged, "manifest.json")), &b); err != nil {
			t.Fatal(err)
		}
		if a.Hash != b.Hash || !slices.Equal(a.Indices, b.Indices) {
			t.Errorf("manifests differ: %v %v vs %v %v", a.Hash, a.Indices, b.Hash, b.Indices)
		}
	})
	t.Run("merge refuses", func(t *testing.T) {
		tests := []struct {
			name string
			args []string
			want string
		}{
			{"overlapping shards", []string{shards[0], shards[1], shards[2], shards[0]}, "overlapping"},
			{"missing shards", []string{shards[0], shards[1]}, "incomplete"},
			{"a folder that is not results", []string{t.TempDir()}, "manifest.json"},
		}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				out, err := runCLI(t, append([]string{"merge", "--out", filepath.Join(dir, "bad")}, tt.args...)...)
				if err == nil || !strings.Contains(err.Error(), tt.want) {
					t.Fatalf("merge: err = %v, want one mentioning %q\n%s", err, tt.want, out)
				}
			})
		}
		if _, err := os.Stat(filepath.Join(dir, "bad")); err == nil {
			t.Error("a refused merge wrote its output folder")
		}
	})
}

func TestBenchFlagErrors(t *testing.T) {
	tests := []struct {
		name string
		args []string
		flag string
	}{
		{"shard out of range", []string{"--shard", "3/3"}, "--shard"},
		{"shard malformed", []string{"--shard", "1"}, "--shard"},
		{"negative workers", []string{"--workers", "-1"}, "--workers"},
		{"empty out", []string{"--out", ""}, "--out"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := runCLI(t, append([]string{"bench", "--quick"}, tt.args...)...)
			if err == nil || !strings.Contains(err.Error(), tt.flag) {
				t.Fatalf("err = %v, want one naming %s", err, tt.flag)
			}
		})
	}
}

func TestDecay(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "decay")
	out, err := runCLI(t, "decay", "--kind", "quadratic,logistic", "--tau", "3", "--mode", "recent", "--kappa", "10",
		"--seed", "1", "--d", "5", "--events", "150", "--t-del", "60", "--horizon", "40", "--mq", "4",
		"--zero-timing", "--no-report", "--out", dir)
	if err != nil {
		t.Fatalf("decay: %v\n%s", err, out)
	}
	if !strings.Contains(out, "Finite-memory decay") || !strings.Contains(out, "| quadratic |") || !strings.Contains(out, "| logistic |") {
		t.Fatalf("decay output lacks the table rows:\n%s", out)
	}
	res, err := experiment.ReadResults(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Records) != 2 {
		t.Fatalf("%d records, want 2 (one per stream kind)", len(res.Records))
	}
	for _, r := range res.Records {
		if names := r.MethodNames(); !slices.Equal(names, []string{"noop"}) {
			t.Errorf("Experiment 1 ran %v, want the no-op operator alone", names)
		}
		if r.Methods[0].Series == nil || len(r.Methods[0].Series.ETheta) != 41 {
			t.Errorf("record %s: series missing or not of length H+1 = 41", r.ID)
		}
	}
	t.Run("flag errors", func(t *testing.T) {
		tests := []struct {
			args []string
			flag string
		}{
			{[]string{"--mode", "newest"}, "--mode"},
			{[]string{"--kind", "cubic"}, "--kind"},
			{[]string{"--horizon", "500"}, "--horizon"},
			{[]string{"--tau", "0"}, "--tau"},
		}
		for _, tt := range tests {
			t.Run(tt.flag, func(t *testing.T) {
				_, err := runCLI(t, append([]string{"decay", "--out", filepath.Join(t.TempDir(), "x")}, tt.args...)...)
				if err == nil || !strings.Contains(err.Error(), tt.flag) {
					t.Fatalf("err = %v, want one naming %s", err, tt.flag)
				}
			})
		}
	})
}

// TestProgressLogLines: when stderr is not a terminal, progress is a plain
// line at most every logInterval (none for a short run), with the count,
// the percentage and an estimate of the time left.
func TestProgressLogLines(t *testing.T) {
	var buf bytes.Buffer
	p := newProgress(&buf, 100, "bench paper")
	require.Nil(t, p.bar, "a buffer is not a terminal")
	t0 := p.start
	clock := t0
	p.now = func() time.Time { return clock }
	for done, dt := range []time.Duration{1 * time.Second, 2 * time.Second, 4 * time.Second} {
		clock = t0.Add(dt)
		p.update(done+1, 100)
	}
	require.Empty(t, buf.String(), "a line before logInterval had passed")
	clock = t0.Add(logInterval)
	p.update(10, 100) // 10 done in 5 s: 45 s left
	clock = t0.Add(logInterval + time.Second)
	p.update(11, 100) // within logInterval of the last line: silent
	clock = t0.Add(2 * logInterval)
	p.update(100, 100)
	p.finish()
	assert.Equal(t, "bench paper: 10/100 (10%), 5s elapsed, about 45s left\nbench paper: 100/100 (100%), 10s elapsed\n", buf.String())
}
