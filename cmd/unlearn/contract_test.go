package main

import (
	"encoding/csv"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"unlearn/model"
	"unlearn/store"
)

// rewriteCSV writes a copy of the CSV file in with its columns rearranged
// by cols (indices into the original columns, −1 for a new column), the
// header names replaced by names where names[i] != "".
func rewriteCSV(t *testing.T, in, out string, cols []int, names []string) string {
	t.Helper()
	f, err := os.Open(in)
	require.NoError(t, err)
	defer f.Close()
	recs, err := csv.NewReader(f).ReadAll()
	require.NoError(t, err)
	var b strings.Builder
	w := csv.NewWriter(&b)
	for r, rec := range recs {
		row := make([]string, len(cols))
		for i, c := range cols {
			switch {
			case c < 0 && r == 0:
				row[i] = "zip"
			case c < 0:
				row[i] = "1"
			default:
				row[i] = rec[c]
			}
			if r == 0 && names != nil && names[i] != "" {
				row[i] = names[i]
			}
		}
		require.NoError(t, w.Write(row))
	}
	w.Flush()
	require.NoError(t, os.WriteFile(out, []byte(b.String()), 0o644))
	return out
}

// storeHead returns the number of events in a store's log.
func storeHead(t *testing.T, dir string) int {
	t.Helper()
	s, err := store.Open(dir)
	require.NoError(t, err)
	defer s.Close()
	st, err := s.State()
	require.NoError(t, err)
	return st.T()
}

// TestContractRefusedEverywhere: data that does not fit the model's
// contract — swapped classes, another or a missing (recorded) scale, CSV
// feature columns swapped, renamed, missing or extra, another LIBSVM
// dimension — is refused by ingest, evaluate and predict alike, naming the
// field, and nothing is ingested.
func TestContractRefusedEverywhere(t *testing.T) {
	dir := t.TempDir()
	files := dataFiles(t, dir)
	csvFile, svmFile, idxFile := files["csv"][0], files["libsvm"][0], files["idx"][0]
	// The d.csv columns: name, a, b, c, label.
	variants := map[string]string{
		"swapped": rewriteCSV(t, csvFile, filepath.Join(dir, "swapped.csv"), []int{0, 1, 3, 2, 4}, nil),
		"renamed": rewriteCSV(t, csvFile, filepath.Join(dir, "renamed.csv"), []int{0, 1, 2, 3, 4}, []string{"", "", "B", "", ""}),
		"missing": rewriteCSV(t, csvFile, filepath.Join(dir, "missing.csv"), []int{0, 1, 3, 4}, nil),
		"extra":   rewriteCSV(t, csvFile, filepath.Join(dir, "extra.csv"), []int{0, 1, 2, 3, -1, 4}, nil),
	}
	wide := filepath.Join(dir, "wide.svm")
	require.NoError(t, os.WriteFile(wide, []byte("+1 2:1 14:0.5\n-1 1:1\n"), 0o644))

	// One store, snapshot-free: each format's model is its store, created
	// and fed with the model's own options.
	stores := map[string]string{}
	for name, args := range map[string][]string{
		"csv":    {csvFile, "--label", "label", "--id", "name"},
		"idx":    {idxFile, "--classes", "0,1", "--scale", "2"},
		"libsvm": {svmFile, "--d", "12"},
		"idx10":  {idxFile, "--kind", "multinomial", "--classes", "all", "--scale", "2"},
	} {
		st := filepath.Join(dir, "store-"+name)
		o, err := runCLI(t, append([]string{"init", "--store", st, "--tau", "3", "--data"}, args...)...)
		require.NoError(t, err, o)
		// The model's own options need not be repeated.
		o, err = runCLI(t, "ingest", "--store", st, "--data", args[0])
		require.NoError(t, err, o)
		stores[name] = st
	}
	// A stream converted without --scale records the default 255.
	conv255 := filepath.Join(dir, "idx255.jsonl")
	_, err := runCLI(t, "convert", idxFile, "--classes", "0,1", "--out", conv255)
	require.NoError(t, err)
	convSwapped := filepath.Join(dir, "idx10.jsonl")
	_, err = runCLI(t, "convert", idxFile, "--classes", "1,0", "--scale", "2", "--out", convSwapped)
	require.NoError(t, err)
	// A multinomial store with --classes all records the labels found in
	// the file at init, in class order: the test images' 0, 1, 2.
	s, err := store.Open(stores["idx10"])
	require.NoError(t, err)
	c, err := model.ContractOf(s.Header())
	require.NoError(t, s.Close())
	require.NoError(t, err)
	require.Equal(t, []string{"0", "1", "2"}, c.Classes)
	convTwo := filepath.Join(dir, "idx-two.jsonl")
	_, err = runCLI(t, "convert", idxFile, "--kind", "multinomial", "--classes", "0,1", "--scale", "2", "--out", convTwo)
	require.NoError(t, err)

	for _, c := range []struct {
		name  string
		model string
		data  []string // --data FILE and flags, or --stream FILE
		want  string
	}{
		{"swapped classes", "idx", []string{"--data", idxFile, "--classes", "1,0"}, "classes: the model expects classes 0, 1 (0 → −1, 1 → +1), the data has classes 1, 0"},
		{"another scale", "idx", []string{"--data", idxFile, "--scale", "255"}, "scale: the model expects pixels divided by 2, the data has pixels divided by 255"},
		{"missing scale in a stream", "idx", []string{"--stream", conv255}, "scale: the model expects pixels divided by 2, the data has pixels divided by 255"},
		{"swapped classes in a stream", "idx", []string{"--stream", convSwapped}, "classes: the model expects classes 0, 1"},
		{"swapped columns", "csv", []string{"--data", variants["swapped"]}, `features: the model expects 3 feature columns "a", "b", "c", the data has 3 feature columns "a", "c", "b" (column 3 "c" is where the model has "b": columns in another order)`},
		{"renamed column", "csv", []string{"--data", variants["renamed"]}, `features: the model expects 3 feature columns "a", "b", "c", the data has 3 feature columns "a", "B", "c" (column 3 "B" is where the model has "b": renamed?)`},
		{"missing column", "csv", []string{"--data", variants["missing"]}, `(the model's feature "b" is missing)`},
		{"extra column", "csv", []string{"--data", variants["extra"]}, `(column 5 "zip" is not a feature of the model`},
		{"CSV data to an image model", "idx", []string{"--data", variants["swapped"]}, "format: the model expects IDX images, the data has CSV data; give it IDX images"},
		{"csv as libsvm", "csv", []string{"--data", svmFile}, "format: the model expects CSV data, the data has LIBSVM data"},
		{"another dimension", "libsvm", []string{"--data", svmFile, "--d", "20"}, "--d: 20, but the "},
		{"an index above d", "libsvm", []string{"--data", wide}, "line 1, column 8: index 14 exceeds d = 12"},
		{"multinomial classes in another order", "idx10", []string{"--data", idxFile, "--classes", "2,0,1"}, "classes: the model expects classes 0, 1, 2, the data has classes 2, 0, 1"},
		{"multinomial with fewer classes", "idx10", []string{"--data", idxFile, "--classes", "0,1"}, "classes: the model expects classes 0, 1, 2, the data has classes 0, 1"},
		{"multinomial stream of another k", "idx10", []string{"--stream", convTwo}, "classes: the model expects classes 0, 1, 2, the data has classes 0, 1"},
	} {
		t.Run(c.name, func(t *testing.T) {
			st := stores[c.model]
			head := storeHead(t, st)
			for _, cmd := range []string{"ingest", "evaluate", "predict"} {
				args := append([]string{cmd, "--store", st}, c.data...)
				if cmd == "ingest" && c.data[0] == "--stream" {
					args = []string{"ingest", "--store", st, c.data[1]}
				}
				out, err := runCLI(t, args...)
				require.Error(t, err, "%s accepted it:\n%s", cmd, out)
				require.ErrorContains(t, err, c.want, cmd)
			}
			require.Equal(t, head, storeHead(t, st), "nothing was ingested")
		})
	}

	// --force-features takes renamed columns by position; swapped classes
	// and another scale stay refused.
	_, err = runCLI(t, "predict", "--store", stores["csv"], "--data", variants["renamed"], "--force-features")
	require.NoError(t, err)
	_, err = runCLI(t, "evaluate", "--store", stores["idx"], "--data", idxFile, "--classes", "1,0", "--force-features")
	require.ErrorContains(t, err, "classes: the model expects")
	_, err = runCLI(t, "predict", "--store", stores["idx"], "--data", idxFile, "--scale", "255", "--force-features")
	require.ErrorContains(t, err, "scale: the model expects")
	// --exclude removes an extra column that is not a feature.
	out, err := runCLI(t, "evaluate", "--store", stores["csv"], "--data", variants["extra"], "--exclude", "zip")
	require.NoError(t, err, out)
}

// TestOmittedFlagsAreTheContracts: a data flag left out is the model's —
// ingesting without --scale and --classes gives the state that repeating
// them gives, bit for bit (the issue: an ingest without --scale diverged).
func TestOmittedFlagsAreTheContracts(t *testing.T) {
	dir := t.TempDir()
	idxFile := dataFiles(t, dir)["idx"][0]
	var states []string
	for i, flags := range [][]string{{"--classes", "0,1", "--scale", "7"}, nil} {
		st := filepath.Join(dir, "store"+itoa(i))
		_, err := runCLI(t, "init", "--store", st, "--data", idxFile, "--classes", "0,1", "--scale", "7", "--tau", "3")
		require.NoError(t, err)
		o, err := runCLI(t, append([]string{"ingest", "--store", st, "--data", idxFile}, flags...)...)
		require.NoError(t, err, o)
		state := filepath.Join(dir, "state"+itoa(i)+".json")
		_, err = runCLI(t, "export", "--store", st, "--out", state)
		require.NoError(t, err)
		states = append(states, state)
	}
	require.Equal(t, mustRead(t, states[0]), mustRead(t, states[1]))
}

// TestNoContractIsSaid: a store created from flags records no contract;
// data read into it is checked on its loss only, and the command says so.
func TestNoContractIsSaid(t *testing.T) {
	dir := t.TempDir()
	files := dataFiles(t, dir)
	st := filepath.Join(dir, "model")
	_, err := runCLI(t, "init", "--store", st, "--kind", "logistic", "--d", "3", "--tau", "3")
	require.NoError(t, err)
	out, err := runCLI(t, "ingest", "--store", st, "--data", files["csv"][0], "--label", "label", "--id", "name")
	require.NoError(t, err, out)
	require.Contains(t, out, "note: the store records no data contract (it was not made from a data file): only its loss (kind, d, λ) is checked")
	out, err = runCLI(t, "evaluate", "--store", st, "--data", files["csv"][0], "--label", "label", "--id", "name")
	require.NoError(t, err, out)
	require.Equal(t, 1, strings.Count(out, "note: the model records no data contract"), "said once, not once per model:\n%s", out)
	out, err = runCLI(t, "predict", "--store", st, "--data", files["csv"][0], "--label", "label", "--id", "name")
	require.NoError(t, err, out)
	require.Contains(t, out, "id,label,p_-1,p_1\n")
	require.True(t, slices.Contains(strings.Split(out, "\n"), "predicted 40 rows with current state"))
}

// TestFeatureScaleContract: a store made with --feature-scale records it,
// ingests, evaluates and predicts with it without the flag, and refuses
// data read with another scale, with none (--feature-scale given a file
// that declares another feature) and a stream converted without one,
// naming the field and the flag; nothing is ingested by a refusal.
func TestFeatureScaleContract(t *testing.T) {
	dir := t.TempDir()
	csvFile := dataFiles(t, dir)["csv"][0]
	scale := filepath.Join(dir, "scale.csv")
	require.NoError(t, os.WriteFile(scale, []byte("feature,divisor\na,3\nc,-4,4\n"), 0o644))
	other := filepath.Join(dir, "other.json")
	require.NoError(t, os.WriteFile(other, []byte(`{"a": 2}`), 0o644))
	st := filepath.Join(dir, "store")
	o, err := runCLI(t, "init", "--store", st, "--tau", "3", "--data", csvFile, "--label", "label", "--id", "name", "--feature-scale", scale)
	require.NoError(t, err, o)
	o, err = runCLI(t, "ingest", "--store", st, "--data", csvFile)
	require.NoError(t, err, o)
	head := storeHead(t, st)
	o, err = runCLI(t, "evaluate", "--store", st, "--data", csvFile)
	require.NoError(t, err, o)

	conv := filepath.Join(dir, "plain.jsonl")
	_, err = runCLI(t, "convert", csvFile, "--label", "label", "--id", "name", "--out", conv)
	require.NoError(t, err)
	for _, args := range [][]string{
		{"ingest", "--store", st, "--data", csvFile, "--feature-scale", other},
		{"predict", "--store", st, "--data", csvFile, "--feature-scale", other},
		{"evaluate", "--store", st, "--data", csvFile, "--feature-scale", other},
		{"ingest", "--store", st, conv},
	} {
		o, err := runCLI(t, args...)
		require.Error(t, err, "%v: %s", args, o)
		require.ErrorContains(t, err, "feature_scale", args)
		require.ErrorContains(t, err, `"a" / 3, "c" in [-4, 4]`, args)
		if args[len(args)-2] == "--feature-scale" {
			require.ErrorContains(t, err, "omit --feature-scale", args)
		}
	}
	require.Equal(t, head, storeHead(t, st), "nothing ingested")
	_, err = runCLI(t, "init", "--store", filepath.Join(dir, "s2"), "--data", csvFile, "--label", "label", "--feature-scale", filepath.Join(dir, "none.json"))
	require.ErrorContains(t, err, "--feature-scale")
}
