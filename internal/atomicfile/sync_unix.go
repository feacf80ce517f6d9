//go:build unix

package atomicfile

import (
	"errors"
	"fmt"
	"os"
	"syscall"
)

// syncDir flushes the directory entry of a rename to stable storage. File
// systems that cannot fsync a directory (EINVAL, e.g. some network or
// virtual file systems) are not an error: the rename is atomic there too,
// only its durability after a power loss is not guaranteed.
func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return fmt.Errorf("atomicfile: %w", err)
	}
	err = d.Sync()
	cerr := d.Close()
	if err != nil && !errors.Is(err, syscall.EINVAL) {
		return fmt.Errorf("atomicfile: sync directory: %w", err)
	}
	if cerr != nil {
		return fmt.Errorf("atomicfile: %w", cerr)
	}
	return nil
}
