package store

import (
	"testing"

	"github.com/stretchr/testify/require"
	"gonum.org/v1/gonum/floats"

	"unlearn/certify"
	"unlearn/olbfgs"
	"unlearn/stream"
)

// TestApproximateForgetWithOptions: the approximate path on a learner with
// the practitioner's options follows the same rules as on the paper's
// learner. With an option the deviation bound does not cover (averaging,
// a decaying step, an unregularized intercept) α is the diameter bound and
// the certificate discloses no ages, and on a regression store (a loss
// whose constants certify does not derive) the forget is served with the
// diameter bound rather than refused; on a multinomial store the
// noised state is the release of its K·d parameters; either way the store
// keeps only that noised state (projected onto the ball), no checkpoint at
// or after the erased insert but the noised one, checks, and a resolution
// gives `train` on the edited stream bit for bit. A learner that
// standardizes its features refuses the approximate path
// (ErrNotCertifiable: its means and deviations are un-noised functions of
// the deleted rows), and nothing changes.
func TestApproximateForgetWithOptions(t *testing.T) {
	for _, c := range []struct {
		name     string
		kind     stream.Kind
		k        int
		edit     func(*olbfgs.Config)
		diameter bool
	}{
		{"averaging", stream.KindLogistic, 0, func(c *olbfgs.Config) { c.Average = true }, true},
		{"decaying step", stream.KindRegression, 0, func(c *olbfgs.Config) {
			c.StepDecay, c.StepPower = olbfgs.PractitionerStepDecay, olbfgs.PractitionerStepPower
		}, true},
		{"intercept without ridge", stream.KindLogistic, 0, func(c *olbfgs.Config) { c.Intercept = true }, true},
		{"multinomial", stream.KindMultinomial, 3, func(*olbfgs.Config) {}, false},
		{"multinomial, practitioner without standardization", stream.KindMultinomial, 3, func(c *olbfgs.Config) {
			*c = c.Practitioner()
			c.Standardize = false
		}, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			h := linearHistory(t, c.kind, 3, c.k, 40, 5)
			cfg := olbfgs.DefaultConfig(3).ForLoss(h.Loss)
			cfg.Memory = 3
			c.edit(&cfg)
			cfg.Radius, cfg.SampleBound = 100, 1e4
			s, err := Create(t.TempDir(), Config{Header: h.Header, Learner: cfg, CheckpointEvery: 10})
			require.NoError(t, err)
			defer s.Close()
			_, err = s.IngestEvents(Events(h.Events), IngestOptions{})
			require.NoError(t, err)

			rep, err := s.Forget([]int64{12}, ForgetOptions{Noise: testNoise(), MaxReplay: 5, Intervention: "noop", SkipVacuum: true})
			require.NoError(t, err)
			require.Equal(t, PathApproximate, rep.Path)
			cert := rep.Released.Certificate
			if c.diameter {
				sens := cert.Sensitivity
				require.Equal(t, "diameter", sens.Binding, "an option the bound does not cover")
				require.GreaterOrEqual(t, sens.Alpha, sens.Diameter, "α is the diameter bound (plus, when derived, the intervention's allowance)")
				if sens.Deletion != nil {
					for _, a := range sens.Deletion.Ages {
						require.Zero(t, a, "no age disclosed (only their number) when α does not depend on them")
					}
				}
			}
			w := append([]float64(nil), rep.Released.Release.W...)
			require.Len(t, w, cfg.ParamDim())
			if n := floats.Norm(w, 2); n > cfg.Radius {
				floats.Scale(cfg.Radius/n, w)
			}
			cur, err := s.State()
			require.NoError(t, err)
			require.Equal(t, w, cur.W(), "the store keeps only the noised state")
			var after []int64
			rows, err := s.db.Query(`SELECT seq FROM checkpoints WHERE seq >= 12 ORDER BY seq`)
			require.NoError(t, err)
			for rows.Next() {
				var q int64
				require.NoError(t, rows.Scan(&q))
				after = append(after, q)
			}
			require.NoError(t, rows.Err())
			require.Equal(t, []int64{40}, after, "only the noised checkpoint at the head")
			_, err = s.Check()
			require.NoError(t, err)

			_, err = s.Resolve(ForgetOptions{SkipVacuum: true})
			require.NoError(t, err)
			requireSameState(t, s, oracle(t, cfg, h.Loss, h.Events, stream.NewIDSet(12)), "resolved")
		})
	}

	t.Run("standardized", func(t *testing.T) {
		h := linearHistory(t, stream.KindMultinomial, 3, 3, 40, 5)
		cfg := olbfgs.DefaultConfig(3).ForLoss(h.Loss).Practitioner()
		cfg.Radius, cfg.SampleBound = 100, 1e4
		s, err := Create(t.TempDir(), Config{Header: h.Header, Learner: cfg, CheckpointEvery: 10})
		require.NoError(t, err)
		defer s.Close()
		_, err = s.IngestEvents(Events(h.Events), IngestOptions{})
		require.NoError(t, err)
		before, err := s.State()
		require.NoError(t, err)
		_, err = s.Forget([]int64{12}, ForgetOptions{Noise: testNoise(), MaxReplay: 5, Intervention: "noop", SkipVacuum: true})
		require.ErrorIs(t, err, certify.ErrNotCertifiable)
		cur, err := s.State()
		require.NoError(t, err)
		require.True(t, cur.Equal(before), "nothing changed")
		var n int
		require.NoError(t, s.db.QueryRow(`SELECT count(*) FROM events WHERE id = 12 AND payload IS NOT NULL`).Scan(&n))
		require.Equal(t, 1, n, "the payload is still there: the request was refused, not half-served")
		reqs, err := s.Requests()
		require.NoError(t, err)
		require.Empty(t, reqs)
		// An exact forget serves it; an exact release is then published,
		// never a noised one.
		_, err = s.Forget([]int64{12}, ForgetOptions{SkipVacuum: true})
		require.NoError(t, err)
		_, err = s.Release(certify.Spec{Epsilon: 1, Delta: 1e-5, Sampler: testNoise().Sampler})
		require.NoError(t, err)
	})
}
