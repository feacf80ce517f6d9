package store

import "unlearn/internal/testutil"

// The store's property tests (TestForgetExactProperty, TestKeptReleasesProperty,
// TestKeysProperty and the payload properties) create a SQLite store per
// case, and the race detector slows SQLite (C translated to Go, checked
// pointer by pointer) about ten-fold: under it they run 50 cases instead of
// rapid's 100, to keep the package within its time budget. Their seeds are
// random (CI draws and prints one per run), so the cases differ from run to
// run. `go test -race ./store -rapid.checks=1000` runs a long one.
func init() {
	if testutil.RaceEnabled {
		testutil.DefaultRapidChecks(50)
	}
}
