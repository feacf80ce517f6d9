package store

import "unlearn/internal/testutil"

// Under the race detector the store's property tests run 50 cases instead
// of rapid's 100, and those that create a SQLite store per case
// (TestForgetExactProperty, TestKeptReleasesProperty, TestKeysProperty,
// TestForgetExactWithOptions, TestStoreMachine) only their first 8–10
// (testutil.FewerUnderRace): the race detector slows SQLite (C translated
// to Go, checked pointer by pointer) about ten-fold, and the package must
// stay within its time budget. .ci/run runs those five at rapid's full
// count without the race detector. Their seeds are random (CI draws and
// prints one per run), so the cases differ from run to run.
// `go test -race ./store -rapid.checks=1000` runs a long one under the race
// detector (a count asked for runs in full).
func init() {
	if testutil.RaceEnabled {
		testutil.DefaultRapidChecks(50)
	}
}
