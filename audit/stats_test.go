package audit

import (
	"bufio"
	"errors"
	"math"
	"math/big"
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"gonum.org/v1/gonum/stat/distuv"
	"pgregory.net/rapid"

	"unlearn/internal/testutil"
)

func TestClopperPearsonUpper(t *testing.T) {
	t.Run("k = 0 is 1 − a^(1/n)", func(t *testing.T) {
		// Closed form: P[Bin(n, p) = 0] = (1 − p)^n = a.
		for _, n := range []int{1, 7, 100, 5000} {
			got := ClopperPearsonUpper(0, n, 0.01)
			want := 1 - math.Pow(0.01, 1/float64(n))
			require.True(t, testutil.Near(got, want, 0, 1e-11), "n = %d: %v, want %v", n, got, want)
			wantCPBound(t, 0, n, 0.01, got, 1e-10)
		}
	})
	t.Run("k = n is 1", func(t *testing.T) {
		require.Equal(t, 1.0, ClopperPearsonUpper(9, 9, 0.05))
	})
	t.Run("n = 1, k = 0 at a = 0.05 is 0.95", func(t *testing.T) {
		require.True(t, testutil.Near(ClopperPearsonUpper(0, 1, 0.05), 0.95, 1e-15, 0))
	})
	t.Run("the defining tail identity P[Bin(n, p_ub) ≤ k] = a", func(t *testing.T) {
		// The bound is the p at which observing k or fewer successes has
		// probability a: at p the exact CDF (math/big, 512 bits, the sum
		// of C(n, i) p^i (1 − p)^{n−i} with big-integer binomials) is at
		// most a (valid: no tolerance), and a step of 10⁻¹⁰ of min(p, 1 − p)
		// below p it exceeds a (accurate).
		rapid.Check(t, func(t *rapid.T) {
			n := rapid.IntRange(2, 3000).Draw(t, "n")
			k := rapid.IntRange(1, n-1).Draw(t, "k")
			a := rapid.Float64Range(1e-7, 0.5).Draw(t, "a")
			p := ClopperPearsonUpper(k, n, a)
			wantCPBound(t, k, n, a, p, 1e-10)
			if !(p > float64(k)/float64(n)) {
				t.Fatalf("upper bound %v not above the estimate %d/%d", p, k, n)
			}
		})
	})
	t.Run("high-precision reference values", func(t *testing.T) {
		// audit/testdata/clopper_pearson.txt: mpmath at 60 digits
		// (audit/testdata/clopper_pearson.py). The bound must not be
		// below the reference and may exceed it by 10⁻¹⁰ relative to
		// min(p, 1 − p), or two units in the last place of p.
		for _, c := range readCPReference(t) {
			got := ClopperPearsonUpper(c.k, c.n, c.a)
			ref, _ := c.p.Float64()
			if new(big.Float).SetFloat64(got).Cmp(c.p) < 0 {
				t.Errorf("k = %d, n = %d, a = %v: %.17g below the exact %s", c.k, c.n, c.a, got, c.p.Text('g', 20))
			}
			if got-ref > max(1e-10*min(ref, 1-ref), 2*ulp(ref)) {
				t.Errorf("k = %d, n = %d, a = %v: %.17g exceeds the exact %.17g by %.3g", c.k, c.n, c.a, got, ref, got-ref)
			}
		}
	})
	t.Run("many trials, few errors: the issue's case", func(t *testing.T) {
		// gonum's Beta quantile, used before, returned 0.0362883 for 3
		// errors in 30000 trials at a = 2.5·10⁻⁶, 53.7 times the exact
		// 0.000676098773088 (reference file), and 0.0366181 for 6 errors
		// (42 times 0.000871399328513).
		for _, c := range []struct {
			k     int
			exact float64
		}{{3, 0.000676098773088194566538}, {6, 0.000871399328512796942346}} {
			got := ClopperPearsonUpper(c.k, 30000, 2.5e-6)
			require.GreaterOrEqual(t, got, c.exact)
			require.Less(t, got, c.exact*(1+1e-10))
		}
	})
	t.Run("Hoeffding beyond MaxExactErrors", func(t *testing.T) {
		n := 4 * MaxExactErrors
		k := MaxExactErrors + 1
		p := ClopperPearsonUpper(k, n, 1e-6)
		require.Greater(t, p, float64(k)/float64(n))
		// Hoeffding is looser than the exact bound, which is below it.
		require.Greater(t, p, cpEstimate(k, n, 1e-6, 0))
	})
	t.Run("increasing in k, decreasing in n and in a", func(t *testing.T) {
		rapid.Check(t, func(t *rapid.T) {
			n := rapid.IntRange(2, 2000).Draw(t, "n")
			k := rapid.IntRange(0, n-1).Draw(t, "k")
			a := rapid.Float64Range(1e-6, 0.2).Draw(t, "a")
			p := ClopperPearsonUpper(k, n, a)
			if q := ClopperPearsonUpper(k+1, n, a); !(q > p) {
				t.Fatalf("k+1: %v ≤ %v", q, p)
			}
			if q := ClopperPearsonUpper(k, n+1, a); !(q < p) {
				t.Fatalf("n+1: %v ≥ %v", q, p)
			}
			if q := ClopperPearsonUpper(k, n, 2*a); !(q < p) {
				t.Fatalf("2a: %v ≥ %v", q, p)
			}
		})
	})
	t.Run("coverage at least 1 − a", func(t *testing.T) {
		// Exact coverage: P[p ≤ ub(K)] = Σ_{k: ub(k) ≥ p} P[K = k] for
		// K ~ Bin(n, p), summed exactly over k for a grid of p.
		const n, a = 60, 0.05
		for _, p := range []float64{0.001, 0.02, 0.1, 0.3, 0.5, 0.77, 0.99} {
			b := distuv.Binomial{N: n, P: p}
			cover := 0.0
			for k := 0; k <= n; k++ {
				if ClopperPearsonUpper(k, n, a) >= p {
					cover += b.Prob(float64(k))
				}
			}
			require.GreaterOrEqual(t, cover, 1-a-1e-12, "p = %v", p)
		}
	})
	t.Run("programmer errors panic", func(t *testing.T) {
		for _, f := range []func(){
			func() { ClopperPearsonUpper(-1, 5, 0.1) },
			func() { ClopperPearsonUpper(6, 5, 0.1) },
			func() { ClopperPearsonUpper(0, 0, 0.1) },
			func() { ClopperPearsonUpper(1, 5, 0) },
			func() { ClopperPearsonUpper(1, 5, math.NaN()) },
		} {
			testutil.WantPanic(t, "audit: ", f)
		}
	})
}

func TestEpsilonLowerBound(t *testing.T) {
	tests := []struct {
		name                 string
		fpr, fnr, delta, eps float64
	}{
		// ln((1 − 0 − 0.5)/0.01) = ln 50.
		{"one-sided form", 0.01, 0.5, 0, math.Log(50)},
		// The symmetric form: ln((1 − 0 − 0.5)/0.01) with the rates swapped.
		{"symmetric form", 0.5, 0.01, 0, math.Log(50)},
		// δ is taken from the success probability: ln((1 − 0.1 − 0.5)/0.01) = ln 40.
		{"delta lowers the bound", 0.01, 0.5, 0.1, math.Log(40)},
		// A coin flip (FPR + FNR = 1) proves nothing: clipped at 0.
		{"coin flip", 0.5, 0.5, 0, 0},
		{"worse than a coin", 0.7, 0.9, 1e-5, 0},
		// Both numerators ≤ 0.
		{"useless", 1, 1, 0, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := EpsilonLowerBound(tt.fpr, tt.fnr, tt.delta)
			require.True(t, testutil.Near(got, tt.eps, 1e-15, 1e-14), "got %v, want %v", got, tt.eps)
		})
	}
	t.Run("an (ε, δ) pair of rates on the boundary gives exactly ε", func(t *testing.T) {
		// Rates with FPR + e^ε·FNR = 1 − δ are the tightest an (ε, δ)
		// mechanism allows; the bound recovers ε up to round-off.
		rapid.Check(t, func(t *rapid.T) {
			eps := rapid.Float64Range(0.01, 8).Draw(t, "eps")
			delta := rapid.Float64Range(0, 0.1).Draw(t, "delta")
			fnr := rapid.Float64Range(0.01, 0.5).Draw(t, "fnr")
			fpr := (1 - delta - fnr) / math.Exp(eps)
			got := EpsilonLowerBound(fpr, fnr, delta)
			// The symmetric term may exceed ε for these rates (then they
			// are not those of any (ε, δ) mechanism); otherwise the bound
			// is ε exactly.
			if sym := math.Log((1 - delta - fpr) / fnr); sym > eps {
				if !testutil.Near(got, sym, 1e-12, 1e-12) {
					t.Fatalf("got %v, want the symmetric term %v", got, sym)
				}
				return
			}
			if !testutil.Near(got, eps, 1e-12, 1e-12) {
				t.Fatalf("got %v, want %v", got, eps)
			}
		})
	})
	t.Run("programmer errors panic", func(t *testing.T) {
		for _, f := range []func(){
			func() { EpsilonLowerBound(0, 0.5, 0) },
			func() { EpsilonLowerBound(0.5, 1.5, 0) },
			func() { EpsilonLowerBound(0.5, 0.5, 1) },
			func() { EpsilonLowerBound(math.NaN(), 0.5, 0) },
		} {
			testutil.WantPanic(t, "audit: ", f)
		}
	})
}

func TestBestRule(t *testing.T) {
	// 20 trials per world at a = 0.05: a perfect test scores
	// ln((1 − p)/p) with p = 1 − 0.05^{1/20} ≈ 0.139, about 1.82.
	const n, a = 20, 0.05
	up := cpTable(n, a)
	p := ClopperPearsonUpper(0, n, a)
	perfect := EpsilonLowerBound(p, p, 0)
	low, high := make([]float64, n), make([]float64, n)
	for i := range n {
		low[i] = 1 + float64(i%5)/4 // 1 … 2
		high[i] = 4 + float64(i%7)  // 4 … 10
	}
	t.Run("separated worlds, A below", func(t *testing.T) {
		r, s := bestRule(clone(low), clone(high), up, up, 0)
		require.False(t, r.above)
		require.Equal(t, 3.0, r.threshold, "midpoint of 2 and 4")
		require.True(t, testutil.Near(s, perfect, 1e-12, 1e-12), "score %v, want %v", s, perfect)
		for _, v := range []float64{1, 2, 2.9} {
			require.True(t, r.guessA(v), "%v", v)
		}
		for _, v := range []float64{3.1, 4, 7} {
			require.False(t, r.guessA(v), "%v", v)
		}
	})
	t.Run("separated worlds, A above", func(t *testing.T) {
		r, _ := bestRule(clone(high), clone(low), up, up, 0)
		require.True(t, r.above)
		require.True(t, r.guessA(4) && !r.guessA(2))
	})
	t.Run("constant coordinates that differ by one ulp", func(t *testing.T) {
		x := 0.3
		y := math.Nextafter(x, 1)
		r, s := bestRule(fill(n, x), fill(n, y), up, up, 0)
		// No midpoint between adjacent floats: the threshold is the lower
		// one and still separates them.
		require.True(t, r.guessA(x) && !r.guessA(y), "rule %+v", r)
		require.True(t, testutil.Near(s, perfect, 1e-12, 1e-12))
	})
	t.Run("identical worlds prove nothing", func(t *testing.T) {
		_, s := bestRule(fill(n, 1), fill(n, 1), up, up, 0)
		require.Equal(t, 0.0, s)
	})
	t.Run("too few trials prove nothing", func(t *testing.T) {
		// 4 trials at a = 0.01: even a perfect test has p ≈ 0.68.
		up4 := cpTable(4, 0.01)
		_, s := bestRule([]float64{1, 1, 1, 1}, []float64{2, 2, 2, 2}, up4, up4, 0)
		require.Equal(t, 0.0, s)
	})
}

func clone(x []float64) []float64 { return append([]float64(nil), x...) }

func fill(n int, v float64) []float64 {
	x := make([]float64, n)
	for i := range x {
		x[i] = v
	}
	return x
}

func TestCeiling(t *testing.T) {
	// ln((1 − δ − p)/p) with p = 1 − (γ/4)^{1/n}; grows with n.
	prev := 0.0
	for _, n := range []int{100, 1000, 5000, 10000, 100000} {
		c := Ceiling(n, DefaultGamma, 1e-5)
		p := 1 - math.Pow(DefaultGamma/4, 1/float64(n))
		require.True(t, testutil.Near(c, math.Log((1-1e-5-p)/p), 1e-12, 1e-12))
		require.Greater(t, c, prev)
		prev = c
	}
}

// exactCDF returns P[Bin(n, p) ≤ k] for the float64 p, to 512 bits
// (rounding to nearest): (1 − p)^n, then each term from the previous one
// by the ratio (n − i)/(i + 1)·p/(1 − p), summed.
func exactCDF(k, n int, p float64) *big.Float {
	const prec = 512
	f := func() *big.Float { return new(big.Float).SetPrec(prec) }
	bp := f().SetFloat64(p)
	q := f().Sub(f().SetInt64(1), bp)
	r := f().Quo(bp, q)
	t, b := f().SetInt64(1), f().Set(q)
	for e := n; e > 0; e >>= 1 {
		if e&1 == 1 {
			t.Mul(t, b)
		}
		b.Mul(b, b)
	}
	sum := f().Set(t)
	for i := range k {
		t.Mul(t, f().SetInt64(int64(n-i)))
		t.Quo(t, f().SetInt64(int64(i+1)))
		t.Mul(t, r)
		sum.Add(sum, t)
	}
	return sum
}

// ulp is the spacing of float64 values above p.
func ulp(p float64) float64 { return math.Nextafter(p, 2) - p }

// wantCPBound fails unless p is the Clopper–Pearson upper bound of k
// errors in n trials at level a from above within tol: exactCDF at p is at
// most a, and at p − tol·min(p, 1 − p) (or two units in the last place of
// p, the float64 resolution) it exceeds a.
func wantCPBound(t interface {
	Helper()
	Fatalf(string, ...any)
}, k, n int, a, p, tol float64) {
	t.Helper()
	ba := new(big.Float).SetFloat64(a)
	if exactCDF(k, n, p).Cmp(ba) > 0 {
		t.Fatalf("P[Bin(%d, %v) ≤ %d] > a = %v: %v is below the Clopper–Pearson bound", n, p, k, a, p)
	}
	if lo := p - max(tol*min(p, 1-p), 2*ulp(p)); exactCDF(k, n, lo).Cmp(ba) <= 0 {
		t.Fatalf("P[Bin(%d, %v) ≤ %d] ≤ a = %v: %v exceeds the bound by more than %v", n, lo, k, a, p, tol)
	}
}

type cpCase struct {
	k, n int
	a    float64
	p    *big.Float
}

// readCPReference reads audit/testdata/clopper_pearson.txt.
func readCPReference(t *testing.T) []cpCase {
	t.Helper()
	f, err := os.Open("testdata/clopper_pearson.txt")
	require.NoError(t, err)
	defer f.Close()
	var out []cpCase
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		if strings.HasPrefix(line, "#") || line == "" {
			continue
		}
		fs := strings.Fields(line)
		require.Len(t, fs, 4, line)
		k, err1 := strconv.Atoi(fs[0])
		n, err2 := strconv.Atoi(fs[1])
		a, err3 := strconv.ParseFloat(fs[2], 64)
		p, _, err4 := big.ParseFloat(fs[3], 10, 256, big.ToNearestEven)
		require.NoError(t, errors.Join(err1, err2, err3, err4), line)
		out = append(out, cpCase{k, n, a, p})
	}
	require.NoError(t, sc.Err())
	require.NotEmpty(t, out)
	return out
}
