package certify

import (
	"slices"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"unlearn/bound"
	"unlearn/noise"
	"unlearn/olbfgs"
	"unlearn/stream"
	"unlearn/unlearn"
)

// Certified is an unlearn.Operator.
var _ unlearn.Operator = (*Certified)(nil)

// wrapRequest is the fixture's prefix with a realized deletion of id 3 and
// a request to delete 3 and 7.
func wrapRequest(t *testing.T) (fixture, unlearn.Request) {
	t.Helper()
	f := newFixture(t)
	prefix := append(slices.Clone(f.prefix), stream.DeleteEvent(3))
	actual, err := olbfgs.Replay(f.state.Config(), f.loss, prefix)
	require.NoError(t, err)
	return f, unlearn.Request{Actual: actual, Prefix: prefix, U: stream.NewIDSet(3, 7)}
}

func TestWrapIsAnOperator(t *testing.T) {
	f, req := wrapRequest(t)
	spec := seededSpec(t, 5)
	c, err := Wrap(unlearn.MemoryReset(), spec)
	require.NoError(t, err)
	assert.Equal(t, "certified-memory-reset", c.Name(), "name")
	assert.Equal(t, "Full memory reset (certified)", c.Label(), "label")
	assert.Equal(t, "memory-reset", c.Unwrap().Name(), "name of the unwrapped operator")
	assert.Nil(t, c.Last(), "a certificate before any Apply")
	out, _, err := unlearn.Run(c, req)
	require.NoError(t, err)
	cert := c.Last()
	require.NotNil(t, cert, "no certificate after Apply")
	// The certificate names the intervention, counts |U| and takes the
	// ages from the request: id 3 has 9 inserts after it, id 7 has 5 (the
	// delete event is not a step).
	assert.Equal(t, "memory-reset", cert.Intervention, "intervention")
	assert.Equal(t, 2, cert.Deletions, "deletions")
	assert.Equal(t, []int{9, 5}, cert.Sensitivity.Bound.Ages, "ages")
	// Memory reset does not move w: no shift.
	if cert.Sensitivity.Shift != 0 {
		t.Errorf("shift %v for an intervention that keeps w", cert.Sensitivity.Shift)
	}
	// The certificate verifies against the intervention's own output.
	plain, _, err := unlearn.Run(unlearn.MemoryReset(), req)
	require.NoError(t, err)
	_, err = VerifyStates(cert, plain, out, &f.header)
	require.NoError(t, err)
	assert.NotSame(t, req.Actual, out, "the released state is the actual one")
	if slices.Equal(out.W(), req.Actual.W()) {
		t.Error("the released state carries no noise")
	}
}

func TestWrapShiftCoversTheIntervention(t *testing.T) {
	// Parameter-only moves w: the certificate's α is the untouched bound
	// plus ‖w̃ − w‖.
	_, req := wrapRequest(t)
	c, err := Wrap(unlearn.ParamOnly(), seededSpec(t, 5))
	require.NoError(t, err)
	_, cert, _, err := c.ApplyCertified(req)
	require.NoError(t, err)
	plain, _, err := unlearn.Run(unlearn.ParamOnly(), req)
	require.NoError(t, err)
	s := cert.Sensitivity
	if s.Shift != ShiftOf(req.Actual, plain) || s.Shift == 0 || s.Alpha < s.BoundAlpha+s.Shift {
		t.Errorf("α = %v, bound %v, shift %v (want %v)", s.Alpha, s.BoundAlpha, s.Shift, ShiftOf(req.Actual, plain))
	}
}

func TestWrapRebuildDefaultsToRecentRetainedInserts(t *testing.T) {
	// τ = 3: the last three inserts are 10, 11, 12, none deleted; the rebuild
	// replays them and its cost counts 3 events, 6 gradients.
	_, req := wrapRequest(t)
	spec := seededSpec(t, 5)
	spec.Memory = Rebuild
	c, err := Wrap(unlearn.NoOp(), spec)
	require.NoError(t, err)
	_, cert, cost, err := c.ApplyCertified(req)
	require.NoError(t, err)
	assert.Equal(t, []int64{10, 11, 12}, cert.Retained.IDs, "retained ids")
	assert.Equal(t, 3, cost.EventsReplayed, "cost: events replayed")
	assert.Equal(t, 6, cost.GradEvals, "cost: gradient evaluations")
}

func TestWrapGivenDelta0(t *testing.T) {
	// With Start = StartGiven the caller's Δ₀ is used as is (no shift): an
	// exact intervention with Δ₀ = 0 releases its state without noise.
	_, req := wrapRequest(t)
	spec := seededSpec(t, 5)
	spec.Scenario.Start, spec.Scenario.Delta0, spec.Scenario.Delta0Source = bound.StartGiven, 0, bound.Proved
	c, err := Wrap(unlearn.Oracle(), spec)
	require.NoError(t, err)
	out, cert, _, err := c.ApplyCertified(req)
	require.NoError(t, err)
	plain, _, err := unlearn.Run(unlearn.Oracle(), req)
	require.NoError(t, err)
	assert.True(t, cert.Exact, "exact")
	if cert.Sigma != 0 || !slices.Equal(out.W(), plain.W()) {
		t.Errorf("σ %v: want 0 and the oracle's w", cert.Sigma)
	}
}

func TestWrapConcurrentUse(t *testing.T) {
	// Safe for concurrent use (run under -race): each ApplyCertified gets
	// its own certificate.
	_, req := wrapRequest(t)
	c, err := Wrap(unlearn.PairDrop(), seededSpec(t, 9))
	require.NoError(t, err)
	var wg sync.WaitGroup
	certs := make([]*Certificate, 4)
	for i := range certs {
		wg.Go(func() {
			// assert, not require: this is not the test goroutine.
			_, cert, _, err := c.ApplyCertified(req)
			assert.NoError(t, err)
			certs[i] = cert
			_, _, err = c.Apply(req)
			assert.NoError(t, err)
		})
	}
	wg.Wait()
	for i := 1; i < len(certs); i++ {
		if assert.NotNil(t, certs[i], "release %d failed", i) {
			assert.NotEqual(t, certs[0].AfterSHA256, certs[i].AfterSHA256, "release %d repeats release 0", i)
		}
	}
}

func TestWrapRefusesBadSpec(t *testing.T) {
	for _, tc := range []struct {
		name     string
		edit     func(*Spec)
		field    string
		sentinel error
	}{
		{"horizon", func(s *Spec) { s.Scenario.Horizon = 3 }, "Scenario.Horizon", ErrSpec},
		{"epsilon", func(s *Spec) { s.Epsilon = 0 }, "Epsilon", ErrEpsilon},
		{"rho", func(s *Spec) { s.Scenario.Contraction.Rho = 2 }, "Scenario.Contraction.Rho", ErrRho},
		{"sampler", func(s *Spec) { s.Sampler = fakeSampler{} }, "Sampler", ErrSampler},
		{"classic", func(s *Spec) { s.Calibration = noise.Classic }, "Epsilon", ErrClassicEpsilon},
	} {
		t.Run(tc.name, func(t *testing.T) {
			spec := seededSpec(t, 1)
			tc.edit(&spec)
			_, err := Wrap(unlearn.NoOp(), spec)
			wantSpecError(t, err, tc.field, tc.sentinel)
		})
	}
	t.Run("nil-operator", func(t *testing.T) {
		wantPanic(t, func() { _, _ = Wrap(nil, seededSpec(t, 1)) })
	})
	t.Run("bad-request", func(t *testing.T) {
		c, err := Wrap(unlearn.NoOp(), seededSpec(t, 1))
		require.NoError(t, err)
		_, _, _, err = c.ApplyCertified(unlearn.Request{})
		assert.Error(t, err, "an empty request was certified")
	})
}
