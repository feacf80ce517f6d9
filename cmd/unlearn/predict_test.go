package main

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"unlearn/certify"
	"unlearn/model"
)

// predictOut runs predict and returns its standard output only.
func predictOut(t *testing.T, args ...string) string {
	t.Helper()
	root := newRootCmd()
	var out, errs bytes.Buffer
	root.SetOut(&out)
	root.SetErr(&errs)
	root.SetArgs(append([]string{"predict"}, args...))
	require.NoError(t, root.Execute(), errs.String())
	return out.String()
}

// species writes a CSV of n rows with string ids, three features on
// unequal scales and offsets and a label column of three species (a rule
// of the features, so a model learns it), and returns its name.
func species(t *testing.T, dir string, n int) string {
	t.Helper()
	var b strings.Builder
	b.WriteString("name,a,b,c,species\n")
	for i := range n {
		a := float64(i%7) - 3
		bb := 10 + 5*float64((i*3)%5-2)
		c := 0.01 * float64((i*11)%9)
		sp := "eel"
		switch {
		case a+0.2*(bb-10) > 1:
			sp = "cat"
		case a < -1:
			sp = "dog"
		}
		fmt.Fprintf(&b, "p%d,%v,%v,%v,%s\n", i, a, bb, c, sp)
	}
	name := filepath.Join(dir, "species.csv")
	require.NoError(t, os.WriteFile(name, []byte(b.String()), 0o644))
	return name
}

// TestPredictExactReleaseIsTheStore: a store served exactly and its exact
// release predict the same bytes, for the paper's learner, each of the
// practitioner's options (the release then carries the standardization
// statistics and the average), the profile, and the multinomial kind; the
// release carries the contract, so it reads the same file with the same
// columns; the accuracy computed from predict's output is evaluate's for
// the store, its counterfactual and the release.
func TestPredictExactReleaseIsTheStore(t *testing.T) {
	dir := t.TempDir()
	files := dataFiles(t, dir)
	binary := []string{"--data", files["csv"][0], "--label", "label", "--id", "name", "--classes", "0,1"}
	three := []string{"--data", species(t, dir, 60), "--label", "species", "--id", "name", "--kind", "multinomial", "--classes", "all"}
	for _, tc := range []struct {
		name    string
		init    []string
		classes []string
		rows    int
	}{
		{"paper", binary, []string{"0", "1"}, 40},
		{"intercept", append(binary, "--intercept"), []string{"0", "1"}, 40},
		{"standardize", append(binary, "--standardize"), []string{"0", "1"}, 40},
		{"average", append(binary, "--average", "--average-start", "5"), []string{"0", "1"}, 40},
		{"practitioner", append(binary, "--profile", "practitioner"), []string{"0", "1"}, 40},
		{"multinomial", three, []string{"cat", "dog", "eel"}, 60},
		{"multinomial practitioner", append(three, "--profile", "practitioner"), []string{"cat", "dog", "eel"}, 60},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			csvFile := tc.init[1]
			st := filepath.Join(dir, "model")
			out, err := runCLI(t, append([]string{"init", "--store", st, "--tau", "3", "--checkpoint-every", "10"}, tc.init...)...)
			require.NoError(t, err, out)
			out, err = runCLI(t, "ingest", "--store", st, "--data", csvFile)
			require.NoError(t, err, out)
			out, err = runCLI(t, "forget", "--store", st, "--keys", "p7")
			require.NoError(t, err, out)
			rel, cert := filepath.Join(dir, "r.json"), filepath.Join(dir, "c.json")
			key := filepath.Join(dir, "certifier")
			_, err = runCLI(t, "keygen", "--out", key)
			require.NoError(t, err)
			out, err = runCLI(t, "release", "--store", st, "--epsilon", "1", "--delta", "1e-5", "--out", rel, "--certificate", cert, "--key", key+".key")
			checked := []string{"--release", rel, "--certificate", cert, "--public-key", key + ".pub"}
			require.NoError(t, err, out)
			require.Contains(t, out, "path: exact")
			r, err := certify.ParseRelease(mustRead(t, rel))
			require.NoError(t, err)
			require.Equal(t, tc.classes, r.Contract.Classes, "the classes as found in the file at init")
			require.Equal(t, "csv", string(r.Contract.Format))
			require.Equal(t, []string{"a", "b", "c"}, r.Contract.Features)
			require.Equal(t, r.Config.Standardize, r.Standardization != nil, "an exact release carries the statistics")
			require.Equal(t, r.Config.Average, r.Average != nil, "and the average")

			for _, json := range [][]string{nil, {"--json"}} {
				fromStore := predictOut(t, append([]string{"--store", st, "--data", csvFile}, json...)...)
				fromRelease := predictOut(t, append(append(checked, "--data", csvFile), json...)...)
				require.Equal(t, fromStore, fromRelease, "an exact release predicts the store's bits")
				require.Equal(t, tc.rows+1, strings.Count(fromStore, "\n")+len(json), "a line per row (and a header row)")
			}

			// Accuracy from predict's output, against the file's labels.
			pred, err := csv.NewReader(strings.NewReader(predictOut(t, append(checked, "--data", csvFile)...))).ReadAll()
			require.NoError(t, err)
			f, err := os.Open(csvFile)
			require.NoError(t, err)
			data, err := csv.NewReader(f).ReadAll()
			f.Close()
			require.NoError(t, err)
			header := []string{"id", "label"}
			for _, c := range tc.classes {
				header = append(header, "p_"+c)
			}
			require.Equal(t, header, pred[0])
			correct := 0
			for i := 1; i < len(data); i++ {
				require.Equal(t, data[i][0], pred[i][0], "ids are the file's string ids")
				if pred[i][1] == data[i][4] {
					correct++
				}
				var sum float64
				for _, p := range pred[i][2:] {
					v, err := strconv.ParseFloat(p, 64)
					require.NoError(t, err)
					sum += v
				}
				require.InDelta(t, 1, sum, 1e-12, "row %d: a probability per class", i)
			}
			evOut, _, err := runCLISplit(t, append(append([]string{"evaluate", "--store", st}, checked...), "--data", csvFile, "--json")...)
			require.NoError(t, err)
			var rep model.Report
			require.NoError(t, json.Unmarshal([]byte(evOut), &rep))
			require.Equal(t, model.ReportFormat, rep.Format)
			require.Len(t, rep.Models, 3)
			for _, m := range rep.Models {
				require.Equal(t, float64(correct)/float64(tc.rows), *m.Accuracy, m.Model)
				require.Equal(t, rep.Models[0].Evaluation, m.Evaluation, "release, state and counterfactual are one state")
				require.Len(t, m.Confusion, len(tc.classes))
				require.Len(t, m.Classes, len(tc.classes))
			}
			if tc.name == "multinomial practitioner" {
				// The binary file's labels are random; the species are a
				// rule of features on unequal scales, which the profile
				// (standardized, with intercepts) learns.
				require.Greater(t, *rep.Models[0].Accuracy, 0.6, "the model learned the species")
			}
		})
	}
}

// TestPredictIDXAndLIBSVM: predict reads images without their label file
// and LIBSVM rows without labels; every row gets a line.
func TestPredictIDXAndLIBSVM(t *testing.T) {
	dir := t.TempDir()
	files := dataFiles(t, dir)
	idx := files["idx"][0]
	state := filepath.Join(dir, "idx.json")
	_, err := runCLI(t, "train", "--data", idx, "--classes", "0,1", "--scale", "255", "--out", state)
	require.NoError(t, err)
	// No label file: predict does not need it.
	require.NoError(t, os.Rename(strings.Replace(idx, "images-idx3", "labels-idx1", 1), filepath.Join(dir, "elsewhere")))
	out := predictOut(t, "--state", state, "--data", idx)
	lines := strings.Split(strings.TrimSpace(out), "\n")
	require.Equal(t, "id,label,p_0,p_1", lines[0])
	require.Len(t, lines, 31, "all 30 images, class 2 included")

	svm := files["libsvm"][0]
	state = filepath.Join(dir, "svm.json")
	_, err = runCLI(t, "train", "--data", svm, "--d", "12", "--kind", "regression", "--out", state)
	require.NoError(t, err)
	rows := filepath.Join(dir, "new.svm")
	require.NoError(t, os.WriteFile(rows, []byte("3:1 12:2\n0 1:1\n\n"), 0o644))
	_, err = runCLI(t, "predict", "--state", state, "--data", rows)
	require.ErrorContains(t, err, "line 3: blank line", "errors name the line")
	require.NoError(t, os.WriteFile(rows, []byte("3:1 12:2\n0 1:1\n"), 0o644))
	out = predictOut(t, "--state", state, "--data", rows, "--json")
	lines = strings.Split(strings.TrimSpace(out), "\n")
	require.Len(t, lines, 2)
	for i, l := range lines {
		var v map[string]any
		require.NoError(t, json.Unmarshal([]byte(l), &v))
		require.Equal(t, float64(i+1), v["id"])
		require.Contains(t, v, "prediction")
	}
}

// TestPredictFlags: the command line's mistakes name the flag, and the
// output never lands on an input or inside the store.
func TestPredictFlags(t *testing.T) {
	dir := t.TempDir()
	files := dataFiles(t, dir)
	q, qstate := filepath.Join(dir, "q.jsonl"), filepath.Join(dir, "q.json")
	_, err := runCLI(t, "gen", "--kind", "quadratic", "--d", "2", "--events", "10", "--out", q)
	require.NoError(t, err)
	_, err = runCLI(t, "train", "--stream", q, "--out", qstate)
	require.NoError(t, err)
	state := filepath.Join(dir, "s.json")
	_, err = runCLI(t, "train", "--data", files["csv"][0], "--label", "label", "--id", "name", "--out", state)
	require.NoError(t, err)
	st := filepath.Join(dir, "model")
	_, err = runCLI(t, "init", "--store", st, "--data", files["csv"][0], "--label", "label", "--id", "name")
	require.NoError(t, err)
	for _, c := range []struct {
		name string
		args []string
		want string
	}{
		{"no model", []string{"--data", files["csv"][0]}, "--store: required"},
		{"two models", []string{"--state", state, "--release", "r.json", "--data", files["csv"][0]}, "--store: give one of"},
		{"no rows", []string{"--state", state}, "--data: required"},
		{"quadratic", []string{"--state", qstate, "--stream", q}, "a quadratic loss has no rows to predict on"},
		{"out over the input", []string{"--state", state, "--data", files["csv"][0], "--out", files["csv"][0]}, "--out: " + files["csv"][0] + " is an input"},
		{"out over the model", []string{"--state", state, "--data", files["csv"][0], "--out", state}, "--out: " + state + " is an input"},
		{"out in the store", []string{"--store", st, "--data", files["csv"][0], "--out", filepath.Join(st, "p.csv")}, "inside the store directory"},
		{"stream flag on a CSV", []string{"--state", state, "--stream", files["csv"][0]}, "looks like a CSV file, not a stream"},
		{"data flag with a stream", []string{"--state", qstate, "--stream", q, "--label", "y"}, "--label: only with --data"},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := runCLI(t, append([]string{"predict"}, c.args...)...)
			require.ErrorContains(t, err, c.want)
		})
	}
	// New rows need neither the label nor the id column of the model's
	// data: rows are then numbered.
	fresh := filepath.Join(dir, "fresh.csv")
	require.NoError(t, os.WriteFile(fresh, []byte("a,b,c\n1,2,3\n-1,0,0.5\n"), 0o644))
	got := predictOut(t, "--store", st, "--data", fresh)
	lines := strings.Split(strings.TrimSpace(got), "\n")
	require.Len(t, lines, 3)
	require.True(t, strings.HasPrefix(lines[1], "1,") && strings.HasPrefix(lines[2], "2,"), got)

	// --out writes the file, atomically, with what standard output gets.
	out := filepath.Join(dir, "p.csv")
	_, err = runCLI(t, "predict", "--state", state, "--data", files["csv"][0], "--out", out)
	require.NoError(t, err)
	require.Equal(t, predictOut(t, "--state", state, "--data", files["csv"][0]), string(mustRead(t, out)))
}
