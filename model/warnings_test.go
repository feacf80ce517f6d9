package model

import "testing"

// TestSingleClass: one class predicted for every row while the rows hold
// two is a single-class model; a class predicted for every row that is
// also the only class of the rows, a mixed prediction, no rows or a
// regression (no classes) are not.
func TestSingleClass(t *testing.T) {
	for _, c := range []struct {
		name    string
		ev      Evaluation
		k       int
		warning bool
	}{
		{"one predicted, two present", Evaluation{N: 5, Classes: []ClassMetrics{{Support: 2}, {Support: 3, Predicted: 5}}}, 1, true},
		{"class 0", Evaluation{N: 4, Classes: []ClassMetrics{{Support: 1, Predicted: 4}, {Support: 3}, {}}}, 0, true},
		{"mixed", Evaluation{N: 5, Classes: []ClassMetrics{{Support: 2, Predicted: 1}, {Support: 3, Predicted: 4}}}, 0, false},
		{"one class present", Evaluation{N: 5, Classes: []ClassMetrics{{}, {Support: 5, Predicted: 5}}}, 0, false},
		{"no rows", Evaluation{Classes: []ClassMetrics{{}, {}}}, 0, false},
		{"regression", Evaluation{N: 5}, 0, false},
	} {
		k, ok := c.ev.SingleClass()
		if ok != c.warning || (ok && k != c.k) {
			t.Errorf("%s: SingleClass() = %d, %v; want %d, %v", c.name, k, ok, c.k, c.warning)
		}
	}
}

// TestNoiseDominates: the model's own spread is √(sd(xᵀ(w+n))² − sd(xᵀn)²);
// the noise dominates when its spread exceeds it (released spread above
// √2·sd(xᵀn) does not).
func TestNoiseDominates(t *testing.T) {
	for _, c := range []struct {
		scores, noise float64
		want          bool
	}{
		{5, 3, false}, // own 4 > 3
		{5, 4, true},  // own 3 < 4
		{1, 2, true},  // own 0
		{1, 0, false},
		{0, 0, false},
	} {
		if got := NoiseDominates(Spread{SD: c.scores}, Spread{SD: c.noise}); got != c.want {
			t.Errorf("NoiseDominates(%v, %v) = %v, want %v", c.scores, c.noise, got, c.want)
		}
	}
}
