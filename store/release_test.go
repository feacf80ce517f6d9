package store

import (
	"slices"
	"testing"

	"github.com/stretchr/testify/require"
	"gonum.org/v1/gonum/floats"

	"unlearn/certify"
	"unlearn/internal/floatbits"
	"unlearn/noise"
	"unlearn/olbfgs"
	"unlearn/stream"
)

// The store's release: exact while every forget was served by replay (the
// counterfactual itself, memory included, no noise), derived for one
// pending approximate forget, the diameter for two; every certificate
// verifies against its release, and none is exact after an approximate
// forget.
func TestReleasePaths(t *testing.T) {
	h := genHistory(t, stream.KindLogistic, 3, 300, 5)
	cfg := learnerConfig(h.Header.D, 4)
	cfg.Radius, cfg.SampleBound = 4, 20
	s, err := Create(t.TempDir(), Config{Header: h.Header, Learner: cfg, CheckpointEvery: 50})
	require.NoError(t, err)
	defer s.Close()
	_, err = s.IngestEvents(Events(h.Events), IngestOptions{})
	require.NoError(t, err)
	spec := certify.Spec{Epsilon: 1, Delta: 1e-5, Sampler: noise.NewSeededSampler(1, noise.SamplerOptions{})}
	check := func(r *Released, path string) {
		t.Helper()
		require.Equal(t, path, r.Path)
		b, err := r.Release.Marshal()
		require.NoError(t, err)
		_, err = certify.Verify(r.Certificate, b, nil)
		require.NoError(t, err)
	}

	_, err = s.Forget([]int64{40, 41}, ForgetOptions{})
	require.NoError(t, err)
	r, err := s.Release(spec)
	require.NoError(t, err)
	check(r, "exact")
	require.True(t, r.Certificate.Exact)
	want := oracle(t, cfg, h.Loss, h.Events, stream.NewIDSet(40, 41))
	require.True(t, floatbits.Equal(want.W(), r.Release.W), "an exact release is the counterfactual")
	require.Equal(t, want.Memory().Len(), len(r.Release.Memory), "memory included")

	_, err = s.Forget([]int64{10}, ForgetOptions{MaxReplay: 1, Intervention: "noop"})
	require.NoError(t, err)
	r, err = s.Release(spec)
	require.NoError(t, err)
	check(r, "derived")
	require.False(t, r.Certificate.Exact)
	require.Greater(t, r.Certificate.Sigma, 0.0)
	require.Empty(t, r.Release.Memory, "the un-noised memory is never released")
	require.Equal(t, "noop", r.Certificate.Sensitivity.Deletion.Intervention.Kind)
	require.Contains(t, r.Certificate.Statement, "(radius, sample bound, pair guard)", "the guarded-memory path")

	_, err = s.Forget([]int64{20}, ForgetOptions{MaxReplay: 1, Intervention: "param-only"})
	require.NoError(t, err)
	r, err = s.Release(spec)
	require.NoError(t, err)
	check(r, "diameter")
	require.Equal(t, "diameter", r.Certificate.Sensitivity.Source)

	spec.Memory = certify.Rebuild
	r, err = s.Release(spec)
	require.NoError(t, err)
	check(r, "diameter")
	require.LessOrEqual(t, len(r.Release.Memory), cfg.Memory)

	_, err = s.Release(certify.Spec{Epsilon: 1, Delta: 1e-5, Alpha: &certify.Given{Alpha: 1}})
	require.Error(t, err, "the store derives α itself")
}

// A store whose learner has no radius can still release exactly, but a
// noised release is refused (no α is proved).
func TestReleaseWithoutRadius(t *testing.T) {
	h := genHistory(t, stream.KindLogistic, 2, 120, 6)
	s := createStore(t, t.TempDir(), h.Header, 3, 40)
	defer s.Close()
	_, err := s.IngestEvents(Events(h.Events), IngestOptions{})
	require.NoError(t, err)
	spec := certify.Spec{Epsilon: 1, Delta: 1e-5, Sampler: noise.NewSeededSampler(1, noise.SamplerOptions{})}
	r, err := s.Release(spec)
	require.NoError(t, err)
	require.Equal(t, "exact", r.Path)
	_, err = s.Forget([]int64{5}, ForgetOptions{MaxReplay: 1, Intervention: "noop"})
	require.NoError(t, err)
	_, err = s.Release(spec)
	require.ErrorIs(t, err, certify.ErrNotCertifiable)
}

// Several approximate forgets pending on a certifiable-profile store (no
// curvature memory): the release derives α from all of them at once
// (certify.Deletion.Earlier, each request's step count read from the
// log), the certificate verifies, and α bounds the exact distance between
// the store's released vector before noise and the counterfactual
// retrained without every forgotten insert, with no tolerance.
func TestReleaseSeveralPendingDerived(t *testing.T) {
	h := genHistory(t, stream.KindLogistic, 3, 400, 9)
	cfg := olbfgs.DefaultConfig(h.Header.D)
	cfg.SampleBound = 20
	cfg = cfg.CertifiableProfile(h.Header.Lambda)
	s, err := Create(t.TempDir(), Config{Header: h.Header, Learner: cfg, CheckpointEvery: 50})
	require.NoError(t, err)
	defer s.Close()
	ingest := func(from, to int) {
		_, err := s.IngestEvents(Events(h.Events[from:to]), IngestOptions{})
		require.NoError(t, err)
	}
	forget := func(op string, ids ...int64) {
		_, err := s.Forget(ids, ForgetOptions{MaxReplay: 1, Intervention: op})
		require.NoError(t, err)
	}
	ingest(0, 200)
	forget("param-only", 30, 150)
	ingest(200, 300)
	forget("noop", 250)
	forget("noop", 20) // at the same count as the previous request
	ingest(300, 400)
	r, err := s.Release(certify.Spec{Epsilon: 1, Delta: 1e-5, Sampler: noise.NewSeededSampler(1, noise.SamplerOptions{})})
	require.NoError(t, err)
	require.Equal(t, "derived", r.Path)
	d := r.Certificate.Sensitivity.Deletion
	require.Equal(t, 300, d.Steps)
	require.Equal(t, 100, d.Horizon)
	require.Len(t, d.Earlier, 2)
	require.Equal(t, 200, d.Earlier[0].Steps)
	require.Equal(t, 300, d.Earlier[1].Steps)
	require.Equal(t, 4, r.Certificate.Deletions)
	require.Equal(t, "recursion", r.Certificate.Sensitivity.Binding)
	require.NotContains(t, r.Certificate.Statement, "pair guard", "the scheduled path rests on no pair guard")
	require.Contains(t, r.Certificate.Statement, "no curvature memory, the step schedule")
	b, err := r.Release.Marshal()
	require.NoError(t, err)
	_, err = certify.Verify(r.Certificate, b, nil)
	require.NoError(t, err)

	state, err := s.State()
	require.NoError(t, err)
	w := slices.Clone(state.Deployed())
	if n := floats.Norm(w, 2); n > cfg.RadiusBound() {
		floats.Scale(cfg.RadiusBound()/n, w)
	}
	cf := oracle(t, cfg, h.Loss, h.Events, stream.NewIDSet(30, 150, 250, 20))
	dev := floatbits.ExactDistance(w, cf.Deployed())
	require.Greater(t, dev, 0.0)
	require.LessOrEqual(t, dev, r.Certificate.Sensitivity.Alpha)
	require.Less(t, r.Certificate.Sensitivity.Alpha, r.Certificate.Sensitivity.Diameter/10)
}
