package audit

import (
	"context"
	"math"
	"runtime"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// streamWorlds are two Gaussian worlds whose artifacts have varying
// coordinates (w, noised) and constant ones (a released memory, equal in
// both worlds but for two coordinates, which separate them perfectly).
func streamWorlds(d, mem int) (Mechanism, Mechanism) {
	wa, wb := make([]float64, d), make([]float64, d)
	ma, mb := make([]float64, mem), make([]float64, mem)
	for j := range d {
		wa[j], wb[j] = 0.1*float64(j), 0.1*float64(j)+0.05
	}
	for j := range mem {
		ma[j], mb[j] = float64(j%3), float64(j%3)
	}
	mb[mem/2] = -1
	mb[mem-1] = 7
	return Gaussian(wa, ma, 1), Gaussian(wb, mb, 1)
}

// TestSelectionStreamedEqualsKept: with a memory budget too small for the
// selection split's artifacts, the audit draws the split again block by
// block and chooses the same tests; a seeded audit's report is the same,
// bit for bit, as with the artifacts kept (blocks of 2 varying coordinates
// here, constant coordinates scored without a column, ties to the first).
func TestSelectionStreamedEqualsKept(t *testing.T) {
	a, b := streamWorlds(7, 12)
	base := Config{A: a, B: b, Epsilon: 1, Delta: 1e-5, Trials: 1000, Seeded: true, Seed: 3, WDim: 7}
	kept, err := Run(context.Background(), base)
	require.NoError(t, err)
	small := base
	sel := 500
	small.MemoryBudget = int64(sel)*(BytesPerSelectionTrial-16) + 2*16*int64(sel) // two columns per block
	require.Greater(t, int64(sel)*int64(a.Dim())*16, small.MemoryBudget, "the artifacts must not fit")
	var calls, last int
	small.Progress = func(done, total int) { calls++; last = total }
	streamed, err := Run(context.Background(), small)
	require.NoError(t, err)
	require.Equal(t, kept, streamed)
	// 2·1000 releases for the two splits, and 1000 for each of the 4
	// blocks of 2 of the 7 varying coordinates drawn again.
	require.Equal(t, 2*1000+4*1000, last)
	require.Equal(t, last, calls)
	require.Equal(t, "memory[6]", kept.Tests[1].Statistic, "a constant coordinate that differs separates the worlds")
}

// TestSelectionStreamedSecure: a secure audit too large to keep draws its
// selection split from secretly seeded samplers and says so; its
// evaluation split is secure.
func TestSelectionStreamedSecure(t *testing.T) {
	a, b := streamWorlds(3, 4)
	rep, err := Run(context.Background(), Config{A: a, B: b, Epsilon: 1, Delta: 1e-5, Trials: 200, MemoryBudget: 100 * (BytesPerSelectionTrial + 4)})
	require.NoError(t, err)
	require.Equal(t, "secure", rep.Sampler)
	require.True(t, strings.Contains(rep.SamplerNote, "secret random seeds"), rep.SamplerNote)
}

// TestSelectionMemoryBounded: the selection split of an artifact of 2000
// numbers with 200 trials (3.2 MB to keep) is chosen within a 64 KiB
// budget: the heap the audit holds grows by the budget and O(d) words.
func TestSelectionMemoryBounded(t *testing.T) {
	const d = 2000
	a, b := Gaussian(make([]float64, d), nil, 1), Gaussian(append(make([]float64, d-1), 5), nil, 1)
	var peak uint64
	var ms runtime.MemStats
	progress := func(done, _ int) {
		if done%50 == 0 {
			runtime.GC() // the live heap, without garbage not yet collected
			runtime.ReadMemStats(&ms)
			peak = max(peak, ms.HeapAlloc)
		}
	}
	runtime.GC()
	runtime.ReadMemStats(&ms)
	base := ms.HeapAlloc
	rep, err := Run(context.Background(), Config{A: a, B: b, Epsilon: 1, Delta: 1e-5, Trials: 200, Seeded: true, Seed: 1,
		MemoryBudget: 64 << 10, Progress: progress})
	require.NoError(t, err)
	// The budget, 64 KiB, and about 12 words per coordinate (the two
	// mechanisms' states, the mean difference, two artifacts, the
	// candidates and the constancy marks): 256 KiB; the kept split would
	// have been 3.2 MB.
	require.Less(t, peak-min(peak, base), uint64(320<<10), "the audit held %d KiB", (peak-base)>>10)
	require.Equal(t, "w[1999]", rep.Tests[1].Statistic)
}

// TestTrialsBounded: a trial count beyond what the memory budget allows is
// a configuration error naming Trials (it panicked at 2⁶³ − 1 and ran out
// of memory at 2³¹), never an allocation.
func TestTrialsBounded(t *testing.T) {
	a, b := streamWorlds(2, 2)
	for _, n := range []int{math.MaxInt, 1 << 31, MaxTrials(0.5, 0) + 1} {
		_, err := Run(context.Background(), Config{A: a, B: b, Epsilon: 1, Delta: 1e-5, Trials: n, Seeded: true})
		var ce *ConfigError
		require.ErrorAs(t, err, &ce, "trials = %d", n)
		require.Equal(t, "Trials", ce.Field)
	}
	require.Greater(t, MaxTrials(0.5, 0), 2_000_000, "the default budget allows millions of trials")
	require.Equal(t, 0, MaxTrials(0, 0))
}
