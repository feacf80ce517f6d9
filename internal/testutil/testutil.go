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
