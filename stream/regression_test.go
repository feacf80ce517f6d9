package stream

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"gonum.org/v1/gonum/diff/fd"
	"pgregory.net/rapid"
)

func TestRegressionGradFiniteDifference(t *testing.T) {
	for _, d := range []int{1, 3, 25} {
		for _, lambda := range []float64{0, 0.05} {
			t.Run(fmt.Sprintf("d=%d/lambda=%v", d, lambda), func(t *testing.T) {
				r := newTestRand(uint64(20 + d))
				l, err := NewRegression(d, lambda)
				require.NoError(t, err)
				for trial := range 5 {
					w, x := randomVec(r, d), randomVec(r, d)
					z := Sample{V: x, S: 3 * r.NormFloat64()}
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

// TestRegressionGradIndependentFormula checks Grad against the normal-
// equation form of the gradient, (x xᵀ + λI)w − y·x, computed through the
// Hessian: an independent formula that agrees with (xᵀw − y)x + λw up to
// round-off.
func TestRegressionGradIndependentFormula(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		d := rapid.IntRange(1, 12).Draw(t, "d")
		lambda := rapid.Float64Range(0, 2).Draw(t, "lambda")
		w := rapid.SliceOfN(rapid.Float64Range(-5, 5), d, d).Draw(t, "w")
		x := rapid.SliceOfN(rapid.Float64Range(-5, 5), d, d).Draw(t, "x")
		y := rapid.Float64Range(-10, 10).Draw(t, "y")
		l, err := NewRegression(d, lambda)
		if err != nil {
			t.Fatal(err)
		}
		got := make([]float64, d)
		l.Grad(got, w, Sample{V: x, S: y})
		// scale of the terms, for a round-off tolerance: every term of the
		// sum is at most |x_i|·Σ|x_j w_j| + |x_i y| + λ|w_i|.
		var sxw float64
		for j := range d {
			sxw += math.Abs(x[j] * w[j])
		}
		for i := range d {
			var hw float64
			for j := range d {
				h := x[i] * x[j]
				if i == j {
					h += lambda
				}
				hw += h * w[j]
			}
			want := hw - y*x[i]
			scale := math.Abs(x[i])*(sxw+math.Abs(y)) + lambda*math.Abs(w[i])
			if math.Abs(got[i]-want) > 1e-13*max(scale, 1) {
				t.Fatalf("grad[%d] = %v, want %v", i, got[i], want)
			}
		}
		// The value at w is ½r² + λ/2‖w‖² with r = xᵀw − y, never negative.
		if v := l.Value(w, Sample{V: x, S: y}); !(v >= 0) {
			t.Fatalf("value %v < 0", v)
		}
	})
}

func TestRegressionConstructorAndSamples(t *testing.T) {
	for _, c := range []struct {
		d      int
		lambda float64
		field  string
		err    error
	}{
		{0, 1, "d", ErrInvalidValue},
		{2, -1, "lambda", ErrInvalidValue},
		{2, math.NaN(), "lambda", ErrNonFinite},
		{2, math.Inf(1), "lambda", ErrNonFinite},
	} {
		_, err := NewRegression(c.d, c.lambda)
		var fe *FieldError
		require.ErrorAs(t, err, &fe, "d=%d λ=%v", c.d, c.lambda)
		assert.Equal(t, c.field, fe.Field)
		assert.ErrorIs(t, err, c.err)
	}
	l, err := NewRegression(2, 0.5)
	require.NoError(t, err)
	assert.Equal(t, KindRegression, l.Kind())
	assert.Equal(t, 0.5, l.Lambda())
	for _, c := range []struct {
		z     Sample
		field string
		err   error
	}{
		{Sample{V: []float64{1}, S: 0}, "x", ErrDimension},
		{Sample{V: []float64{1, math.NaN()}, S: 0}, "x", ErrNonFinite},
		{Sample{V: []float64{1, 2}, S: math.Inf(-1)}, "y", ErrNonFinite},
	} {
		field, err := l.CheckSample(c.z)
		assert.Equal(t, c.field, field)
		assert.ErrorIs(t, err, c.err)
	}
	field, err := l.CheckSample(Sample{V: []float64{1, 2}, S: -123.5})
	assert.NoError(t, err, "a real target is valid")
	assert.Empty(t, field)
}

func TestRegressionStreamRoundTrip(t *testing.T) {
	const in = `{"format":"olbfgs-stream/v1","kind":"regression","d":2,"lambda":0.01,"source":"hand"}
{"op":"insert","id":1,"x":[0.5,-1],"y":2.25}
{"op":"insert","id":2,"x":[1e-7,3],"y":-0.1}
{"op":"delete","id":1}
`
	h, err := Read(strings.NewReader(in))
	require.NoError(t, err)
	assert.Equal(t, KindRegression, h.Loss.Kind())
	assert.Equal(t, 0.01, h.Header.Lambda)
	var b bytes.Buffer
	require.NoError(t, Write(&b, h))
	assert.Equal(t, in, b.String(), "write(read(s)) is s byte for byte")

	for _, c := range []struct {
		name, in, field string
		err             error
	}{
		{"missing lambda", `{"format":"olbfgs-stream/v1","kind":"regression","d":2}`, "lambda", ErrFormat},
		{"H0 in a regression stream", `{"format":"olbfgs-stream/v1","kind":"regression","d":1,"lambda":0,"H0":[[1]]}`, "H0", ErrFormat},
		{"a instead of x", `{"format":"olbfgs-stream/v1","kind":"regression","d":1,"lambda":0}` + "\n" + `{"op":"insert","id":1,"a":[1],"y":1}`, "a", ErrFormat},
		{"non-finite target", `{"format":"olbfgs-stream/v1","kind":"regression","d":1,"lambda":0}` + "\n" + `{"op":"insert","id":1,"x":[1],"y":1e999}`, "y", ErrNonFinite},
	} {
		_, err := Read(strings.NewReader(c.in))
		var le *LineError
		require.ErrorAs(t, err, &le, c.name)
		assert.Equal(t, c.field, le.Field, c.name)
		assert.ErrorIs(t, err, c.err, c.name)
	}
}

// poisson is a user's loss kind for the registry tests: the Poisson
// regression loss exp(xᵀw) − y·xᵀw + (λ/2)‖w‖², with its λ in the header's
// lambda and an extra constant "clip" carried in the header metadata.
type poisson struct {
	d            int
	lambda, clip float64
}

const kindPoisson Kind = "poisson-test"

func (p *poisson) Kind() Kind { return kindPoisson }
func (p *poisson) Dim() int   { return p.d }
func (p *poisson) Grad(dst, w []float64, z Sample) {
	var m float64
	for j := range w {
		m += z.V[j] * w[j]
	}
	c := math.Exp(min(m, p.clip)) - z.S
	for i := range dst {
		dst[i] = c*z.V[i] + p.lambda*w[i]
	}
}
func (p *poisson) Value(w []float64, z Sample) float64 {
	var m, ww float64
	for j := range w {
		m += z.V[j] * w[j]
		ww += w[j] * w[j]
	}
	return math.Exp(m) - z.S*m + p.lambda/2*ww
}
func (p *poisson) CheckSample(z Sample) (string, error) {
	if err := checkVector(z.V, p.d); err != nil {
		return "features", err
	}
	if !(z.S >= 0) || math.IsInf(z.S, 0) {
		return "count", fmt.Errorf("count %v: %w", z.S, ErrInvalidValue)
	}
	return "", nil
}
func (p *poisson) Header() Header {
	h := Header{Kind: kindPoisson, D: p.d, Lambda: p.lambda}
	if err := h.SetMeta("clip", p.clip); err != nil {
		panic(err)
	}
	return h
}

func registerPoisson(t *testing.T) {
	t.Helper()
	if _, ok := LookupLoss(kindPoisson); ok {
		return
	}
	require.NoError(t, RegisterLoss(kindPoisson, LossSpec{
		Vector: "features", Scalar: "count", Lambda: true,
		New: func(h Header) (Loss, error) {
			var clip float64
			if ok, err := h.MetaValue("clip", &clip); err != nil || !ok {
				return nil, fieldErrorf("clip", "missing or not a number: %w", ErrFormat)
			}
			if err := checkRidge(h.D, h.Lambda); err != nil {
				return nil, err
			}
			return &poisson{d: h.D, lambda: h.Lambda, clip: clip}, nil
		},
	}))
}

func TestRegisterLossRoundTrip(t *testing.T) {
	registerPoisson(t)
	loss := &poisson{d: 2, lambda: 0.1, clip: 20}
	hdr, err := HeaderOf(loss)
	require.NoError(t, err)
	assert.Equal(t, FormatV1, hdr.Format)
	h, err := NewHistory(hdr, []Event{InsertEvent(4, []float64{0.5, 1}, 3), InsertEvent(9, []float64{-1, 2}, 0), DeleteEvent(4)})
	require.NoError(t, err)
	var b bytes.Buffer
	require.NoError(t, Write(&b, h))
	assert.Equal(t, `{"format":"olbfgs-stream/v1","kind":"poisson-test","d":2,"lambda":0.1,"clip":20}
{"op":"insert","id":4,"features":[0.5,1],"count":3}
{"op":"insert","id":9,"features":[-1,2],"count":0}
{"op":"delete","id":4}
`, b.String())
	back, err := Read(bytes.NewReader(b.Bytes()))
	require.NoError(t, err)
	assert.Equal(t, loss, back.Loss, "the header rebuilds the same loss")
	assert.Equal(t, h.Events, back.Events)

	// The header's JSON form (what snapshots embed) round-trips too.
	raw, err := json.Marshal(hdr)
	require.NoError(t, err)
	var hdr2 Header
	require.NoError(t, json.Unmarshal(raw, &hdr2))
	l2, err := hdr2.Loss()
	require.NoError(t, err)
	assert.Equal(t, loss, l2)

	// The kind's own validation names its own fields.
	_, err = Read(strings.NewReader(`{"format":"olbfgs-stream/v1","kind":"poisson-test","d":1,"lambda":0,"clip":1}` + "\n" +
		`{"op":"insert","id":1,"features":[1],"count":-1}`))
	var le *LineError
	require.ErrorAs(t, err, &le)
	assert.Equal(t, LineError{Line: 2, Field: "count"}, LineError{Line: le.Line, Field: le.Field})
	_, err = Read(strings.NewReader(`{"format":"olbfgs-stream/v1","kind":"poisson-test","d":1,"lambda":0}`))
	require.ErrorAs(t, err, &le)
	assert.Equal(t, "clip", le.Field)
}

func TestRegisterLossErrors(t *testing.T) {
	newLoss := func(Header) (Loss, error) { return nil, errors.New("unused") }
	for _, c := range []struct {
		name string
		kind Kind
		spec LossSpec
	}{
		{"built-in kind", KindLogistic, LossSpec{Vector: "x", Scalar: "y", New: newLoss}},
		{"empty kind", "", LossSpec{Vector: "x", Scalar: "y", New: newLoss}},
		{"kind with a quote", `a"b`, LossSpec{Vector: "x", Scalar: "y", New: newLoss}},
		{"upper-case kind", "Poisson", LossSpec{Vector: "x", Scalar: "y", New: newLoss}},
		{"same field names", "k1", LossSpec{Vector: "x", Scalar: "x", New: newLoss}},
		{"field named id", "k2", LossSpec{Vector: "id", Scalar: "y", New: newLoss}},
		{"field named op", "k3", LossSpec{Vector: "x", Scalar: "op", New: newLoss}},
		{"empty field", "k4", LossSpec{Vector: "", Scalar: "y", New: newLoss}},
		{"no New", "k5", LossSpec{Vector: "x", Scalar: "y"}},
	} {
		err := RegisterLoss(c.kind, c.spec)
		assert.ErrorIs(t, err, ErrInvalidValue, c.name)
		if c.kind != KindLogistic {
			_, ok := LookupLoss(c.kind)
			assert.False(t, ok, "%s: a rejected kind is not registered", c.name)
		}
	}
	assert.Subset(t, Kinds(), []Kind{KindLogistic, KindQuadratic, KindRegression})

	// A registered New whose loss contradicts its header is caught.
	require.NoError(t, RegisterLoss("liar-test", LossSpec{Vector: "x", Scalar: "y",
		New: func(h Header) (Loss, error) { return NewLogistic(h.D, 0) }}))
	_, err := Header{Kind: "liar-test", D: 2}.Loss()
	var fe *FieldError
	require.ErrorAs(t, err, &fe)
	assert.Equal(t, "kind", fe.Field)
}

func TestHeaderOf(t *testing.T) {
	q, err := NewQuadratic([][]float64{{2, 0}, {0, 1}}, [][]float64{{1, 0}, {0, 1}})
	require.NoError(t, err)
	lg, err := NewLogistic(3, 0.05)
	require.NoError(t, err)
	rg, err := NewRegression(4, 0.5)
	require.NoError(t, err)
	for _, loss := range []Loss{q, lg, rg} {
		h, err := HeaderOf(loss)
		require.NoError(t, err, loss.Kind())
		back, err := h.Loss()
		require.NoError(t, err, loss.Kind())
		assert.Equal(t, loss, back, "HeaderOf(loss).Loss() rebuilds %s", loss.Kind())
	}
	_, err = HeaderOf(noHeader{lg})
	assert.ErrorIs(t, err, ErrInvalidValue, "a loss without a Header method")
	_, err = HeaderOf(badHeader{lg})
	assert.ErrorIs(t, err, ErrInvalidValue, "a header that disagrees with its loss")
}

type noHeader struct{ *Logistic }

func (noHeader) Header() {} // shadows the embedded method with another signature

type badHeader struct{ *Logistic }

func (b badHeader) Header() Header { h := b.Logistic.Header(); h.D++; return h }
