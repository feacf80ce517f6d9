package noise

// Short names for the 256-bit reference of internal/gaussref.

import (
	"math/big"

	"unlearn/internal/gaussref"
)

const refPrec = gaussref.Prec

func bf(x float64) *big.Float                    { return gaussref.F(x) }
func newF(prec uint) *big.Float                  { return gaussref.NewF(prec) }
func bigErfc(u *big.Float, prec uint) *big.Float { return gaussref.Erfc(u, prec) }
func bigDelta(mu, eps *big.Float) *big.Float     { return gaussref.Delta(mu, eps) }
func bigDeltaSigma(alpha, sigma, eps *big.Float) *big.Float {
	return gaussref.DeltaSigma(alpha, sigma, eps)
}
func exactSigma(eps, delta, start float64) (lo, hi *big.Float) {
	return gaussref.ExactSigma(eps, delta, start)
}
func bigF64(x *big.Float) float64     { return gaussref.F64(x) }
func relDiff(a, b *big.Float) float64 { return gaussref.RelDiff(a, b) }
