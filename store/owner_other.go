//go:build !unix

package store

import (
	"errors"
	"os"
)

var errLocked = errors.New("locked")

// lockFile is a no-op where flock(2) is not available: the store is then
// not protected from a second writer while a service owns it.
func lockFile(*os.File, bool) error { return nil }
