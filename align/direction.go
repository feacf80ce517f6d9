package align

import (
	"fmt"
	"math"

	"unlearn/internal/floatbits"
)

// DirectionError returns the update-direction error of spec §3 (the paper's
// D_upd) between two update directions a and b:
//
//	D_upd = 1 − aᵀb / (‖a‖₂‖b‖₂),
//
// with D_upd = 0 when both are zero and 1 when exactly one is. It lies in
// [0, 2]: 0 for parallel directions, 1 for orthogonal, 2 for opposite.
// Bitwise-identical directions give exactly 0 (spec §8) and exactly opposite
// ones exactly 2. The vectors are first scaled by powers of two (exactly),
// so no magnitude over- or underflows; the cosine is clamped to [−1, 1]
// against round-off. It panics if the lengths differ. The sign convention of
// the directions (d = −H_Z∇ℓ or H_Z∇ℓ) does not matter as long as both use
// the same.
func DirectionError(a, b []float64) float64 {
	if len(a) != len(b) {
		panic(fmt.Sprintf("align: DirectionError: lengths %d and %d differ", len(a), len(b)))
	}
	if floatbits.Equal(a, b) {
		return 0
	}
	ea, za := scaleExp(a)
	eb, zb := scaleExp(b)
	switch {
	case za && zb:
		return 0
	case za || zb:
		return 1
	}
	var dot, na, nb float64
	if ea >= -1000 && eb >= -1000 {
		// 2^−e is a normal number: scaling is one exact multiplication.
		sa, sb := math.Ldexp(1, -ea), math.Ldexp(1, -eb)
		for i := range a {
			x, y := a[i]*sa, b[i]*sb
			dot += x * y
			na += x * x
			nb += y * y
		}
	} else {
		for i := range a {
			x, y := math.Ldexp(a[i], -ea), math.Ldexp(b[i], -eb)
			dot += x * y
			na += x * x
			nb += y * y
		}
	}
	// sqrt(na·nb) rather than sqrt(na)·sqrt(nb): for b = −a it gives exactly
	// −1 (sqrt(fl(x²)) = x in binary floating point). na and nb lie in
	// [2⁻², len(a)], so the product cannot overflow.
	cos := dot / math.Sqrt(na*nb)
	return 1 - math.Max(-1, math.Min(1, cos))
}

// scaleExp returns the binary exponent e of the largest |v_i|
// (max |v_i| ∈ [2^(e−1), 2^e)) and whether v is all zeros.
func scaleExp(v []float64) (int, bool) {
	var mx float64
	for _, x := range v {
		if ax := math.Abs(x); ax > mx {
			mx = ax
		}
	}
	if mx == 0 {
		return 0, true
	}
	_, e := math.Frexp(mx)
	return e, false
}
