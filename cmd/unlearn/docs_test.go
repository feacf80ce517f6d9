package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestCLIReferenceUpToDate fails when docs/cli.md is not what the commands'
// help says: regenerate it with `go run ./cmd/unlearn gendocs --out
// docs/cli.md` after changing a command.
func TestCLIReferenceUpToDate(t *testing.T) {
	var want bytes.Buffer
	require.NoError(t, writeCLIReference(&want, newRootCmd()))
	got, err := os.ReadFile(filepath.Join("..", "..", cliReference))
	require.NoError(t, err, "generate it with `go run ./cmd/unlearn gendocs --out %s`", cliReference)
	if !bytes.Equal(got, want.Bytes()) {
		gl, wl := strings.Split(string(got), "\n"), strings.Split(want.String(), "\n")
		line := 0
		for line < min(len(gl), len(wl)) && gl[line] == wl[line] {
			line++
		}
		t.Fatalf("%s is out of date (first difference at line %d); regenerate it with `go run ./cmd/unlearn gendocs --out %s`",
			cliReference, line+1, cliReference)
	}
	t.Run("lists every visible command", func(t *testing.T) {
		for _, c := range visibleCommands(newRootCmd()) {
			if !strings.Contains(string(got), "\n## "+c.CommandPath()+"\n") {
				t.Errorf("no section for %s", c.CommandPath())
			}
		}
	})
}

func TestGendocsWritesTheReference(t *testing.T) {
	out := filepath.Join(t.TempDir(), "cli.md")
	o, err := runCLI(t, "gendocs", "--out", out)
	require.NoError(t, err, "gendocs output:\n%s", o)
	var want bytes.Buffer
	require.NoError(t, writeCLIReference(&want, newRootCmd()))
	if got := readFile(t, out); !bytes.Equal(got, want.Bytes()) {
		t.Fatal("gendocs (after Execute initialised cobra's defaults) writes a different reference than a fresh root")
	}
}
