package stream

import (
	"flag"
	"fmt"
	"math"
	"math/rand/v2"
	"path/filepath"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"gonum.org/v1/gonum/mat"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/golden")

func TestGenerateDeterminism(t *testing.T) {
	tests := []struct {
		name string
		gen  func(seed uint64) (*History, error)
	}{
		{"quadratic", func(seed uint64) (*History, error) {
			return GenerateQuadratic(QuadraticOptions{D: 5, T: 50, Seed: seed})
		}},
		{"logistic", func(seed uint64) (*History, error) {
			return GenerateLogistic(LogisticOptions{D: 5, T: 50, Seed: seed})
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a, err := tt.gen(1)
			require.NoError(t, err)
			b, err := tt.gen(1)
			require.NoError(t, err)
			if diff := diffHistory(a, b); diff != "" {
				t.Errorf("same seed, different streams: %s", diff)
			}
			c, err := tt.gen(2)
			require.NoError(t, err)
			// Seeds enter the header, so compare the data only.
			c.Header.Meta = a.Header.Meta
			if diffHistory(a, c) == "" {
				t.Error("seeds 1 and 2 give the same stream")
			}
			for i, e := range a.Events {
				require.Equal(t, Insert, e.Op, "event %d", i)
				require.Equal(t, int64(i+1), e.ID, "event %d", i)
			}
		})
	}
}

// TestGenerateGolden pins the generators' output: a change in the order of
// random draws or in the formulas shows up here. Regenerate deliberately
// with go test -run TestGenerateGolden -update. Values are compared with a
// relative tolerance of 1e-12 rather than bitwise, since platforms that fuse
// multiply-adds (arm64) may round differently (the spec asks for agreement to
// ~1e-9).
func TestGenerateGolden(t *testing.T) {
	tests := []struct {
		file string
		gen  func() (*History, error)
	}{
		{"quadratic-d3-T8-seed42.jsonl", func() (*History, error) {
			return GenerateQuadratic(QuadraticOptions{D: 3, T: 8, Seed: 42})
		}},
		{"logistic-d3-T8-seed42.jsonl", func() (*History, error) {
			return GenerateLogistic(LogisticOptions{D: 3, T: 8, Seed: 42})
		}},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			h, err := tt.gen()
			require.NoError(t, err)
			path := filepath.Join("testdata", "golden", tt.file)
			if *update {
				require.NoError(t, WriteFile(path, h))
			}
			want, err := ReadFile(path)
			require.NoError(t, err)
			require.Equal(t, len(want.Events), len(h.Events), "golden file %s: events", path)
			require.Equal(t, string(mustMarshal(t, want.Header.Meta)), string(mustMarshal(t, h.Header.Meta)), "golden file %s: metadata", path)
			const rel = 1e-12
			for _, m := range []struct{ got, want [][]float64 }{{h.Header.H0, want.Header.H0}, {h.Header.H1, want.Header.H1}} {
				for i := range m.want {
					for j := range m.want[i] {
						assertClose(t, fmt.Sprintf("matrix[%d][%d]", i, j), m.got[i][j], m.want[i][j], 0, rel)
					}
				}
			}
			for k, e := range want.Events {
				g := h.Events[k]
				assertClose(t, fmt.Sprintf("event %d scalar", k), g.Sample.S, e.Sample.S, 0, rel)
				for i := range e.Sample.V {
					assertClose(t, fmt.Sprintf("event %d v[%d]", k, i), g.Sample.V[i], e.Sample.V[i], 0, rel)
				}
			}
		})
	}
}

func mustMarshal(t *testing.T, v any) []byte {
	t.Helper()
	h := Header{Kind: KindLogistic, D: 1}
	require.NoError(t, h.SetMeta("v", v))
	return h.Meta["v"]
}

// eigenvalues returns the ascending eigenvalues of the symmetric matrix a.
func eigenvalues(t *testing.T, a [][]float64) []float64 {
	t.Helper()
	d := len(a)
	s := mat.NewSymDense(d, nil)
	for i := range d {
		for j := i; j < d; j++ {
			s.SetSym(i, j, a[i][j])
		}
	}
	var es mat.EigenSym
	if !es.Factorize(s, false) {
		t.Fatal("eigendecomposition failed")
	}
	v := es.Values(nil)
	slices.Sort(v)
	return v
}

func TestGeneratedSpectra(t *testing.T) {
	// Eigenvalues of Q Λ Qᵀ recovered by a symmetric eigensolver carry an
	// error of order d·ε·λ_max ≈ 25·2.2e-16·100 ≈ 6e-13 absolute, below the
	// 1e-9 relative tolerance even for the smallest eigenvalue.
	const rel = 1e-9
	tests := []struct {
		name   string
		d      int
		kappa  float64
		mu     float64
		scale  float64
		lo, hi float64
	}{
		{"quadratic d=25 kappa=10", 25, 10, 1, 0, 1, 10},
		{"quadratic d=25 kappa=100 mu=0.5", 25, 100, 0.5, 0, 0.5, 50},
		{"logistic d=25 kappa=10", 25, 10, 0, 1, 0.1, 1},
		{"logistic d=4 kappa=100 scale=100", 4, 100, 0, 100, 1, 100},
		// At d = 1 the one eigenvalue is s, the largest (the quadratic
		// needs d ≥ 2 for its drift).
		{"logistic d=1 kappa=100 scale=4", 1, 100, 0, 4, 0.04, 4},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var mats [][][]float64
			if tt.scale == 0 {
				h, err := GenerateQuadratic(QuadraticOptions{D: tt.d, T: 1, Seed: 3, Kappa: tt.kappa, Mu: tt.mu})
				require.NoError(t, err)
				mats = [][][]float64{h.Header.H0, h.Header.H1}
			} else {
				p, err := LogisticOptions{D: tt.d, T: 1, Seed: 3, Kappa: tt.kappa, FeatureScale: tt.scale}.resolve()
				require.NoError(t, err)
				m, err := newLogisticModel(rand.New(rand.NewPCG(p.seed, GeneratorStream)), p)
				require.NoError(t, err)
				mats = [][][]float64{m.sigma0, m.sigma1}
			}
			for k, a := range mats {
				for i := range a {
					for j := range a {
						if !sameFloat(a[i][j], a[j][i]) {
							t.Fatalf("matrix %d not exactly symmetric at [%d][%d]", k, i, j)
						}
					}
				}
				got := eigenvalues(t, a)
				for i, g := range got {
					want := tt.hi
					if tt.d > 1 {
						want = tt.lo * math.Pow(tt.hi/tt.lo, float64(i)/float64(tt.d-1))
					}
					assertClose(t, fmt.Sprintf("matrix %d: λ_%d", k, i), g, want, 0, rel)
				}
			}
			if tt.d > 1 && slices.Equal(mats[0][0], mats[1][0]) {
				t.Error("the two matrices are equal; they must be independent draws")
			}
		})
	}
}

func TestHaarOrthogonal(t *testing.T) {
	// QᵀQ = I to round-off: Householder QR is backward stable, so the error is
	// a small multiple of d·ε ≈ 2e-14 for d = 50; 1e-12 leaves margin.
	const tol = 1e-12
	for _, d := range []int{1, 2, 10, 50} {
		t.Run(fmt.Sprintf("d=%d", d), func(t *testing.T) {
			r := newTestRand(uint64(d))
			q := haar(r, d)
			var qtq mat.Dense
			qtq.Mul(q.T(), q)
			for i := range d {
				for j := range d {
					want := 0.0
					if i == j {
						want = 1
					}
					assertClose(t, fmt.Sprintf("(QᵀQ)[%d][%d]", i, j), qtq.At(i, j), want, tol, 0)
				}
			}
		})
	}
	t.Run("signs fixed: diag(R) > 0", func(t *testing.T) {
		// Reconstruct G from the same draws: G = QR with R = QᵀG upper
		// triangular and a positive diagonal.
		const d = 6
		g := mat.NewDense(d, d, nil)
		r := newTestRand(99)
		for i := range d {
			for j := range d {
				g.Set(i, j, r.NormFloat64())
			}
		}
		q := haar(newTestRand(99), d)
		var rr mat.Dense
		rr.Mul(q.T(), g)
		for i := range d {
			if rr.At(i, i) <= 0 {
				t.Errorf("R[%d][%d] = %v, want > 0", i, i, rr.At(i, i))
			}
			for j := range i {
				assertClose(t, fmt.Sprintf("R[%d][%d] (below the diagonal)", i, j), rr.At(i, j), 0, 1e-12, 0)
			}
		}
	})
}

func TestHaarIsUniform(t *testing.T) {
	// Under the Haar measure on O(d), Q[0][0]² ~ Beta(1/2, (d−1)/2) with mean
	// 1/d and variance 2(d−1)/(d²(d+2)). Without the sign fix the first
	// column would be biased. With n = 4000 draws at d = 3, 4.42 standard
	// errors (false-rejection rate 1e-5, as in the Google DP library's
	// statistical tests) bound the sample mean.
	const d, n = 3, 4000
	r := newTestRand(2024)
	var sum, sumSign float64
	for range n {
		q := haar(r, d)
		sum += q.At(0, 0) * q.At(0, 0)
		sumSign += math.Copysign(1, q.At(0, 0))
	}
	mean := sum / n
	se := math.Sqrt(2 * (d - 1) / (d * d * (d + 2.0)) / n)
	if math.Abs(mean-1.0/d) > 4.41717*se {
		t.Errorf("mean Q[0][0]² = %v, want 1/%d ± %v", mean, d, 4.41717*se)
	}
	// The sign of Q[0][0] is ±1 with probability 1/2 each: sd 1/√n.
	if math.Abs(sumSign/n) > 4.41717/math.Sqrt(n) {
		t.Errorf("mean sign of Q[0][0] = %v, want 0 ± %v", sumSign/n, 4.41717/math.Sqrt(n))
	}
}

func TestQuadraticModel(t *testing.T) {
	p, err := QuadraticOptions{D: 10, T: 1, Seed: 4, A0Norm: new(2.5), DeltaA: new(0.7), SigmaA: new(0.0)}.resolve()
	require.NoError(t, err)
	m := newQuadraticModel(rand.New(rand.NewPCG(p.seed, GeneratorStream)), p)
	dot := func(a, b []float64) (s float64) {
		for i := range a {
			s += a[i] * b[i]
		}
		return s
	}
	// Unit vectors and orthogonality: round-off of d terms, ≲ 1e-15.
	const tol = 1e-14
	assertClose(t, "‖u1‖²", dot(m.u1, m.u1), 1, tol, 0)
	assertClose(t, "‖u2‖²", dot(m.u2, m.u2), 1, tol, 0)
	assertClose(t, "u1ᵀu2", dot(m.u1, m.u2), 0, tol, 0)
	assertClose(t, "‖a0‖", math.Sqrt(dot(m.a0, m.a0)), 2.5, tol, 0)
	// With σa = 0, a_t − a0 = δa(sin·u1 + cos·u2) has norm exactly δa and
	// period Pa.
	a, a2 := make([]float64, 10), make([]float64, 10)
	xi := make([]float64, 10)
	for _, tt := range []int{1, 37, 150} {
		m.minimizer(a, tt, xi)
		for i := range a {
			a[i] -= m.a0[i]
		}
		assertClose(t, fmt.Sprintf("‖a_%d − a0‖", tt), math.Sqrt(dot(a, a)), 0.7, tol, 0)
		m.minimizer(a, tt, xi)
		m.minimizer(a2, tt+200, xi)
		for i := range a {
			assertClose(t, fmt.Sprintf("a_%d[%d] vs a_%d", tt, i, tt+200), a[i], a2[i], 1e-12, 0)
		}
	}
	// α_t follows (δH/2)(1+sin(2πt/PH)): at t = PH/4, α = δH; at 3PH/4, 0.
	assertClose(t, "α_75", m.alpha(75), 0.5, 1e-15, 0)
	assertClose(t, "α_225", m.alpha(225), 0, 1e-15, 0)
	assertClose(t, "α_300", m.alpha(300), 0.25, 1e-15, 0)
}

func TestQuadraticDriftOff(t *testing.T) {
	on, err := GenerateQuadratic(QuadraticOptions{D: 4, T: 30, Seed: 8})
	require.NoError(t, err)
	off, err := GenerateQuadratic(QuadraticOptions{D: 4, T: 30, Seed: 8, NoDrift: true})
	require.NoError(t, err)
	// Same draws: identical matrices and minimizers, α_t = 0 without drift.
	if !sameMatrix(on.Header.H0, off.Header.H0) || !sameMatrix(on.Header.H1, off.Header.H1) {
		t.Error("drift changed H0 or H1")
	}
	for i, e := range off.Events {
		if e.Sample.S != 0 {
			t.Fatalf("event %d: α = %v without drift", i, e.Sample.S)
		}
		if !sameFloats(e.Sample.V, on.Events[i].Sample.V) {
			t.Fatalf("event %d: drift changed a_t", i)
		}
		if on.Events[i].Sample.S <= 0 || on.Events[i].Sample.S > 0.5 {
			t.Fatalf("event %d: α = %v with drift, want (0, δH]", i, on.Events[i].Sample.S)
		}
	}
	var drift bool
	ok, err := off.Header.MetaValue("drift", &drift)
	assert.NoError(t, err, "meta drift")
	assert.True(t, ok, "meta drift missing")
	assert.False(t, drift, "meta drift")
}

func TestQuadraticNoiseScale(t *testing.T) {
	// a_t − E[a_t] = σa·ξ_t: the sample variance of a_t minus its drift,
	// over T·d = 20000 entries, estimates σa². Its standard error is
	// σa²·√(2/n); 4.42 of them give a 1e-5 false-rejection rate.
	const d, n = 4, 5000
	sigma := 0.3
	h, err := GenerateQuadratic(QuadraticOptions{D: d, T: n, Seed: 6, SigmaA: &sigma})
	require.NoError(t, err)
	p, _ := QuadraticOptions{D: d, T: n, Seed: 6, SigmaA: new(0.0)}.resolve()
	m := newQuadraticModel(rand.New(rand.NewPCG(p.seed, GeneratorStream)), p)
	mean := make([]float64, d)
	var ss float64
	for k, e := range h.Events {
		m.minimizer(mean, k+1, make([]float64, d))
		for i := range mean {
			r := e.Sample.V[i] - mean[i]
			ss += r * r
		}
	}
	v := ss / (d * n)
	if se := sigma * sigma * math.Sqrt(2.0/(d*n)); math.Abs(v-sigma*sigma) > 4.41717*se {
		t.Errorf("noise variance = %v, want %v ± %v", v, sigma*sigma, 4.41717*se)
	}
}

func TestLogisticFeatureCovariance(t *testing.T) {
	// The sample covariance of n i.i.d. N(0, Σ) vectors has entries with
	// variance (Σ_ii Σ_jj + Σ_ij²)/n. Each entry is checked to 4.42 standard
	// errors; 10 entries at d = 4, with a false-rejection rate of 1e-5 each.
	const d, n = 4, 40000
	p, err := LogisticOptions{D: d, T: 1, Seed: 5}.resolve()
	require.NoError(t, err)
	m, err := newLogisticModel(rand.New(rand.NewPCG(p.seed, GeneratorStream)), p)
	require.NoError(t, err)
	for _, alpha := range []float64{0, 0.5, 1} {
		t.Run(fmt.Sprintf("alpha=%v", alpha), func(t *testing.T) {
			r := newTestRand(uint64(alpha * 10))
			cov := make([][]float64, d)
			for i := range cov {
				cov[i] = make([]float64, d)
			}
			x, z, z2 := make([]float64, d), make([]float64, d), make([]float64, d)
			for range n {
				normals(r, z)
				normals(r, z2)
				m.features(x, z, z2, alpha)
				for i := range d {
					for j := range d {
						cov[i][j] += x[i] * x[j] / n
					}
				}
			}
			for i := range d {
				for j := i; j < d; j++ {
					want := (1-alpha)*m.sigma0[i][j] + alpha*m.sigma1[i][j]
					wii := (1-alpha)*m.sigma0[i][i] + alpha*m.sigma1[i][i]
					wjj := (1-alpha)*m.sigma0[j][j] + alpha*m.sigma1[j][j]
					se := math.Sqrt((wii*wjj + want*want) / n)
					if math.Abs(cov[i][j]-want) > 4.41717*se {
						t.Errorf("cov[%d][%d] = %v, want %v ± %v", i, j, cov[i][j], want, 4.41717*se)
					}
				}
			}
		})
	}
}

func TestLogisticLabels(t *testing.T) {
	// Given x_t, y_t = +1 with probability p_t = σ(x_tᵀβ_t). The count of
	// +1 labels in a group has mean Σp_t and variance Σp_t(1−p_t); it is
	// checked to 4.42 standard deviations (false-rejection rate 1e-5 per
	// group) overall and separately for positive and negative margins, so a
	// generator whose labels ignore x fails.
	const d, n = 5, 20000
	h, err := GenerateLogistic(LogisticOptions{D: d, T: n, Seed: 12})
	require.NoError(t, err)
	p, _ := LogisticOptions{D: d, T: n, Seed: 12}.resolve()
	m, err := newLogisticModel(rand.New(rand.NewPCG(p.seed, GeneratorStream)), p)
	require.NoError(t, err)
	type group struct{ count, mean, variance float64 }
	var all, pos, neg group
	beta := make([]float64, d)
	for k, e := range h.Events {
		m.beta(beta, k+1)
		var margin float64
		for i, xi := range e.Sample.V {
			margin += xi * beta[i]
		}
		prob := Sigmoid(margin)
		g := &neg
		if margin > 0 {
			g = &pos
		}
		for _, g := range []*group{&all, g} {
			g.mean += prob
			g.variance += prob * (1 - prob)
			if e.Sample.S == 1 {
				g.count++
			}
		}
	}
	for _, g := range []struct {
		name string
		g    group
	}{{"all", all}, {"positive margin", pos}, {"negative margin", neg}} {
		t.Run(g.name, func(t *testing.T) {
			if tol := 4.41717 * math.Sqrt(g.g.variance); math.Abs(g.g.count-g.g.mean) > tol {
				t.Errorf("%v labels +1, want %v ± %v", g.g.count, g.g.mean, tol)
			}
		})
	}
}

func TestLogisticModel(t *testing.T) {
	p, err := LogisticOptions{D: 6, T: 1, Seed: 2, Beta0Norm: new(3.0), DeltaBeta: new(0.5)}.resolve()
	require.NoError(t, err)
	m, err := newLogisticModel(rand.New(rand.NewPCG(p.seed, GeneratorStream)), p)
	require.NoError(t, err)
	norm := func(v []float64) float64 {
		var s float64
		for _, x := range v {
			s += x * x
		}
		return math.Sqrt(s)
	}
	assertClose(t, "‖β0‖", norm(m.beta0), 3, 1e-14, 0)
	assertClose(t, "‖v‖", norm(m.v), 1, 1e-14, 0)
	// β_t − β0 = δβ·sin(2πt/Pβ)·v: at t = Pβ/4 its norm is δβ.
	b := make([]float64, 6)
	m.beta(b, 75)
	for i := range b {
		b[i] -= m.beta0[i]
	}
	assertClose(t, "‖β_75 − β0‖", norm(b), 0.5, 1e-14, 0)
	// L L ᵀ = Σ: the Cholesky factors are right.
	for k, pair := range []struct{ l, s [][]float64 }{{m.l0, m.sigma0}, {m.l1, m.sigma1}} {
		for i := range 6 {
			for j := range 6 {
				var s float64
				for q := 0; q <= min(i, j); q++ {
					s += pair.l[i][q] * pair.l[j][q]
				}
				assertClose(t, fmt.Sprintf("(L%d L%dᵀ)[%d][%d]", k, k, i, j), s, pair.s[i][j], 1e-14, 1e-14)
			}
		}
	}
}

func TestGenerateMetadata(t *testing.T) {
	t.Run("quadratic", func(t *testing.T) {
		o := QuadraticOptions{D: 3, T: 10, Seed: 77, Kappa: 100, Mu: 2, DeltaA: new(0.0), PeriodA: 50,
			SigmaA: new(0.2), DeltaH: new(1.0), PeriodH: 60, A0Norm: new(3.0), NoDrift: true}
		h, err := GenerateQuadratic(o)
		require.NoError(t, err)
		h2, _ := roundTrip(t, h) // metadata survives the file format
		want := map[string]any{
			"generator": GeneratorQuadratic, "seed": uint64(77), "T": 10, "kappa": 100.0, "mu": 2.0,
			"delta_a": 0.0, "P_a": 50.0, "sigma_a": 0.2, "delta_H": 1.0, "P_H": 60.0, "a0_norm": 3.0, "drift": false,
		}
		checkMeta(t, h2.Header, want)
	})
	t.Run("logistic defaults", func(t *testing.T) {
		h, err := GenerateLogistic(LogisticOptions{D: 2, T: 3})
		require.NoError(t, err)
		h2, _ := roundTrip(t, h)
		if h2.Header.Lambda != 0.05 {
			t.Errorf("lambda = %v, want 0.05", h2.Header.Lambda)
		}
		want := map[string]any{
			"generator": GeneratorLogistic, "seed": uint64(0), "T": 3, "kappa": 10.0, "feature_scale": 1.0,
			"delta_beta": 1.0, "P_beta": 300.0, "beta0_norm": 1.0, "delta_H": 0.5, "P_H": 300.0, "drift": true,
		}
		checkMeta(t, h2.Header, want)
	})
}

func checkMeta(t *testing.T, h Header, want map[string]any) {
	t.Helper()
	assert.Len(t, h.Meta, len(want), "meta fields")
	for k, w := range want {
		var ok bool
		var err error
		var got any
		switch w.(type) {
		case string:
			var v string
			ok, err = h.MetaValue(k, &v)
			got = v
		case uint64:
			var v uint64
			ok, err = h.MetaValue(k, &v)
			got = v
		case int:
			var v int
			ok, err = h.MetaValue(k, &v)
			got = v
		case float64:
			var v float64
			ok, err = h.MetaValue(k, &v)
			got = v
		case bool:
			var v bool
			ok, err = h.MetaValue(k, &v)
			got = v
		}
		assert.NoError(t, err, "meta %q", k)
		assert.True(t, ok, "meta %q missing", k)
		if got != w { // exact, for every type (floats included)
			t.Errorf("meta %q = %v, want %v", k, got, w)
		}
	}
}

func TestDefaultOptionsMatchZeroValue(t *testing.T) {
	// The explicit defaults and the zero value must generate the same stream.
	q1, err1 := GenerateQuadratic(QuadraticOptions{T: 20})
	o := DefaultQuadraticOptions()
	o.T = 20
	q2, err2 := GenerateQuadratic(o)
	require.NoError(t, err1)
	require.NoError(t, err2)
	if diff := diffHistory(q1, q2); diff != "" {
		t.Errorf("quadratic: %s", diff)
	}
	l1, err1 := GenerateLogistic(LogisticOptions{T: 20})
	lo := DefaultLogisticOptions()
	lo.T = 20
	l2, err2 := GenerateLogistic(lo)
	require.NoError(t, err1)
	require.NoError(t, err2)
	if diff := diffHistory(l1, l2); diff != "" {
		t.Errorf("logistic: %s", diff)
	}
	assert.Len(t, q1.Events, 20)
	assert.Equal(t, 25, q1.Header.D, "default d")
	assert.Equal(t, 5000, len(defaultQuadraticEvents(t)), "default T")
}

// defaultQuadraticEvents returns the events of a d = 2 quadratic stream with
// the default T (5000).
func defaultQuadraticEvents(t *testing.T) []Event {
	t.Helper()
	h, err := GenerateQuadratic(QuadraticOptions{D: 2})
	require.NoError(t, err)
	return h.Events
}

func TestGenerateOptionErrors(t *testing.T) {
	nan := math.NaN()
	tests := []struct {
		name     string
		quad     *QuadraticOptions
		logi     *LogisticOptions
		sentinel error
	}{
		{"quadratic d=1", &QuadraticOptions{D: 1}, nil, ErrInvalidValue},
		{"quadratic negative T", &QuadraticOptions{T: -1}, nil, ErrInvalidValue},
		{"quadratic kappa < 1", &QuadraticOptions{Kappa: 0.5}, nil, ErrInvalidValue},
		{"quadratic NaN kappa", &QuadraticOptions{Kappa: nan}, nil, ErrNonFinite},
		{"quadratic negative mu", &QuadraticOptions{Mu: -1}, nil, ErrInvalidValue},
		{"quadratic negative sigma", &QuadraticOptions{SigmaA: new(-0.1)}, nil, ErrInvalidValue},
		{"quadratic deltaH > 1", &QuadraticOptions{DeltaH: new(1.5)}, nil, ErrInvalidValue},
		{"quadratic Inf period", &QuadraticOptions{PeriodA: math.Inf(1)}, nil, ErrNonFinite},
		{"quadratic negative period", &QuadraticOptions{PeriodH: -300}, nil, ErrInvalidValue},
		{"logistic d<0", nil, &LogisticOptions{D: -2}, ErrInvalidValue},
		{"logistic negative lambda", nil, &LogisticOptions{Lambda: new(-1.0)}, ErrInvalidValue},
		{"logistic NaN deltaBeta", nil, &LogisticOptions{DeltaBeta: &nan}, ErrNonFinite},
		{"logistic negative scale", nil, &LogisticOptions{FeatureScale: -1}, ErrInvalidValue},
		{"logistic kappa 1e300 singular", nil, &LogisticOptions{D: 3, T: 1, Kappa: 1e300}, ErrNotSPD},
		// Sizes past the limits are errors, not allocator failures.
		{"quadratic D too large", &QuadraticOptions{D: MaxGeneratedDim + 1, T: 1}, nil, ErrInvalidValue},
		{"logistic D too large", nil, &LogisticOptions{D: 1 << 40, T: 1}, ErrInvalidValue},
		{"quadratic T·(D+6) too large", &QuadraticOptions{D: 25, T: MaxGeneratedValues/31 + 1}, nil, ErrInvalidValue},
		{"logistic T too large", nil, &LogisticOptions{D: 1, T: 1 << 40}, ErrInvalidValue},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var err error
			if tt.quad != nil {
				_, err = GenerateQuadratic(*tt.quad)
			} else {
				_, err = GenerateLogistic(*tt.logi)
			}
			require.ErrorIs(t, err, tt.sentinel)
		})
	}
}

func TestGoldenFilesExist(t *testing.T) {
	// Guard against a -update run being the only thing that creates them.
	for _, f := range []string{"quadratic-d3-T8-seed42.jsonl", "logistic-d3-T8-seed42.jsonl"} {
		assert.FileExists(t, filepath.Join("testdata", "golden", f), "golden file missing")
	}
}
