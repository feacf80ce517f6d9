package bound

import (
	"math"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"pgregory.net/rapid"

	"unlearn/internal/testutil"
)

// near is testutil.Near.
func near(got, want, absTol, relTol float64) bool { return testutil.Near(got, want, absTol, relTol) }

// wantArgError fails the test unless err is an *ArgError (possibly wrapped)
// for argument arg wrapping sentinel, with the package prefix.
func wantArgError(t testing.TB, err error, arg string, sentinel error) {
	t.Helper()
	require.ErrorIs(t, err, sentinel, "want an error for %s", arg)
	var ae *ArgError
	require.ErrorAs(t, err, &ae)
	require.Equal(t, arg, ae.Arg, "argument named by the error %q", err)
	require.True(t, strings.HasPrefix(err.Error(), "bound: "), "error %q lacks the package prefix", err)
}

// wantPanic fails the test unless f panics with a "bound: " message.
func wantPanic(t *testing.T, f func()) {
	t.Helper()
	testutil.WantPanic(t, "bound: ", f)
}

// genRho draws ρ ∈ [0, 1), favouring the edges 0 and 1⁻ where the closed
// forms need care.
func genRho() *rapid.Generator[float64] {
	return rapid.Custom(func(t *rapid.T) float64 {
		switch rapid.IntRange(0, 4).Draw(t, "rhoKind") {
		case 0:
			return 0
		case 1: // 1 − 10^{-k}
			return 1 - math.Pow(10, -rapid.Float64Range(1, 15).Draw(t, "rhoDigits"))
		case 2: // tiny
			return math.Pow(10, -rapid.Float64Range(1, 300).Draw(t, "rhoTiny"))
		default:
			return rapid.Float64Range(0, math.Nextafter(1, 0)).Draw(t, "rho")
		}
	})
}

// genNonNeg draws a value ≥ 0 spanning many magnitudes, sometimes 0.
func genNonNeg(label string) *rapid.Generator[float64] {
	return rapid.Custom(func(t *rapid.T) float64 {
		if rapid.IntRange(0, 5).Draw(t, label+"Zero") == 0 {
			return 0
		}
		return math.Pow(10, rapid.Float64Range(-8, 4).Draw(t, label+"Log"))
	})
}
