package olbfgs

import (
	"math"
	"testing"

	"gonum.org/v1/gonum/floats"
	"pgregory.net/rapid"
)

// TestClipToBound: a payload above B is scaled onto the ball (its
// direction kept, its norm at most B and within a few ulps of it) and
// then accepted by Step's check; one within B is left bit for bit.
func TestClipToBound(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		d := rapid.IntRange(1, 40).Draw(t, "d")
		c := Config{Dim: d, SampleBound: rapid.Float64Range(1e-3, 1e3).Draw(t, "B")}
		v := rapid.SliceOfN(rapid.Float64Range(-1e4, 1e4), d, d).Draw(t, "v")
		orig := append([]float64(nil), v...)
		n := floats.Norm(orig, 2)
		clipped := c.ClipToBound(v)
		if n <= c.SampleBound {
			if clipped || !floats.Same(v, orig) {
				t.Fatalf("a payload within B changed: %v → %v", orig, v)
			}
			return
		}
		if !clipped {
			t.Fatal("a payload above B not reported clipped")
		}
		m := floats.Norm(v, 2)
		if m > c.SampleBound || m < c.SampleBound*(1-1e-13) {
			t.Fatalf("‖clipped‖ = %v, want in [B(1 − 1e-13), B], B = %v", m, c.SampleBound)
		}
		for j := range v {
			if math.Signbit(v[j]) != math.Signbit(orig[j]) || math.Abs(v[j]-orig[j]*c.SampleBound/n) > 1e-12*math.Abs(orig[j]) {
				t.Fatalf("coordinate %d: %v, want %v·B/‖v‖", j, v[j], orig[j])
			}
		}
	})
}
