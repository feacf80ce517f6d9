// Package atomicfile writes files atomically: readers of the target path see
// either its old content or the complete new content, never a partial file,
// even if the writer fails, panics or the process is killed mid-write.
//
// The method is the usual one on POSIX file systems: write a temporary file in
// the target's directory (so the final rename stays on one file system), flush
// it to stable storage with fsync, rename it over the target (rename(2) is
// atomic), then fsync the directory so the rename itself is durable.
//
// What the target path already is decides what is replaced:
//
//   - nothing, or a regular file: the file is replaced atomically;
//   - a symbolic link (or a chain of them): the link is kept and the file
//     it points to is replaced atomically (a dangling link's target is
//     created), as if the target's own path had been given;
//   - a device, a FIFO or a socket (/dev/null, a terminal, a pipe such as
//     /dev/stdout or a named pipe): it is written directly, never replaced;
//     such a target cannot be written atomically, and a failed write may
//     leave part of the output in it;
//   - the very file this process's standard output or error is redirected
//     to (/dev/stdout in `cmd --out /dev/stdout > file`): written through
//     that stream, as if "-" had been given;
//   - a directory: refused.
package atomicfile

import (
	"bufio"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
)

// WriteFile calls write with a buffered writer on a new temporary file in the
// directory of path and, if write returns nil, makes the file durable and
// renames it to path with permissions perm (not subject to the umask). If
// write returns an error or panics, or any step fails, the temporary file is
// removed and path is left as it was; the error is returned (or the panic
// continues).
//
// The temporary file is named ".<base>.tmp-<random>" next to path (next to
// the file a symbolic link points to); a crash between its creation and the
// rename can leave it behind, never a partial path. The package
// documentation says how links, devices, FIFOs and directories are treated.
func WriteFile(path string, perm fs.FileMode, write func(w io.Writer) error) (err error) {
	if write == nil {
		panic("atomicfile: WriteFile: nil write function")
	}
	if fi, err := os.Stat(path); err == nil {
		switch {
		case fi.IsDir():
			return fmt.Errorf("atomicfile: %s: %w", path, ErrIsDir)
		case !fi.Mode().IsRegular():
			return writeDirect(path, write)
		}
		if f := stdStream(fi); f != nil {
			return writeStream(f, write)
		}
	}
	path, err = resolveLinks(path)
	if err != nil {
		return fmt.Errorf("atomicfile: %w", err)
	}
	return replace(path, perm, write)
}

// replace writes path through a temporary file renamed over it.
func replace(path string, perm fs.FileMode, write func(w io.Writer) error) error {
	dir, base := filepath.Split(path)
	if dir == "" {
		dir = "."
	}
	f, err := os.CreateTemp(dir, "."+base+".tmp-*")
	if err != nil {
		return fmt.Errorf("atomicfile: %w", err)
	}
	tmp := f.Name()
	committed := false
	defer func() {
		if !committed {
			// Best effort: the write already failed; report that error.
			_ = f.Close()
			_ = os.Remove(tmp)
		}
	}()

	bw := bufio.NewWriterSize(f, 64<<10)
	if err := write(bw); err != nil {
		return err
	}
	if err := bw.Flush(); err != nil {
		return fmt.Errorf("atomicfile: write %s: %w", tmp, err)
	}
	if err := f.Chmod(perm); err != nil {
		return fmt.Errorf("atomicfile: %w", err)
	}
	if err := f.Sync(); err != nil {
		return fmt.Errorf("atomicfile: %w", err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("atomicfile: %w", err)
	}
	if err := os.Rename(tmp, path); err != nil {
		return fmt.Errorf("atomicfile: %w", err)
	}
	committed = true
	return syncDir(dir)
}
