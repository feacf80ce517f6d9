package floatbits

import (
	"fmt"
	"math"
	"math/big"
)

// ExactDistance returns ‖a − b‖₂ of two float64 vectors as the smallest
// float64 at or above the exact value: the differences, squares and sum
// are exact (math/big, 4400 bits, enough for any pair of finite float64
// values), the square root is rounded up by checking its square. It is how
// the tests compare a measured deviation with a bound without any
// tolerance. It panics if the lengths differ.
func ExactDistance(a, b []float64) float64 {
	if len(a) != len(b) {
		panic(fmt.Sprintf("floatbits: ExactDistance: lengths %d and %d", len(a), len(b)))
	}
	const prec = 4400
	sum := new(big.Float).SetPrec(prec)
	for i := range a {
		x := new(big.Float).SetPrec(prec).SetFloat64(a[i])
		x.Sub(x, new(big.Float).SetPrec(prec).SetFloat64(b[i]))
		x.Mul(x, x)
		sum.Add(sum, x)
	}
	r := new(big.Float).SetPrec(200).Sqrt(sum)
	f, _ := r.Float64()
	sq := new(big.Float).SetPrec(prec)
	for {
		v := new(big.Float).SetPrec(prec).SetFloat64(f)
		if sq.Mul(v, v).Cmp(sum) >= 0 {
			return f
		}
		f = math.Nextafter(f, math.Inf(1))
	}
}
