package bound

import (
	"math"
	"math/big"
	"testing"

	"pgregory.net/rapid"
)

// TestNextMatchesNextafter: the bit-increment neighbours are those of
// math.Nextafter, for every bit pattern and the special values.
func TestNextMatchesNextafter(t *testing.T) {
	same := func(a, b float64) bool {
		return a == b && math.Signbit(a) == math.Signbit(b) || math.IsNaN(a) && math.IsNaN(b)
	}
	rapid.Check(t, func(t *rapid.T) {
		x := math.Float64frombits(rapid.Uint64().Draw(t, "bits"))
		for _, v := range []float64{x, 0, math.Copysign(0, -1), math.MaxFloat64, -math.MaxFloat64, math.Inf(1), math.Inf(-1), 0x1p-1074, -0x1p-1074} {
			if up, want := uNext(v), math.Nextafter(v, math.Inf(1)); !same(up, want) && !(v == 0 && up == want) {
				t.Fatalf("uNext(%v) = %v, want %v", v, up, want)
			}
			if dn, want := dNext(v), math.Nextafter(v, math.Inf(-1)); !same(dn, want) && !(v == 0 && dn == want) {
				t.Fatalf("dNext(%v) = %v, want %v", v, dn, want)
			}
		}
	})
}

// TestDirectedOperations: each helper's result bounds the exact result of
// its operation (rational arithmetic; the square root by squaring), on
// values spanning the whole exponent range, subnormals included.
func TestDirectedOperations(t *testing.T) {
	gen := rapid.Custom(func(t *rapid.T) float64 {
		switch rapid.IntRange(0, 3).Draw(t, "kind") {
		case 0:
			return 0
		case 1:
			return math.Float64frombits(rapid.Uint64Range(1, 1<<52).Draw(t, "subnormal"))
		default:
			return math.Ldexp(rapid.Float64Range(0.5, 1).Draw(t, "mant"), rapid.IntRange(-1070, 1020).Draw(t, "exp"))
		}
	})
	rat := func(x float64) *big.Rat { return new(big.Rat).SetFloat64(x) }
	rapid.Check(t, func(t *rapid.T) {
		a, b := gen.Draw(t, "a"), gen.Draw(t, "b")
		sa, sb := rapid.SampledFrom([]float64{1, -1}).Draw(t, "sa"), rapid.SampledFrom([]float64{1, -1}).Draw(t, "sb")
		check := func(op string, got float64, exact *big.Rat, upper bool) {
			if math.IsInf(got, 0) {
				return // overflow: callers refuse infinite bounds
			}
			c := rat(got).Cmp(exact)
			if (upper && c < 0) || (!upper && c > 0) {
				t.Fatalf("%s(%v, %v) = %v is not an %s bound on %v", op, a, b, got, map[bool]string{true: "upper", false: "lower"}[upper], exact.FloatString(30))
			}
		}
		check("uAdd", uAdd(sa*a, sb*b), new(big.Rat).Add(rat(sa*a), rat(sb*b)), true)
		check("dAdd", dAdd(sa*a, sb*b), new(big.Rat).Add(rat(sa*a), rat(sb*b)), false)
		check("uMul", uMul(a, b), new(big.Rat).Mul(rat(a), rat(b)), true)
		check("dMul", dMul(a, b), new(big.Rat).Mul(rat(a), rat(b)), false)
		if b > 0 {
			check("uDiv", uDiv(a, b), new(big.Rat).Quo(rat(a), rat(b)), true)
			check("dDiv", dDiv(a, b), new(big.Rat).Quo(rat(a), rat(b)), false)
		}
		if r := uSqrt(a); !math.IsInf(r, 0) && rat(r).Cmp(rat(0)) >= 0 {
			if new(big.Rat).Mul(rat(r), rat(r)).Cmp(rat(a)) < 0 {
				t.Fatalf("uSqrt(%v) = %v: its square is below", a, r)
			}
		}
		if uAdd(a, -a) != 0 || uMul(0, b) != 0 || dMul(a, 0) != 0 {
			t.Fatalf("an exact zero did not stay zero")
		}
	})
}
