package audit

import (
	"testing"

	"unlearn/internal/testutil"
)

// TestMain runs the property tests with 500 rapid cases — 100 under the race
// detector, which slows every audit ~10× (`go test -race
// -rapid.checks=500` runs the full count) — and a fixed seed (an arbitrary
// one: the date this file was written) unless the rapid flags or variables
// say otherwise; see testutil.RunWithRapidDefaults.
func TestMain(m *testing.M) {
	checks := 500
	if raceEnabled {
		checks = 100
	}
	testutil.RunWithRapidDefaults(m, checks, 20261123)
}
