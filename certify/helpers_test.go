package certify

import (
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"unlearn/bound"
	"unlearn/internal/testutil"
	"unlearn/noise"
	"unlearn/olbfgs"
	"unlearn/stream"
)

// wantSpecError fails the test unless err is a *SpecError for field
// wrapping sentinel, with the package prefix.
func wantSpecError(t testing.TB, err error, field string, sentinel error) {
	t.Helper()
	require.ErrorIs(t, err, sentinel, "want an error for %s", field)
	var se *SpecError
	require.ErrorAs(t, err, &se)
	require.Equal(t, field, se.Field, "field named by the error %q", err)
	require.True(t, strings.HasPrefix(err.Error(), "certify: "), "error %q lacks the package prefix", err)
}

// wantVerifyError fails the test unless err is a *VerifyError for field
// wrapping sentinel.
func wantVerifyError(t testing.TB, err error, field string, sentinel error) {
	t.Helper()
	require.ErrorIs(t, err, sentinel, "verification must fail at %s", field)
	var ve *VerifyError
	require.ErrorAs(t, err, &ve)
	require.Equal(t, field, ve.Field, "field named by the error %q", err)
}

// wantPanic fails the test unless f panics with a "certify: " message.
func wantPanic(t *testing.T, f func()) {
	t.Helper()
	testutil.WantPanic(t, "certify: ", f)
}

// isotropic returns the quadratic loss with H0 = mu·I and H1 = L·I: the
// Hessian of an event with payload α is ((1−α)·mu + α·L)·I, which commutes
// with every inverse-Hessian approximation (docs/theory.md §13).
func isotropic(tb testing.TB, d int, mu, L float64) *stream.Quadratic {
	tb.Helper()
	h0, h1 := make([][]float64, d), make([][]float64, d)
	for i := range d {
		h0[i], h1[i] = make([]float64, d), make([]float64, d)
		h0[i][i], h1[i][i] = mu, L
	}
	q, err := stream.NewQuadratic(h0, h1)
	require.NoError(tb, err)
	return q
}

// randomInserts returns n inserts with ids first, first+1, …: minimizers of
// norm ≤ 2 in a uniform direction and curvature weights α ∈ [0, 1].
func randomInserts(r *rand.Rand, d, n int, first int64) []stream.Event {
	out := make([]stream.Event, n)
	for i := range out {
		b := make([]float64, d)
		var s float64
		for j := range b {
			b[j] = r.NormFloat64()
			s += b[j] * b[j]
		}
		scale := 2 * r.Float64() / math.Sqrt(max(s, 1e-300))
		for j := range b {
			b[j] *= scale
		}
		out[i] = stream.InsertEvent(first+int64(i), b, r.Float64())
	}
	return out
}

// scalarLoss returns the quadratic loss with H0 = c0·I and H1 = c1·I (every
// Hessian a multiple of I: the commuting case, read from the header).
func scalarLoss(tb testing.TB, d int, c0, c1 float64) *stream.Quadratic {
	return isotropic(tb, d, c0, c1)
}

// guarded returns a certifiable configuration for Hessians with spectrum
// in [c0, c1]: radius W, sample bound B, a pair guard whose window just
// contains [c0, c1], angle 1e-6 and γ₀ = 1/c1.
func guarded(d, tau int, eta, c0, c1, w, b float64) olbfgs.Config {
	cfg := olbfgs.DefaultConfig(d)
	cfg.Memory, cfg.StepSize, cfg.InitialScale = tau, eta, 1/c1
	cfg.Radius, cfg.SampleBound = w, b
	cfg.PairAngle, cfg.PairMin, cfg.PairMax = 1e-6, c0*(1-1e-9), c1*(1+1e-9)
	return cfg
}

// seeded returns a seeded sampler (tests only).
func seeded(seed uint64) noise.Sampler { return noise.NewSeededSampler(seed, noise.SamplerOptions{}) }

// Silence unused-import checks of helpers used by some tests only.
var _ = bound.Proved
