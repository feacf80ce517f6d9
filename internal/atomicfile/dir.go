package atomicfile

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
)

// ErrNotReplaceable is returned by ReplaceDir when dir exists and is
// neither empty nor accepted by its replaceable check.
var ErrNotReplaceable = errors.New("atomicfile: refusing to replace the folder")

// ReplaceDir writes a folder atomically: fill writes the complete content
// into a new temporary folder beside dir (".<base>.tmp-<random>"), which is
// then renamed to dir. Readers see the previous dir or the new one, never a
// half-written folder. An existing dir is replaced only if it is empty or
// replaceable(dir) returns nil (for example, "it holds a manifest I
// wrote"); otherwise ReplaceDir returns that error wrapped with
// ErrNotReplaceable and touches nothing. replaceable may be nil (only an
// empty folder is then replaced). If fill fails, the temporary folder is
// removed and dir is left as it was.
//
// The old folder is first moved to a hidden name and deleted after the
// new one is in place; a crash in between can leave it (".<base>.old-*")
// or the temporary folder behind, never a partial dir.
func ReplaceDir(dir string, replaceable func(dir string) error, fill func(tmp string) error) error {
	if fill == nil {
		panic("atomicfile: ReplaceDir: nil fill function")
	}
	dir = filepath.Clean(dir)
	parent, base := filepath.Dir(dir), filepath.Base(dir)
	exists, err := checkReplaceable(dir, replaceable)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(parent, 0o755); err != nil {
		return fmt.Errorf("atomicfile: %w", err)
	}
	tmp, err := os.MkdirTemp(parent, "."+base+".tmp-")
	if err != nil {
		return fmt.Errorf("atomicfile: %w", err)
	}
	committed := false
	defer func() {
		if !committed {
			_ = os.RemoveAll(tmp) // best effort; the error that matters is already set
		}
	}()
	if err := os.Chmod(tmp, 0o755); err != nil {
		return fmt.Errorf("atomicfile: %w", err)
	}
	if err := fill(tmp); err != nil {
		return err
	}
	if !exists {
		if err := os.Rename(tmp, dir); err != nil {
			return fmt.Errorf("atomicfile: %w", err)
		}
		committed = true
		return syncDir(parent)
	}
	// Reserve a fresh hidden name for the old folder, then free it: not
	// every file system lets rename(2) replace an empty directory.
	old, err := os.MkdirTemp(parent, "."+base+".old-")
	if err != nil {
		return fmt.Errorf("atomicfile: %w", err)
	}
	if err := os.Remove(old); err != nil {
		return fmt.Errorf("atomicfile: %w", err)
	}
	if err := os.Rename(dir, old); err != nil {
		return fmt.Errorf("atomicfile: replacing %s: %w", dir, err)
	}
	if err := os.Rename(tmp, dir); err != nil {
		_ = os.Rename(old, dir) // put the previous folder back
		return fmt.Errorf("atomicfile: replacing %s: %w", dir, err)
	}
	committed = true
	if err := syncDir(parent); err != nil {
		return err
	}
	if err := os.RemoveAll(old); err != nil {
		return fmt.Errorf("atomicfile: removing the previous %s: %w", dir, err)
	}
	return nil
}

// checkReplaceable reports whether dir exists, and an error if it may not
// be replaced.
func checkReplaceable(dir string, replaceable func(string) error) (bool, error) {
	fi, err := os.Stat(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("atomicfile: %w", err)
	}
	if !fi.IsDir() {
		return false, fmt.Errorf("%w: %s exists and is not a folder", ErrNotReplaceable, dir)
	}
	ents, err := os.ReadDir(dir)
	if err != nil {
		return false, fmt.Errorf("atomicfile: %w", err)
	}
	if len(ents) == 0 {
		return true, nil
	}
	if replaceable == nil {
		return false, fmt.Errorf("%w: %s is not empty", ErrNotReplaceable, dir)
	}
	if err := replaceable(dir); err != nil {
		return false, fmt.Errorf("%w: %s: %w", ErrNotReplaceable, dir, err)
	}
	return true, nil
}
