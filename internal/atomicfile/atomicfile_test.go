package atomicfile

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"testing"
)

// dirEntries returns the names in dir.
func dirEntries(t *testing.T, dir string) []string {
	t.Helper()
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	names := make([]string, len(ents))
	for i, e := range ents {
		names[i] = e.Name()
	}
	return names
}

func writeString(s string) func(io.Writer) error {
	return func(w io.Writer) error {
		_, err := io.WriteString(w, s)
		return err
	}
}

func TestWriteFile(t *testing.T) {
	errBoom := errors.New("boom")
	tests := []struct {
		name     string
		existing *string // content before the call; nil: no file
		write    func(io.Writer) error
		wantErr  error
		want     string // content after the call
	}{
		{name: "new file", write: writeString("hello\n"), want: "hello\n"},
		{name: "replace", existing: new("old content"), write: writeString("new"), want: "new"},
		{name: "empty", existing: new("old"), write: writeString(""), want: ""},
		{
			name:     "write error keeps old file",
			existing: new("old content"),
			write: func(w io.Writer) error {
				if _, err := io.WriteString(w, "partial"); err != nil {
					return err
				}
				return errBoom
			},
			wantErr: errBoom,
			want:    "old content",
		},
		{
			name: "write error leaves no file",
			write: func(w io.Writer) error {
				_, _ = io.WriteString(w, "partial")
				return errBoom
			},
			wantErr: errBoom,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			path := filepath.Join(dir, "out.jsonl")
			if tt.existing != nil {
				if err := os.WriteFile(path, []byte(*tt.existing), 0o600); err != nil {
					t.Fatal(err)
				}
			}
			err := WriteFile(path, 0o640, tt.write)
			if !errors.Is(err, tt.wantErr) {
				t.Fatalf("WriteFile error = %v, want %v", err, tt.wantErr)
			}
			got, rerr := os.ReadFile(path)
			switch {
			case tt.wantErr != nil && tt.existing == nil:
				if !errors.Is(rerr, os.ErrNotExist) {
					t.Errorf("after a failed write, %s exists (read error %v)", path, rerr)
				}
			case rerr != nil:
				t.Fatal(rerr)
			case string(got) != tt.want:
				t.Errorf("content = %q, want %q", got, tt.want)
			}
			// No temporary file may be left behind, success or failure.
			names := dirEntries(t, dir)
			wantN := 0
			if tt.existing != nil || tt.wantErr == nil {
				wantN = 1
			}
			if len(names) != wantN {
				t.Errorf("directory holds %q, want %d file(s)", names, wantN)
			}
			if tt.wantErr == nil && runtime.GOOS != "windows" {
				fi, err := os.Stat(path)
				if err != nil {
					t.Fatal(err)
				}
				if fi.Mode().Perm() != 0o640 {
					t.Errorf("mode = %v, want %v", fi.Mode().Perm(), os.FileMode(0o640))
				}
			}
		})
	}
}

func TestWriteFilePanicCleansUp(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "out")
	if err := os.WriteFile(path, []byte("old"), 0o600); err != nil {
		t.Fatal(err)
	}
	func() {
		defer func() {
			if r := recover(); r != "mid-write" {
				t.Errorf("recovered %v, want the callback's panic", r)
			}
		}()
		_ = WriteFile(path, 0o600, func(w io.Writer) error {
			_, _ = io.WriteString(w, "partial")
			panic("mid-write")
		})
	}()
	if got, err := os.ReadFile(path); err != nil || string(got) != "old" {
		t.Errorf("after a panic: content %q, error %v; want \"old\"", got, err)
	}
	if names := dirEntries(t, dir); len(names) != 1 {
		t.Errorf("directory holds %q, want only the original file", names)
	}
}

func TestWriteFileMissingDir(t *testing.T) {
	path := filepath.Join(t.TempDir(), "no", "such", "dir", "out")
	err := WriteFile(path, 0o600, writeString("x"))
	if !errors.Is(err, os.ErrNotExist) {
		t.Errorf("error = %v, want os.ErrNotExist", err)
	}
}

func TestWriteFileRelativePath(t *testing.T) {
	t.Chdir(t.TempDir())
	if err := WriteFile("rel.txt", 0o600, writeString("x")); err != nil {
		t.Fatal(err)
	}
	if got, err := os.ReadFile("rel.txt"); err != nil || string(got) != "x" {
		t.Errorf("content %q, error %v; want \"x\"", got, err)
	}
}

func TestWriteFileNilPanics(t *testing.T) {
	defer func() {
		if r := recover(); r == nil {
			t.Error("WriteFile(nil) did not panic")
		}
	}()
	_ = WriteFile(filepath.Join(t.TempDir(), "x"), 0o600, nil)
}
