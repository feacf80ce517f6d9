package store

import (
	"slices"
	"testing"

	"github.com/stretchr/testify/require"
	"pgregory.net/rapid"

	"unlearn/bound"
	"unlearn/certify"
	"unlearn/olbfgs"
	"unlearn/stream"
)

// isoHeader is a quadratic header with H0 = c0·I and H1 = c1·I.
func isoHeader(d int, c0, c1 float64) stream.Header {
	h0, h1 := make([][]float64, d), make([][]float64, d)
	for i := range d {
		h0[i], h1[i] = make([]float64, d), make([]float64, d)
		h0[i][i], h1[i][i] = c0, c1
	}
	return stream.Header{Format: stream.FormatV1, Kind: stream.KindQuadratic, D: d, H0: h0, H1: h1}
}

// guardedConfig is a certifiable learner whose pair guard's window just
// contains [c0, c1], so that the recursion applies.
func guardedConfig(d, tau int, eta, c0, c1, w, b float64) olbfgs.Config {
	cfg := olbfgs.DefaultConfig(d)
	cfg.Memory, cfg.StepSize, cfg.InitialScale = tau, eta, 1/c1
	cfg.Radius, cfg.SampleBound = w, b
	cfg.PairAngle, cfg.PairMin, cfg.PairMax = 1e-6, c0*(1-1e-9), c1*(1+1e-9)
	return cfg
}

// alphaOf is the recursion's α at the request (horizon 0) for ages.
func alphaOf(t require.TestingT, p *certify.Profile, ages []int) float64 {
	r, err := bound.Scenario{Constants: p.Constants, Contraction: p.Contraction, Memory: bound.MemoryWorstCase,
		Ages: ages, RoundOff: p.RoundOff}.Bound()
	require.NoError(t, err)
	return r.Alpha[0]
}

// TestDiscloseAges: the disclosed ages are distinct, as many as the true
// ones, each at most the true age it replaces (sorted), and they say no
// more than the number of ages in each power-of-two bucket (two sets of
// ages with the same bucket counts disclose the same ages).
func TestDiscloseAges(t *testing.T) {
	require.Equal(t, []int{8, 4, 2, 3, 1, 0}[0:0], DiscloseAges(nil, AgesPow2))
	require.Equal(t, []int{9, 8, 3, 2, 1, 0}, DiscloseAges([]int{15, 9, 3, 2, 1, 0}, AgesPow2))
	require.Equal(t, []int{5, 4, 3, 2, 1, 0}, DiscloseAges([]int{15, 9, 3, 2, 1, 0}, AgesNone))
	rapid.Check(t, func(t *rapid.T) {
		ages := rapid.SliceOfNDistinct(rapid.IntRange(0, 5000), 0, 40, rapid.ID[int]).Draw(t, "ages")
		slices.Sort(ages)
		slices.Reverse(ages) // insert order: oldest first
		for _, how := range []AgeDisclosure{AgesPow2, AgesNone} {
			got := DiscloseAges(ages, how)
			require.Len(t, got, len(ages))
			require.True(t, slices.IsSortedFunc(got, func(a, b int) int { return b - a }), "insert order kept: %v", got)
			require.Len(t, slices.Compact(slices.Clone(got)), len(got), "distinct")
			for i := range got {
				require.LessOrEqual(t, got[i], ages[i], "disclosed age above the true one")
			}
		}
		// Same bucket counts, same disclosure.
		other := slices.Clone(ages)
		for i, a := range other {
			b := bucket(a)
			if span := max(b, 1); a < b+span-1 && !slices.Contains(other, a+1) && bucket(a+1) == b {
				other[i] = a + 1
			}
		}
		require.Equal(t, DiscloseAges(ages, AgesPow2), DiscloseAges(other, AgesPow2))
	})
}

// TestDisclosedAgesBoundAlpha: for random guarded learners whose recursion
// applies and passes agesMonotone, α from the disclosed ages is at least α
// from the true ones, up to the round-off of the bound's own computation
// (a relative 10⁻¹², far below the 10⁻⁹ margin of the test); and the
// condition is not idle — a learner that fails it (ρ close to 1) has α
// growing with the oldest age.
func TestDisclosedAgesBoundAlpha(t *testing.T) {
	monotone, checked := 0, 0
	rapid.Check(t, func(t *rapid.T) {
		d := rapid.IntRange(1, 3).Draw(t, "d")
		c0 := rapid.Float64Range(0.2, 2).Draw(t, "c0")
		c1 := c0 * rapid.Float64Range(1, 3).Draw(t, "kappa")
		eta := rapid.Float64Range(0.01, 1).Draw(t, "eta") / c1
		cfg := guardedConfig(d, rapid.IntRange(1, 4).Draw(t, "tau"), eta, c0, c1, rapid.Float64Range(0.5, 5).Draw(t, "W"), rapid.Float64Range(0.5, 5).Draw(t, "B"))
		p, err := certify.DeriveProfile(cfg, isoHeader(d, c0, c1))
		require.NoError(t, err)
		if !p.Recursion {
			t.Skip("no recursion for this learner")
		}
		checked++
		if !agesMonotone(p) {
			return
		}
		monotone++
		ages := rapid.SliceOfNDistinct(rapid.IntRange(0, 3000), 1, 30, rapid.ID[int]).Draw(t, "ages")
		slices.Sort(ages)
		slices.Reverse(ages)
		truth := alphaOf(t, p, ages)
		for _, how := range []AgeDisclosure{AgesPow2, AgesNone} {
			got := alphaOf(t, p, DiscloseAges(ages, how))
			require.GreaterOrEqual(t, got, truth*(1-1e-12), "α from the disclosed ages (%v) below α from the true ones", how)
		}
	})
	t.Logf("%d learners with a recursion, %d passed agesMonotone", checked, monotone)
	require.Positive(t, monotone, "no learner passed agesMonotone (%d checked): the test checked nothing", checked)

	// ρ close to 1: the floor c/(1−ρ) exceeds the step term, and an older
	// deletion has the larger α — disclosing a smaller age would not bound it.
	cfg := guardedConfig(1, 1, 0.01, 0.2, 2, 1, 1)
	p, err := certify.DeriveProfile(cfg, isoHeader(1, 0.2, 2))
	require.NoError(t, err)
	require.True(t, p.Recursion)
	require.False(t, agesMonotone(p))
	require.Greater(t, alphaOf(t, p, []int{500}), alphaOf(t, p, []int{256}), "α does not grow with age where the condition fails")
}
