// Package gaussref is a high-precision reference for the privacy profile of
// the Gaussian mechanism,
//
//	δ(μ, ε) = Φ(−ε/μ + μ/2) − e^ε·Φ(−ε/μ − μ/2)
//
// (Balle & Wang 2018, Theorem 8; Dong, Roth & Su 2022, Corollary 2.13),
// evaluated as written in math/big at Prec bits and more: the cancellation
// that defeats float64 costs at most a few hundred of them. It exists for
// the tests of packages noise and certify, and shares no code with
// noise/delta.go. Φ comes from erfc, by a series of positive terms
// (Abramowitz & Stegun 7.1.6) below 4 and a continued fraction (A&S
// 7.1.14) above; π from Machin's formula; e^x from a reduced Taylor series.
// Checked against mpmath values in noise/delta_test.go.
package gaussref

import "math/big"

// Prec is the precision (bits) of reference results.
const Prec = 256

// F returns x as a Prec-bit big.Float.
func F(x float64) *big.Float { return new(big.Float).SetPrec(Prec).SetFloat64(x) }

// NewF returns a zero big.Float of precision prec.
func NewF(prec uint) *big.Float { return new(big.Float).SetPrec(prec) }

// Pi returns π to prec bits by Machin's formula
// π = 16·atan(1/5) − 4·atan(1/239).
func Pi(prec uint) *big.Float {
	w := prec + 32
	atanInv := func(n int64) *big.Float {
		// atan(1/n) = Σ (−1)^k / ((2k+1) n^{2k+1}).
		x := NewF(w).Quo(NewF(w).SetInt64(1), NewF(w).SetInt64(n))
		x2 := NewF(w).Mul(x, x)
		sum := NewF(w).Set(x)
		term := NewF(w).Set(x)
		eps := NewF(w).SetMantExp(big.NewFloat(1), -int(w))
		for k := int64(1); ; k++ {
			term.Mul(term, x2)
			t := NewF(w).Quo(term, NewF(w).SetInt64(2*k+1))
			if k%2 == 1 {
				sum.Sub(sum, t)
			} else {
				sum.Add(sum, t)
			}
			if t.Cmp(eps) < 0 {
				return sum
			}
		}
	}
	p := NewF(w).Mul(atanInv(5), NewF(w).SetInt64(16))
	p.Sub(p, NewF(w).Mul(atanInv(239), NewF(w).SetInt64(4)))
	return NewF(prec).Set(p)
}

// Exp returns e^x to prec bits: x = r·2^k with |r| ≤ 2⁻⁸, the Taylor
// series of e^r, then k squarings (k chosen from the exponent of x, so the
// squarings cost at most ≈ k bits, which the working precision covers).
func Exp(x *big.Float, prec uint) *big.Float {
	k := max(x.MantExp(nil)+8, 0)
	w := prec + uint(k) + 64
	r := NewF(w).SetMantExp(NewF(w).Set(x), -k)
	sum := NewF(w).SetInt64(1)
	term := NewF(w).SetInt64(1)
	eps := NewF(w).SetMantExp(big.NewFloat(1), -int(w))
	for n := int64(1); ; n++ {
		term.Mul(term, r)
		term.Quo(term, NewF(w).SetInt64(n))
		sum.Add(sum, term)
		if NewF(w).Abs(term).Cmp(eps) < 0 {
			break
		}
	}
	for range k {
		sum.Mul(sum, sum)
	}
	return NewF(prec).Set(sum)
}

// Erfc returns erfc(u) to prec bits. For 0 ≤ u < 4 it is 1 − erf(u) with
//
//	erf(u) = (2/√π)·e^{−u²}·Σ_{n≥0} 2ⁿ u^{2n+1} / (1·3·…·(2n+1)),
//
// a series of positive terms (Abramowitz & Stegun 7.1.6), in a working
// precision raised by log₂(1/erfc(u)) ≈ 1.45·u² bits so that the
// subtraction leaves prec good bits; for u < 0 it is 1 + erf(−u). For
// u ≥ 4 it is the continued fraction (A&S 7.1.14)
//
//	erfc(u) = (e^{−u²}/√π) · 1/(u + (1/2)/(u + 1/(u + (3/2)/(u + …)))),
//
// evaluated backwards from N terms with N doubled until two evaluations
// agree to prec + 16 bits.
func Erfc(u *big.Float, prec uint) *big.Float {
	if u.Cmp(big.NewFloat(4)) >= 0 {
		return erfcCF(u, prec)
	}
	if u.Sign() == 0 {
		return NewF(prec).SetInt64(1)
	}
	neg := u.Sign() < 0
	au := NewF(prec).Abs(u)
	uf, _ := au.Float64()
	w := prec + 64 + uint(1.45*uf*uf)
	a := NewF(w).Set(au)
	a2 := NewF(w).Mul(a, a)
	twoA2 := NewF(w).Mul(a2, NewF(w).SetInt64(2))
	term := NewF(w).Set(a)
	sum := NewF(w).Set(a)
	eps := NewF(w).SetMantExp(big.NewFloat(1), -int(w))
	for n := int64(1); ; n++ {
		term.Mul(term, twoA2)
		term.Quo(term, NewF(w).SetInt64(2*n+1))
		sum.Add(sum, term)
		// Past the peak (2n+1 > 2u²) the terms fall geometrically.
		if float64(2*n+1) > 2*uf*uf+2 && NewF(w).Quo(term, sum).Cmp(eps) < 0 {
			break
		}
	}
	erf := NewF(w).Mul(sum, Exp(NewF(w).Neg(a2), w))
	erf.Mul(erf, NewF(w).SetInt64(2))
	erf.Quo(erf, NewF(w).Sqrt(Pi(w)))
	one := NewF(w).SetInt64(1)
	if neg {
		return NewF(prec).Add(one, erf)
	}
	return NewF(prec).Sub(one, erf)
}

// erfcCF is Erfc's continued fraction for u ≥ 4.
func erfcCF(u *big.Float, prec uint) *big.Float {
	w := prec + 64
	a := NewF(w).Set(u)
	eval := func(n int) *big.Float {
		t := NewF(w) // tail beyond term n
		for k := n; k >= 1; k-- {
			// t_k = (k/2)/(u + t_{k+1})
			d := NewF(w).Add(a, t)
			t = NewF(w).Quo(NewF(w).SetFloat64(float64(k)/2), d)
		}
		return NewF(w).Quo(NewF(w).SetInt64(1), NewF(w).Add(a, t))
	}
	tol := NewF(w).SetMantExp(big.NewFloat(1), -int(prec+16))
	prev := eval(64)
	for n := 128; ; n *= 2 {
		cur := eval(n)
		d := NewF(w).Sub(cur, prev)
		d.Abs(d)
		if d.Cmp(NewF(w).Mul(cur, tol)) <= 0 {
			a2 := NewF(w).Mul(a, a)
			r := NewF(w).Mul(cur, Exp(NewF(w).Neg(a2), w))
			r.Quo(r, NewF(w).Sqrt(Pi(w)))
			return NewF(prec).Set(r)
		}
		if n > 1<<20 {
			panic("erfcCF: no convergence")
		}
		prev = cur
	}
}

// UpperTail returns Φ(−z) = erfc(z/√2)/2.
func UpperTail(z *big.Float, prec uint) *big.Float {
	w := prec + 16
	u := NewF(w).Quo(z, NewF(w).Sqrt(NewF(w).SetInt64(2)))
	e := Erfc(u, w)
	return NewF(prec).Quo(e, NewF(w).SetInt64(2))
}

// Delta returns δ(μ, ε) = Φ(−x) − e^ε Φ(−y), x = ε/μ − μ/2, y = ε/μ + μ/2,
// to about Prec bits, computing in a precision raised by the bits the
// subtraction cancels (estimated from the float64 arguments and checked:
// the result must keep Prec bits).
func Delta(mu, eps *big.Float) *big.Float {
	for extra := uint(128); ; extra *= 2 {
		w := Prec + extra
		b := NewF(w).Quo(eps, mu)
		half := NewF(w).Quo(mu, NewF(w).SetInt64(2))
		x := NewF(w).Sub(b, half)
		y := NewF(w).Add(b, half)
		p := UpperTail(x, w)
		q := NewF(w).Mul(Exp(eps, w), UpperTail(y, w))
		d := NewF(w).Sub(p, q)
		// Bits lost: exponent of p minus exponent of d.
		if d.Sign() > 0 && p.MantExp(nil)-d.MantExp(nil) < int(extra)-32 {
			return NewF(Prec).Set(d)
		}
		if extra > 1<<14 {
			panic("Delta: cancellation beyond 16384 bits")
		}
	}
}

// DeltaSigma returns δ at noise σ for sensitivity α: μ = α/σ exactly.
func DeltaSigma(alpha, sigma, eps *big.Float) *big.Float {
	mu := NewF(Prec+64).Quo(alpha, sigma)
	return Delta(mu, eps)
}

// ExactSigma returns a bracket [lo, hi] of relative width ≤ 2⁻⁸⁰ around the
// exact analytic σ for sensitivity 1 at (ε, δ): the σ with δ(1/σ, ε) = δ
// (δ(σ) decreases strictly in σ). start is a float64 guess.
func ExactSigma(eps, delta float64, start float64) (lo, hi *big.Float) {
	e, d := F(eps), F(delta)
	one := F(1)
	ok := func(s *big.Float) bool { return DeltaSigma(one, s, e).Cmp(d) <= 0 }
	lo, hi = F(start/1.01), F(start*1.01)
	for ok(lo) {
		lo.Quo(lo, F(2))
	}
	for !ok(hi) {
		hi.Mul(hi, F(2))
	}
	tol := NewF(Prec).SetMantExp(F(1), -80)
	for {
		w := NewF(Prec).Sub(hi, lo)
		if w.Cmp(NewF(Prec).Mul(lo, tol)) <= 0 {
			return lo, hi
		}
		mid := NewF(Prec).Add(lo, hi)
		mid.Quo(mid, F(2))
		if ok(mid) {
			hi = mid
		} else {
			lo = mid
		}
	}
}

// F64 converts to float64 (nearest).
func F64(x *big.Float) float64 { f, _ := x.Float64(); return f }

// RelDiff returns (a − b)/b as a float64 for b ≠ 0.
func RelDiff(a, b *big.Float) float64 {
	d := NewF(Prec).Sub(a, b)
	d.Quo(d, b)
	return F64(d)
}
