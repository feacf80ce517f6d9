package noise

// A high-precision reference for the Gaussian privacy profile
//
//	δ(μ, ε) = Φ(−ε/μ + μ/2) − e^ε·Φ(−ε/μ − μ/2)
//
// (Balle & Wang 2018, Theorem 8; Dong, Roth & Su 2022, Corollary 2.13),
// evaluated as written in math/big at refPrec bits and more: the
// cancellation that defeats float64 costs at most a few hundred of them.
// Nothing here shares code with delta.go.

import "math/big"

// refPrec is the precision (bits) of reference results.
const refPrec = 256

func bf(x float64) *big.Float { return new(big.Float).SetPrec(refPrec).SetFloat64(x) }

func newF(prec uint) *big.Float { return new(big.Float).SetPrec(prec) }

// bigPi returns π to prec bits by Machin's formula
// π = 16·atan(1/5) − 4·atan(1/239).
func bigPi(prec uint) *big.Float {
	w := prec + 32
	atanInv := func(n int64) *big.Float {
		// atan(1/n) = Σ (−1)^k / ((2k+1) n^{2k+1}).
		x := newF(w).Quo(newF(w).SetInt64(1), newF(w).SetInt64(n))
		x2 := newF(w).Mul(x, x)
		sum := newF(w).Set(x)
		term := newF(w).Set(x)
		eps := newF(w).SetMantExp(big.NewFloat(1), -int(w))
		for k := int64(1); ; k++ {
			term.Mul(term, x2)
			t := newF(w).Quo(term, newF(w).SetInt64(2*k+1))
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
	p := newF(w).Mul(atanInv(5), newF(w).SetInt64(16))
	p.Sub(p, newF(w).Mul(atanInv(239), newF(w).SetInt64(4)))
	return newF(prec).Set(p)
}

// bigExp returns e^x to prec bits: x = r·2^k with |r| ≤ 2⁻⁸, the Taylor
// series of e^r, then k squarings (k chosen from the exponent of x, so the
// squarings cost at most ≈ k bits, which the working precision covers).
func bigExp(x *big.Float, prec uint) *big.Float {
	k := max(x.MantExp(nil)+8, 0)
	w := prec + uint(k) + 64
	r := newF(w).SetMantExp(newF(w).Set(x), -k)
	sum := newF(w).SetInt64(1)
	term := newF(w).SetInt64(1)
	eps := newF(w).SetMantExp(big.NewFloat(1), -int(w))
	for n := int64(1); ; n++ {
		term.Mul(term, r)
		term.Quo(term, newF(w).SetInt64(n))
		sum.Add(sum, term)
		if newF(w).Abs(term).Cmp(eps) < 0 {
			break
		}
	}
	for range k {
		sum.Mul(sum, sum)
	}
	return newF(prec).Set(sum)
}

// bigErfc returns erfc(u) to prec bits. For 0 ≤ u < 4 it is 1 − erf(u) with
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
func bigErfc(u *big.Float, prec uint) *big.Float {
	if u.Cmp(big.NewFloat(4)) >= 0 {
		return bigErfcCF(u, prec)
	}
	if u.Sign() == 0 {
		return newF(prec).SetInt64(1)
	}
	neg := u.Sign() < 0
	au := newF(prec).Abs(u)
	uf, _ := au.Float64()
	w := prec + 64 + uint(1.45*uf*uf)
	a := newF(w).Set(au)
	a2 := newF(w).Mul(a, a)
	twoA2 := newF(w).Mul(a2, newF(w).SetInt64(2))
	term := newF(w).Set(a)
	sum := newF(w).Set(a)
	eps := newF(w).SetMantExp(big.NewFloat(1), -int(w))
	for n := int64(1); ; n++ {
		term.Mul(term, twoA2)
		term.Quo(term, newF(w).SetInt64(2*n+1))
		sum.Add(sum, term)
		// Past the peak (2n+1 > 2u²) the terms fall geometrically.
		if float64(2*n+1) > 2*uf*uf+2 && newF(w).Quo(term, sum).Cmp(eps) < 0 {
			break
		}
	}
	erf := newF(w).Mul(sum, bigExp(newF(w).Neg(a2), w))
	erf.Mul(erf, newF(w).SetInt64(2))
	erf.Quo(erf, newF(w).Sqrt(bigPi(w)))
	one := newF(w).SetInt64(1)
	if neg {
		return newF(prec).Add(one, erf)
	}
	return newF(prec).Sub(one, erf)
}

// bigErfcCF is bigErfc's continued fraction for u ≥ 4.
func bigErfcCF(u *big.Float, prec uint) *big.Float {
	w := prec + 64
	a := newF(w).Set(u)
	eval := func(n int) *big.Float {
		t := newF(w) // tail beyond term n
		for k := n; k >= 1; k-- {
			// t_k = (k/2)/(u + t_{k+1})
			d := newF(w).Add(a, t)
			t = newF(w).Quo(newF(w).SetFloat64(float64(k)/2), d)
		}
		return newF(w).Quo(newF(w).SetInt64(1), newF(w).Add(a, t))
	}
	tol := newF(w).SetMantExp(big.NewFloat(1), -int(prec+16))
	prev := eval(64)
	for n := 128; ; n *= 2 {
		cur := eval(n)
		d := newF(w).Sub(cur, prev)
		d.Abs(d)
		if d.Cmp(newF(w).Mul(cur, tol)) <= 0 {
			a2 := newF(w).Mul(a, a)
			r := newF(w).Mul(cur, bigExp(newF(w).Neg(a2), w))
			r.Quo(r, newF(w).Sqrt(bigPi(w)))
			return newF(prec).Set(r)
		}
		if n > 1<<20 {
			panic("bigErfcCF: no convergence")
		}
		prev = cur
	}
}

// bigUpperTail returns Φ(−z) = erfc(z/√2)/2.
func bigUpperTail(z *big.Float, prec uint) *big.Float {
	w := prec + 16
	u := newF(w).Quo(z, newF(w).Sqrt(newF(w).SetInt64(2)))
	e := bigErfc(u, w)
	return newF(prec).Quo(e, newF(w).SetInt64(2))
}

// bigDelta returns δ(μ, ε) = Φ(−x) − e^ε Φ(−y), x = ε/μ − μ/2, y = ε/μ + μ/2,
// to about refPrec bits, computing in a precision raised by the bits the
// subtraction cancels (estimated from the float64 arguments and checked:
// the result must keep refPrec bits).
func bigDelta(mu, eps *big.Float) *big.Float {
	for extra := uint(128); ; extra *= 2 {
		w := refPrec + extra
		b := newF(w).Quo(eps, mu)
		half := newF(w).Quo(mu, newF(w).SetInt64(2))
		x := newF(w).Sub(b, half)
		y := newF(w).Add(b, half)
		p := bigUpperTail(x, w)
		q := newF(w).Mul(bigExp(eps, w), bigUpperTail(y, w))
		d := newF(w).Sub(p, q)
		// Bits lost: exponent of p minus exponent of d.
		if d.Sign() > 0 && p.MantExp(nil)-d.MantExp(nil) < int(extra)-32 {
			return newF(refPrec).Set(d)
		}
		if extra > 1<<14 {
			panic("bigDelta: cancellation beyond 16384 bits")
		}
	}
}

// bigDeltaSigma returns δ at noise σ for sensitivity α: μ = α/σ exactly.
func bigDeltaSigma(alpha, sigma, eps *big.Float) *big.Float {
	mu := newF(refPrec+64).Quo(alpha, sigma)
	return bigDelta(mu, eps)
}

// exactSigma returns a bracket [lo, hi] of relative width ≤ 2⁻⁸⁰ around the
// exact analytic σ for sensitivity 1 at (ε, δ): the σ with δ(1/σ, ε) = δ
// (δ(σ) decreases strictly in σ). start is a float64 guess.
func exactSigma(eps, delta float64, start float64) (lo, hi *big.Float) {
	e, d := bf(eps), bf(delta)
	one := bf(1)
	ok := func(s *big.Float) bool { return bigDeltaSigma(one, s, e).Cmp(d) <= 0 }
	lo, hi = bf(start/1.01), bf(start*1.01)
	for ok(lo) {
		lo.Quo(lo, bf(2))
	}
	for !ok(hi) {
		hi.Mul(hi, bf(2))
	}
	tol := newF(refPrec).SetMantExp(bf(1), -80)
	for {
		w := newF(refPrec).Sub(hi, lo)
		if w.Cmp(newF(refPrec).Mul(lo, tol)) <= 0 {
			return lo, hi
		}
		mid := newF(refPrec).Add(lo, hi)
		mid.Quo(mid, bf(2))
		if ok(mid) {
			hi = mid
		} else {
			lo = mid
		}
	}
}

// bigF64 converts to float64 (nearest).
func bigF64(x *big.Float) float64 { f, _ := x.Float64(); return f }

// relDiff returns (a − b)/b as a float64 for b ≠ 0.
func relDiff(a, b *big.Float) float64 {
	d := newF(refPrec).Sub(a, b)
	d.Quo(d, b)
	return bigF64(d)
}
