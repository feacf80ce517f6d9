package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestCLIReferenceUpToDate fails when docs/cli.md is not what the commands'
// help says: regenerate it with `go run ./cmd/unlearn gendocs --out
// docs/cli.md` after changing a command.
func TestCLIReferenceUpToDate(t *testing.T) {
	var want bytes.Buffer
	if err := writeCLIReference(&want, newRootCmd()); err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(filepath.Join("..", "..", cliReference))
	if err != nil {
		t.Fatalf("%v: generate it with `go run ./cmd/unlearn gendocs --out %s`", err, cliReference)
	}
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
	if o, err := runCLI(t, "gendocs", "--out", out); err != nil {
		t.Fatalf("gendocs: %v\n%s", err, o)
	}
	var want bytes.Buffer
	if err := writeCLIReference(&want, newRootCmd()); err != nil {
		t.Fatal(err)
	}
	if got := readFile(t, out); !bytes.Equal(got, want.Bytes()) {
		t.Fatal("gendocs (after Execute initialised cobra's defaults) writes a different reference than a fresh root")
	}
}
