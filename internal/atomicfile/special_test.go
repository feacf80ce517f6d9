//go:build unix

package atomicfile

import (
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"
)

// TestWriteFileFIFO: a named pipe is written directly (a reader gets the
// content) and stays a named pipe.
func TestWriteFileFIFO(t *testing.T) {
	path := filepath.Join(t.TempDir(), "out.fifo")
	if err := syscall.Mkfifo(path, 0o600); err != nil {
		t.Skip("mkfifo:", err)
	}
	got := make(chan string, 1)
	go func() {
		f, err := os.Open(path) // blocks until the writer opens
		if err != nil {
			got <- "open: " + err.Error()
			return
		}
		defer f.Close()
		b, _ := io.ReadAll(f)
		got <- string(b)
	}()
	if err := WriteFile(path, 0o644, writeString("through the pipe\n")); err != nil {
		t.Fatal(err)
	}
	select {
	case s := <-got:
		if s != "through the pipe\n" {
			t.Errorf("the reader got %q", s)
		}
	case <-time.After(10 * time.Second):
		t.Error("the reader got nothing: the pipe was not written")
	}
	fi, err := os.Lstat(path)
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode()&fs.ModeNamedPipe == 0 {
		t.Errorf("after the write %s is %v, want the named pipe kept", path, fi.Mode())
	}
	if names := dirEntries(t, filepath.Dir(path)); len(names) != 1 {
		t.Errorf("directory holds %q, want the pipe alone", names)
	}
}

// TestWriteFileDevNull: a device is written directly and never replaced.
func TestWriteFileDevNull(t *testing.T) {
	before, err := os.Lstat(os.DevNull)
	if err != nil {
		t.Skip(err)
	}
	if err := WriteFile(os.DevNull, 0o644, writeString("discarded")); err != nil {
		t.Fatal(err)
	}
	after, err := os.Lstat(os.DevNull)
	if err != nil {
		t.Fatal(err)
	}
	if !os.SameFile(before, after) || after.Mode() != before.Mode() {
		t.Errorf("%s changed: %v, was %v", os.DevNull, after.Mode(), before.Mode())
	}
}

// TestWriteFileSymlink: a link is kept and the file it points to is
// replaced atomically, for a link to an existing file, a chain of links
// and a dangling link (its target created).
func TestWriteFileSymlink(t *testing.T) {
	for _, tt := range []struct {
		name   string
		exists bool
		chain  bool
	}{
		{name: "existing target", exists: true},
		{name: "chain", exists: true, chain: true},
		{name: "dangling", exists: false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			sub := filepath.Join(dir, "real")
			if err := os.Mkdir(sub, 0o755); err != nil {
				t.Fatal(err)
			}
			target := filepath.Join(sub, "real.csv")
			if tt.exists {
				if err := os.WriteFile(target, []byte("old"), 0o600); err != nil {
					t.Fatal(err)
				}
			}
			link := filepath.Join(dir, "link.csv")
			if err := os.Symlink(filepath.Join("real", "real.csv"), link); err != nil {
				t.Fatal(err)
			}
			if tt.chain {
				link2 := filepath.Join(dir, "link2.csv")
				if err := os.Symlink("link.csv", link2); err != nil {
					t.Fatal(err)
				}
				link = link2
			}
			if err := WriteFile(link, 0o640, writeString("new")); err != nil {
				t.Fatal(err)
			}
			fi, err := os.Lstat(link)
			if err != nil {
				t.Fatal(err)
			}
			if fi.Mode()&fs.ModeSymlink == 0 {
				t.Fatalf("%s is no longer a link (%v)", link, fi.Mode())
			}
			b, err := os.ReadFile(target)
			if err != nil {
				t.Fatal(err)
			}
			if string(b) != "new" {
				t.Errorf("the link's target holds %q, want %q", b, "new")
			}
			if names := dirEntries(t, sub); len(names) != 1 {
				t.Errorf("the target's directory holds %q, want the target alone", names)
			}
		})
	}
}

// TestWriteFileDirectory: a directory is refused and left alone.
func TestWriteFileDirectory(t *testing.T) {
	dir := t.TempDir()
	err := WriteFile(dir, 0o644, writeString("x"))
	if !errors.Is(err, ErrIsDir) {
		t.Fatalf("error = %v, want ErrIsDir", err)
	}
	if names := dirEntries(t, dir); len(names) != 0 {
		t.Errorf("directory holds %q after a refused write", names)
	}
}

// TestWriteFileStdStream: the regular file standard output is redirected
// to is written through that stream (shared offset, content before it
// kept), not replaced. Standard output is a temporary file here.
func TestWriteFileStdStream(t *testing.T) {
	path := filepath.Join(t.TempDir(), "redirected")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	saved := stdStreams
	stdStreams = func() []*os.File { return []*os.File{f} }
	defer func() { stdStreams = saved }()
	if _, err := io.WriteString(f, "summary\n"); err != nil {
		t.Fatal(err)
	}
	before, _ := os.Stat(path)
	if err := WriteFile(path, 0o644, writeString("rows\n")); err != nil {
		t.Fatal(err)
	}
	if _, err := io.WriteString(f, "after\n"); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if string(b) != "summary\nrows\nafter\n" {
		t.Errorf("file holds %q", b)
	}
	if after, _ := os.Stat(path); !os.SameFile(before, after) {
		t.Error("the redirected file was replaced")
	}
}
