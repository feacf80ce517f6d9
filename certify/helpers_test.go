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

// approx is testutil.Near.
func approx(got, want, absTol, relTol float64) bool { return testutil.Near(got, want, absTol, relTol) }

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

// fixture is a small trained quadratic learner with one deletion, used by
// the Certify and Verify tests.
type fixture struct {
	loss   *stream.Quadratic
	header stream.Header
	prefix []stream.Event
	state  *olbfgs.Learner // the no-op unlearned state: prefix run, id 3 marked deleted
}

func newFixture(tb testing.TB) fixture {
	tb.Helper()
	const d = 4
	loss := isotropic(tb, d, 0.5, 2) // μ = 0.5, L = 2: any values with μ ≤ L
	r := rand.New(rand.NewPCG(1, 2))
	prefix := randomInserts(r, d, 12, 1)
	cfg := olbfgs.DefaultConfig(d)
	cfg.Memory = 3
	l, err := olbfgs.Replay(cfg, loss, prefix)
	require.NoError(tb, err)
	l.MarkDeleted(3)
	h, err := HeaderOf(loss)
	require.NoError(tb, err)
	return fixture{loss: loss, header: h, prefix: prefix, state: l}
}

// fixtureScenario is a proved scenario for the fixture's constants:
// isotropic losses with μ = 0.5, L = 2 give hMin = 1/L, hMax = 1/μ; η = 0.1
// gives the commuting ρ = max(|1 − 0.1·0.5/2|, |1 − 0.1·2/0.5|) = 0.975. G
// = 3 is illustrative (the tests that need a true G measure it).
func fixtureScenario(tb testing.TB) *bound.Scenario {
	tb.Helper()
	k, err := bound.AnalyticContraction(bound.AnalyticParams{Mu: 0.5, L: 2, Eta: 0.1, HMin: 0.5, HMax: 2, Case: bound.Commuting})
	require.NoError(tb, err)
	return &bound.Scenario{
		Constants:   bound.Constants{G: 3, HMin: 0.5, HMax: 2, Eta: 0.1, Tau: 3, Source: bound.Proved},
		Contraction: k,
		Ages:        []int{9},
	}
}

// seededSpec is a spec at (ε, δ) = (1, 1e-5) with the fixture's scenario and
// the seeded sampler (tests only).
func seededSpec(tb testing.TB, seed uint64) Spec {
	tb.Helper()
	return Spec{Epsilon: 1, Delta: 1e-5, Scenario: fixtureScenario(tb), Sampler: noise.NewSeededSampler(seed, noise.SamplerOptions{})}
}
