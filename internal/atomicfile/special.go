package atomicfile

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
)

// ErrIsDir is returned (wrapped) by WriteFile when the target is a
// directory.
var ErrIsDir = errors.New("is a directory, not a file")

// stdStreams are the streams a target may turn out to be the file of
// (tests replace them).
var stdStreams = func() []*os.File { return []*os.File{os.Stdout, os.Stderr} }

// stdStream returns the standard stream whose file is fi (a regular file
// the process's output is redirected to), or nil.
func stdStream(fi fs.FileInfo) *os.File {
	for _, f := range stdStreams() {
		if f == nil {
			continue
		}
		if si, err := f.Stat(); err == nil && os.SameFile(fi, si) {
			return f
		}
	}
	return nil
}

// writeDirect writes to the existing non-regular file path (a device, a
// FIFO, a socket), opened for writing without creating or truncating it.
func writeDirect(path string, write func(w io.Writer) error) error {
	f, err := os.OpenFile(path, os.O_WRONLY, 0)
	if err != nil {
		return fmt.Errorf("atomicfile: %w", err)
	}
	if err := writeStream(f, write); err != nil {
		_ = f.Close() // the write's error is the one to report
		return err
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("atomicfile: %w", err)
	}
	return nil
}

// writeStream writes through a buffer to the open file f, which it does
// not close.
func writeStream(f *os.File, write func(w io.Writer) error) error {
	bw := bufio.NewWriterSize(f, 64<<10)
	if err := write(bw); err != nil {
		return err
	}
	if err := bw.Flush(); err != nil {
		return fmt.Errorf("atomicfile: write %s: %w", f.Name(), err)
	}
	return nil
}

// maxLinks bounds the symbolic links resolveLinks follows (as the kernel's
// ELOOP limit does).
const maxLinks = 40

// resolveLinks returns path with the symbolic links of its last element
// followed, dangling ones included: the path of the file a rename must
// replace so that the links stay and what they point to changes. A path
// that is no link is returned as it is.
func resolveLinks(path string) (string, error) {
	for range maxLinks {
		fi, err := os.Lstat(path)
		if err != nil || fi.Mode()&fs.ModeSymlink == 0 {
			return path, nil
		}
		t, err := os.Readlink(path)
		if err != nil {
			return "", err
		}
		if !filepath.IsAbs(t) {
			t = filepath.Join(filepath.Dir(path), t)
		}
		path = t
	}
	return "", fmt.Errorf("%s: too many levels of symbolic links", path)
}
