package certify

import (
	"flag"
	"os"
	"testing"
)

// TestMain raises rapid's default number of cases from 100 to 2000 (the
// property tests are meant to run thousands of cases; 300 under the race
// detector, which slows them ~10×, to keep `go test -race` within its time
// budget) and fixes its seed so CI is reproducible, unless -rapid.checks /
// -rapid.seed or the RAPID_CHECKS / RAPID_SEED variables say otherwise
// (-rapid.seed=0 explores randomly). `go test -race -rapid.checks=2000`
// runs the full count under the race detector.
func TestMain(m *testing.M) {
	flag.Parse()
	set := map[string]bool{}
	flag.Visit(func(f *flag.Flag) { set[f.Name] = true })
	if _, ok := os.LookupEnv("RAPID_CHECKS"); !ok && !set["rapid.checks"] {
		checks := "2000"
		if raceEnabled {
			checks = "300"
		}
		if err := flag.Set("rapid.checks", checks); err != nil {
			panic(err)
		}
	}
	if _, ok := os.LookupEnv("RAPID_SEED"); !ok && !set["rapid.seed"] {
		// An arbitrary fixed seed (the date this file was written).
		if err := flag.Set("rapid.seed", "20260415"); err != nil {
			panic(err)
		}
	}
	os.Exit(m.Run())
}
