package stream

import (
	"fmt"
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"gonum.org/v1/gonum/diff/fd"
)

// fdTol is the tolerance of gradients against central differences.
// fd.Central uses h = 6e-6, so its error is about ε·|ℓ|/h + h²·|ℓ⁽³⁾|/6 ≈
// 4e-11·|ℓ| + 6e-12·|ℓ⁽³⁾|; with |ℓ| ≲ 1e3 in these tests that is below
// 1e-7, and 1e-6 leaves margin while still catching any wrong factor or sign.
const fdTol = 1e-6

func TestQuadraticGradFiniteDifference(t *testing.T) {
	for _, d := range []int{1, 2, 7, 25} {
		for _, alpha := range []float64{0, 0.3, 1} {
			t.Run(fmt.Sprintf("d=%d/alpha=%v", d, alpha), func(t *testing.T) {
				r := newTestRand(uint64(d))
				q, err := NewQuadratic(randomSPD(r, d, 10), randomSPD(r, d, 100))
				require.NoError(t, err)
				for trial := range 5 {
					w, a := randomVec(r, d), randomVec(r, d)
					z := Sample{V: a, S: alpha}
					got := make([]float64, d)
					q.Grad(got, w, z)
					want := fd.Gradient(nil, func(x []float64) float64 { return q.Value(x, z) }, w,
						&fd.Settings{Formula: fd.Central})
					for i := range got {
						assertClose(t, fmt.Sprintf("trial %d: ∂ℓ/∂w[%d]", trial, i), got[i], want[i], fdTol, fdTol)
					}
				}
			})
		}
	}
}

func TestLogisticGradFiniteDifference(t *testing.T) {
	for _, d := range []int{1, 3, 25} {
		for _, lambda := range []float64{0, 0.05} {
			for _, y := range []float64{-1, 1} {
				t.Run(fmt.Sprintf("d=%d/lambda=%v/y=%v", d, lambda, y), func(t *testing.T) {
					r := newTestRand(uint64(10 + d))
					l, err := NewLogistic(d, lambda)
					require.NoError(t, err)
					for trial := range 5 {
						w, x := randomVec(r, d), randomVec(r, d)
						z := Sample{V: x, S: y}
						got := make([]float64, d)
						l.Grad(got, w, z)
						want := fd.Gradient(nil, func(v []float64) float64 { return l.Value(v, z) }, w,
							&fd.Settings{Formula: fd.Central})
						for i := range got {
							assertClose(t, fmt.Sprintf("trial %d: ∂ℓ/∂w[%d]", trial, i), got[i], want[i], fdTol, fdTol)
						}
					}
				})
			}
		}
	}
}

func TestQuadraticGradPinnedArithmetic(t *testing.T) {
	// Grad documents its arithmetic; at α = 0 and α = 1 it must equal
	// H0(w−a) and H1(w−a) computed in the same order, bit for bit.
	const d = 6
	r := newTestRand(3)
	h0, h1 := randomSPD(r, d, 10), randomSPD(r, d, 10)
	q, err := NewQuadratic(h0, h1)
	require.NoError(t, err)
	w, a := randomVec(r, d), randomVec(r, d)
	matVec := func(h [][]float64) []float64 {
		out := make([]float64, d)
		for i := range out {
			for j := range d {
				out[i] += h[i][j] * (w[j] - a[j])
			}
		}
		return out
	}
	for _, tt := range []struct {
		name  string
		alpha float64
		want  []float64
	}{
		{"alpha=0 is H0(w-a)", 0, matVec(h0)},
		{"alpha=1 is H1(w-a)", 1, matVec(h1)},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got := make([]float64, d)
			q.Grad(got, w, Sample{V: a, S: tt.alpha})
			if !sameFloats(got, tt.want) {
				t.Errorf("Grad = %v, want %v", got, tt.want)
			}
		})
	}
	t.Run("alpha=0.25 matches HessianTo", func(t *testing.T) {
		z := Sample{V: a, S: 0.25}
		hz := make([]float64, d*d)
		q.HessianTo(hz, z)
		got := make([]float64, d)
		q.Grad(got, w, z)
		for i := range d {
			var want float64
			for j := range d {
				want += hz[i*d+j] * (w[j] - a[j])
			}
			// Two evaluation orders of the same sums: round-off ~ d·ε·κ.
			assertClose(t, fmt.Sprintf("Grad[%d]", i), got[i], want, 1e-13, 1e-13)
		}
	})
}

// TestQuadraticGradBlockedRows: Grad takes rows four at a time; at every d
// (a multiple of four or not) it equals the documented formula evaluated
// one row at a time, bit for bit.
func TestQuadraticGradBlockedRows(t *testing.T) {
	for _, d := range []int{1, 2, 3, 4, 5, 7, 8, 9, 12, 13, 25} {
		r := newTestRand(uint64(d))
		h0, h1 := randomSPD(r, d, 10), randomSPD(r, d, 10)
		q, err := NewQuadratic(h0, h1)
		require.NoError(t, err)
		w, a := randomVec(r, d), randomVec(r, d)
		for _, alpha := range []float64{0, 0.3, 1} {
			want := make([]float64, d)
			for i := range d {
				var s0, s1 float64
				for j := range d {
					s0 += float64(h0[i][j] * (w[j] - a[j]))
					s1 += float64(h1[i][j] * (w[j] - a[j]))
				}
				want[i] = s0
				if alpha != 0 {
					want[i] = float64((1-alpha)*s0) + float64(alpha*s1)
				}
			}
			got := make([]float64, d)
			q.Grad(got, w, Sample{V: a, S: alpha})
			require.Truef(t, sameFloats(got, want), "d=%d α=%v: Grad = %v, want %v", d, alpha, got, want)
		}
	}
}

func TestLogisticStableAtHugeMargins(t *testing.T) {
	const lambda = 0.05
	l, err := NewLogistic(1, lambda)
	require.NoError(t, err)
	w := []float64{1}
	tests := []struct {
		name      string
		x, y      float64
		wantValue float64 // log(1+e^{-y x w}) + λ/2 w², exact in float64
		wantGrad  float64 // −y x σ(−y x w) + λ w
	}{
		// margin y·xᵀw = +1000: loss e^{-1000} underflows to 0, gradient is λw.
		{"confident right", 1000, 1, lambda / 2, lambda},
		// margin −1000: loss is 1000 + λ/2 and σ(1000) = 1 exactly.
		{"confident wrong", 1000, -1, 1000 + lambda/2, 1000 + lambda},
		// margin −1000 again; ∂/∂w = −y·x·σ(1000) + λw = 1000 + λ.
		{"confident wrong, negative x", -1000, 1, 1000 + lambda/2, 1000 + lambda},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			z := Sample{V: []float64{tt.x}, S: tt.y}
			g := make([]float64, 1)
			l.Grad(g, w, z)
			if g[0] != tt.wantGrad {
				t.Errorf("Grad = %v, want %v", g[0], tt.wantGrad)
			}
			if v := l.Value(w, z); v != tt.wantValue {
				t.Errorf("Value = %v, want %v", v, tt.wantValue)
			}
		})
	}
}

func TestSoftplusSigmoid(t *testing.T) {
	tests := []struct {
		name string
		got  float64
		want float64
		rel  float64 // relative tolerance; 0 means exact
	}{
		{"Softplus(1000) = 1000 exactly", Softplus(1000), 1000, 0},
		// e^{-1000} ≈ 5e-435 is below the smallest subnormal (4.9e-324), so
		// the correctly rounded result is +0: no NaN, no negative value.
		{"Softplus(-1000) underflows to +0", Softplus(-1000), 0, 0},
		// log1p(e^{-700}) = e^{-700}(1 − e^{-700}/2 …): tiny and positive;
		// math.Exp and math.Log1p are accurate to 1 ulp each.
		{"Softplus(-700) = e^-700", Softplus(-700), math.Exp(-700), 4e-16},
		{"Softplus(0) = ln 2", Softplus(0), math.Ln2, 0},
		{"Softplus(1) = log(1+e)", Softplus(1), math.Log(1 + math.E), 4e-16},
		{"Sigmoid(0) = 1/2", Sigmoid(0), 0.5, 0},
		{"Sigmoid(1000) = 1", Sigmoid(1000), 1, 0},
		{"Sigmoid(-1000) = 0", Sigmoid(-1000), 0, 0},
		{"Sigmoid(-700) = e^-700", Sigmoid(-700), math.Exp(-700), 4e-16},
		{"Sigmoid(2)", Sigmoid(2), 1 / (1 + math.Exp(-2)), 4e-16},
		// 1 − σ(2) cancels: its absolute error is ε/2 ≈ 1.1e-16 on a value
		// 0.12, so the relative tolerance is 2e-15.
		{"Sigmoid(-2) = 1 - Sigmoid(2)", Sigmoid(-2), 1 - Sigmoid(2), 2e-15},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.rel == 0 {
				if !sameFloat(tt.got, tt.want) {
					t.Errorf("got %v, want exactly %v", tt.got, tt.want)
				}
				return
			}
			assertClose(t, "value", tt.got, tt.want, 0, tt.rel)
		})
	}
	if Softplus(-1000) < 0 || math.Signbit(Softplus(-1000)) {
		t.Error("Softplus(-1000) is negative")
	}
}

func TestNewQuadraticRejects(t *testing.T) {
	id := [][]float64{{1, 0}, {0, 1}}
	tests := []struct {
		name      string
		h0, h1    [][]float64
		field     string
		sentinel  error
		wantNoErr bool
	}{
		{name: "valid", h0: id, h1: [][]float64{{2, 1}, {1, 2}}, wantNoErr: true},
		{name: "symmetric within 1e-12", h0: [][]float64{{2, 1}, {1 + 1e-13, 2}}, h1: id, wantNoErr: true},
		{name: "non-symmetric H0", h0: [][]float64{{2, 1}, {1.001, 2}}, h1: id, field: "H0", sentinel: ErrNotSPD},
		{name: "non-symmetric H1", h0: id, h1: [][]float64{{2, 0}, {1e-6, 2}}, field: "H1", sentinel: ErrNotSPD},
		{name: "indefinite", h0: [][]float64{{1, 2}, {2, 1}}, h1: id, field: "H0", sentinel: ErrNotSPD},
		{name: "negative definite", h0: id, h1: [][]float64{{-1, 0}, {0, -1}}, field: "H1", sentinel: ErrNotSPD},
		{name: "singular", h0: [][]float64{{1, 1}, {1, 1}}, h1: id, field: "H0", sentinel: ErrNotSPD},
		{name: "NaN", h0: [][]float64{{1, math.NaN()}, {math.NaN(), 1}}, h1: id, field: "H0", sentinel: ErrNonFinite},
		{name: "Inf", h0: id, h1: [][]float64{{math.Inf(1), 0}, {0, 1}}, field: "H1", sentinel: ErrNonFinite},
		{name: "empty", h0: nil, h1: nil, field: "H0", sentinel: ErrDimension},
		{name: "H1 wrong size", h0: id, h1: [][]float64{{1}}, field: "H1", sentinel: ErrDimension},
		{name: "ragged", h0: [][]float64{{1, 0}, {0}}, h1: id, field: "H0", sentinel: ErrDimension},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			q, err := NewQuadratic(tt.h0, tt.h1)
			if tt.wantNoErr {
				require.NoError(t, err, "NewQuadratic")
				require.NotNil(t, q)
				return
			}
			require.ErrorIs(t, err, tt.sentinel)
			var fe *FieldError
			require.ErrorAs(t, err, &fe)
			assert.Equal(t, tt.field, fe.Field, "field named by the error %v", err)
		})
	}
}

func TestNewQuadraticCopies(t *testing.T) {
	h0 := [][]float64{{2, 0}, {0, 1}}
	q, err := NewQuadratic(h0, h0)
	require.NoError(t, err)
	h0[0][0] = 100
	if got := q.H0()[0][0]; got != 2 {
		t.Errorf("H0()[0][0] = %v after the caller changed its matrix, want 2", got)
	}
}

func TestNewLogisticRejects(t *testing.T) {
	tests := []struct {
		name     string
		d        int
		lambda   float64
		field    string
		sentinel error
	}{
		{"d=0", 0, 0.05, "d", ErrInvalidValue},
		{"negative lambda", 3, -0.01, "lambda", ErrInvalidValue},
		{"NaN lambda", 3, math.NaN(), "lambda", ErrNonFinite},
		{"Inf lambda", 3, math.Inf(1), "lambda", ErrNonFinite},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := NewLogistic(tt.d, tt.lambda)
			require.ErrorIs(t, err, tt.sentinel)
			var fe *FieldError
			require.ErrorAs(t, err, &fe)
			assert.Equal(t, tt.field, fe.Field, "field named by the error %v", err)
		})
	}
}

func TestCheckSample(t *testing.T) {
	q, err := NewQuadratic([][]float64{{1, 0}, {0, 1}}, [][]float64{{1, 0}, {0, 1}})
	require.NoError(t, err)
	l, err := NewLogistic(2, 0.05)
	require.NoError(t, err)
	tests := []struct {
		name     string
		loss     Loss
		z        Sample
		field    string
		sentinel error // nil: valid
	}{
		{"quadratic ok", q, Sample{V: []float64{1, 2}, S: 0.5}, "", nil},
		{"alpha 0 and 1 ok", q, Sample{V: []float64{1, 2}, S: 1}, "", nil},
		{"quadratic short a", q, Sample{V: []float64{1}, S: 0.5}, "a", ErrDimension},
		{"quadratic NaN a", q, Sample{V: []float64{1, math.NaN()}, S: 0.5}, "a", ErrNonFinite},
		{"alpha > 1", q, Sample{V: []float64{1, 2}, S: 1.5}, "alpha", ErrInvalidValue},
		{"alpha < 0", q, Sample{V: []float64{1, 2}, S: -1e-300}, "alpha", ErrInvalidValue},
		{"alpha NaN", q, Sample{V: []float64{1, 2}, S: math.NaN()}, "alpha", ErrNonFinite},
		{"logistic ok", l, Sample{V: []float64{1, 2}, S: -1}, "", nil},
		{"logistic long x", l, Sample{V: []float64{1, 2, 3}, S: 1}, "x", ErrDimension},
		{"logistic Inf x", l, Sample{V: []float64{math.Inf(-1), 2}, S: 1}, "x", ErrNonFinite},
		{"y = 0", l, Sample{V: []float64{1, 2}, S: 0}, "y", ErrInvalidValue},
		{"y = 0.5", l, Sample{V: []float64{1, 2}, S: 0.5}, "y", ErrInvalidValue},
		{"y NaN", l, Sample{V: []float64{1, 2}, S: math.NaN()}, "y", ErrNonFinite},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			field, err := tt.loss.CheckSample(tt.z)
			if tt.sentinel == nil {
				require.NoError(t, err, "CheckSample")
				return
			}
			require.ErrorIs(t, err, tt.sentinel)
			assert.Equal(t, tt.field, field, "field")
		})
	}
}

func TestGradPanicsOnDimensionMismatch(t *testing.T) {
	q, _ := NewQuadratic([][]float64{{1}}, [][]float64{{1}})
	l, _ := NewLogistic(1, 0)
	for _, loss := range []Loss{q, l} {
		t.Run(string(loss.Kind()), func(t *testing.T) {
			assert.Panics(t, func() {
				loss.Grad(make([]float64, 1), make([]float64, 2), Sample{V: []float64{1}, S: 1})
			}, "Grad with len(w) = 2 ≠ d = 1")
		})
	}
}

// gradFixture builds a loss of the given kind and dimension with a sample and
// a point, for the allocation test and the benchmarks.
func gradFixture(tb testing.TB, kind Kind, d int) (Loss, []float64, Sample) {
	tb.Helper()
	r := newTestRand(uint64(d))
	var loss Loss
	var err error
	z := Sample{V: randomVec(r, d), S: 1}
	if kind == KindQuadratic {
		loss, err = NewQuadratic(randomSPD(r, d, 10), randomSPD(r, d, 10))
		z.S = 0.3 // both matrices used
	} else {
		loss, err = NewLogistic(d, 0.05)
	}
	require.NoError(tb, err)
	return loss, randomVec(r, d), z
}

func TestGradDoesNotAllocate(t *testing.T) {
	for _, kind := range []Kind{KindQuadratic, KindLogistic} {
		t.Run(string(kind), func(t *testing.T) {
			loss, w, z := gradFixture(t, kind, 25)
			dst := make([]float64, 25)
			if n := testing.AllocsPerRun(100, func() { loss.Grad(dst, w, z) }); n != 0 {
				t.Errorf("Grad allocates %v times per call, want 0", n)
			}
		})
	}
}

func BenchmarkQuadraticGrad(b *testing.B) { benchmarkGrad(b, KindQuadratic) }

func BenchmarkLogisticGrad(b *testing.B) { benchmarkGrad(b, KindLogistic) }

func benchmarkGrad(b *testing.B, kind Kind) {
	for _, d := range []int{25, 1000} {
		b.Run(fmt.Sprintf("d=%d", d), func(b *testing.B) {
			loss, w, z := gradFixture(b, kind, d)
			dst := make([]float64, d)
			b.ReportAllocs()
			for b.Loop() {
				loss.Grad(dst, w, z)
			}
		})
	}
}
