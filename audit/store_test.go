package audit

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"unlearn/certify"
	"unlearn/olbfgs"
	"unlearn/store"
	"unlearn/stream"
)

// storeDir makes a certifiable quadratic model store (d = 5, τ = 4, radius
// 10, sample bound 20: large enough not to bind on the generator's data)
// with 400 inserts, ids 1..400, and closes it.
func storeDir(t *testing.T) string {
	t.Helper()
	o := stream.DefaultQuadraticOptions()
	o.D, o.T, o.Seed = 5, 400, 3
	h, err := stream.GenerateQuadratic(o)
	require.NoError(t, err)
	lc := olbfgs.DefaultConfig(h.Header.D)
	lc.Memory = 4
	lc.Radius, lc.SampleBound = 10, 20
	dir := t.TempDir()
	s, err := store.Create(dir, store.Config{Header: h.Header, Learner: lc, CheckpointEvery: 50})
	require.NoError(t, err)
	_, err = s.IngestEvents(store.Events(h.Events), store.IngestOptions{})
	require.NoError(t, err)
	require.NoError(t, s.Close())
	return dir
}

// A store's approximate forget with its derived-α release is sound: the
// default audit (n = 10⁴, γ = 10⁻⁵) finds ε_lb ≤ ε for both memory
// policies; its exact forget finds ε_lb = 0. The same worlds released
// without noise, or with the un-noised memory of world A's state beside a
// correctly noised w, are caught: ε_lb well above ε.
func TestAuditStore(t *testing.T) {
	dir := storeDir(t)
	ids := []int64{380, 390}
	approx := store.ForgetOptions{MaxReplay: 1, Intervention: "memory-reset"}
	for _, tc := range []struct {
		name   string
		forget store.ForgetOptions
		memory certify.MemoryPolicy
	}{
		{"exact", store.ForgetOptions{}, certify.Reset},
		{"approximate/reset", approx, certify.Reset},
		{"approximate/rebuild", approx, certify.Rebuild},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w, err := store.PrepareAudit(context.Background(), dir, ids, store.AuditOptions{Forget: tc.forget, Spec: certify.Spec{Epsilon: claimEps, Delta: claimDelta, Memory: tc.memory}})
			require.NoError(t, err)
			a, b, wd := FromStore(w)
			rep, err := Run(context.Background(), Config{A: a, B: b, WDim: wd, Epsilon: claimEps, Delta: claimDelta, Seeded: true, Seed: 5})
			require.NoError(t, err)
			require.Equal(t, Consistent, rep.Verdict, "ε_lb = %v", rep.EpsilonLB)
			require.LessOrEqual(t, rep.EpsilonLB, claimEps)
			t.Logf("%s: forget %s (%s), release %s, ε_lb = %.4g", tc.name, w.Forget.Path, w.Forget.Reason, w.ReleasePath, rep.EpsilonLB)
			if !w.Exact {
				require.Equal(t, "derived", w.ReleasePath, "one pending approximate forget: α derived from its description")
			}
			if w.Exact {
				require.Zero(t, rep.EpsilonLB, "an exact forget is the oracle")
			}
		})
	}

	w, err := store.PrepareAudit(context.Background(), dir, ids, store.AuditOptions{Forget: approx, Spec: certify.Spec{Epsilon: claimEps, Delta: claimDelta}})
	require.NoError(t, err)
	require.Equal(t, store.PathApproximate, w.Forget.Path)
	sigma := w.A.Sigma()
	d := w.StateA.Config().Dim
	for _, tc := range []struct {
		name string
		a, b Mechanism
	}{
		{"no noise", Gaussian(w.StateA.W(), nil, 0), Gaussian(w.StateB.W(), nil, 0)},
		{"un-noised memory", Gaussian(w.StateA.W(), Flatten(w.StateA.Memory()), sigma), Gaussian(w.StateB.W(), Flatten(w.StateB.Memory()), sigma)},
	} {
		t.Run("broken/"+tc.name, func(t *testing.T) {
			rep, err := Run(context.Background(), Config{A: tc.a, B: tc.b, WDim: d, Epsilon: claimEps, Delta: claimDelta, Seeded: true, Seed: 5})
			require.NoError(t, err)
			require.Equal(t, Violation, rep.Verdict)
			require.Greater(t, rep.EpsilonLB, wellAbove)
		})
	}
}
