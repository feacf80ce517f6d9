package align

import (
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"
	"gonum.org/v1/gonum/floats/scalar"

	"unlearn/internal/teststream"
	"unlearn/olbfgs"
	"unlearn/stream"
)

// The test streams come from internal/teststream, not the paper's
// generators: small, well-conditioned and quick to build.

// quadStream returns a quadratic test loss and n inserts with ids 1..n
// (internal/teststream).
func quadStream(t testing.TB, seed uint64, d, n int) (stream.Loss, []stream.Event) {
	t.Helper()
	loss, events, err := teststream.Quadratic(rand.New(rand.NewPCG(seed, 21)), d, n)
	require.NoError(t, err)
	return loss, events
}

// logisticStream returns a ridge-logistic test loss and n inserts.
func logisticStream(t testing.TB, seed uint64, d, n int) (stream.Loss, []stream.Event) {
	t.Helper()
	loss, events, err := teststream.Logistic(rand.New(rand.NewPCG(seed, 22)), d, n)
	require.NoError(t, err)
	return loss, events
}

func replay(t testing.TB, loss stream.Loss, tau int, events []stream.Event) *olbfgs.Learner {
	t.Helper()
	cfg := olbfgs.DefaultConfig(loss.Dim())
	cfg.Memory = tau
	l, err := olbfgs.Replay(cfg, loss, events)
	require.NoError(t, err)
	return l
}

func newEngine(t testing.TB, d int, opt Options) *Engine {
	t.Helper()
	e, err := NewEngine(d, opt)
	require.NoError(t, err)
	return e
}

// equalWithin wraps scalar.EqualWithinAbsOrRel (NaN is never equal).
func equalWithin(a, b, tol float64) bool { return scalar.EqualWithinAbsOrRel(a, b, tol, tol) }
