package stream

import (
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestModeNames(t *testing.T) {
	for _, m := range Modes() {
		t.Run(m.String(), func(t *testing.T) {
			got, err := ParseMode(m.String())
			assert.NoError(t, err, "ParseMode(%q)", m.String())
			assert.Equal(t, m, got, "ParseMode(%q)", m.String())
			text, err := m.MarshalText()
			require.NoError(t, err)
			var back Mode
			assert.NoError(t, json.Unmarshal([]byte(`"`+string(text)+`"`), &back), "JSON round trip")
			assert.Equal(t, m, back, "JSON round trip")
		})
	}
	assert.Equal(t, []string{"recent", "old", "random", "high-gradient"},
		[]string{Recent.String(), Old.String(), Random.String(), HighGradient.String()}, "names")
	for _, bad := range []string{"", "Recent", "high_gradient", "newest", "random "} {
		t.Run("reject "+bad, func(t *testing.T) {
			_, err := ParseMode(bad)
			require.ErrorIs(t, err, ErrInvalidValue)
			assert.ErrorContains(t, err, "recent, old, random, high-gradient", "the error must list the valid names")
		})
	}
	_, err := Mode(0).MarshalText()
	assert.Error(t, err, "MarshalText of the zero Mode succeeded")
	assert.Equal(t, "Mode(9)", Mode(9).String())
}

// modePrefix returns a logistic prefix with inserts 10, 20, …, 70 (x of the
// given norms along the first axis) and deletes of 30 and 60, so the
// candidates are 10, 20, 40, 50, 70.
func modePrefix() ([]Event, *Logistic) {
	norms := map[int64]float64{10: 1, 20: 3, 30: 100, 40: 3, 50: 2, 60: 50, 70: 0.5}
	var ev []Event
	for id := int64(10); id <= 70; id += 10 {
		ev = append(ev, InsertEvent(id, []float64{norms[id], 0}, 1))
		if id == 40 {
			ev = append(ev, DeleteEvent(30))
		}
	}
	ev = append(ev, DeleteEvent(60))
	l, _ := NewLogistic(2, 0)
	return ev, l
}

func TestChooseDeletions(t *testing.T) {
	prefix, loss := modePrefix()
	// At w = 0 with λ = 0, ∇ℓ = −y·x·σ(0) = −x/2: the gradient norm is ‖x‖/2,
	// so ids 20 and 40 tie for the largest, then 50; the deleted 30 and 60
	// would be larger but are not candidates.
	hg := ChooseOptions{Loss: loss, W: []float64{0, 0}}
	tests := []struct {
		name  string
		mode  Mode
		count int
		want  []int64
	}{
		{"recent 2", Recent, 2, []int64{50, 70}},
		{"recent all", Recent, 5, []int64{10, 20, 40, 50, 70}},
		{"old 2", Old, 2, []int64{10, 20}},
		{"old 3", Old, 3, []int64{10, 20, 40}},
		{"high-gradient 1 (tie to smaller id)", HighGradient, 1, []int64{20}},
		{"high-gradient 2", HighGradient, 2, []int64{20, 40}},
		{"high-gradient 3", HighGradient, 3, []int64{20, 40, 50}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ChooseDeletions(prefix, tt.mode, tt.count, hg)
			require.NoError(t, err)
			assert.Equal(t, tt.want, got, "U")
		})
	}
}

func TestChooseDeletionsHighGradientAtState(t *testing.T) {
	// The state matters. With x = (a, b), y = 1, λ = 0 and w = (0, c):
	// ‖∇ℓ‖ = ‖x‖·σ(−c·b). At c = 0 every σ is 1/2 and the largest ‖x‖ wins
	// (id 1); at c = 1 the norms are 3.16·σ(−3) = 0.15, 2.24·σ(1) = 1.63 and
	// 1·σ(0) = 0.5, and id 2 wins.
	ev := []Event{
		InsertEvent(1, []float64{1, 3}, 1),
		InsertEvent(2, []float64{2, -1}, 1),
		InsertEvent(3, []float64{1, 0}, 1),
	}
	l, _ := NewLogistic(2, 0)
	for _, tt := range []struct {
		name string
		w    []float64
		want []int64
	}{
		{"w = 0", []float64{0, 0}, []int64{1}},
		{"w = (0,1)", []float64{0, 1}, []int64{2}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ChooseDeletions(ev, HighGradient, 1, ChooseOptions{Loss: l, W: tt.w})
			require.NoError(t, err)
			assert.Equal(t, tt.want, got, "U")
		})
	}
}

func TestChooseDeletionsRandom(t *testing.T) {
	prefix, _ := modePrefix()
	cands := []int64{10, 20, 40, 50, 70}
	a, err := ChooseDeletions(prefix, Random, 3, ChooseOptions{Seed: 1})
	require.NoError(t, err)
	b, err := ChooseDeletions(prefix, Random, 3, ChooseOptions{Seed: 1})
	require.NoError(t, err)
	assert.Equal(t, a, b, "same seed, different sets")
	assert.Len(t, a, 3)
	assert.True(t, slices.IsSorted(a), "U = %v is not sorted", a)
	// Uniform over the C(5,2) = 10 subsets of size 2: over n seeds each
	// subset's count is Binomial(n, 1/10); each is checked to 4.42 standard
	// deviations (false-rejection rate 1e-5 per subset).
	const n = 20000
	counts := map[string]int{}
	for seed := range uint64(n) {
		u, err := ChooseDeletions(prefix, Random, 2, ChooseOptions{Seed: seed})
		require.NoError(t, err)
		require.Len(t, u, 2, "seed %d", seed)
		for _, id := range u {
			require.Contains(t, cands, id, "seed %d chose a non-candidate", seed)
		}
		require.NotEqual(t, u[0], u[1], "seed %d chose a repeated id", seed)
		counts[fmt.Sprint(u)]++
	}
	assert.Len(t, counts, 10, "distinct subsets")
	mean, sd := n/10.0, math.Sqrt(n*0.1*0.9)
	for k, c := range counts {
		if math.Abs(float64(c)-mean) > 4.41717*sd {
			t.Errorf("subset %s chosen %d times, want %v ± %v", k, c, mean, 4.41717*sd)
		}
	}
}

func TestChooseDeletionsErrors(t *testing.T) {
	prefix, loss := modePrefix()
	tests := []struct {
		name     string
		mode     Mode
		count    int
		o        ChooseOptions
		sentinel error
	}{
		{"count 0", Recent, 0, ChooseOptions{}, ErrInvalidValue},
		{"negative count", Old, -1, ChooseOptions{}, ErrInvalidValue},
		{"count above candidates", Random, 6, ChooseOptions{}, ErrInvalidValue},
		{"invalid mode", Mode(0), 1, ChooseOptions{}, ErrInvalidValue},
		{"high-gradient without loss", HighGradient, 1, ChooseOptions{W: []float64{0, 0}}, ErrInvalidValue},
		{"high-gradient without w", HighGradient, 1, ChooseOptions{Loss: loss}, ErrInvalidValue},
		{"high-gradient short w", HighGradient, 1, ChooseOptions{Loss: loss, W: []float64{0}}, ErrDimension},
		{"high-gradient NaN w", HighGradient, 1, ChooseOptions{Loss: loss, W: []float64{0, math.NaN()}}, ErrNonFinite},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			u, err := ChooseDeletions(prefix, tt.mode, tt.count, tt.o)
			assert.Nil(t, u, "result returned with an error")
			require.ErrorIs(t, err, tt.sentinel)
		})
	}
	t.Run("empty prefix", func(t *testing.T) {
		_, err := ChooseDeletions(nil, Recent, DefaultDeletionCount, ChooseOptions{})
		require.ErrorIs(t, err, ErrInvalidValue)
	})
}

func TestChooseDeletionsOnGeneratedPrefix(t *testing.T) {
	// spec §4 with the paper's defaults: |U| = 5 from a t_del = 300 prefix.
	h, err := GenerateQuadratic(QuadraticOptions{D: 4, T: 300, Seed: 1})
	require.NoError(t, err)
	prefix := h.Prefix(300)
	rec, err := ChooseDeletions(prefix, Recent, DefaultDeletionCount, ChooseOptions{})
	require.NoError(t, err)
	assert.Equal(t, []int64{296, 297, 298, 299, 300}, rec, "recent")
	old, err := ChooseDeletions(prefix, Old, DefaultDeletionCount, ChooseOptions{})
	require.NoError(t, err)
	assert.Equal(t, []int64{1, 2, 3, 4, 5}, old, "old")
	w := make([]float64, 4)
	hg, err := ChooseDeletions(prefix, HighGradient, DefaultDeletionCount, ChooseOptions{Loss: h.Loss, W: w})
	require.NoError(t, err)
	// Brute force: the 5 largest gradient norms, by a different route.
	type sc struct {
		id   int64
		norm float64
	}
	var all []sc
	g := make([]float64, 4)
	for _, e := range prefix {
		h.Loss.Grad(g, w, e.Sample)
		var ss float64
		for _, v := range g {
			ss += v * v
		}
		all = append(all, sc{e.ID, ss})
	}
	slices.SortFunc(all, func(a, b sc) int { return -cmpFloat(a.norm, b.norm) })
	want := []int64{all[0].id, all[1].id, all[2].id, all[3].id, all[4].id}
	slices.Sort(want)
	assert.Equal(t, want, hg, "high-gradient U vs brute force")
}

func cmpFloat(a, b float64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}
