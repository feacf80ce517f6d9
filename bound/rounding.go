package bound

import "math"

// Directed rounding. Go's float64 operations +, −, ×, ÷ and math.Sqrt are
// correctly rounded to nearest (IEEE 754), so the exact result of one
// operation lies within half a spacing of the computed float, and therefore
// strictly between the floats just below and just above it, subnormal
// results included. The helpers below return those neighbours: an upper
// (u…) or lower (d…) bound on the exact result of the operation on the
// given float arguments. Composed, they evaluate an expression in interval
// arithmetic, one direction at a time, as the time-varying bound of
// [Dynamics.Bound] needs (docs/theory.md, "Floating point of the scheduled
// bound"). An exact zero (a zero factor, a zero sum of zeros) stays zero, so
// that a bound on no deviation stays exactly 0. Each result is converted
// explicitly to float64, which forbids the compiler to fuse it into a later
// operation (the Go specification allows fusion otherwise).

// uNext returns the next float64 above x (x itself for +Inf and NaN):
// math.Nextafter(x, +Inf), by incrementing the bit pattern (the floats of
// one sign are ordered like their bit patterns), which the compiler inlines.
func uNext(x float64) float64 {
	switch {
	case x > 0 && x <= math.MaxFloat64:
		return math.Float64frombits(math.Float64bits(x) + 1)
	case x < 0:
		return math.Float64frombits(math.Float64bits(x) - 1)
	case x == 0:
		return 0x1p-1074
	}
	return x
}

// dNext returns the next float64 below x (x itself for −Inf and NaN).
func dNext(x float64) float64 { return -uNext(-x) }

// uAdd returns an upper bound on a + b. A float sum is 0 only when the
// exact sum is (IEEE 754 addition never underflows to 0), so 0 is returned
// as is.
func uAdd(a, b float64) float64 {
	switch s := float64(a + b); {
	case a == 0:
		return b
	case b == 0:
		return a
	case s == 0:
		return 0
	default:
		return uNext(s)
	}
}

// dAdd returns a lower bound on a + b (0 when it is exactly 0).
func dAdd(a, b float64) float64 {
	switch s := float64(a + b); {
	case a == 0:
		return b
	case b == 0:
		return a
	case s == 0:
		return 0
	default:
		return dNext(s)
	}
}

// uSub returns an upper bound on a − b.
func uSub(a, b float64) float64 { return uAdd(a, -b) }

// dSub returns a lower bound on a − b.
func dSub(a, b float64) float64 { return dAdd(a, -b) }

// uMul returns an upper bound on a·b for a, b ≥ 0.
func uMul(a, b float64) float64 {
	if a == 0 || b == 0 {
		return 0
	}
	return uNext(float64(a * b))
}

// dMul returns a lower bound ≥ 0 on a·b for a, b ≥ 0.
func dMul(a, b float64) float64 {
	p := float64(a * b)
	if p == 0 {
		return 0
	}
	return max(dNext(p), 0)
}

// uDiv returns an upper bound on a/b for a ≥ 0, b > 0.
func uDiv(a, b float64) float64 {
	if a == 0 {
		return 0
	}
	return uNext(float64(a / b))
}

// dDiv returns a lower bound ≥ 0 on a/b for a ≥ 0, b > 0.
func dDiv(a, b float64) float64 {
	q := float64(a / b)
	if q == 0 {
		return 0
	}
	return max(dNext(q), 0)
}

// uSqrt returns an upper bound on √x for x ≥ 0 (negative x is treated as
// 0: callers pass upper bounds of non-negative quantities).
func uSqrt(x float64) float64 {
	if x <= 0 {
		return 0
	}
	return uNext(math.Sqrt(x))
}
