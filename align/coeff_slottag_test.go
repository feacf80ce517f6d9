package align_test

import (
	"math"
	"testing"

	"github.com/stretchr/testify/require"

	"unlearn/align"
	"unlearn/olbfgs"
	"unlearn/stream"
)

// TestCoefficientRefilledSlot (ADV5-F2): a memory whose slot is refilled in
// place (Reset then Push, CopyFrom) with another pair of the same sᵀy, the
// same first and last coordinates of s and y and the same source must not
// keep the old pair's cached products: the coefficient-space E_Z measured
// by a reused engine equals a fresh engine's, and the block sweep's to
// round-off.
func TestCoefficientRefilledSlot(t *testing.T) {
	const d = 3
	loss, err := stream.NewLogistic(d, 0.1)
	require.NoError(t, err)
	cfg := olbfgs.DefaultConfig(d)
	cfg.Memory = 2
	mk := func() *olbfgs.Learner {
		l, err := olbfgs.New(cfg, loss)
		require.NoError(t, err)
		return l
	}
	opt := align.Options{Probes: 4, MemoryError: align.MemoryErrorCoefficients}
	for _, refill := range []string{"reset+push", "copyfrom"} {
		t.Run(refill, func(t *testing.T) {
			ref, st, other := mk(), mk(), mk()
			measure := func(e *align.Engine) align.Point {
				e.SetReference(ref, nil)
				return e.Measure(st)
			}
			// s=(1,2,1), y=(1,3,1) and s=(1,3,1), y=(1,2,1): sᵀy = 8 both, same ends.
			require.NoError(t, st.Memory().Push([]float64{1, 2, 1}, []float64{1, 3, 1}, 7))
			e, err := align.NewEngine(d, opt)
			require.NoError(t, err)
			before := measure(e)
			if refill == "copyfrom" {
				require.NoError(t, other.Memory().Push([]float64{1, 3, 1}, []float64{1, 2, 1}, 7))
				st.Memory().CopyFrom(other.Memory())
			} else {
				st.Memory().Reset()
				require.NoError(t, st.Memory().Push([]float64{1, 3, 1}, []float64{1, 2, 1}, 7))
			}
			got := measure(e)
			fresh, err := align.NewEngine(d, opt)
			require.NoError(t, err)
			want := measure(fresh)
			blk, err := align.NewEngine(d, align.Options{Probes: 4, MemoryError: align.MemoryErrorBlock})
			require.NoError(t, err)
			sweep := measure(blk)
			require.NotEqual(t, before.EZ, want.EZ, "the two pairs give different E_Z (the test can fail)")
			require.Equal(t, math.Float64bits(want.EZ), math.Float64bits(got.EZ), "reused engine %v, fresh %v", got.EZ, want.EZ)
			require.InDelta(t, sweep.EZ, got.EZ, 1e-12)
		})
	}
}
