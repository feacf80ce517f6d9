package main

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/spf13/pflag"
	"github.com/stretchr/testify/require"

	"unlearn/dataset"
	"unlearn/internal/floatbits"
	"unlearn/olbfgs"
	"unlearn/store"
	"unlearn/stream"
)

// TestInitData: init --data takes the store's loss from a data file (kind,
// d, λ as dataset.Open reads them, in every format and for regression), so
// that ingest --data with the same flags is accepted and trains the state
// train --data trains, bit for bit.
func TestInitData(t *testing.T) {
	dir := t.TempDir()
	files := dataFiles(t, dir)
	for _, c := range []struct {
		name  string
		file  []string // the file and its data flags
		extra []string // flags only init takes
		kind  stream.Kind
		d     int
		lamb  float64
	}{
		{"csv", files["csv"], nil, stream.KindLogistic, 3, 0.05},
		{"csv-regression", []string{files["csv"][0], "--label", "label", "--id", "name", "--kind", "regression", "--lambda", "0.25"}, nil, stream.KindRegression, 3, 0.25},
		{"libsvm-d", files["libsvm"], nil, stream.KindLogistic, 14, 0.05},
		{"libsvm-largest-index", []string{files["libsvm"][0]}, nil, stream.KindLogistic, 12, 0.05},
		{"idx", files["idx"], []string{"--radius", "4", "--sample-bound", "4"}, stream.KindLogistic, 12, 0.1},
	} {
		t.Run(c.name, func(t *testing.T) {
			model := filepath.Join(dir, "model-"+c.name)
			args := append([]string{"init", "--store", model, "--tau", "3", "--data"}, c.file...)
			o, err := runCLI(t, append(args, c.extra...)...)
			require.NoError(t, err, o)
			require.Contains(t, o, "d = "+itoa(c.d)+",")

			// The header is the one dataset.Open gives the file.
			want, r, err := openDataArgs(t, c.file)
			require.NoError(t, err)
			require.NoError(t, r.Close())
			require.Equal(t, c.kind, want.Kind)
			require.Equal(t, c.d, want.D)
			s, err := store.Open(model)
			require.NoError(t, err)
			got := s.Header()
			require.NoError(t, s.Close())
			require.Equal(t, want.Kind, got.Kind)
			require.Equal(t, want.D, got.D)
			require.True(t, floatbits.Equal([]float64{c.lamb}, []float64{got.Lambda}), "λ = %v", got.Lambda)

			// ingest --data with the same flags is accepted and trains
			// what train --data trains.
			o, err = runCLI(t, append([]string{"ingest", "--store", model, "--data"}, c.file...)...)
			require.NoError(t, err, o)
			state := filepath.Join(dir, c.name+".state")
			tr := append([]string{"train", "--tau", "3", "--out", state, "--data"}, c.file...)
			if c.name != "libsvm-largest-index" {
				_, err = runCLI(t, append(tr, c.extra...)...)
			} else {
				_, err = runCLI(t, append(tr, "--d", "12")...)
			}
			require.NoError(t, err)
			wantL, _, err := olbfgs.UnmarshalSnapshot(readFile(t, state))
			require.NoError(t, err)
			s, err = store.Open(model)
			require.NoError(t, err)
			gotL, err := s.State()
			require.NoError(t, err)
			require.NoError(t, s.Close())
			require.NotZero(t, gotL.T())
			require.Equal(t, wantL.T(), gotL.T())
			require.True(t, floatbits.Equal(wantL.W(), gotL.W()), "store state equals train --data")
		})
	}
}

// openDataArgs opens a data file with the data flags of a dataFiles case
// (file[0] the file, the rest its flags), as a command's data flags read
// them.
func openDataArgs(t *testing.T, file []string) (stream.Header, *dataset.Reader, error) {
	t.Helper()
	fs := pflag.NewFlagSet("test", pflag.ContinueOnError)
	var df dataFlags
	df.add(fs, 0)
	require.NoError(t, fs.Parse(file[1:]))
	opts, err := df.options(fs)
	require.NoError(t, err)
	return dataset.Open(file[0], opts)
}

// TestInitKindD: --kind regression --d N writes a regression header without
// a file (before, only logistic could).
func TestInitKindD(t *testing.T) {
	model := filepath.Join(t.TempDir(), "m")
	o, err := runCLI(t, "init", "--store", model, "--kind", "regression", "--d", "4", "--lambda", "0.5")
	require.NoError(t, err, o)
	require.Contains(t, o, "regression loss, d = 4, λ = 0.5,")
	s, err := store.Open(model)
	require.NoError(t, err)
	defer s.Close()
	require.Equal(t, stream.Header{Format: stream.FormatV1, Kind: stream.KindRegression, D: 4, Lambda: 0.5}, s.Header())
}

// TestInitDataErrors: misuse names the flag, bad data names --data and the
// line; a failed init creates no store.
func TestInitDataErrors(t *testing.T) {
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad.csv")
	require.NoError(t, os.WriteFile(bad, []byte("a,y\nx,1\n2,0\n"), 0o644))
	real := filepath.Join(dir, "real.csv")
	require.NoError(t, os.WriteFile(real, []byte("a,y\n1,0.5\n2,0\n"), 0o644))
	model := filepath.Join(dir, "model")
	for _, c := range []struct {
		name string
		args []string
		want string
	}{
		{"data and header", []string{"--data", bad, "--header", bad}, "--data: give either --header or --data"},
		{"data flag without data", []string{"--kind", "logistic", "--d", "3", "--label", "y"}, "--label: only with --data"},
		{"quadratic data", []string{"--data", bad, "--label", "y", "--kind", "quadratic"}, "--kind: quadratic: a data file has no quadratic loss"},
		{"missing label", []string{"--data", bad}, "--label: required for CSV"},
		{"unknown label", []string{"--data", bad, "--label", "z"}, "--label"},
		{"bad first row", []string{"--data", bad, "--label", "y"}, "--data " + bad + ": line 2, field 1 (\"a\")"},
		{"real label for logistic", []string{"--data", real, "--label", "y"}, "--data " + real + ": line 2, field 2 (\"y\")"},
		{"missing file", []string{"--data", filepath.Join(dir, "none.csv"), "--label", "y"}, "--data"},
		{"nothing", nil, "--data: required (or --header FILE, or --kind logistic|regression|multinomial --d N)"},
		{"regression without d", []string{"--kind", "regression"}, "--d: 0: must be at least 1"},
		{"bad tau", []string{"--data", real, "--label", "y", "--kind", "regression", "--tau", "-1"}, "--tau"},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := runCLI(t, append([]string{"init", "--store", model}, c.args...)...)
			require.ErrorContains(t, err, c.want)
			_, statErr := os.Stat(model)
			require.ErrorIs(t, statErr, os.ErrNotExist, "a failed init creates no store")
		})
	}
}
