package main

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"unlearn/dataset"
	"unlearn/internal/floatbits"
	"unlearn/olbfgs"
	"unlearn/store"
)

// dataFiles writes one small data set per format into dir and returns, per
// case name, the file and the data flags that read it. Values are seeded
// (PCG 7, 12) so the files are the same on every run.
func dataFiles(t *testing.T, dir string) map[string][]string {
	t.Helper()
	rng := rand.New(rand.NewPCG(7, 12))
	val := func() string { return ftoa(float64(rng.IntN(2001)-1000) / 250) }

	var csv strings.Builder
	csv.WriteString("name,a,b,c,label\n")
	for i := range 40 {
		csv.WriteString("p" + itoa(i*7%41) + "," + val() + "," + val() + "," + val() + "," + itoa(rng.IntN(2)) + "\n")
	}
	csvFile := filepath.Join(dir, "d.csv")
	require.NoError(t, os.WriteFile(csvFile, []byte(csv.String()), 0o644))

	var svm strings.Builder
	for range 40 {
		svm.WriteString([]string{"-1", "+1"}[rng.IntN(2)])
		for j := 1; j <= 12; j++ {
			if rng.IntN(4) == 0 {
				svm.WriteString(" " + itoa(j) + ":" + val())
			}
		}
		svm.WriteString("\n")
	}
	svmFile := filepath.Join(dir, "d.svm")
	require.NoError(t, os.WriteFile(svmFile, []byte(svm.String()), 0o644))

	// IDX: 30 images of 3×4 pixels, labels 0..2 (class 2 is skipped).
	var img, lab bytes.Buffer
	binary.Write(&img, binary.BigEndian, []uint32{0x803, 30, 3, 4})
	binary.Write(&lab, binary.BigEndian, []uint32{0x801, 30})
	for range 30 {
		for range 12 {
			img.WriteByte(byte(rng.IntN(256)))
		}
		lab.WriteByte(byte(rng.IntN(3)))
	}
	idxFile := filepath.Join(dir, "t-images-idx3-ubyte")
	require.NoError(t, os.WriteFile(idxFile, img.Bytes(), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "t-labels-idx1-ubyte"), lab.Bytes(), 0o644))

	return map[string][]string{
		"csv":           {csvFile, "--label", "label", "--id", "name"},
		"libsvm":        {svmFile, "--d", "14"},
		"libsvm-sparse": {svmFile, "--sparse"},
		"idx":           {idxFile, "--classes", "0,1", "--lambda", "0.1"},
		"csv-shuffled":  {csvFile, "--label", "label", "--shuffle-seed", "3", "--kind", "regression", "--exclude", "name"},
	}
}

// TestTrainDataEqualsConvert: train --data FILE writes the same snapshot,
// byte for byte, as convert FILE then train --stream, for every format;
// and the same string-id mapping beside --out.
func TestTrainDataEqualsConvert(t *testing.T) {
	dir := t.TempDir()
	for name, c := range dataFiles(t, dir) {
		t.Run(name, func(t *testing.T) {
			file, flags := c[0], c[1:]
			conv := filepath.Join(dir, name+".jsonl")
			o, err := runCLI(t, append([]string{"convert", file, "--out", conv}, flags...)...)
			require.NoError(t, err, o)
			convOut := o
			viaStream := filepath.Join(dir, name+".stream.state")
			o, err = runCLI(t, "train", "--stream", conv, "--tau", "3", "--out", viaStream)
			require.NoError(t, err, o)
			viaData := filepath.Join(dir, name+".data.state")
			o, err = runCLI(t, append([]string{"train", "--data", file, "--tau", "3", "--out", viaData}, flags...)...)
			require.NoError(t, err, o)
			if name == "idx" { // labels 0, 1, 2 with --classes 0,1: rows are skipped, and said so
				skip := regexp.MustCompile(`skipped \d+ of \d+ rows \(classes other than \[0 1\]\)`)
				require.Regexp(t, skip, convOut)
				require.Equal(t, skip.FindString(convOut), skip.FindString(o), "train --data reports the rows it skipped, as convert does")
			}
			want := readFile(t, viaStream)
			require.Equal(t, string(want), string(readFile(t, viaData)))
			l, _, err := olbfgs.UnmarshalSnapshot(want)
			require.NoError(t, err)
			require.Greater(t, l.T(), 10, "the snapshot trained on the data")
			if name == "csv" {
				require.Equal(t, string(readFile(t, dataset.MappingFile(conv))), string(readFile(t, dataset.MappingFile(viaData))))
			}
		})
	}
}

// TestTrainDataEvents: --events N with --data trains on the first N rows,
// as --stream on the file convert --limit N writes (the header records the
// limit); more rows than the file selects is an error naming --events.
func TestTrainDataEvents(t *testing.T) {
	dir := t.TempDir()
	c := dataFiles(t, dir)["libsvm"]
	conv := filepath.Join(dir, "c.jsonl")
	_, err := runCLI(t, append([]string{"convert", c[0], "--limit", "17", "--out", conv}, c[1:]...)...)
	require.NoError(t, err)
	_, err = runCLI(t, "train", "--stream", conv, "--out", filepath.Join(dir, "a"))
	require.NoError(t, err)
	_, err = runCLI(t, append([]string{"train", "--data", c[0], "--events", "17", "--out", filepath.Join(dir, "b")}, c[1:]...)...)
	require.NoError(t, err)
	require.Equal(t, string(readFile(t, filepath.Join(dir, "a"))), string(readFile(t, filepath.Join(dir, "b"))))
	_, err = runCLI(t, append([]string{"train", "--data", c[0], "--events", "41", "--out", filepath.Join(dir, "b")}, c[1:]...)...)
	require.ErrorContains(t, err, "--events: 41, but")
}

// TestRunDataEqualsConvert: run --data writes the same per-step series as
// run --stream on the converted file.
func TestRunDataEqualsConvert(t *testing.T) {
	dir := t.TempDir()
	c := dataFiles(t, dir)["csv"]
	conv := filepath.Join(dir, "c.jsonl")
	_, err := runCLI(t, append([]string{"convert", c[0], "--out", conv}, c[1:]...)...)
	require.NoError(t, err)
	args := []string{"--t-del", "20", "--tau", "3", "--mode", "random", "--count", "3", "--mq", "4", "--zero-timing"}
	o, err := runCLI(t, append([]string{"run", "--stream", conv, "--series-csv", filepath.Join(dir, "a.csv")}, args...)...)
	require.NoError(t, err, o)
	o, err = runCLI(t, append(append([]string{"run", "--data", c[0], "--series-csv", filepath.Join(dir, "b.csv"),
		"--out", filepath.Join(dir, "b.json")}, args...), c[1:]...)...)
	require.NoError(t, err, o)
	a := readFile(t, filepath.Join(dir, "a.csv"))
	require.Greater(t, bytes.Count(a, []byte("\n")), 20, "a series was written")
	require.Equal(t, string(a), string(readFile(t, filepath.Join(dir, "b.csv"))))
	require.Equal(t, string(readFile(t, dataset.MappingFile(conv))), string(readFile(t, dataset.MappingFile(filepath.Join(dir, "b.json")))))
}

// TestIngestData: ingest --data trains the store's state to train --data's
// state bit for bit; a second ingest of a file whose ids are taken is
// refused naming the file, line and id; the string ids are kept in the
// store (no mapping file unless --mapping), and a key already in the store
// is refused; --id-offset shifts the ids (and the --mapping copy).
func TestIngestData(t *testing.T) {
	dir := t.TempDir()
	c := dataFiles(t, dir)["csv"]
	model := filepath.Join(dir, "model")
	o, err := runCLI(t, "init", "--store", model, "--kind", "logistic", "--d", "3", "--tau", "3")
	require.NoError(t, err, o)
	o, err = runCLI(t, append([]string{"ingest", "--store", model, "--data", c[0], "--batch", "7"}, c[1:]...)...)
	require.NoError(t, err, o)
	require.Contains(t, o, "40 events in 6 transactions")
	_, err = os.Stat(dataset.MappingFile(c[0]))
	require.ErrorIs(t, err, os.ErrNotExist, "no mapping file without --mapping")

	state := filepath.Join(dir, "train.state")
	_, err = runCLI(t, append([]string{"train", "--data", c[0], "--tau", "3", "--out", state}, c[1:]...)...)
	require.NoError(t, err)
	want, _, err := olbfgs.UnmarshalSnapshot(readFile(t, state))
	require.NoError(t, err)
	s, err := store.Open(model)
	require.NoError(t, err)
	got, err := s.State()
	require.NoError(t, err)
	require.True(t, floatbits.Equal(want.W(), got.W()), "store state equals train --data")
	require.Equal(t, want.T(), got.T())
	ids, err := s.LookupKeys([]string{"p0", "p7"})
	require.NoError(t, err)
	require.Equal(t, []int64{1, 2}, ids, "the store keeps the string ids")
	require.NoError(t, s.Close())

	// The same file again: a resumed ingest, every row already in the log
	// byte for byte, nothing added.
	o, err = runCLI(t, append([]string{"ingest", "--store", model, "--data", c[0]}, c[1:]...)...)
	require.NoError(t, err, o)
	require.Contains(t, o, "0 events in 0 transactions")
	require.Contains(t, o, "skipped 40 events already in the log")
	// Same ids, other rows: refused at the first data row (line 2), naming
	// the id, nothing added.
	other := filepath.Join(dir, "other.csv")
	lines := strings.Split(string(readFile(t, c[0])), "\n")
	lines[1] = "p0,3.999,3.999,3.999,1" // 3.999 is no value dataFiles writes (multiples of 1/250)
	require.NoError(t, os.WriteFile(other, []byte(strings.Join(lines, "\n")), 0o644))
	_, err = runCLI(t, append([]string{"ingest", "--store", model, "--data", other}, c[1:]...)...)
	require.ErrorIs(t, err, store.ErrEvent)
	require.ErrorContains(t, err, "--data "+other+": line 2 (id 1)")
	require.ErrorContains(t, err, "with a different payload")
	require.ErrorContains(t, err, "--id-offset")

	// New ids, same keys: refused at the first row, naming the key.
	_, err = runCLI(t, append([]string{"ingest", "--store", model, "--data", c[0], "--id-offset", "2000"}, c[1:]...)...)
	require.ErrorIs(t, err, store.ErrEvent)
	require.ErrorContains(t, err, `line 2 (id 2001): event refused by the store: key "p0" is already in the store as id 1`)

	// Another file (keys q…) with an offset, and a --mapping copy.
	second := filepath.Join(dir, "second.csv")
	require.NoError(t, os.WriteFile(second, []byte(strings.ReplaceAll(string(readFile(t, c[0])), "\np", "\nq")), 0o644))
	mf := filepath.Join(dir, "second.ids.csv")
	o, err = runCLI(t, append([]string{"ingest", "--store", model, "--data", second, "--id-offset", "1000", "--mapping", mf}, c[1:]...)...)
	require.NoError(t, err, o)
	require.Contains(t, o, "40 events in 1 transaction,")
	require.True(t, strings.HasPrefix(string(readFile(t, mf)), "id,key\n1001,q0\n1002,q7\n"))
}

// TestDataFlagErrors: misuse names the flag; bad data names --data, the
// file, line and column.
func TestDataFlagErrors(t *testing.T) {
	dir := t.TempDir()
	files := dataFiles(t, dir)
	bad := filepath.Join(dir, "bad.csv")
	require.NoError(t, os.WriteFile(bad, []byte("a,y\n1,1\nx,0\n"), 0o644))
	model := filepath.Join(dir, "model")
	_, err := runCLI(t, "init", "--store", model, "--kind", "logistic", "--d", "12")
	require.NoError(t, err)
	out := filepath.Join(dir, "o")
	for _, c := range []struct {
		name string
		args []string
		want string
	}{
		{"train data flag without data", []string{"train", "--stream", "x.jsonl", "--label", "y", "--out", out}, "--label: only with --data"},
		{"train both inputs", []string{"train", "--stream", "x.jsonl", "--data", bad, "--out", out}, "--data: give either --stream or --data"},
		{"train bad cell", []string{"train", "--data", bad, "--label", "y", "--out", out}, "--data " + bad + ": line 3, field 1 (\"a\")"},
		{"train missing label", []string{"train", "--data", bad, "--out", out}, "--label: required for CSV"},
		{"run bad cell", []string{"run", "--data", bad, "--label", "y", "--t-del", "1"}, "--data " + bad + ": line 3, field 1 (\"a\")"},
		{"run too many events", []string{"run", "--data", files["libsvm"][0], "--events", "41", "--t-del", "5"}, "--events: 41, but"},
		{"run generator flag", []string{"run", "--data", bad, "--label", "y", "--kappa", "3"}, "--kappa: only for generated streams"},
		{"run data flag without data", []string{"run", "--classes", "0,1"}, "--classes: only with --data"},
		{"ingest both", []string{"ingest", "--store", model, "--data", bad, "x.jsonl"}, "--data: give either"},
		{"ingest offset without data", []string{"ingest", "--store", model, "--id-offset", "3", "x.jsonl"}, "--id-offset: only with --data"},
		{"ingest kind", []string{"ingest", "--store", model, "--data", files["libsvm"][0], "--kind", "regression"}, "--kind: regression, but the store's loss is logistic"},
		{"ingest lambda", []string{"ingest", "--store", model, "--data", files["libsvm"][0], "--lambda", "0.5"}, "--lambda: 0.5, but the store's λ is 0.05"},
		{"ingest d", []string{"ingest", "--store", model, "--data", bad, "--label", "y"}, "d = 1 (the file's features), but the store's d is 12"},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := runCLI(t, c.args...)
			require.ErrorContains(t, err, c.want)
		})
	}
	_, statErr := os.Stat(out)
	require.ErrorIs(t, statErr, os.ErrNotExist, "a failed train writes nothing")
}

// TestIngestDataSparse: init and ingest --data --sparse on a LIBSVM file
// give the state of the dense path and of train --data, bit for bit (the
// store steps the dense form and keeps the shorter encoding).
func TestIngestDataSparse(t *testing.T) {
	dir := t.TempDir()
	svm := dataFiles(t, dir)["libsvm"][0]
	states := map[string]*olbfgs.Learner{}
	for _, sparse := range []bool{false, true} {
		model := filepath.Join(dir, fmt.Sprintf("model-%v", sparse))
		extra := []string{"--data", svm, "--format", "libsvm"}
		if sparse {
			extra = append(extra, "--sparse")
		}
		o, err := runCLI(t, append([]string{"init", "--store", model, "--tau", "3"}, extra...)...)
		require.NoError(t, err, o)
		o, err = runCLI(t, append([]string{"ingest", "--store", model}, extra...)...)
		require.NoError(t, err, o)
		require.Contains(t, o, "40 events")
		s, err := store.Open(model)
		require.NoError(t, err)
		states[fmt.Sprint(sparse)], err = s.State()
		require.NoError(t, err)
		require.NoError(t, s.Close())
	}
	state := filepath.Join(dir, "train.state")
	_, err := runCLI(t, "train", "--data", svm, "--format", "libsvm", "--tau", "3", "--out", state)
	require.NoError(t, err)
	want, _, err := olbfgs.UnmarshalSnapshot(readFile(t, state))
	require.NoError(t, err)
	for name, got := range states {
		require.True(t, floatbits.Equal(want.W(), got.W()), "sparse=%s: store state equals train --data", name)
		require.True(t, want.Memory().Equal(got.Memory()), "sparse=%s: memory", name)
	}
}
