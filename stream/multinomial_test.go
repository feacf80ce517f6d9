package stream

import (
	"bytes"
	"fmt"
	"math"
	"math/big"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"gonum.org/v1/gonum/diff/fd"
)

func TestMultinomialGradFiniteDifference(t *testing.T) {
	for _, d := range []int{1, 3, 25} {
		for _, k := range []int{2, 3, 10} {
			for _, lambda := range []float64{0, 0.05} {
				t.Run(fmt.Sprintf("d=%d/k=%d/lambda=%v", d, k, lambda), func(t *testing.T) {
					r := newTestRand(uint64(100 + d*k))
					m, err := NewMultinomial(d, k, lambda)
					require.NoError(t, err)
					for trial := range 4 {
						w, x := randomVec(r, k*d), randomVec(r, d)
						z := Sample{V: x, S: float64(r.IntN(k))}
						got := make([]float64, k*d)
						m.Grad(got, w, z)
						want := fd.Gradient(nil, func(v []float64) float64 { return m.Value(v, z) }, w,
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

// multinomialBig is an independent construction of the multinomial loss
// and gradient in 256-bit arithmetic, straight from the definitions
// (no shift by the largest score, no Dot4): log Σ exp(u_k) − u_y and
// (p_k − [k = y])·x_j + λ·w_kj.
func multinomialBig(w, x []float64, y, k int, lambda float64) (float64, []float64) {
	const prec = 256
	d := len(x)
	nf := func(v float64) *big.Float { return new(big.Float).SetPrec(prec).SetFloat64(v) }
	u := make([]*big.Float, k)
	for c := range k {
		u[c] = nf(0)
		for j := range d {
			u[c].Add(u[c], new(big.Float).SetPrec(prec).Mul(nf(w[c*d+j]), nf(x[j])))
		}
	}
	// exp in float64 of the exact scores (|u| is small in the test) is
	// enough for a reference good to 1e-15.
	e := make([]float64, k)
	var sum float64
	for c := range k {
		uc, _ := u[c].Float64()
		e[c] = math.Exp(uc)
		sum += e[c]
	}
	uy, _ := u[y].Float64()
	ww := nf(0)
	for _, v := range w {
		ww.Add(ww, new(big.Float).SetPrec(prec).Mul(nf(v), nf(v)))
	}
	wwf, _ := ww.Float64()
	value := math.Log(sum) - uy + lambda/2*wwf
	grad := make([]float64, k*d)
	for c := range k {
		coef := e[c] / sum
		if c == y {
			coef--
		}
		for j := range d {
			grad[c*d+j] = coef*x[j] + lambda*w[c*d+j]
		}
	}
	return value, grad
}

func TestMultinomialAgainstIndependentConstruction(t *testing.T) {
	r := newTestRand(7)
	for _, sz := range []struct{ d, k int }{{1, 2}, {4, 3}, {30, 10}} {
		m, err := NewMultinomial(sz.d, sz.k, 0.01)
		require.NoError(t, err)
		for trial := range 10 {
			w, x := randomVec(r, sz.k*sz.d), randomVec(r, sz.d)
			y := r.IntN(sz.k)
			wantV, wantG := multinomialBig(w, x, y, sz.k, 0.01)
			z := Sample{V: x, S: float64(y)}
			// Round-off: scores of ≤ 30 terms of size ≲ 5 and a softmax of
			// ≤ 10 terms: a few hundred ulps of values of order 10 at most.
			assertClose(t, fmt.Sprintf("d=%d k=%d trial %d: Value", sz.d, sz.k, trial), m.Value(w, z), wantV, 1e-12, 1e-12)
			got := make([]float64, sz.k*sz.d)
			m.Grad(got, w, z)
			for i := range got {
				assertClose(t, fmt.Sprintf("d=%d k=%d trial %d: grad[%d]", sz.d, sz.k, trial, i), got[i], wantG[i], 1e-12, 1e-12)
			}
		}
	}
}

// TestMultinomialTwoClassesIsLogistic checks the softmax loss on two
// classes against the logistic loss of the score difference: with
// w_0 = −v/2, w_1 = v/2 the scores differ by vᵀx, and
// ℓ_mult = log(1 + exp(−y'·vᵀx)) with y' = ±1 for class 1 / class 0.
func TestMultinomialTwoClassesIsLogistic(t *testing.T) {
	r := newTestRand(8)
	const d = 5
	m, err := NewMultinomial(d, 2, 0)
	require.NoError(t, err)
	lg, err := NewLogistic(d, 0)
	require.NoError(t, err)
	for trial := range 20 {
		v, x := randomVec(r, d), randomVec(r, d)
		w := make([]float64, 2*d)
		for j := range d {
			w[j], w[d+j] = -v[j]/2, v[j]/2 // halving is exact
		}
		c := r.IntN(2)
		y := float64(2*c - 1)
		assertClose(t, fmt.Sprintf("trial %d: value", trial), m.Value(w, Sample{V: x, S: float64(c)}),
			lg.Value(v, Sample{V: x, S: y}), 1e-14, 1e-13)
	}
}

func TestMultinomialStableAtHugeScores(t *testing.T) {
	m, err := NewMultinomial(1, 3, 0)
	require.NoError(t, err)
	w := []float64{1000, 0, -1000} // scores 1000x, 0, −1000x
	tests := []struct {
		name      string
		x         float64
		y         float64
		wantValue float64
		wantGrad  []float64
		wantLink  []float64 // p − e_y at u = (1000x, 0, −1000x)
	}{
		// Class 0 wins by 1000: exp(−1000) underflows to 0, loss 0,
		// gradient 0 (p = e_0).
		{"confident right", 1, 0, 0, []float64{0, 0, 0}, []float64{0, 0, 0}},
		// Class 2 is the label, 2000 below the winner: loss 2000, p = e_0,
		// gradient (p − e_2)·x = (1, 0, −1).
		{"confident wrong", 1, 2, 2000, []float64{1, 0, -1}, []float64{1, 0, -1}},
		// x = −1: class 2 wins, the label is 0: p − e_0 = (−1, 0, 1), times x.
		{"confident wrong, negative x", -1, 0, 2000, []float64{1, 0, -1}, []float64{-1, 0, 1}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			z := Sample{V: []float64{tt.x}, S: tt.y}
			g := make([]float64, 3)
			m.Grad(g, w, z)
			assert.Equal(t, tt.wantGrad, g)
			assert.Equal(t, tt.wantValue, m.Value(w, z))
			u := []float64{1000 * tt.x, 0, -1000 * tt.x}
			dst := make([]float64, 3)
			assert.Equal(t, tt.wantValue, m.Link(dst, u, tt.y), "Link")
			assert.Equal(t, tt.wantLink, dst, "Link's ∂φ/∂u")
		})
	}
}

// TestMultinomialSparseMatchesDense checks a sparse payload's gradient,
// value and scores against the dense payload's, bit for bit.
func TestMultinomialSparseMatchesDense(t *testing.T) {
	r := newTestRand(9)
	const d, k = 23, 4
	m, err := NewMultinomial(d, k, 0.1)
	require.NoError(t, err)
	for trial := range 20 {
		var idx []int32
		var vals []float64
		dense := make([]float64, d)
		for j := range d {
			if r.IntN(3) == 0 {
				idx = append(idx, int32(j))
				v := r.NormFloat64()
				vals = append(vals, v)
				dense[j] = v
			}
		}
		w := randomVec(r, k*d)
		y := float64(r.IntN(k))
		sp, dn := SparseSample(idx, vals, y), Sample{V: dense, S: y}
		gs, gd := make([]float64, k*d), make([]float64, k*d)
		m.Grad(gs, w, sp)
		m.Grad(gd, w, dn)
		require.Truef(t, sameFloats(gs, gd), "trial %d: sparse gradient %v, dense %v", trial, gs, gd)
		require.Truef(t, sameFloat(m.Value(w, sp), m.Value(w, dn)), "trial %d: values differ", trial)
	}
}

func TestMultinomialCheckSample(t *testing.T) {
	m, err := NewMultinomial(2, 3, 0)
	require.NoError(t, err)
	tests := []struct {
		name  string
		z     Sample
		field string
		want  error
	}{
		{"class 0", Sample{V: []float64{1, 2}, S: 0}, "", nil},
		{"class 2", Sample{V: []float64{1, 2}, S: 2}, "", nil},
		{"class 3 of 3", Sample{V: []float64{1, 2}, S: 3}, "y", ErrInvalidValue},
		{"negative", Sample{V: []float64{1, 2}, S: -1}, "y", ErrInvalidValue},
		{"fraction", Sample{V: []float64{1, 2}, S: 0.5}, "y", ErrInvalidValue},
		{"NaN", Sample{V: []float64{1, 2}, S: math.NaN()}, "y", ErrNonFinite},
		{"short x", Sample{V: []float64{1}, S: 0}, "x", ErrDimension},
		{"sparse", SparseSample([]int32{1}, []float64{3}, 1), "", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			field, err := m.CheckSample(tt.z)
			assert.Equal(t, tt.field, field)
			if tt.want == nil {
				assert.NoError(t, err)
			} else {
				assert.ErrorIs(t, err, tt.want)
			}
		})
	}
}

func TestNewMultinomialRejects(t *testing.T) {
	for _, tt := range []struct {
		name   string
		d, k   int
		lambda float64
		field  string
	}{
		{"d = 0", 0, 3, 0, "d"},
		{"one class", 2, 1, 0, "k"},
		{"too many classes", 2, MaxClasses + 1, 0, "k"},
		{"negative lambda", 2, 3, -1, "lambda"},
		{"NaN lambda", 2, 3, math.NaN(), "lambda"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, err := NewMultinomial(tt.d, tt.k, tt.lambda)
			var fe *FieldError
			require.ErrorAs(t, err, &fe)
			assert.Equal(t, tt.field, fe.Field)
		})
	}
}

// TestMultinomialStreamRoundTrip writes and reads a multinomial stream:
// the header's k and the class labels survive bit for bit, and the
// reader refuses a missing k, k on another kind, and a label out of range.
func TestMultinomialStreamRoundTrip(t *testing.T) {
	m, err := NewMultinomial(2, 3, 0.25)
	require.NoError(t, err)
	h, err := NewHistory(m.Header(), []Event{
		InsertEvent(1, []float64{0.5, -1}, 2),
		{Op: Insert, ID: 2, Sample: SparseSample([]int32{1}, []float64{3}, 0)},
		DeleteEvent(1),
	})
	require.NoError(t, err)
	var buf bytes.Buffer
	require.NoError(t, Write(&buf, h))
	assert.Contains(t, buf.String(), `{"format":"olbfgs-stream/v1","kind":"multinomial","d":2,"k":3,"lambda":0.25}`)
	back, err := Read(bytes.NewReader(buf.Bytes()))
	require.NoError(t, err)
	assert.Equal(t, 3, back.Header.K)
	assert.Equal(t, KindMultinomial, back.Loss.Kind())
	assert.Equal(t, 6, ParamDim(back.Loss))
	assert.Equal(t, h.Events, back.Events)

	for _, tt := range []struct{ name, text, field string }{
		{"missing k", `{"format":"olbfgs-stream/v1","kind":"multinomial","d":2,"lambda":0}` + "\n", "k"},
		{"k = 1", `{"format":"olbfgs-stream/v1","kind":"multinomial","d":2,"k":1,"lambda":0}` + "\n", "k"},
		{"k on logistic", `{"format":"olbfgs-stream/v1","kind":"logistic","d":2,"k":3,"lambda":0}` + "\n", "k"},
		{"class out of range", `{"format":"olbfgs-stream/v1","kind":"multinomial","d":2,"k":3,"lambda":0}` + "\n" +
			`{"op":"insert","id":1,"x":[1,2],"y":3}` + "\n", "y"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Read(bytes.NewReader([]byte(tt.text)))
			var le *LineError
			require.ErrorAs(t, err, &le)
			assert.Equal(t, tt.field, le.Field)
		})
	}
}

func TestLinearLinkMatchesGrad(t *testing.T) {
	// For each Linear loss, Grad = Link's ∂φ/∂u ⊗ x + λw, and Value =
	// Link's φ + (λ/2)‖w‖², bit for bit on the dense path where the score is
	// the loss's own inner product (Dot4 for multinomial; for the binary
	// kinds the single-accumulator margin, checked here with K = 1 scores
	// computed the same way).
	r := newTestRand(11)
	const d = 9
	lg, _ := NewLogistic(d, 0.1)
	rg, _ := NewRegression(d, 0.1)
	mn, _ := NewMultinomial(d, 4, 0.1)
	for _, lin := range []Linear{lg, rg, mn} {
		t.Run(string(lin.Kind()), func(t *testing.T) {
			K := lin.Outputs()
			w, x := randomVec(r, K*d), randomVec(r, d)
			y := 1.0
			if lin.Kind() == KindMultinomial {
				y = 2
			}
			u := make([]float64, K)
			for k := range K {
				if K == 1 {
					var s float64
					for j := range d {
						s += float64(x[j] * w[j])
					}
					u[k] = s
				} else {
					u[k] = Dot4(x, w[k*d:(k+1)*d])
				}
			}
			c := make([]float64, K)
			phi := lin.Link(c, u, y)
			g := make([]float64, K*d)
			lin.Grad(g, w, Sample{V: x, S: y})
			for k := range K {
				for j := range d {
					want := float64(c[k]*x[j]) + float64(lin.Lambda()*w[k*d+j])
					require.Truef(t, sameFloat(g[k*d+j], want), "g[%d] = %v, want %v", k*d+j, g[k*d+j], want)
				}
			}
			var ww float64
			for _, v := range w {
				ww += float64(v * v)
			}
			assertClose(t, "Value", lin.Value(w, Sample{V: x, S: y}), phi+lin.Lambda()/2*ww, 1e-14, 1e-14)
		})
	}
}

func TestMultinomialGradDoesNotAllocate(t *testing.T) {
	m, _ := NewMultinomial(25, 10, 0.05)
	r := newTestRand(12)
	w, z := randomVec(r, 250), Sample{V: randomVec(r, 25), S: 3}
	dst := make([]float64, 250)
	if n := testing.AllocsPerRun(100, func() { m.Grad(dst, w, z) }); n != 0 {
		t.Errorf("Grad allocates %v times per call, want 0", n)
	}
}

func BenchmarkMultinomialGrad(b *testing.B) {
	for _, sz := range []struct{ d, k int }{{784, 10}} {
		b.Run(fmt.Sprintf("d=%d/k=%d", sz.d, sz.k), func(b *testing.B) {
			m, _ := NewMultinomial(sz.d, sz.k, 0.05)
			r := newTestRand(13)
			w, z := randomVec(r, sz.k*sz.d), Sample{V: randomVec(r, sz.d), S: 3}
			dst := make([]float64, sz.k*sz.d)
			b.ReportAllocs()
			for b.Loop() {
				m.Grad(dst, w, z)
			}
		})
	}
}

func TestSoftmax(t *testing.T) {
	u := []float64{1000, 0, -1000, 999}
	p := make([]float64, 4)
	Softmax(p, u)
	assert.InDelta(t, 1, p[0]+p[1]+p[2]+p[3], 1e-15)
	assert.InDelta(t, 1/(1+math.Exp(-1)), p[0], 1e-15, "e^0/(e^0 + e^-1)")
	assert.Equal(t, 0.0, p[2])
	// Link's p − e_y is Softmax's p minus the indicator: the same bits off
	// the label's class.
	c := make([]float64, 4)
	m, _ := NewMultinomial(1, 4, 0)
	m.Link(c, u, 3)
	assert.Equal(t, p[:3], c[:3])
	assert.Equal(t, p[3]-1, c[3])
}
