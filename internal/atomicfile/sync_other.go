//go:build !unix

package atomicfile

// syncDir does nothing where directories cannot be fsynced portably
// (Windows): the rename is still atomic, only its durability after a power
// loss is not guaranteed.
func syncDir(string) error { return nil }
