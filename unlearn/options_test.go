package unlearn

import (
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"

	"unlearn/olbfgs"
	"unlearn/stream"
)

// TestOperatorsOnLearnersWithOptions runs every intervention of the paper
// on learners with the practitioner's options and on a multinomial one
// (parameters of dimension K·(d+1) and K·d, not d): each returns a learner
// of the same configuration with finite parameters, and the oracle's is the
// replay of the edited prefix.
func TestOperatorsOnLearnersWithOptions(t *testing.T) {
	r := rand.New(rand.NewPCG(9, 9))
	m, err := stream.NewMultinomial(3, 3, 0.01)
	require.NoError(t, err)
	var prefix []stream.Event
	for i := range 60 {
		x := []float64{10 + r.NormFloat64(), r.NormFloat64(), 0.1 * r.NormFloat64()}
		prefix = append(prefix, stream.InsertEvent(int64(i+1), x, float64(r.IntN(3))))
	}
	u := stream.NewIDSet(5, 50, 58)
	for _, cfg := range []olbfgs.Config{
		olbfgs.DefaultConfig(3).ForLoss(m),
		olbfgs.DefaultConfig(3).ForLoss(m).Practitioner(),
	} {
		cfg.Memory = 4
		actual, err := olbfgs.New(cfg, m)
		require.NoError(t, err)
		require.NoError(t, actual.KeepCheckpoints(20))
		require.NoError(t, actual.Run(prefix))
		req := Request{Actual: actual, Prefix: prefix, U: u}
		for _, op := range Paper(cfg.Memory) {
			l, _, err := Run(op, req)
			require.NoError(t, err, op.Name())
			require.Equal(t, cfg, l.Config(), op.Name())
			for _, v := range l.W() {
				require.False(t, v != v, "%s: NaN", op.Name())
			}
		}
		oracle, _, err := Run(Oracle(), req)
		require.NoError(t, err)
		want, err := olbfgs.Replay(cfg, m, stream.Counterfactual(prefix, u))
		require.NoError(t, err)
		want.MarkDeleted(u.Sorted()...)
		require.True(t, oracle.Equal(want), "the oracle is the edited replay")
	}
}
