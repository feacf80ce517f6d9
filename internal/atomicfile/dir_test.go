package atomicfile

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// isOurs accepts folders holding a file named "marker".
func isOurs(dir string) error {
	_, err := os.Stat(filepath.Join(dir, "marker"))
	return err
}

func fillWith(names ...string) func(string) error {
	return func(tmp string) error {
		for _, n := range names {
			if err := os.WriteFile(filepath.Join(tmp, n), []byte(n), 0o644); err != nil {
				return err
			}
		}
		return nil
	}
}

func TestReplaceDir(t *testing.T) {
	errBoom := errors.New("boom")
	tests := []struct {
		name     string
		existing []string // files in dir before; nil: no dir; empty: empty dir
		fill     func(string) error
		wantErr  error
		want     []string // files in dir after
	}{
		{name: "new folder", fill: fillWith("a", "marker"), want: []string{"a", "marker"}},
		{name: "empty folder", existing: []string{}, fill: fillWith("a"), want: []string{"a"}},
		{name: "replace ours", existing: []string{"marker", "stale"}, fill: fillWith("b", "marker"), want: []string{"b", "marker"}},
		{name: "refuse foreign", existing: []string{"thesis.tex"}, fill: fillWith("b"), wantErr: ErrNotReplaceable, want: []string{"thesis.tex"}},
		{name: "fill error keeps old", existing: []string{"marker", "old"}, fill: func(string) error { return errBoom }, wantErr: errBoom, want: []string{"marker", "old"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			parent := t.TempDir()
			dir := filepath.Join(parent, "out")
			if tt.existing != nil {
				if err := os.Mkdir(dir, 0o755); err != nil {
					t.Fatal(err)
				}
				if err := fillWith(tt.existing...)(dir); err != nil {
					t.Fatal(err)
				}
			}
			err := ReplaceDir(dir, isOurs, tt.fill)
			if !errors.Is(err, tt.wantErr) {
				t.Fatalf("ReplaceDir error = %v, want %v", err, tt.wantErr)
			}
			if tt.want != nil {
				if got := dirEntries(t, dir); !slices.Equal(got, tt.want) {
					t.Errorf("dir holds %v, want %v", got, tt.want)
				}
			}
			// Nothing but the target may remain in the parent: no temporary
			// or old folders.
			if got := dirEntries(t, parent); len(got) > 1 || len(got) == 1 && got[0] != "out" {
				t.Errorf("parent holds %v, want only out", got)
			}
		})
	}
}
