// Package specref holds an independent, plain-Python implementation of
// docs/spec.md (specref.py) and the test that checks the toolkit against it.
package specref

import (
	"bytes"
	"context"
	"encoding/csv"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"

	"unlearn/experiment"
	"unlearn/internal/testutil"
	"unlearn/stream"
)

// TestToolkitMatchesIndependentImplementation runs one configuration per
// case through the toolkit (experiment.RunHistory, the code path of
// `unlearn run`), writes the stream file, run record and series CSV, and has
// specref.py — which shares no code with the toolkit — rebuild every state
// and metric from the spec's definitions and compare, to 1e-9·max(1, ‖w⁻‖) (the spec's
// reproducibility tolerance). It then corrupts the series in turn (a wrong,
// a NaN or an undefined value, a missing row) and checks the comparison
// fails each time, so the check cannot pass vacuously. It is skipped where
// python3 is not installed, except under .ci/run (UNLEARN_CI=1), which
// installs python3 and where a missing python3 fails the test.
func TestToolkitMatchesIndependentImplementation(t *testing.T) {
	python, err := exec.LookPath("python3")
	if err != nil {
		testutil.SkipOrFail(t, "python3 not installed: the cross-check against tools/specref/specref.py did not run")
	}
	tests := []struct {
		name    string
		kind    stream.Kind
		cfg     experiment.Config
		deletes [][2]int // (event position, id): delete events inserted into the stream
	}{
		{"quadratic random", stream.KindQuadratic, experiment.Config{TDel: 120, Horizon: 60, Tau: 5, Mode: "random", Probes: 6}, nil},
		{"logistic recent with deletes before and after t_del", stream.KindLogistic,
			experiment.Config{TDel: 120, Horizon: 80, Tau: 4, Mode: "recent", Probes: 5}, [][2]int{{90, 30}, {150, 50}}},
		{"quadratic high-gradient", stream.KindQuadratic, experiment.Config{TDel: 100, Horizon: 100, Tau: 3, Mode: "high-gradient", Probes: 4}, nil},
		// m_q = 16 > d = 12: align's default applies the memories to the
		// Cholesky factor of QQᵀ instead of the probes; specref computes
		// the definition literally.
		{"quadratic more probes than dimensions", stream.KindQuadratic, experiment.Config{TDel: 90, Horizon: 40, Tau: 4, Mode: "recent", Probes: 16}, nil},
		{"quadratic old", stream.KindQuadratic, experiment.Config{TDel: 80, Horizon: 50, Tau: 5, Mode: "old", Count: 3, Probes: 4}, nil},
		{"logistic explicit U with old ids", stream.KindLogistic, experiment.Config{TDel: 60, Horizon: 40, Tau: 6, Deleted: []int64{2, 3, 59}, Probes: 4}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			h := generate(t, tt.kind)
			for _, del := range tt.deletes {
				at := del[0]
				h.Events = append(h.Events[:at], append([]stream.Event{stream.DeleteEvent(int64(del[1]))}, h.Events[at:]...)...)
			}
			streamFile := filepath.Join(dir, "stream.jsonl")
			if err := stream.WriteFile(streamFile, h); err != nil {
				t.Fatal(err)
			}
			h, src, err := experiment.StreamFile(streamFile)
			if err != nil {
				t.Fatal(err)
			}
			rec, err := experiment.RunHistory(context.Background(), h, src, tt.cfg, "run", experiment.Options{KeepSeries: true, ZeroTiming: true})
			if err != nil {
				t.Fatal(err)
			}
			recordFile, seriesFile := filepath.Join(dir, "run.json"), filepath.Join(dir, "series.csv")
			var rb, sb bytes.Buffer
			if err := rec.WriteJSON(&rb); err != nil {
				t.Fatal(err)
			}
			if err := rec.WriteSeriesCSV(&sb); err != nil {
				t.Fatal(err)
			}
			write(t, recordFile, rb.Bytes())
			write(t, seriesFile, sb.Bytes())
			// The record stores its probes by seed; Go's normal sampler
			// draws them (specref.py computes every metric itself).
			if rec.ProbeSpec == nil {
				t.Fatal("the record stores no probe_spec")
			}
			pv, err := rec.ProbeVectors()
			if err != nil {
				t.Fatal(err)
			}
			pj, err := json.Marshal(pv)
			if err != nil {
				t.Fatal(err)
			}
			probesFile := filepath.Join(dir, "probes.json")
			write(t, probesFile, pj)
			args := []string{"specref.py", streamFile, recordFile, seriesFile, "--probes", probesFile}

			out, err := exec.Command(python, args...).CombinedOutput()
			if err != nil {
				t.Fatalf("specref.py disagrees with the toolkit: %v\n%s", err, out)
			}
			t.Logf("%s", bytes.TrimSpace(out))

			// Corrupt the no-op method's row at k = 3 — E_w by 1e-6 (1000×
			// the tolerance), E_w to NaN, D_upd to undefined — or drop that
			// row: the checker must notice each.
			corruptions := []struct {
				name string
				edit func(row []string) []string // nil drops the row
			}{
				{"E_w off by 1e-6", func(row []string) []string {
					v, _ := strconv.ParseFloat(row[2], 64)
					row[2] = strconv.FormatFloat(v+1e-6, 'g', -1, 64)
					return row
				}},
				{"E_w NaN", func(row []string) []string { row[2] = "NaN"; return row }},
				{"D_upd undefined", func(row []string) []string { row[5] = "NaN"; return row }},
				{"row missing", func([]string) []string { return nil }},
			}
			for _, c := range corruptions {
				rows, err := csv.NewReader(bytes.NewReader(sb.Bytes())).ReadAll()
				if err != nil {
					t.Fatal(err)
				}
				corrupted := false
				kept := rows[:1]
				for _, row := range rows[1:] {
					if row[0] == "noop" && row[1] == "3" {
						corrupted = true
						if row = c.edit(row); row == nil {
							continue
						}
					}
					kept = append(kept, row)
				}
				if !corrupted {
					t.Fatal("test setup: no noop row at k = 3")
				}
				var cb bytes.Buffer
				w := csv.NewWriter(&cb)
				if err := w.WriteAll(kept); err != nil {
					t.Fatal(err)
				}
				write(t, seriesFile, cb.Bytes())
				if out, err := exec.Command(python, args...).CombinedOutput(); err == nil {
					t.Fatalf("specref.py accepted a corrupted series (%s):\n%s", c.name, out)
				}
			}
		})
	}
}

func generate(t *testing.T, kind stream.Kind) *stream.History {
	t.Helper()
	var (
		h   *stream.History
		err error
	)
	if kind == stream.KindQuadratic {
		o := stream.DefaultQuadraticOptions()
		o.D, o.T, o.Seed = 12, 260, 7
		h, err = stream.GenerateQuadratic(o)
	} else {
		o := stream.DefaultLogisticOptions()
		o.D, o.T, o.Seed, o.Kappa = 12, 260, 8, 100
		h, err = stream.GenerateLogistic(o)
	}
	if err != nil {
		t.Fatal(err)
	}
	return h
}

func write(t *testing.T, name string, data []byte) {
	t.Helper()
	if err := os.WriteFile(name, data, 0o644); err != nil {
		t.Fatal(err)
	}
}
