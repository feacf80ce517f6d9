package store

import (
	"slices"
	"testing"

	"github.com/stretchr/testify/require"
	"gonum.org/v1/gonum/floats"
	"pgregory.net/rapid"

	"unlearn/certify"
	"unlearn/internal/floatbits"
	"unlearn/olbfgs"
	"unlearn/stream"
)

// TestForgetScheduledDerived: the approximate forget of a certifiable
// store (no curvature memory, a decaying schedule, averaging) derives α
// from the scheduled bound over every true-age configuration consistent
// with the disclosed ages (never the diameter), the certificate verifies
// from itself alone, α is at least the bound for the true ages, the kept state deploys the noised release (its average
// included), and α bounds the exact distance between the intervention's un-noised output
// (before the noise, projected as released) and the counterfactual
// retrained without the forgotten inserts, with no tolerance.
func TestForgetScheduledDerived(t *testing.T) {
	rapid.Check(t, func(rt *rapid.T) {
		n := rapid.IntRange(60, 300).Draw(rt, "events")
		h := genHistory(t, stream.KindLogistic, rapid.IntRange(1, 4).Draw(rt, "d"), n, rapid.Uint64().Draw(rt, "seed"))
		cfg := olbfgs.DefaultConfig(h.Header.D)
		cfg.SampleBound = 20
		cfg = cfg.CertifiableProfile(h.Header.Lambda)
		s, err := Create(t.TempDir(), Config{Header: h.Header, Learner: cfg, CheckpointEvery: 25})
		require.NoError(t, err)
		defer s.Close()
		_, err = s.IngestEvents(Events(h.Events), IngestOptions{})
		require.NoError(t, err)
		// Not the last two inserts: their replay (from the checkpoint
		// before them) can fit the cap of 1, and the forget is then exact.
		idx := rapid.SliceOfNDistinct(rapid.IntRange(0, n-3), 1, 3, rapid.ID[int]).Draw(rt, "deleted")
		ids := make([]int64, len(idx))
		for i, k := range idx {
			ids[i] = h.Events[k].ID
		}
		how := rapid.SampledFrom([]AgeDisclosure{AgesPow2, AgesNone}).Draw(rt, "disclosure")
		op := rapid.SampledFrom([]string{"noop", "param-only"}).Draw(rt, "intervention")
		c := &approxCapture{}
		rep, err := s.Forget(ids, ForgetOptions{Noise: testNoise(), MaxReplay: 1, Intervention: op, Ages: how, capture: c})
		require.NoError(t, err)
		require.NotNil(t, rep.Released, "the forget took the approximate path")
		cert := rep.Released.Certificate
		sens := cert.Sensitivity
		require.Equal(t, "derived", sens.Source)
		require.Equal(t, "recursion", sens.Binding, sens.Why)
		require.Less(t, sens.Alpha, sens.Diameter)
		require.Equal(t, how.String(), sens.Deletion.Disclosed)
		require.Equal(t, n, sens.Deletion.Steps)
		b, err := rep.Released.Release.Marshal()
		require.NoError(t, err)
		_, err = certify.Verify(cert, b, nil)
		require.NoError(t, err)

		// α for the true ages (what an un-disclosing certificate would say)
		// is at most the disclosed one.
		truth := &certify.Deletion{Ages: rep.Ages, Steps: n, Intervention: sens.Deletion.Intervention, Established: "test"}
		tr, err := certify.DerivedAlpha(cfg, h.Header, truth)
		require.NoError(t, err)
		require.LessOrEqual(t, tr.Alpha, sens.Alpha)

		// The kept state deploys the released vector (projected), never
		// the un-noised average.
		state, err := s.State()
		require.NoError(t, err)
		rw := slices.Clone(rep.Released.Release.W)
		if r := cfg.Radius; floats.Norm(rw, 2) > r {
			floats.Scale(r/floats.Norm(rw, 2), rw)
		}
		require.True(t, floatbits.Equal(rw, state.Deployed()), "the stored state deploys the noised release")
		require.True(t, floatbits.Equal(rw, state.W()))

		w := slices.Clone(c.unnoised.Deployed())
		if r := cfg.RadiusBound(); floats.Norm(w, 2) > r {
			floats.Scale(r/floats.Norm(w, 2), w)
		}
		cf := oracle(t, cfg, h.Loss, h.Events, stream.NewIDSet(ids...))
		dev := floatbits.ExactDistance(w, cf.Deployed())
		require.LessOrEqual(t, dev, sens.Alpha, "exact distance above α (ages %v)", rep.Ages)
	})
}
