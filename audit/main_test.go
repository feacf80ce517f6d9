package audit

import (
	"testing"

	"unlearn/internal/testutil"
)

// TestMain runs the property tests with 500 rapid cases and a fixed seed
// (an arbitrary one: the date this file was written) unless the rapid flags
// or variables say otherwise; see testutil.RunWithRapidDefaults.
func TestMain(m *testing.M) { testutil.RunWithRapidDefaults(m, 500, 20261123) }
