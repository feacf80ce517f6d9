package speccheck

import (
	"testing"

	"unlearn/internal/testutil"
)

// TestMain runs the property tests with 1000 rapid cases (200 under the
// race detector, which slows them ~10×) and a fixed seed (the date this
// file was written), unless the rapid flags or variables say otherwise;
// see testutil.RunWithRapidDefaults.
func TestMain(m *testing.M) {
	checks := 1000
	if raceEnabled {
		checks = 200
	}
	testutil.RunWithRapidDefaults(m, checks, 20261123)
}
