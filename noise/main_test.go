package noise

import (
	"flag"
	"os"
	"testing"
)

// TestMain raises rapid's default number of cases from 100 to 2000 (the
// property tests are meant to run thousands of cases) and fixes its seed so
// CI is reproducible, unless -rapid.checks / -rapid.seed or the RAPID_CHECKS
// / RAPID_SEED variables say otherwise (-rapid.seed=0 explores randomly).
func TestMain(m *testing.M) {
	flag.Parse()
	set := map[string]bool{}
	flag.Visit(func(f *flag.Flag) { set[f.Name] = true })
	if _, ok := os.LookupEnv("RAPID_CHECKS"); !ok && !set["rapid.checks"] {
		if err := flag.Set("rapid.checks", "2000"); err != nil {
			panic(err)
		}
	}
	if _, ok := os.LookupEnv("RAPID_SEED"); !ok && !set["rapid.seed"] {
		// An arbitrary fixed seed (the date this file was written).
		if err := flag.Set("rapid.seed", "20260401"); err != nil {
			panic(err)
		}
	}
	os.Exit(m.Run())
}
