// Package testutil holds helpers shared by the tests of several packages:
// NaN-aware float comparison, panic checks for package-prefixed messages,
// and the project's rapid defaults (thousands of cases, a fixed seed). It is
// imported only from _test.go files.
package testutil

import (
	"flag"
	"math"
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"gonum.org/v1/gonum/floats/scalar"
	"pgregory.net/rapid"
)

// Near reports whether got is within the absolute or relative tolerance of
// want; NaN is never near anything (unlike testify's InDelta, which passes
// NaN against NaN; ARCHITECTURE practice 9).
func Near(got, want, absTol, relTol float64) bool {
	if math.IsNaN(got) || math.IsNaN(want) {
		return false
	}
	return scalar.EqualWithinAbsOrRel(got, want, absTol, relTol)
}

// WantPanic fails the test unless f panics with a string message that starts
// with prefix (a package prefix such as "bound: ": ARCHITECTURE practice 1).
func WantPanic(t *testing.T, prefix string, f func()) {
	t.Helper()
	defer func() {
		t.Helper()
		r := recover()
		require.NotNil(t, r, "no panic")
		s, ok := r.(string)
		require.True(t, ok && strings.HasPrefix(s, prefix), "panic %v lacks the prefix %q", r, prefix)
	}()
	f()
}

// DefaultRapidChecks sets rapid's number of cases to checks unless the
// RAPID_CHECKS variable says otherwise; a -rapid.checks flag on the command
// line still wins, since the test binary parses its flags after the
// packages' init functions run. It is for a test file's init, in a package
// without a TestMain of its own, and leaves rapid's seed alone.
func DefaultRapidChecks(checks int) {
	if _, ok := os.LookupEnv("RAPID_CHECKS"); ok {
		return
	}
	if err := flag.Set("rapid.checks", strconv.Itoa(checks)); err != nil {
		panic(err)
	}
}

// RunWithRapidDefaults is a TestMain body: it raises rapid's number of cases
// to checks (the property tests are meant to run thousands) and fixes its
// seed so CI is reproducible, unless -rapid.checks / -rapid.seed or the
// RAPID_CHECKS / RAPID_SEED variables say otherwise (-rapid.seed=0 explores
// randomly); then it runs the tests and exits.
func RunWithRapidDefaults(m *testing.M, checks int, seed uint64) {
	flag.Parse()
	set := map[string]bool{}
	flag.Visit(func(f *flag.Flag) { set[f.Name] = true })
	if _, ok := os.LookupEnv("RAPID_CHECKS"); !ok && !set["rapid.checks"] {
		if err := flag.Set("rapid.checks", strconv.Itoa(checks)); err != nil {
			panic(err)
		}
	}
	if _, ok := os.LookupEnv("RAPID_SEED"); !ok && !set["rapid.seed"] {
		if err := flag.Set("rapid.seed", strconv.FormatUint(seed, 10)); err != nil {
			panic(err)
		}
	}
	os.Exit(m.Run())
}

// FewerUnderRace returns prop, or, under the race detector, a property that
// runs prop on rapid's first n cases and passes the others at once without
// drawing: for a property whose cases are too slow under the race detector
// (a SQLite store per case: the race detector slows the pure-Go SQLite about
// ten-fold) to run them all in the package's time budget. The property keeps
// its full count without the race detector, and .ci/run runs it there
// (step "tests the race detector would slow"); tools/repocheck checks that
// every test calling FewerUnderRace is named in that step, as for
// SkipUnderRace. A number of cases asked for explicitly (-rapid.checks or
// RAPID_CHECKS) runs in full under the race detector too.
//
// prop is called from one goroutine at a time (rapid runs a property's cases
// in turn); the function returned counts them, so make one per rapid.Check.
func FewerUnderRace(n int, prop func(*rapid.T)) func(*rapid.T) {
	if !RaceEnabled || rapidChecksAsked() {
		return prop
	}
	cases := 0
	return func(t *rapid.T) {
		if cases++; cases > n {
			return
		}
		prop(t)
	}
}

// rapidChecksAsked reports whether the command line or the environment sets
// rapid's number of cases.
func rapidChecksAsked() bool {
	if _, ok := os.LookupEnv("RAPID_CHECKS"); ok {
		return true
	}
	for _, a := range os.Args[1:] {
		if a == "--" {
			break
		}
		name := strings.TrimLeft(a, "-")
		if strings.HasPrefix(a, "-") && (name == "rapid.checks" || strings.HasPrefix(name, "rapid.checks=")) {
			return true
		}
	}
	return false
}
