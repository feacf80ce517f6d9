package report

import (
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"gonum.org/v1/plot"
)

func nan() float64 { return math.NaN() }
func inf() float64 { return math.Inf(1) }

func TestParseMarkup(t *testing.T) {
	tests := []struct {
		in         string
		runs       []run
		plain, htm string
	}{
		{"E_{Θ}(k)", []run{{s: "E"}, {s: "Θ", shift: -1}, {s: "(k)"}}, "E_Θ(k)", "E<sub>Θ</sub>(k)"},
		{"10^{−5}", []run{{s: "10"}, {s: "−5", shift: 1}}, "10^−5", "10<sup>−5</sup>"},
		{"a_b and x^2", []run{{s: "a_"}, {s: "b and x^"}, {s: "2"}}, "a_b and x^2", "a_b and x^2"},
		{"unclosed_{x", []run{{s: "unclosed_{x"}}, "unclosed_{x", "unclosed_{x"},
		{"<b>", []run{{s: "<b>"}}, "<b>", "&lt;b&gt;"},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			assert.Equal(t, tt.runs, parse(tt.in), "parse")
			assert.Equal(t, tt.plain, plain(tt.in), "plain")
			assert.Equal(t, tt.htm, richHTML(tt.in), "richHTML")
		})
	}
}

func TestTicks(t *testing.T) {
	labelled := func(ts []plot.Tick) []float64 {
		var v []float64
		for _, t := range ts {
			if t.Label != "" {
				v = append(v, t.Value)
			}
		}
		return v
	}
	t.Run("log ticks label decades", func(t *testing.T) {
		tests := []struct {
			lo, hi float64
			want   []float64
		}{
			{1e-3, 1, []float64{1e-3, 1e-2, 1e-1, 1}},
			// 12 decades: every second one labelled (span > 6).
			{1e-12, 1, []float64{1e-12, 1e-10, 1e-8, 1e-6, 1e-4, 1e-2, 1}},
			// Less than two decades: 2 and 5 times a decade too.
			{3, 40, []float64{1, 2, 5, 10, 20, 50, 100}},
		}
		for _, tt := range tests {
			got := labelled(logTicks(tt.lo, tt.hi))
			require.Len(t, got, len(tt.want), "logTicks(%g, %g) labels, want %v", tt.lo, tt.hi, tt.want)
			for i := range got {
				if math.Abs(got[i]/tt.want[i]-1) > 1e-12 { // powers of ten computed by math.Pow
					t.Errorf("logTicks(%g, %g) labels %v, want %v", tt.lo, tt.hi, got, tt.want)
				}
			}
		}
	})
	t.Run("linear ticks are round", func(t *testing.T) {
		tests := []struct {
			lo, hi float64
			want   []float64
		}{
			// 265/5 = 53 per tick: the round step is 50.
			{-7.5, 257.5, []float64{0, 50, 100, 150, 200, 250}},
			// 0.14/5 = 0.028 per tick: the round step is 0.02.
			{0.88, 1.02, []float64{0.88, 0.9, 0.92, 0.94, 0.96, 0.98, 1, 1.02}},
			{-1, 1, []float64{-1, -0.5, 0, 0.5, 1}},
		}
		for _, tt := range tests {
			got := labelled(linearTicks(tt.lo, tt.hi))
			require.Len(t, got, len(tt.want), "linearTicks(%g, %g) labels, want %v", tt.lo, tt.hi, tt.want)
			for i := range got {
				if math.Abs(got[i]-tt.want[i]) > 1e-12 { // multiples of the step in floating point
					t.Errorf("linearTicks(%g, %g) labels %v, want %v", tt.lo, tt.hi, got, tt.want)
				}
			}
		}
	})
	t.Run("power labels", func(t *testing.T) {
		for e, want := range map[int]string{-6: "10^{−6}", -2: "0.01", 0: "1", 3: "1000", 4: "10^{4}"} {
			assert.Equal(t, want, powerLabel(e), "powerLabel(%d)", e)
		}
	})
}

func TestStepSeries(t *testing.T) {
	y := make([]float64, 4501)
	for k := range y {
		y[k] = math.Exp(-float64(k) / 100)
	}
	y[7] = 0
	t.Run("linear thinning", func(t *testing.T) {
		xs, ys, dropped := stepSeries(y, 600, true)
		// ⌈4501/600⌉ = 8: steps 0, 8, …, 4496 and the last, 4500.
		if len(xs) != 564 || xs[1] != 8 || xs[len(xs)-1] != 4500 {
			t.Fatalf("%d points, x[1] = %v, last %v; want 564 points every 8 steps and the last", len(xs), xs[1], xs[len(xs)-1])
		}
		if dropped != 0 || ys[1] != y[8] {
			t.Errorf("dropped %d (step 7 is not kept), y[1] = %v, want y(8) = %v", dropped, ys[1], y[8])
		}
		_, ys, dropped = stepSeries(y, 10000, true)
		if dropped != 1 || !math.IsNaN(ys[7]) {
			t.Errorf("without thinning: dropped %d, y(7) = %v; want the zero dropped as NaN", dropped, ys[7])
		}
	})
	t.Run("log thinning", func(t *testing.T) {
		xs, ys, dropped := logStepSeries(y, 600)
		if xs[0] != 1 || xs[len(xs)-1] != 4501 || len(xs) > 601 {
			t.Fatalf("x from %v to %v in %d points, want k + 1 from 1 to 4501 in at most 601", xs[0], xs[len(xs)-1], len(xs))
		}
		for i := 1; i < len(xs); i++ {
			if xs[i] <= xs[i-1] {
				t.Fatalf("x not increasing at %d: %v, %v", i, xs[i-1], xs[i])
			}
		}
		// Every early step is kept: the buckets are wider than one step
		// while log(k+2) − log(k+1) > log(4501)/600.
		for k := range 50 {
			if xs[k] != float64(k+1) {
				t.Fatalf("early step %d not kept (x = %v)", k, xs[k])
			}
		}
		if dropped != 1 || !math.IsNaN(ys[7]) {
			t.Errorf("dropped %d, y at k = 7 is %v; want the zero dropped", dropped, ys[7])
		}
	})
}

func TestFloorPanel(t *testing.T) {
	p := Panel{Y: Axis{Log: true}, Series: []Series{
		{X: []float64{0, 1, 2}, Y: []float64{0, 0.034, 2}},
		{X: []float64{0}, Y: []float64{0}},
	}}
	floor, n := floorPanel(&p)
	// The smallest positive value is 0.034: one decade below its decade,
	// 10^(⌊log10 0.034⌋ − 1) = 10^−3.
	require.Equal(t, 2, n, "floored values")
	if math.Abs(floor-1e-3) > 1e-18 {
		t.Fatalf("floor %v, want 1e-3", floor)
	}
	if p.Series[0].Y[0] != floor || p.Series[1].Y[0] != floor || p.Series[0].Y[1] != 0.034 {
		t.Errorf("series %v %v: zeros not floored or positives changed", p.Series[0].Y, p.Series[1].Y)
	}
	if assert.Len(t, p.Marks, 1, "marks, want one horizontal line at the floor") {
		assert.False(t, p.Marks[0].Vertical, "the floor mark must be horizontal")
		assert.Empty(t, p.Marks[0].Label, "the floor line has no label for the points on it to draw over")
		assert.Equal(t, floor, p.Y.Floor, "Axis.Floor")
		if p.Marks[0].Value != floor {
			t.Errorf("floor mark at %v, want %v", p.Marks[0].Value, floor)
		}
	}
	q := Panel{Y: Axis{Log: true}, Series: []Series{{X: []float64{0}, Y: []float64{5}}}}
	_, n = floorPanel(&q)
	assert.Zero(t, n, "a panel without zeros got floored values")
	assert.Empty(t, q.Marks, "a panel without zeros got marks")
}

// TestLogTicksNarrowRange: a log axis (a heat map's colour bar) over less
// than a decade gets at least two labelled ticks inside its range; over
// 0.0272–0.0735 it had the single label 0.05 (issue 14).
func TestLogTicksNarrowRange(t *testing.T) {
	for _, r := range [][2]float64{{0.0272, 0.0735}, {0.031, 0.039}, {2.2e-11, 4.06e-4}, {1.2e-7, 3.3e-7}, {0.5, 2}} {
		ticks := logTicks(r[0], r[1])
		var labels []string
		for _, tk := range ticks {
			if tk.Label != "" && tk.Value >= r[0] && tk.Value <= r[1] {
				labels = append(labels, tk.Label)
			}
		}
		assert.GreaterOrEqual(t, len(labels), 2, "range %v: labelled ticks inside %q", r, labels)
		for _, l := range labels {
			assert.NotContains(t, l, "0000", "range %v: label %q shows round-off", r, l)
		}
	}
	var labels []string
	for _, tk := range logTicks(0.0272, 0.0735) {
		if tk.Label != "" && tk.Value >= 0.0272 && tk.Value <= 0.0735 {
			labels = append(labels, tk.Label)
		}
	}
	assert.Equal(t, []string{"0.03", "0.04", "0.05", "0.06", "0.07"}, labels)
}

// TestFloorTicks: on a log axis with zeros drawn at the floor, the floor
// is labelled "0" and no other tick lies between it and the next decade, so
// exact zeros do not sit on a tick labelled with a power of ten (issue 14).
func TestFloorTicks(t *testing.T) {
	ticks := floorTicks(logTicks(1e-3, 200), 1e-3)
	require.NotEmpty(t, ticks)
	assert.Equal(t, plot.Tick{Value: 1e-3, Label: "0"}, ticks[0])
	for _, tk := range ticks[1:] {
		assert.GreaterOrEqual(t, tk.Value, 1e-2*(1-1e-9), "tick %v between the floor and the next decade", tk)
		assert.NotEqual(t, "0", tk.Label)
	}
	assert.Equal(t, logTicks(1e-3, 200), floorTicks(logTicks(1e-3, 200), 0), "no floor: ticks unchanged")
}
