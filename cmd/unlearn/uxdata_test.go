package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/spf13/pflag"
	"github.com/stretchr/testify/require"

	"unlearn/internal/floatbits"
	"unlearn/store"
)

// TestEvaluateData: evaluate --data reads a data set with the shared data
// flags and reports the same numbers, digit for digit, as evaluating the
// converted stream file, given by --stream or (the old invocation) by
// --data; kind and d come from the model.
func TestEvaluateData(t *testing.T) {
	dir := t.TempDir()
	files := dataFiles(t, dir)
	for _, name := range []string{"csv", "libsvm"} {
		t.Run(name, func(t *testing.T) {
			c := files[name]
			file, flags := c[0], c[1:]
			if name == "libsvm" {
				flags = nil // d from the model
			}
			conv := filepath.Join(dir, name+".jsonl")
			o, err := runCLI(t, append([]string{"convert", file, "--out", conv}, c[1:]...)...)
			require.NoError(t, err, o)
			state := filepath.Join(dir, name+".state")
			o, err = runCLI(t, "train", "--stream", conv, "--tau", "3", "--out", state)
			require.NoError(t, err, o)

			want, err := runCLI(t, "evaluate", "--state", state, "--stream", conv)
			require.NoError(t, err, want)
			old, err := runCLI(t, "evaluate", "--state", state, "--data", conv)
			require.NoError(t, err, old)
			got, err := runCLI(t, append([]string{"evaluate", "--state", state, "--data", file}, flags...)...)
			require.NoError(t, err, got)
			require.Equal(t, want, old, "--data STREAM reads a stream as before")
			require.Equal(t, want, got, "--data DATASET evaluates as its converted stream")
			require.Contains(t, got, " 40 ", "n = 40 rows")
		})
	}

	state := filepath.Join(dir, "csv.state")
	for _, c := range []struct {
		name string
		args []string
		want string
	}{
		{"kind mismatch", []string{"--data", files["csv"][0], "--label", "label", "--id", "name", "--kind", "regression"}, "--kind: regression, but the model's loss is logistic"},
		{"lambda mismatch", []string{"--data", files["csv"][0], "--label", "label", "--id", "name", "--lambda", "0.5"}, "--lambda: 0.5, but the model's λ is 0.05"},
		{"format mismatch", []string{"--data", files["libsvm"][0]}, "format: the model expects CSV data, the data has LIBSVM data"},
		{"d mismatch", []string{"--data", files["libsvm"][0], "--force-features"}, "line 1, column 12: index 6 exceeds d = 3"}, // d is the model's
		{"data flag with a stream", []string{"--stream", filepath.Join(dir, "csv.jsonl"), "--label", "label"}, "--label: only with --data"},
		{"both", []string{"--stream", "a.jsonl", "--data", "b.csv"}, "--data: give either --data or --stream"},
		{"neither", nil, "--data: required"},
		{"stream flag on a CSV", []string{"--stream", files["csv"][0]}, "--stream " + files["csv"][0] + " looks like a CSV file, not a stream: use --data " + files["csv"][0]},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := runCLI(t, append([]string{"evaluate", "--state", state}, c.args...)...)
			require.ErrorContains(t, err, c.want)
		})
	}

	// A quadratic model and a data file: --kind was not given, so the
	// error names --data, not --kind.
	q, qstate := filepath.Join(dir, "q.jsonl"), filepath.Join(dir, "q.state")
	_, err := runCLI(t, "gen", "--kind", "quadratic", "--d", "2", "--events", "10", "--out", q)
	require.NoError(t, err)
	_, err = runCLI(t, "train", "--stream", q, "--out", qstate)
	require.NoError(t, err)
	r := filepath.Join(dir, "r.csv")
	require.NoError(t, os.WriteFile(r, []byte("f1,f2,y\n0.1,0.2,0.5\n"), 0o644))
	_, err = runCLI(t, "evaluate", "--state", qstate, "--data", r, "--label", "y")
	require.ErrorContains(t, err, "--data: "+r+": a data file gives a logistic or regression loss, but the model's loss is quadratic")
}

// TestStreamArgumentIsADataFile: a data file given where a stream file is
// expected is refused with the --data invocation to use instead, before
// any write; a stream file whose name says .csv is still read as a stream
// (the content decides).
func TestStreamArgumentIsADataFile(t *testing.T) {
	dir := t.TempDir()
	files := dataFiles(t, dir)
	model := filepath.Join(dir, "model")
	o, err := runCLI(t, "init", "--store", model, "--kind", "logistic", "--d", "3", "--tau", "3")
	require.NoError(t, err, o)
	csv, svm, idx := files["csv"][0], files["libsvm"][0], files["idx"][0]
	out := filepath.Join(dir, "out.json")
	for _, c := range []struct {
		name string
		args []string
		want string
	}{
		{"ingest CSV", []string{"ingest", "--store", model, csv}, csv + " looks like a CSV file, not a stream: use --data " + csv + " (with --label COLUMN"},
		{"train LIBSVM", []string{"train", "--stream", svm, "--out", out}, "--stream " + svm + " looks like a LIBSVM file, not a stream: use --data " + svm},
		{"run IDX", []string{"run", "--stream", idx, "--t-del", "5", "--mode", "recent", "--out", out}, "--stream " + idx + " looks like an IDX file, not a stream: use --data " + idx + " (with --classes NEG,POS)"},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := runCLI(t, c.args...)
			require.ErrorContains(t, err, c.want)
		})
	}
	_, err = os.Stat(out)
	require.ErrorIs(t, err, os.ErrNotExist)

	// A stream file named .csv: read as a stream.
	conv := filepath.Join(dir, "converted.csv")
	o, err = runCLI(t, append([]string{"convert", csv, "--out", conv}, files["csv"][1:]...)...)
	require.NoError(t, err, o)
	o, err = runCLI(t, "ingest", "--store", model, conv)
	require.NoError(t, err, o)
	require.True(t, strings.Contains(o, "40 events"), o)
}

// TestStringColumnHint: a column of strings read as features names the
// flags that make it row ids or not a feature, in every command that
// reads --data and in convert; a stray word further down gets no hint.
func TestStringColumnHint(t *testing.T) {
	dir := t.TempDir()
	users := filepath.Join(dir, "users.csv")
	require.NoError(t, os.WriteFile(users, []byte("user,f1,clicked\nu-7,0.5,0\nu-14,0.25,1\n"), 0o644))
	spaced := filepath.Join(dir, "spaced.csv")
	require.NoError(t, os.WriteFile(spaced, []byte("f1,user name,clicked\n0.5,Ann Lee,0\n"), 0o644))
	stray := filepath.Join(dir, "stray.csv")
	require.NoError(t, os.WriteFile(stray, []byte("f1,clicked\n0.5,0\nabc,1\n"), 0o644))
	out := filepath.Join(dir, "o.json")
	hint := `line 2, field 1 ("user"): "u-7" is not a number: invalid value; a column of strings: use --id user (row ids) or --exclude user`
	for _, args := range [][]string{
		{"train", "--data", users, "--label", "clicked", "--out", out},
		{"run", "--data", users, "--label", "clicked", "--t-del", "1", "--mode", "recent", "--out", out},
		{"convert", users, "--label", "clicked", "--out", out},
	} {
		_, err := runCLI(t, args...)
		require.ErrorContains(t, err, hint, args[0])
	}
	_, err := runCLI(t, "train", "--data", spaced, "--label", "clicked", "--out", out)
	require.ErrorContains(t, err, `field 2 ("user name"): "Ann Lee" is not a number: invalid value; a column of strings: use --id 2 (row ids) or --exclude 2`)
	_, err = runCLI(t, "train", "--data", stray, "--label", "clicked", "--out", out)
	require.EqualError(t, err, `--data `+stray+`: line 3, field 1 ("f1"): "abc" is not a number: invalid value`)
	o, err := runCLI(t, "train", "--data", users, "--label", "clicked", "--id", "user", "--out", out)
	require.NoError(t, err, o)
}

// TestIngestDataLossFromStore: ingest --data takes kind, λ and d from the
// store when they are not given, and trains exactly as when they are; a
// value given that differs from the store's stays an error naming it.
func TestIngestDataLossFromStore(t *testing.T) {
	dir := t.TempDir()
	files := dataFiles(t, dir)
	c := files["csv"]
	stores := map[string]string{}
	for _, name := range []string{"implicit", "explicit", "quadratic"} {
		stores[name] = filepath.Join(dir, name)
		args := []string{"init", "--store", stores[name], "--kind", "regression", "--lambda", "0.1", "--d", "3", "--tau", "3"}
		if name == "quadratic" {
			q := filepath.Join(dir, "q.jsonl")
			o, err := runCLI(t, "gen", "--kind", "quadratic", "--d", "3", "--events", "5", "--out", q)
			require.NoError(t, err, o)
			args = []string{"init", "--store", stores[name], "--header", q, "--tau", "3"}
		}
		o, err := runCLI(t, args...)
		require.NoError(t, err, o)
	}
	o, err := runCLI(t, append([]string{"ingest", "--store", stores["implicit"], "--data", c[0]}, c[1:]...)...)
	require.NoError(t, err, o)
	o, err = runCLI(t, append([]string{"ingest", "--store", stores["explicit"], "--data", c[0], "--kind", "regression", "--lambda", "0.1"}, c[1:]...)...)
	require.NoError(t, err, o)
	require.Contains(t, o, "40 events")
	var ws [][]float64
	for _, name := range []string{"implicit", "explicit"} {
		s, err := store.Open(stores[name])
		require.NoError(t, err)
		l, err := s.State()
		require.NoError(t, err)
		require.Equal(t, 40, l.T())
		ws = append(ws, l.W())
		require.NoError(t, s.Close())
	}
	require.True(t, floatbits.Equal(ws[0], ws[1]), "the store's loss taken implicitly trains as given explicitly")

	for _, e := range []struct {
		name string
		args []string
		want string
	}{
		{"lambda", []string{"--store", stores["implicit"], "--data", c[0], "--lambda", "0.05", "--id-offset", "100"}, "--lambda: 0.05, but the store's λ is 0.1"},
		{"kind", []string{"--store", stores["implicit"], "--data", c[0], "--kind", "logistic", "--id-offset", "100"}, "--kind: logistic, but the store's loss is regression"},
		{"quadratic store", []string{"--store", stores["quadratic"], "--data", c[0]}, "the store's loss is quadratic; a data file's is logistic, multinomial or regression"},
	} {
		t.Run(e.name, func(t *testing.T) {
			_, err := runCLI(t, append(append([]string{"ingest"}, e.args...), c[1:]...)...)
			require.ErrorContains(t, err, e.want)
		})
	}
	_, err = runCLI(t, "ingest", "--store", stores["implicit"], "--data", files["libsvm"][0], "--d", "14", "--id-offset", "100")
	require.ErrorContains(t, err, "--d: 14, but the store's d is 3")
}

// TestRunDeletedKeys: run --data with a CSV of string ids takes keys in
// --deleted, mapped as OUT.ids.csv maps them; the record equals that of
// the mapped ids, byte for byte. A key that is not in the file, a key
// without string ids, and a key without --data are errors naming
// --deleted.
func TestRunDeletedKeys(t *testing.T) {
	dir := t.TempDir()
	files := dataFiles(t, dir)
	c := files["csv"] // ids p0, p7, p14, …: rows 1, 2, 3, …
	run := func(out string, extra ...string) error {
		args := append([]string{"run", "--data", c[0], "--t-del", "20", "--tau", "3", "--zero-timing", "--out", out}, c[1:]...)
		_, err := runCLI(t, append(args, extra...)...)
		return err
	}
	// The record up to its series file's name (then the command line)
	// and the series file itself.
	same := func(a, b string) {
		t.Helper()
		ra, _, _ := strings.Cut(string(readFile(t, a+".json")), `"series_file"`)
		rb, _, _ := strings.Cut(string(readFile(t, b+".json")), `"series_file"`)
		require.Equal(t, ra, rb)
		require.Equal(t, readFile(t, a+".series.csv"), readFile(t, b+".series.csv"))
	}
	byKey, byID, mix := filepath.Join(dir, "key"), filepath.Join(dir, "id"), filepath.Join(dir, "mix")
	require.NoError(t, run(byKey+".json", "--deleted", "p7,p14"))
	require.NoError(t, run(byID+".json", "--deleted", "2,3"))
	require.NoError(t, run(mix+".json", "--deleted", "p7,3"))
	same(byID, byKey)
	same(byID, mix)
	require.Contains(t, string(readFile(t, byKey+".json")), `"deleted_ids":[2,3]`)

	require.ErrorContains(t, run(mix+".json", "--deleted", "p7,nobody"), `--deleted: key "nobody" is not in the --id column of `+c[0])
	_, err := runCLI(t, "run", "--data", files["libsvm"][0], "--t-del", "20", "--deleted", "p7")
	require.ErrorContains(t, err, `--deleted: "p7" is a key, but `+files["libsvm"][0]+" has no string ids")
	_, err = runCLI(t, "run", "--t-del", "20", "--deleted", "u-14")
	require.ErrorContains(t, err, `--deleted: "u-14" is not an id (an integer); keys (string ids) are accepted with --data FILE --id COLUMN`)
	_, err = runCLI(t, "run", "--t-del", "20", "--deleted", "99999999999999999999")
	require.ErrorContains(t, err, "--deleted: \"99999999999999999999\" is out of the range of int64 ids")

	// Keys that look like numbers (zip codes, account numbers): a key is
	// looked up as a key first, and one that is also another row's id is
	// refused as ambiguous rather than deleting that other row.
	numeric := filepath.Join(dir, "numeric.csv")
	var b strings.Builder
	b.WriteString("user,f1,f2,y\n")
	for i := 1; i <= 60; i++ {
		key := fmt.Sprintf("u-%d", i)
		switch i {
		case 50:
			key = "0007" // row id 50; 7 is also a row id (key u-7)
		case 55:
			key = "999" // row id 55; 999 is no row's id
		}
		fmt.Fprintf(&b, "%s,%g,%g,%d\n", key, float64(i%7)/7, float64(i%5)/5, i%2)
	}
	require.NoError(t, os.WriteFile(numeric, []byte(b.String()), 0o644))
	runNum := func(out string, deleted string) error {
		_, err := runCLI(t, "run", "--data", numeric, "--label", "y", "--id", "user", "--t-del", "58", "--tau", "3", "--zero-timing", "--out", out, "--deleted", deleted)
		return err
	}
	err = runNum(filepath.Join(dir, "amb.json"), "0007")
	require.ErrorContains(t, err, `--deleted: "0007" is ambiguous in `+numeric+`: it is the key of row id 50 and also row id 7 (key "u-7")`)
	k999, id55 := filepath.Join(dir, "k999"), filepath.Join(dir, "id55")
	require.NoError(t, runNum(k999+".json", "999"))
	require.NoError(t, runNum(id55+".json", "55"))
	same(k999, id55)
	require.Contains(t, string(readFile(t, k999+".json")), `"deleted_ids":[55]`)
}

// TestFlagHelpOneDefault: no flag's help states a default that pflag then
// states again ("(default: all) (default 5000)"), in any command; and the
// --id help says what the command does with string ids.
func TestFlagHelpOneDefault(t *testing.T) {
	root := newRootCmd()
	n := 0
	for _, c := range root.Commands() {
		c.Flags().VisitAll(func(f *pflag.Flag) {
			line := ""
			for _, l := range strings.Split(c.Flags().FlagUsages(), "\n") {
				l2 := strings.TrimLeft(l, " ")
				if f.Shorthand != "" {
					l2 = strings.TrimPrefix(l2, "-"+f.Shorthand+", ")
				}
				if strings.HasPrefix(l2, "--"+f.Name+" ") {
					line = l
				}
			}
			usage, _, _ := strings.Cut(f.Usage, "\n")
			_, after, ok := strings.Cut(line, usage)
			require.True(t, ok, "%s --%s: usage line %q", c.Name(), f.Name, line)
			if strings.HasPrefix(after, " (default") {
				n++
				require.NotContains(t, f.Usage, "(default", "%s --%s states its default twice: %s", c.Name(), f.Name, line)
			}
		})
	}
	require.Positive(t, n, "pflag's defaults were found")
	help := map[string]string{
		"ingest":   "kept in the store as keys",
		"evaluate": "no mapping is written",
		"train":    "OUT.ids.csv",
		"run":      "OUT.ids.csv",
		"convert":  "OUT.ids.csv",
	}
	for name, want := range help {
		c, _, err := root.Find([]string{name})
		require.NoError(t, err)
		require.Contains(t, c.Flags().Lookup("id").Usage, want, name)
	}
	c, _, err := root.Find([]string{"init"})
	require.NoError(t, err)
	require.NotContains(t, c.Flags().Lookup("id").Usage, "mapping written", "init writes no mapping")
}
