package bound

import (
	"testing"

	"unlearn/internal/testutil"
)

// TestMain runs the property tests with 2000 rapid cases — 300 under the race
// detector, which slows them ~10×, to keep `go test -race` within its time
// budget (`go test -race -rapid.checks=2000` runs the full count) — and a
// fixed seed (an arbitrary one: the date this file was written), unless the
// rapid flags or variables say otherwise; see testutil.RunWithRapidDefaults.
func TestMain(m *testing.M) {
	checks := 2000
	if raceEnabled {
		checks = 300
	}
	testutil.RunWithRapidDefaults(m, checks, 20260401)
}
