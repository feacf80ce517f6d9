// Package floatbits compares float vectors bit for bit, the equality that
// determinism claims rest on: it tells 0 from −0 and treats a NaN as equal
// to the same NaN, unlike ==.
package floatbits

import "math"

// Equal reports whether a and b have the same length and the same bits in
// every element.
func Equal(a, b []float64) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if math.Float64bits(a[i]) != math.Float64bits(b[i]) {
			return false
		}
	}
	return true
}
