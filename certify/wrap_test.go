package certify

import (
	"slices"
	"sync"
	"testing"

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
	if err != nil {
		t.Fatal(err)
	}
	return f, unlearn.Request{Actual: actual, Prefix: prefix, U: stream.NewIDSet(3, 7)}
}

func TestWrapIsAnOperator(t *testing.T) {
	f, req := wrapRequest(t)
	spec := seededSpec(t, 5)
	c, err := Wrap(unlearn.MemoryReset(), spec)
	if err != nil {
		t.Fatal(err)
	}
	if c.Name() != "certified-memory-reset" || c.Label() != "Full memory reset (certified)" || c.Unwrap().Name() != "memory-reset" {
		t.Errorf("name %q label %q", c.Name(), c.Label())
	}
	if c.Last() != nil {
		t.Error("a certificate before any Apply")
	}
	out, _, err := unlearn.Run(c, req)
	if err != nil {
		t.Fatal(err)
	}
	cert := c.Last()
	if cert == nil {
		t.Fatal("no certificate after Apply")
	}
	// The certificate names the intervention, counts |U| and takes the
	// ages from the request: id 3 has 9 inserts after it, id 7 has 5 (the
	// delete event is not a step).
	if cert.Intervention != "memory-reset" || cert.Deletions != 2 || !slices.Equal(cert.Sensitivity.Bound.Ages, []int{9, 5}) {
		t.Errorf("intervention %q, deletions %d, ages %v", cert.Intervention, cert.Deletions, cert.Sensitivity.Bound.Ages)
	}
	// Memory reset does not move w: no shift.
	if cert.Sensitivity.Shift != 0 {
		t.Errorf("shift %v for an intervention that keeps w", cert.Sensitivity.Shift)
	}
	// The certificate verifies against the intervention's own output.
	plain, _, err := unlearn.Run(unlearn.MemoryReset(), req)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := VerifyStates(cert, plain, out, &f.header); err != nil {
		t.Fatal(err)
	}
	if out == req.Actual || slices.Equal(out.W(), req.Actual.W()) {
		t.Error("the released state is the actual one or carries no noise")
	}
}

func TestWrapShiftCoversTheIntervention(t *testing.T) {
	// Parameter-only moves w: the certificate's α is the untouched bound
	// plus ‖w̃ − w‖.
	_, req := wrapRequest(t)
	c, err := Wrap(unlearn.ParamOnly(), seededSpec(t, 5))
	if err != nil {
		t.Fatal(err)
	}
	_, cert, _, err := c.ApplyCertified(req)
	if err != nil {
		t.Fatal(err)
	}
	plain, _, err := unlearn.Run(unlearn.ParamOnly(), req)
	if err != nil {
		t.Fatal(err)
	}
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
	if err != nil {
		t.Fatal(err)
	}
	_, cert, cost, err := c.ApplyCertified(req)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(cert.Retained.IDs, []int64{10, 11, 12}) || cost.EventsReplayed != 3 || cost.GradEvals != 6 {
		t.Errorf("retained %v, cost %+v", cert.Retained.IDs, cost)
	}
}

func TestWrapGivenDelta0(t *testing.T) {
	// With Start = StartGiven the caller's Δ₀ is used as is (no shift): an
	// exact intervention with Δ₀ = 0 releases its state without noise.
	_, req := wrapRequest(t)
	spec := seededSpec(t, 5)
	spec.Scenario.Start, spec.Scenario.Delta0, spec.Scenario.Delta0Source = bound.StartGiven, 0, bound.Proved
	c, err := Wrap(unlearn.Oracle(), spec)
	if err != nil {
		t.Fatal(err)
	}
	out, cert, _, err := c.ApplyCertified(req)
	if err != nil {
		t.Fatal(err)
	}
	plain, _, err := unlearn.Run(unlearn.Oracle(), req)
	if err != nil {
		t.Fatal(err)
	}
	if !cert.Exact || cert.Sigma != 0 || !slices.Equal(out.W(), plain.W()) {
		t.Errorf("exact %v, σ %v", cert.Exact, cert.Sigma)
	}
}

func TestWrapConcurrentUse(t *testing.T) {
	// Safe for concurrent use (run under -race): each ApplyCertified gets
	// its own certificate.
	_, req := wrapRequest(t)
	c, err := Wrap(unlearn.PairDrop(), seededSpec(t, 9))
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	certs := make([]*Certificate, 4)
	for i := range certs {
		wg.Go(func() {
			_, cert, _, err := c.ApplyCertified(req)
			if err != nil {
				t.Error(err)
			}
			certs[i] = cert
			if _, _, err := c.Apply(req); err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	for i := 1; i < len(certs); i++ {
		if certs[i] == nil || certs[i].AfterSHA256 == certs[0].AfterSHA256 {
			t.Errorf("release %d repeats release 0 or failed", i)
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
		if err != nil {
			t.Fatal(err)
		}
		if _, _, _, err := c.ApplyCertified(unlearn.Request{}); err == nil {
			t.Error("an empty request was certified")
		}
	})
}
