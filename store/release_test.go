package store

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"

	"unlearn/certify"
	"unlearn/internal/floatbits"
	"unlearn/noise"
	"unlearn/stream"
)

// The store's release: exact while every forget was served by replay (the
// counterfactual itself, memory included, no noise); an approximate forget
// is itself a release (derived α when its description bounds the
// deviation, else the diameter), and a release while it is pending uses
// the diameter; every certificate verifies against its release, and none is
// exact after an approximate forget.
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

	// The approximate forget is itself a certified release (derived α);
	// a release of the state while it is pending is refused, naming it.
	rep, err := s.Forget([]int64{10}, ForgetOptions{Noise: testNoise(), MaxReplay: 1, Intervention: "noop"})
	require.NoError(t, err)
	check(rep.Released, "derived")
	require.False(t, rep.Released.Certificate.Exact)
	require.Greater(t, rep.Released.Certificate.Sigma, 0.0)
	require.Equal(t, "noop", rep.Released.Certificate.Sensitivity.Deletion.Intervention.Kind)
	require.Empty(t, rep.Released.Release.Memory, "the un-noised memory is never released")
	_, err = s.Release(spec)
	require.ErrorIs(t, err, ErrPending)
	require.Contains(t, err.Error(), fmt.Sprintf("'unlearn releases --get %d'", rep.ReleaseID))

	// A second one whose oldest insert precedes the first's noising:
	// diameter for the request too; it erased the first's release (whose
	// state included insert 20), and the refusal names the second's and
	// says so.
	rep2, err := s.Forget([]int64{20}, ForgetOptions{Noise: testNoise(), MaxReplay: 1, Intervention: "param-only"})
	require.NoError(t, err)
	check(rep2.Released, "diameter")
	require.Equal(t, 2, rep2.Released.Certificate.Deletions)
	spec.Memory = certify.Rebuild
	_, err = s.Release(spec)
	require.ErrorIs(t, err, ErrPending)
	require.Contains(t, err.Error(), fmt.Sprintf("'unlearn releases --get %d'", rep2.ReleaseID))
	require.Contains(t, err.Error(), "was erased by a later forget")

	// Resolved: exact again.
	_, err = s.Resolve(ForgetOptions{})
	require.NoError(t, err)
	r, err = s.Release(spec)
	require.NoError(t, err)
	check(r, "exact")

	_, err = s.Release(certify.Spec{Epsilon: 1, Delta: 1e-5, Alpha: &certify.Given{Alpha: 1}})
	require.Error(t, err, "the store derives α itself")
}

// A store whose learner has no radius can still release exactly, but the
// approximate path (which keeps a noised state) is refused.
func TestReleaseWithoutRadius(t *testing.T) {
	h := genHistory(t, stream.KindLogistic, 2, 120, 6)
	s, err := Create(t.TempDir(), Config{Header: h.Header, Learner: plainConfig(h.Header.D, 3), CheckpointEvery: 40})
	require.NoError(t, err)
	defer s.Close()
	_, err = s.IngestEvents(Events(h.Events), IngestOptions{})
	require.NoError(t, err)
	spec := certify.Spec{Epsilon: 1, Delta: 1e-5, Sampler: noise.NewSeededSampler(1, noise.SamplerOptions{})}
	r, err := s.Release(spec)
	require.NoError(t, err)
	require.Equal(t, "exact", r.Path)
	// The approximate path keeps only a noised state: refused, nothing
	// changed (the request is neither served nor recorded).
	_, err = s.Forget([]int64{5}, ForgetOptions{Noise: testNoise(), MaxReplay: 1, Intervention: "noop"})
	require.ErrorIs(t, err, ErrNotCertifiable)
	reqs, err := s.Requests()
	require.NoError(t, err)
	require.Empty(t, reqs)
	r, err = s.Release(spec)
	require.NoError(t, err)
	require.Equal(t, "exact", r.Path)
}
