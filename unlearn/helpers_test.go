package unlearn_test

import (
	"math"
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
	loss, events, err := teststream.Quadratic(rand.New(rand.NewPCG(seed, 11)), d, n)
	require.NoError(t, err)
	return loss, events
}

// logisticStream returns a ridge-logistic test loss and n inserts.
func logisticStream(t testing.TB, seed uint64, d, n int) (stream.Loss, []stream.Event) {
	t.Helper()
	loss, events, err := teststream.Logistic(rand.New(rand.NewPCG(seed, 12)), d, n)
	require.NoError(t, err)
	return loss, events
}

// actualAt trains a learner with memory tau on prefix, keeping checkpoints
// for window events from θ0.
func actualAt(t testing.TB, loss stream.Loss, tau, window int, prefix []stream.Event) *olbfgs.Learner {
	t.Helper()
	cfg := olbfgs.DefaultConfig(loss.Dim())
	cfg.Memory = tau
	l, err := olbfgs.New(cfg, loss)
	require.NoError(t, err)
	if window > 0 {
		require.NoError(t, l.KeepCheckpoints(window))
	}
	require.NoError(t, l.Run(prefix))
	return l
}

// sameState reports whether a and b hold bit-identical w and Z (the event
// counters and deleted ids may differ).
func sameState(a, b *olbfgs.Learner) bool {
	if len(a.W()) != len(b.W()) {
		return false
	}
	for i := range a.W() {
		if math.Float64bits(a.W()[i]) != math.Float64bits(b.W()[i]) {
			return false
		}
	}
	return a.Memory().Equal(b.Memory())
}

// close reports |a − b| ≤ tol·max(1, |b|) via scalar.EqualWithinAbsOrRel
// (NaN-aware: NaN is never close).
func close(a, b, tol float64) bool { return scalar.EqualWithinAbsOrRel(a, b, tol, tol) }
