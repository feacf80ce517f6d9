package testutil

import (
	"fmt"
	"os"
	"testing"
)

// CIEnv names the environment variable that .ci/run sets to 1. Under it a
// test that would skip for want of something CI provides (python3 for the
// cross-check against tools/specref, for instance) fails instead, so that
// a check that matters cannot silently stop running in CI.
const CIEnv = "UNLEARN_CI"

// InCI reports whether the tests run under .ci/run (CIEnv is set to 1).
func InCI() bool { return os.Getenv(CIEnv) == "1" }

// SkipOrFail skips t with the reason given by format and args, or, under
// .ci/run (InCI), fails it with that reason: CI provides what the test
// needs, so its absence there is a defect of the CI machine, not a reason
// to skip.
func SkipOrFail(t testing.TB, format string, args ...any) {
	t.Helper()
	why := fmt.Sprintf(format, args...)
	if InCI() {
		t.Fatalf("%s; %s=1 (.ci/run) requires this check to run", why, CIEnv)
	}
	t.Skip(why)
}

// SkipUnderRace skips t when the race detector is on, for a check that is
// too slow under it (the race detector slows the secure sampler and SQLite
// about ten-fold) and that .ci/run therefore runs in its step without the
// race detector ("tests the race detector would slow"). tools/speccheck's
// TestRaceSkipsRunInCI checks that every test calling it is named there,
// so the check cannot fall out of CI unnoticed.
func SkipUnderRace(t testing.TB) {
	t.Helper()
	if RaceEnabled {
		t.Skip("too slow under the race detector: .ci/run runs it without -race (step \"tests the race detector would slow\")")
	}
}
