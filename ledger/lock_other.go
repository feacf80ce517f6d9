//go:build !unix

package ledger

// lockFile is a no-op where flock(2) is unavailable: keep one writer per
// ledger there (docs/packages/ledger.md).
func lockFile(string) (func(), error) { return func() {}, nil }
