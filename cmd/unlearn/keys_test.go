package main

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"unlearn/internal/floatbits"
	"unlearn/olbfgs"
	"unlearn/store"
)

// keyRows returns n CSV rows "KEY,a,b,y" with keys user<first+i>@example.com
// and seeded features (PCG seed 5, day: fixed so that reruns are identical).
func keyRows(day uint64, first, n int) []string {
	rng := rand.New(rand.NewPCG(5, day))
	rows := make([]string, n)
	for i := range rows {
		rows[i] = fmt.Sprintf("user%d@example.com,%g,%g,%d", first+i, float64(rng.IntN(2001)-1000)/250, float64(rng.IntN(2001)-1000)/250, rng.IntN(2))
	}
	return rows
}

func writeCSV(t *testing.T, name string, rows []string) {
	t.Helper()
	require.NoError(t, os.WriteFile(name, []byte("user,a,b,y\n"+strings.Join(rows, "\n")+"\n"), 0o644))
}

// TestForgetByKeys is issue #11/#12's daily export: two files of the same
// name ingested with --id-offset keep every key in the store (no mapping
// file is written); forget --keys with a key of each day leaves the store's
// state bit-identical to train --data on the edited rows, and no file of the
// store directory holds a forgotten key's bytes afterwards (they were there
// before). An unknown key is an error naming --keys and the key; a --mapping
// inside the store directory is refused.
func TestForgetByKeys(t *testing.T) {
	dir := t.TempDir()
	model := filepath.Join(dir, "model")
	o, err := runCLI(t, "init", "--store", model, "--kind", "logistic", "--d", "2", "--tau", "3", "--checkpoint-every", "8")
	require.NoError(t, err, o)
	export := filepath.Join(dir, "export.csv")
	day1, day2 := keyRows(1, 0, 30), keyRows(2, 30, 30)
	for i, rows := range [][]string{day1, day2} {
		writeCSV(t, export, rows)
		o, err := runCLI(t, "ingest", "--store", model, "--data", export, "--label", "y", "--id", "user", "--id-offset", fmt.Sprint(100*i), "--batch", "7")
		require.NoError(t, err, o)
	}
	_, err = os.Stat(export + ".ids.csv")
	require.ErrorIs(t, err, os.ErrNotExist, "no mapping file without --mapping")

	has := func(key string) bool {
		t.Helper()
		found := false
		require.NoError(t, filepath.WalkDir(model, func(p string, d os.DirEntry, err error) error {
			if err != nil || d.IsDir() {
				return err
			}
			b, err := os.ReadFile(p)
			found = found || bytes.Contains(b, []byte(key))
			return err
		}))
		return found
	}
	gone := []string{"user3@example.com", "user45@example.com"}
	for _, k := range gone {
		require.True(t, has(k), "%s is in the store before the forget (the search can fail)", k)
	}

	_, err = runCLI(t, "forget", "--store", model, "--keys", "user3@example.com,nobody@example.com")
	require.ErrorContains(t, err, `--keys: `)
	require.ErrorContains(t, err, `"nobody@example.com"`)

	_, err = runCLI(t, "forget", "--store", model, "--keys", "user3@example.com,,x")
	require.ErrorContains(t, err, "--keys: line 1, key 2 is empty")

	o, err = runCLI(t, "forget", "--store", model, "--keys", strings.Join(gone, ", "))
	require.NoError(t, err, o)
	require.Contains(t, o, "forgot 2 ids [4 116]")
	require.Contains(t, o, "erased 2 string keys")
	for _, k := range gone {
		require.False(t, has(k), "%s is still in the store directory", k)
	}
	require.True(t, has("user4@example.com"), "keys not forgotten stay")

	// train --data on the edited rows (day 1 without row 4, day 2 without
	// row 16), one file.
	edited := filepath.Join(dir, "edited.csv")
	writeCSV(t, edited, append(append(append([]string{}, day1[:3]...), day1[4:]...), append(append([]string{}, day2[:15]...), day2[16:]...)...))
	state := filepath.Join(dir, "train.state")
	o, err = runCLI(t, "train", "--data", edited, "--label", "y", "--id", "user", "--tau", "3", "--out", state)
	require.NoError(t, err, o)
	want, _, err := olbfgs.UnmarshalSnapshot(readFile(t, state))
	require.NoError(t, err)
	s, err := store.Open(model)
	require.NoError(t, err)
	got, err := s.State()
	require.NoError(t, err)
	ids, err := s.LookupKeys([]string{"user0@example.com", "user59@example.com"})
	require.NoError(t, err)
	require.NoError(t, s.Close())
	require.Equal(t, []int64{1, 130}, ids)
	require.True(t, floatbits.Equal(want.W(), got.W()), "store state equals train --data on the edited rows")
	require.Equal(t, want.T(), got.T())

	_, err = runCLI(t, "ingest", "--store", model, "--data", export, "--label", "y", "--id", "user", "--id-offset", "500", "--mapping", filepath.Join(model, "ids.csv"))
	require.ErrorContains(t, err, "--mapping: ")
	require.ErrorContains(t, err, "inside the store directory")
	_, err = runCLI(t, "forget", "--store", model)
	require.ErrorContains(t, err, "--ids: required (or --keys, --ids-from, --keys-from, or --resolve)")
}
