package bound

import (
	"testing"

	"github.com/stretchr/testify/require"
	"pgregory.net/rapid"
)

// configurations calls f with every set of deleted steps consistent with
// ranges (each range's Count distinct ages in [Lo, Hi]) for a stream of
// steps.
func configurations(steps int, ranges []AgeRange, f func(deleted []int)) {
	var rec func(i int, from int, left int, acc []int)
	rec = func(i int, from int, left int, acc []int) {
		if i == len(ranges) {
			f(acc)
			return
		}
		r := ranges[i]
		if left == 0 {
			if i+1 < len(ranges) {
				rec(i+1, ranges[i+1].Lo, ranges[i+1].Count, acc)
			} else {
				rec(i+1, 0, 0, acc)
			}
			return
		}
		for a := from; a <= r.Hi; a++ {
			rec(i, a+1, left-1, append(acc, steps-a))
		}
	}
	if len(ranges) == 0 {
		f(nil)
		return
	}
	rec(0, ranges[0].Lo, ranges[0].Count, nil)
}

// WorstBound against the enumeration of every configuration through
// Bound: equal to the largest Bound for the last iterate (the dynamic
// programme is exact there), at least it for the average, and strictly
// more than some configurations' (the worst case is not a representative
// configuration).
func TestWorstBoundEnumeration(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		d, _ := decayCase(t)
		d.Radius = rapid.Float64Range(0.5, 5).Draw(t, "radius")
		d.RoundOff = rapid.SampledFrom([]float64{0, 1e-12}).Draw(t, "roundOff")
		steps := rapid.IntRange(4, 40).Draw(t, "steps")
		if rapid.Bool().Draw(t, "average") {
			d.Average = Averaging{From: rapid.IntRange(1, steps).Draw(t, "from"), Power: rapid.SampledFrom([]float64{0, 1, 2}).Draw(t, "power")}
		}
		var ranges []AgeRange
		lo := rapid.IntRange(0, 3).Draw(t, "firstLo")
		for lo < steps && len(ranges) < 3 {
			hi := rapid.IntRange(lo, min(steps-1, lo+6)).Draw(t, "hi")
			ranges = append(ranges, AgeRange{Lo: lo, Hi: hi, Count: rapid.IntRange(0, min(2, hi-lo+1)).Draw(t, "count")})
			lo = hi + 1 + rapid.IntRange(0, 3).Draw(t, "gap")
		}
		var iv []Intervention
		if rapid.Bool().Draw(t, "paramOnly") {
			iv = append(iv, Intervention{After: steps, Move: d.StepMove(steps)})
		}
		got, err := d.WorstBound(steps, ranges, iv)
		require.NoError(t, err)
		var worst float64
		n := 0
		configurations(steps, ranges, func(del []int) {
			b, err := d.Bound(Stream{Steps: steps, Deleted: del, Interventions: iv})
			require.NoError(t, err)
			require.LessOrEqual(t, b.Alpha, got.Alpha, "configuration %v", del)
			worst = max(worst, b.Alpha)
			n++
		})
		require.Positive(t, n)
		if !d.Average.on() || steps < d.Average.From {
			require.Equal(t, worst, got.Alpha, "exact for the last iterate")
		}
	})
}

// The ranges are checked: out of the stream, overlapping, too many.
func TestWorstBoundRefuses(t *testing.T) {
	d := Dynamics{Schedule: Schedule{Eta0: 0.1, Decay: 0.01}, HMin: 1, HMax: 1, Mu: 0.1, L: 1, G: 1, Radius: 1, Provenance: Proved}
	for arg, rs := range map[string][]AgeRange{
		"ranges[0]": {{Lo: 5, Hi: 10, Count: 1}},
		"ranges[1]": {{Lo: 0, Hi: 0, Count: 1}, {Lo: 2, Hi: 3, Count: 3}},
		"ranges":    {{Lo: 0, Hi: 3, Count: 1}, {Lo: 3, Hi: 5, Count: 1}},
		"ranges[2]": {{Lo: 0, Hi: 0, Count: 0}, {Lo: 1, Hi: 1, Count: 0}, {Lo: -1, Hi: 3, Count: 1}},
	} {
		_, err := d.WorstBound(10, rs, nil)
		wantArgError(t, err, arg, ErrInvalid)
	}
}
