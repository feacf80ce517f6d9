package noise

import (
	"testing"

	"unlearn/internal/testutil"
)

// TestMain runs the property tests with 2000 rapid cases — 300 under the
// race detector, which slows them ~10× (the 256-bit reference tests most)
// — and a fixed seed (an arbitrary one: the date this file was written)
// unless the rapid flags or variables say otherwise; see
// testutil.RunWithRapidDefaults.
func TestMain(m *testing.M) {
	checks := 2000
	if raceEnabled {
		checks = 300
	}
	testutil.RunWithRapidDefaults(m, checks, 20260401)
}
