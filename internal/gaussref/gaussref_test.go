package gaussref

import (
	"math"
	"testing"
)

func TestDeltaKnownValue(t *testing.T) {
	// The DP library's TestDeltaForGaussian ("Correct value calculated"):
	// σ = 10, ε = 0.1, sensitivity 1 gives δ = 0.008751768145810 (15
	// digits).
	d := F64(DeltaSigma(F(1), F(10), F(0.1)))
	if math.Abs(d-0.008751768145810) > 1e-15 {
		t.Errorf("δ = %.17g, want 0.008751768145810", d)
	}
}
