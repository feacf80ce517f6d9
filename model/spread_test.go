package model

import (
	"math"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestNoiseOnScores: rows of one norm r give N(0, σ²r²) exactly — sd σr,
// 99th percentile of |xᵀn| z₀.₉₉₅·σr; for rows of several norms the
// mixture's tail at the reported percentile is 1% (erfc, independently),
// and its sd is σ·√(mean r²).
func TestNoiseOnScores(t *testing.T) {
	require.InDelta(t, 0.01, math.Erfc(P99Factor/math.Sqrt2), 1e-15, "P99Factor is z₀.₉₉₅")
	ev := &Evaluation{rowNorms: []float64{2, 2, 2}}
	s := ev.NoiseOnScores(0.5)
	require.InEpsilon(t, 1.0, s.SD, 1e-15)
	require.InEpsilon(t, P99Factor, s.P99, 1e-10)

	ev.rowNorms = []float64{0.5, 1, 3, 7, 0}
	s = ev.NoiseOnScores(2)
	require.InEpsilon(t, 2*math.Sqrt((0.25+1+9+49)/5), s.SD, 1e-14)
	var tail float64
	for _, r := range ev.rowNorms[:4] {
		tail += math.Erfc(s.P99 / (math.Sqrt2 * 2 * r))
	}
	require.InDelta(t, 0.01, tail/5, 1e-10)
	require.Equal(t, Spread{}, (&Evaluation{}).NoiseOnScores(1), "no rows")
	require.Panics(t, func() { ev.NoiseOnScores(-1) })
}

// TestSpreadOf: population sd and the nearest-rank 99th percentile of the
// absolute values.
func TestSpreadOf(t *testing.T) {
	v := make([]float64, 200)
	for i := range v {
		v[i] = float64(i+1) * math.Pow(-1, float64(i))
	}
	var mean, ss float64
	for _, x := range v {
		mean += x
	}
	mean /= 200
	for _, x := range v {
		ss += (x - mean) * (x - mean)
	}
	s := spreadOf(v)
	require.InEpsilon(t, math.Sqrt(ss/200), s.SD, 1e-14)
	require.Equal(t, 198.0, s.P99, "the 198th of 200 absolute values")
	require.Equal(t, Spread{}, spreadOf(nil))
}
