package bound

import (
	"math"
	"testing"

	"github.com/stretchr/testify/require"
	"pgregory.net/rapid"
)

func TestConstantReferenceValues(t *testing.T) {
	// Exact values of ρⁿΔ₀ + c(1−ρⁿ)/(1−ρ) at the float64 inputs, from
	// mpmath 1.3.0 at 50 digits. Tolerance: the result must be ≥ the exact
	// value (rounded up) and within 1e-12 relative of it (its round-off
	// bound is (2|n ln ρ| + 40)·2⁻⁵³ < 4e-13 here).
	for _, tc := range []struct {
		name       string
		rho, d0, c float64
		n          int
		want       float64
	}{
		{"rho=0.5,n=3", 0.5, 1, 1, 3, 1.875},
		{"rho->1,n=1000", 1 - 1e-12, 2, 0.5, 1000, 501.9999997482555692271194},
		{"rho=0.999999,n=1e7", 0.999999, 1, 1e-3, 10_000_000, 999.9546456681982147906188},
		{"rho=0.9,n=1e4-limit", 0.9, 3, 0.25, 10_000, 2.500000000000000555111512},
		{"rho-tiny", 1e-300, 1, 1, 5, 1},
		{"rho->1,pure-decay,n=1.2e8", 0.999999999, 7, 0, 123456789, 6.187018851423790852945484},
		{"rho=0", 0, 5, 2, 4, 2},
		{"n=0", 0.7, 3, 9, 0, 3},
		{"rho=0,n=0", 0, 3, 9, 0, 3},
		{"all-zero", 0.5, 0, 0, 10, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := Constant(tc.rho, tc.d0, tc.c, tc.n)
			require.NoError(t, err)
			if got < tc.want || !near(got, tc.want, 0, 1e-12) {
				t.Errorf("Constant = %.17g, want %.17g (rounded up, 1e-12 relative)", got, tc.want)
			}
		})
	}
}

func TestLimit(t *testing.T) {
	// c/(1−ρ): 1−ρ is exact for ρ ≥ ½ (Sterbenz) and the division rounds
	// once, so the float64 quotient is within one ulp of the exact limit;
	// the result must be at or above it and within 1e-15.
	for _, tc := range []struct {
		name   string
		rho, c float64
	}{
		{"rho=0.5", 0.5, 1},
		{"rho=0", 0, 3},
		{"c=0", 0.9, 0},
		{"rho->1", 1 - 1e-9, 1e-9},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := Limit(tc.rho, tc.c)
			require.NoError(t, err)
			want := tc.c / (1 - tc.rho)
			if got < want || !near(got, want, 0, 1e-15) {
				t.Errorf("Limit = %.17g, want %.17g", got, want)
			}
		})
	}
	t.Run("bounds-every-alpha", func(t *testing.T) {
		rapid.Check(t, func(t *rapid.T) {
			rho := genRho().Draw(t, "rho")
			c := genNonNeg("c").Draw(t, "c")
			lim, err := Limit(rho, c)
			require.NoError(t, err)
			n := rapid.IntRange(0, 1<<40).Draw(t, "n")
			a, err := Constant(rho, 0, c, n)
			require.NoError(t, err)
			// Both are rounded up independently; 1e-12 relative covers it.
			if a > lim*(1+1e-12) {
				t.Fatalf("α_%d = %v above the limit %v", n, a, lim)
			}
		})
	})
}

func TestClosedFormEqualsRecursion(t *testing.T) {
	// The theorem's closed form (explicit powers) and the lemma's recursion
	// (Horner, one rounding per step) agree to 1e-12 relative; both are
	// rounded up, by at most ≈ (n + 3|n ln ρ|)·2⁻⁵² and 1.5·n ulps, under
	// 1e-12 for n ≤ 1000. Streaming, Series and Constant (for a constant
	// perturbation) agree as well.
	rapid.Check(t, func(t *rapid.T) {
		rho := genRho().Draw(t, "rho")
		d0 := genNonNeg("delta0").Draw(t, "delta0")
		n := rapid.IntRange(0, 1000).Draw(t, "n")
		constant := rapid.Bool().Draw(t, "constant")
		c0 := genNonNeg("c0").Draw(t, "c0")
		etaEps := make([]float64, n)
		for s := range etaEps {
			if constant {
				etaEps[s] = c0
			} else {
				etaEps[s] = genNonNeg("c").Draw(t, "c")
			}
		}
		series, err := Series(nil, rho, d0, etaEps)
		require.NoError(t, err)
		closed, err := ClosedForm(rho, d0, etaEps)
		require.NoError(t, err)
		// 1e-300 absolute: values that underflow differ only at that level.
		if !near(closed, series[n], 1e-300, 1e-12) {
			t.Fatalf("closed form %.17g, recursion %.17g", closed, series[n])
		}
		r, err := NewRecursion(rho, d0)
		require.NoError(t, err)
		for s, c := range etaEps {
			a, err := r.Step(c)
			require.NoError(t, err, "streaming step %d", s)
			if a != series[s+1] {
				t.Fatalf("streaming step %d = %v; Series %v", s, a, series[s+1])
			}
		}
		require.Equal(t, n, r.Steps(), "recursion steps")
		if r.Alpha() != series[n] || r.Rho() != rho {
			t.Fatalf("recursion state α = %v, ρ = %v; want %v, %v", r.Alpha(), r.Rho(), series[n], rho)
		}
		if constant {
			k, err := Constant(rho, d0, c0, n)
			require.NoError(t, err)
			if !near(k, series[n], 1e-300, 1e-12) {
				t.Fatalf("Constant %.17g, recursion %.17g", k, series[n])
			}
		}
	})
}

func TestSeriesMonotone(t *testing.T) {
	// α_t is non-decreasing in Δ_{t0}, ρ, η and ε (every η_sε_s), exactly:
	// each step ρΔ + c is rounded by FMA and moved up one ulp, both
	// monotone operations. With zero perturbation it is non-increasing in
	// t. The closed form Constant shares these properties.
	rapid.Check(t, func(t *rapid.T) {
		r1, r2 := genRho().Draw(t, "rho1"), genRho().Draw(t, "rho2")
		r1, r2 = min(r1, r2), max(r1, r2)
		d1, d2 := genNonNeg("d1").Draw(t, "d1"), genNonNeg("d2").Draw(t, "d2")
		d1, d2 = min(d1, d2), max(d1, d2)
		n := rapid.IntRange(0, 200).Draw(t, "n")
		eta := make([]float64, n)
		eps := make([]float64, n)
		for s := range eta {
			eta[s] = genNonNeg("eta").Draw(t, "eta")
			eps[s] = genNonNeg("eps").Draw(t, "eps")
		}
		grow := rapid.Float64Range(1, 10).Draw(t, "grow") // factor on η or ε
		prod := func(scaleEta, scaleEps float64) []float64 {
			c := make([]float64, n)
			for s := range c {
				c[s] = (eta[s] * scaleEta) * (eps[s] * scaleEps)
			}
			return c
		}
		run := func(rho, d0 float64, c []float64) []float64 {
			a, err := Series(nil, rho, d0, c)
			require.NoError(t, err)
			return a
		}
		base := run(r1, d1, prod(1, 1))
		for name, other := range map[string][]float64{
			"rho":    run(r2, d1, prod(1, 1)),
			"delta0": run(r1, d2, prod(1, 1)),
			"eta":    run(r1, d1, prod(grow, 1)),
			"eps":    run(r1, d1, prod(1, grow)),
		} {
			for k := range base {
				if other[k] < base[k] {
					t.Fatalf("α_%d decreased from %v to %v when %s grew", k, base[k], other[k], name)
				}
			}
		}
		decay := run(r1, d2, make([]float64, n))
		for k := 1; k < len(decay); k++ {
			if decay[k] > decay[k-1] {
				t.Fatalf("without perturbation α_%d = %v > α_%d = %v", k, decay[k], k-1, decay[k-1])
			}
		}
		if n > 0 {
			a, _ := Constant(r1, d2, 0, n)
			b, _ := Constant(r1, d2, 0, n-1)
			if a > b {
				t.Fatalf("Constant grew without perturbation: %v > %v", a, b)
			}
		}
	})
}

func TestRecursionRefusesBadInput(t *testing.T) {
	nan, inf := math.NaN(), math.Inf(1)
	for _, tc := range []struct {
		name     string
		call     func() error
		arg      string
		sentinel error
	}{
		{"NewRecursion/rho=1", func() error { _, err := NewRecursion(1, 0); return err }, "rho", ErrRho},
		{"NewRecursion/rho=1.5", func() error { _, err := NewRecursion(1.5, 0); return err }, "rho", ErrRho},
		{"NewRecursion/rho<0", func() error { _, err := NewRecursion(-0.1, 0); return err }, "rho", ErrRho},
		{"NewRecursion/rho=NaN", func() error { _, err := NewRecursion(nan, 0); return err }, "rho", ErrRho},
		{"NewRecursion/rho=Inf", func() error { _, err := NewRecursion(inf, 0); return err }, "rho", ErrRho},
		{"NewRecursion/delta0<0", func() error { _, err := NewRecursion(0.5, -1); return err }, "delta0", ErrValue},
		{"NewRecursion/delta0=NaN", func() error { _, err := NewRecursion(0.5, nan); return err }, "delta0", ErrValue},
		{"NewRecursion/delta0=Inf", func() error { _, err := NewRecursion(0.5, inf); return err }, "delta0", ErrValue},
		{"Step/negative", func() error {
			r, _ := NewRecursion(0.5, 1)
			_, err := r.Step(-1)
			return err
		}, "etaEps", ErrValue},
		{"Step/NaN", func() error {
			r, _ := NewRecursion(0.5, 1)
			_, err := r.Step(nan)
			return err
		}, "etaEps", ErrValue},
		{"Step/overflow", func() error {
			r, _ := NewRecursion(0.5, math.MaxFloat64)
			_, err := r.Step(math.MaxFloat64)
			return err
		}, "etaEps", ErrRange},
		{"Series/rho=1", func() error { _, err := Series(nil, 1, 0, nil); return err }, "rho", ErrRho},
		{"Series/etaEps<0", func() error { _, err := Series(nil, 0.5, 0, []float64{1, -1}); return err }, "etaEps[1]", ErrValue},
		{"Series/etaEps=Inf", func() error { _, err := Series(nil, 0.5, 0, []float64{inf}); return err }, "etaEps[0]", ErrValue},
		{"ClosedForm/rho=1", func() error { _, err := ClosedForm(1, 0, nil); return err }, "rho", ErrRho},
		{"ClosedForm/delta0<0", func() error { _, err := ClosedForm(0.1, -1, nil); return err }, "delta0", ErrValue},
		{"ClosedForm/etaEps=NaN", func() error { _, err := ClosedForm(0.1, 0, []float64{nan}); return err }, "etaEps[0]", ErrValue},
		{"Constant/rho=1", func() error { _, err := Constant(1, 0, 1, 3); return err }, "rho", ErrRho},
		{"Constant/n<0", func() error { _, err := Constant(0.5, 0, 1, -1); return err }, "n", ErrInvalid},
		{"Constant/etaEps<0", func() error { _, err := Constant(0.5, 0, -1, 1); return err }, "etaEps", ErrValue},
		{"Constant/overflow", func() error { _, err := Constant(0.999, 0, math.MaxFloat64, 1000); return err }, "etaEps", ErrRange},
		{"Limit/rho=1", func() error { _, err := Limit(1, 1); return err }, "rho", ErrRho},
		{"Limit/etaEps=Inf", func() error { _, err := Limit(0.5, inf); return err }, "etaEps", ErrValue},
	} {
		t.Run(tc.name, func(t *testing.T) { wantArgError(t, tc.call(), tc.arg, tc.sentinel) })
	}
	t.Run("Step-error-keeps-state", func(t *testing.T) {
		r, _ := NewRecursion(0.5, 1)
		a, err := r.Step(-1)
		require.Error(t, err, "a negative step was accepted")
		require.Zero(t, r.Steps(), "steps after a refused step")
		if a != 1 || r.Alpha() != 1 {
			t.Fatalf("after a refused step: α = %v (returned %v), want 1", r.Alpha(), a)
		}
	})
	t.Run("Series-dst-length-panics", func(t *testing.T) {
		wantPanic(t, func() { _, _ = Series(make([]float64, 2), 0.5, 0, []float64{1, 2}) })
	})
	t.Run("Series-dst-reused", func(t *testing.T) {
		dst := make([]float64, 3)
		got, err := Series(dst, 0.5, 1, []float64{1, 1})
		require.NoError(t, err)
		require.Same(t, &dst[0], &got[0], "Series did not fill dst")
		// α₁ = 0.5 + 1, α₂ = 0.75 + 1, each rounded up by one ulp.
		if !near(got[1], 1.5, 0, 1e-15) || !near(got[2], 1.75, 0, 1e-15) || got[1] < 1.5 || got[2] < 1.75 {
			t.Fatalf("Series = %v", got)
		}
	})
}

func TestExactZeroStaysZero(t *testing.T) {
	// Exact unlearning (Δ = 0, no perturbation) must give α = 0 exactly,
	// so the certificate asks for σ = 0, despite the upward rounding.
	a, err := Series(nil, 0.9, 0, make([]float64, 10))
	require.NoError(t, err)
	for k, v := range a {
		if v != 0 {
			t.Fatalf("α_%d = %v, want 0", k, v)
		}
	}
	if v, _ := ClosedForm(0.9, 0, make([]float64, 10)); v != 0 {
		t.Fatalf("ClosedForm = %v, want 0", v)
	}
	if v, _ := Constant(0.9, 0, 0, 10); v != 0 {
		t.Fatalf("Constant = %v, want 0", v)
	}
}

func TestRecursionRefusesBadInputProperty(t *testing.T) {
	// Whatever the valid arguments, one argument outside its domain is
	// refused by every entry point, with an error naming it.
	rapid.Check(t, func(t *rapid.T) {
		rho := genRho().Draw(t, "rho")
		d0 := genNonNeg("delta0").Draw(t, "delta0")
		etaEps := []float64{genNonNeg("c0").Draw(t, "c0"), genNonNeg("c1").Draw(t, "c1")}
		which := rapid.IntRange(0, 2).Draw(t, "which")
		var arg string
		switch which {
		case 0:
			rho = rapid.SampledFrom([]float64{1, 1.5, -1e-300, -2, math.NaN(), math.Inf(1)}).Draw(t, "badRho")
			arg = "rho"
		case 1:
			d0 = rapid.SampledFrom([]float64{-1e-300, -1, math.NaN(), math.Inf(1)}).Draw(t, "badDelta0")
			arg = "delta0"
		case 2:
			etaEps[1] = rapid.SampledFrom([]float64{-1e-300, -1, math.NaN(), math.Inf(-1)}).Draw(t, "badEtaEps")
			arg = "etaEps[1]"
		}
		_, err1 := Series(nil, rho, d0, etaEps)
		_, err2 := ClosedForm(rho, d0, etaEps)
		for _, err := range []error{err1, err2} {
			var ae *ArgError
			require.ErrorAs(t, err, &ae, "ρ = %v, Δ0 = %v, ηε = %v", rho, d0, etaEps)
			require.Equal(t, arg, ae.Arg, "ρ = %v, Δ0 = %v, ηε = %v: argument named by the error %v", rho, d0, etaEps, err)
		}
	})
}
