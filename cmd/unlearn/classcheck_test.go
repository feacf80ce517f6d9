package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestDeclaredClassWithoutRows: a class named by --classes (or by a
// store's contract) that has no row in the data is refused, naming
// --classes and the class, by train, tune and a store's first ingest —
// binary and multinomial; a later ingest may bring one class alone.
func TestDeclaredClassWithoutRows(t *testing.T) {
	dir := t.TempDir()
	t.Chdir(dir)
	var all, zeros strings.Builder
	all.WriteString("a,b,y\n")
	zeros.WriteString("a,b,y\n")
	for i := range 40 {
		fmt.Fprintf(&all, "%g,%g,%d\n", 0.1*float64(i%7), -0.05*float64(i%5), i%2)
		fmt.Fprintf(&zeros, "%g,%g,0\n", 0.1*float64(i%7), -0.05*float64(i%5))
	}
	require.NoError(t, os.WriteFile("d.csv", []byte(all.String()), 0o644))
	require.NoError(t, os.WriteFile("zeros.csv", []byte(zeros.String()), 0o644))
	for _, c := range []struct {
		name string
		args []string
		want string
	}{
		{"train", []string{"train", "--data", "d.csv", "--label", "y", "--classes", "0,2", "--out", "s.json"}, `--classes: class "2" has no rows in d.csv (rows per class: "0": 20)`},
		{"train multinomial", []string{"train", "--data", "d.csv", "--label", "y", "--kind", "multinomial", "--classes", "0,1,5", "--out", "s.json"}, `--classes: class "5" has no rows in d.csv`},
		{"tune", []string{"tune", "--data", "d.csv", "--label", "y", "--classes", "3,1", "--etas", "0.1", "--lambdas", "0.01"}, `--classes: class "3" has no rows in d.csv`},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := runCLI(t, c.args...)
			require.Error(t, err)
			require.Contains(t, err.Error(), c.want)
			_, serr := os.Stat("s.json")
			require.True(t, os.IsNotExist(serr), "nothing written")
		})
	}
	t.Run("first ingest", func(t *testing.T) {
		_, err := runCLI(t, "init", "--store", "m", "--data", "d.csv", "--label", "y", "--classes", "0,1")
		require.NoError(t, err)
		_, err = runCLI(t, "ingest", "--store", "m", "--data", "zeros.csv", "--label", "y")
		require.ErrorContains(t, err, `--classes: class "1" has no rows in zeros.csv`)
		_, err = runCLI(t, "ingest", "--store", "m", "--data", "d.csv", "--label", "y")
		require.NoError(t, err)
		_, err = runCLI(t, "ingest", "--store", "m", "--data", "zeros.csv", "--label", "y", "--id-offset", "1000")
		require.NoError(t, err, "a later ingest may bring one class alone")
	})
	_, err := runCLI(t, "train", "--data", "d.csv", "--label", "y", "--classes", "0,1", "--out", filepath.Join(dir, "ok.json"))
	require.NoError(t, err, "every declared class has rows")
}
