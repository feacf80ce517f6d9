package stream

import (
	"fmt"
	"math"

	"gonum.org/v1/gonum/mat"
)

// Kind names a loss family of the stream format.
type Kind string

const (
	// KindQuadratic is the drifting quadratic loss ℓ(w) = ½(w−a)ᵀH(α)(w−a).
	KindQuadratic Kind = "quadratic"
	// KindLogistic is the ridge logistic loss
	// ℓ(w) = log(1+exp(−y xᵀw)) + (λ/2)‖w‖².
	KindLogistic Kind = "logistic"
)

// Loss is a per-sample loss ℓ_z(w) on R^d.
//
// Implementations are safe for concurrent use: they keep no scratch state.
// Grad and Value panic if len(w) or len(z.V) differ from Dim (a programmer
// error: event payloads are validated when a history is built or read).
type Loss interface {
	// Kind names the loss family.
	Kind() Kind
	// Dim returns the dimension d.
	Dim() int
	// Grad stores ∇ℓ_z(w) in dst, which must have length d and must not
	// alias w. It does not allocate.
	Grad(dst, w []float64, z Sample)
	// Value returns ℓ_z(w).
	Value(w []float64, z Sample) float64
	// CheckSample reports whether z is a valid payload for this loss
	// (dimension, finiteness, domain of S), naming the offending field.
	CheckSample(z Sample) (field string, err error)
}

// Quadratic is the drifting quadratic loss of spec §1:
//
//	ℓ(w) = ½ (w−a)ᵀ H(α) (w−a),   H(α) = (1−α)·H0 + α·H1,
//	∇ℓ(w) = H(α)(w−a),
//
// with the SPD matrices H0, H1 shared by the whole stream and the payload
// (a, α) per event. Create it with [NewQuadratic].
type Quadratic struct {
	d      int
	h0, h1 []float64 // row-major d×d
}

// NewQuadratic validates H0 and H1 (square d×d, finite, symmetric to 1e-12
// relative per entry pair, positive definite by Cholesky) and returns the
// loss, with d = len(H0). The matrices are copied. Errors are *FieldError
// values naming "H0" or "H1" and wrapping ErrDimension, ErrNonFinite or
// ErrNotSPD.
func NewQuadratic(h0, h1 [][]float64) (*Quadratic, error) {
	d := len(h0)
	if d < 1 {
		return nil, fieldErrorf("H0", "dimension %d: %w", d, ErrDimension)
	}
	// Check both shapes before allocating d² floats, so that a malformed
	// input cannot make us allocate more than its own size.
	for _, m := range []struct {
		name string
		src  [][]float64
	}{{"H0", h0}, {"H1", h1}} {
		if err := checkShape(m.name, m.src, d); err != nil {
			return nil, err
		}
	}
	q := &Quadratic{d: d, h0: make([]float64, d*d), h1: make([]float64, d*d)}
	for _, m := range []struct {
		name string
		src  [][]float64
		dst  []float64
	}{{"H0", h0, q.h0}, {"H1", h1, q.h1}} {
		if err := flattenSPD(m.name, m.src, d, m.dst); err != nil {
			return nil, err
		}
	}
	return q, nil
}

// checkShape checks that src is d×d.
func checkShape(name string, src [][]float64, d int) error {
	if len(src) != d {
		return fieldErrorf(name, "%d rows, want %d: %w", len(src), d, ErrDimension)
	}
	for i, row := range src {
		if len(row) != d {
			return fieldErrorf(name, "row %d has %d entries, want %d: %w", i, len(row), d, ErrDimension)
		}
	}
	return nil
}

// flattenSPD checks that the d×d matrix src is finite, symmetric and
// positive definite and copies it row-major into dst.
func flattenSPD(name string, src [][]float64, d int, dst []float64) error {
	for i, row := range src {
		for j, v := range row {
			if math.IsNaN(v) || math.IsInf(v, 0) {
				return fieldErrorf(name, "entry [%d][%d] = %v: %w", i, j, v, ErrNonFinite)
			}
			dst[i*d+j] = v
		}
	}
	for i := 0; i < d; i++ {
		for j := i + 1; j < d; j++ {
			a, b := dst[i*d+j], dst[j*d+i]
			if math.Abs(a-b) > 1e-12*math.Max(math.Abs(a), math.Abs(b)) {
				return fieldErrorf(name, "not symmetric at [%d][%d] (%v vs %v): %w", i, j, a, b, ErrNotSPD)
			}
		}
	}
	var chol mat.Cholesky
	if ok := chol.Factorize(mat.NewSymDense(d, append([]float64(nil), dst...))); !ok {
		return fieldErrorf(name, "Cholesky factorization failed: %w", ErrNotSPD)
	}
	return nil
}

// Header returns the stream header of the loss: format, kind "quadratic",
// d, H0 and H1 (copies), without metadata.
func (q *Quadratic) Header() Header {
	return Header{Format: FormatV1, Kind: KindQuadratic, D: q.d, H0: q.H0(), H1: q.H1()}
}

// Kind returns KindQuadratic.
func (q *Quadratic) Kind() Kind { return KindQuadratic }

// Dim returns d.
func (q *Quadratic) Dim() int { return q.d }

// H0 returns a copy of H0 as rows.
func (q *Quadratic) H0() [][]float64 { return rows(q.h0, q.d) }

// H1 returns a copy of H1 as rows.
func (q *Quadratic) H1() [][]float64 { return rows(q.h1, q.d) }

func rows(flat []float64, d int) [][]float64 {
	out := make([][]float64, d)
	for i := range out {
		out[i] = append([]float64(nil), flat[i*d:(i+1)*d]...)
	}
	return out
}

// Grad stores H(α)(w−a) in dst. The arithmetic is pinned so that independent
// implementations agree to round-off: with r = w − a,
//
//	dst[i] = (1−α)·Σ_j H0[i][j]·r[j] + α·Σ_j H1[i][j]·r[j],
//
// each sum accumulated in increasing j, each product rounded before it is
// added (no fused multiply-add). When α = 0 the H1 term is skipped. Rows go
// four at a time, four independent sums in flight, which changes no bit.
func (q *Quadratic) Grad(dst, w []float64, z Sample) {
	d := q.d
	if len(dst) != d || len(w) != d || len(z.V) != d {
		panic("stream: Quadratic.Grad: dimension mismatch")
	}
	a, alpha := z.V, z.S
	i := 0
	for ; i+4 <= d; i += 4 {
		s := rowsTimesDiff(q.h0[i*d:(i+4)*d], w, a)
		if alpha == 0 {
			dst[i], dst[i+1], dst[i+2], dst[i+3] = s[0], s[1], s[2], s[3]
			continue
		}
		t := rowsTimesDiff(q.h1[i*d:(i+4)*d], w, a)
		for k := range 4 {
			dst[i+k] = float64((1-alpha)*s[k]) + float64(alpha*t[k])
		}
	}
	for ; i < d; i++ {
		s0 := rowTimesDiff(q.h0[i*d:(i+1)*d], w, a)
		if alpha == 0 {
			dst[i] = s0
			continue
		}
		s1 := rowTimesDiff(q.h1[i*d:(i+1)*d], w, a)
		dst[i] = float64((1-alpha)*s0) + float64(alpha*s1)
	}
}

// rowTimesDiff returns Σ_j h[j]·(w[j]−a[j]), in increasing j.
func rowTimesDiff(h, w, a []float64) float64 {
	w, a = w[:len(h)], a[:len(h)]
	var s float64
	for j, hj := range h {
		s += float64(hj * (w[j] - a[j]))
	}
	return s
}

// rowsTimesDiff returns rowTimesDiff for the four consecutive rows of length
// len(w) in h, computed together.
func rowsTimesDiff(h, w, a []float64) [4]float64 {
	d := len(w)
	a = a[:d]
	h0, h1, h2, h3 := h[:d], h[d:][:d], h[2*d:][:d], h[3*d:][:d]
	var s0, s1, s2, s3 float64
	for j, wj := range w {
		r := wj - a[j]
		s0 += float64(h0[j] * r)
		s1 += float64(h1[j] * r)
		s2 += float64(h2[j] * r)
		s3 += float64(h3[j] * r)
	}
	return [4]float64{s0, s1, s2, s3}
}

// Value returns ½ (w−a)ᵀ H(α) (w−a).
func (q *Quadratic) Value(w []float64, z Sample) float64 {
	d := q.d
	if len(w) != d || len(z.V) != d {
		panic("stream: Quadratic.Value: dimension mismatch")
	}
	a, alpha := z.V, z.S
	var v float64
	for i := 0; i < d; i++ {
		var s0, s1 float64
		for j := 0; j < d; j++ {
			r := w[j] - a[j]
			s0 += q.h0[i*d+j] * r
			s1 += q.h1[i*d+j] * r
		}
		v += (w[i] - a[i]) * ((1-alpha)*s0 + alpha*s1)
	}
	return v / 2
}

// HessianTo stores H(α) = (1−α)·H0 + α·H1 for the sample z in dst
// (row-major d×d), for callers that apply one event's Hessian to many states.
func (q *Quadratic) HessianTo(dst []float64, z Sample) {
	if len(dst) != q.d*q.d {
		panic("stream: Quadratic.HessianTo: dimension mismatch")
	}
	alpha := z.S
	for k := range dst {
		dst[k] = (1-alpha)*q.h0[k] + alpha*q.h1[k]
	}
}

// CheckSample checks len(a) = d, a finite and α ∈ [0,1]. Sparse payloads
// are errors: a is a minimizer, not a feature vector.
func (q *Quadratic) CheckSample(z Sample) (string, error) {
	if z.Idx != nil {
		return "a" + indexSuffix, fmt.Errorf("a quadratic stream has no sparse payloads: %w", ErrFormat)
	}
	if err := checkVector(z.V, q.d); err != nil {
		return "a", err
	}
	if math.IsNaN(z.S) || math.IsInf(z.S, 0) {
		return "alpha", fmt.Errorf("alpha = %v: %w", z.S, ErrNonFinite)
	}
	if z.S < 0 || z.S > 1 {
		return "alpha", fmt.Errorf("alpha = %v not in [0,1]: %w", z.S, ErrInvalidValue)
	}
	return "", nil
}

// Logistic is the ridge logistic loss of spec §1:
//
//	ℓ(w) = log(1+exp(−y xᵀw)) + (λ/2)‖w‖²,
//	∇ℓ(w) = −y·x·σ(−y xᵀw) + λw,   σ(z) = 1/(1+e^{−z}),
//
// with payload (x, y), y ∈ {−1,+1}, and the ridge λ ≥ 0 shared by the
// stream. log1p(exp(·)) and σ are evaluated in their numerically stable
// forms, so no input overflows. Create it with [NewLogistic].
type Logistic struct {
	d      int
	lambda float64
}

// NewLogistic returns the ridge logistic loss on R^d with ridge λ. It
// returns a *FieldError naming "d" or "lambda" for d < 1 or λ that is
// negative or not finite.
func NewLogistic(d int, lambda float64) (*Logistic, error) {
	if err := checkRidge(d, lambda); err != nil {
		return nil, err
	}
	return &Logistic{d: d, lambda: lambda}, nil
}

// Header returns the stream header of the loss: format, kind "logistic", d
// and lambda, without metadata.
func (l *Logistic) Header() Header {
	return Header{Format: FormatV1, Kind: KindLogistic, D: l.d, Lambda: l.lambda}
}

// Kind returns KindLogistic.
func (l *Logistic) Kind() Kind { return KindLogistic }

// Dim returns d.
func (l *Logistic) Dim() int { return l.d }

// Lambda returns the ridge λ.
func (l *Logistic) Lambda() float64 { return l.lambda }

// Sigmoid returns σ(z) = 1/(1+e^{−z}) without overflow: for z ≥ 0 it
// evaluates 1/(1+e^{−z}), for z < 0 it evaluates e^{z}/(1+e^{z}).
func Sigmoid(z float64) float64 {
	if z >= 0 {
		return 1 / (1 + math.Exp(-z))
	}
	e := math.Exp(z)
	return e / (1 + e)
}

// Softplus returns log(1+e^{z}) without overflow or loss of precision:
// max(z,0) + log1p(e^{−|z|}).
func Softplus(z float64) float64 {
	return math.Max(z, 0) + math.Log1p(math.Exp(-math.Abs(z)))
}

// Grad stores −y·x·σ(−y xᵀw) + λw in dst, with the margin xᵀw accumulated in
// increasing index order. For a sparse x the margin costs O(nnz) and sums
// the dense sum's nonzero terms in the same order, and the entries off the
// support are (c·0) + λw_i, as the dense formula gives them: the result is
// the dense one's, bit for bit (up to the sign of a zero margin, which σ
// ignores).
func (l *Logistic) Grad(dst, w []float64, z Sample) {
	d := l.d
	if len(dst) != d || len(w) != d || !z.FitsDim(d) {
		panic("stream: Logistic.Grad: dimension mismatch")
	}
	x, y := z.V, z.S
	if z.Idx != nil {
		var m float64
		for k, j := range z.Idx {
			m += float64(x[k] * w[j]) // the same expression as the dense margin's (unfused)
		}
		c := -y * Sigmoid(-y*m)
		zero := c * 0
		for i, wi := range w {
			dst[i] = zero + l.lambda*wi
		}
		for k, j := range z.Idx {
			dst[j] = float64(c*x[k]) + float64(l.lambda*w[j]) // unfused: the same bits on every GOAMD64 level
		}
		return
	}
	var m float64
	for j, xj := range x {
		m += float64(xj * w[j])
	}
	c := -y * Sigmoid(-y*m)
	for i, xi := range x {
		dst[i] = float64(c*xi) + float64(l.lambda*w[i]) // unfused: the same bits on every GOAMD64 level
	}
}

// Value returns log(1+exp(−y xᵀw)) + (λ/2)‖w‖².
func (l *Logistic) Value(w []float64, z Sample) float64 {
	d := l.d
	if len(w) != d || !z.FitsDim(d) {
		panic("stream: Logistic.Value: dimension mismatch")
	}
	// Products are rounded before the add (float64(·) forbids fusing them
	// into an FMA), so the sparse and dense paths give the same bits on
	// every build, GOAMD64=v3 included.
	if z.Idx != nil {
		var ww float64
		for _, wj := range w {
			ww += float64(wj * wj)
		}
		return Softplus(-z.S*sparseDot(z.Idx, z.V, w)) + l.lambda/2*ww
	}
	var m, ww float64
	for j, xj := range z.V {
		m += float64(xj * w[j])
		ww += float64(w[j] * w[j])
	}
	return Softplus(-z.S*m) + l.lambda/2*ww
}

// CheckSample checks x (len(x) = d, or a valid sparse vector of dimension
// d) finite and y ∈ {−1,+1}.
func (l *Logistic) CheckSample(z Sample) (string, error) {
	if field, err := checkPayload(z, l.d, "x"); err != nil {
		return field, err
	}
	if z.S != 1 && z.S != -1 {
		if math.IsNaN(z.S) || math.IsInf(z.S, 0) {
			return "y", fmt.Errorf("y = %v: %w", z.S, ErrNonFinite)
		}
		return "y", fmt.Errorf("y = %v not in {-1,+1}: %w", z.S, ErrInvalidValue)
	}
	return "", nil
}

func checkVector(v []float64, d int) error {
	if len(v) != d {
		return fmt.Errorf("length %d, want d = %d: %w", len(v), d, ErrDimension)
	}
	for i, x := range v {
		if math.IsNaN(x) || math.IsInf(x, 0) {
			return fmt.Errorf("entry %d = %v: %w", i, x, ErrNonFinite)
		}
	}
	return nil
}

// Outputs returns 1: one score per sample.
func (l *Logistic) Outputs() int { return 1 }

// Link stores −y·σ(−y·u) in dst[0] and returns log(1 + exp(−y·u)), for the
// single score u = u[0]. dst may be u.
func (l *Logistic) Link(dst, u []float64, y float64) float64 {
	if len(dst) != 1 || len(u) != 1 {
		panic("stream: Logistic.Link: dimension mismatch")
	}
	m := u[0]
	dst[0] = -y * Sigmoid(-y*m)
	return Softplus(-y * m)
}

// Predict returns +1 when u[0] ≥ 0, else −1, and true.
func (l *Logistic) Predict(u []float64) (float64, bool) {
	if u[0] >= 0 {
		return 1, true
	}
	return -1, true
}

// Class returns 0 for y = −1 and 1 for y = +1, and 2 classes.
func (l *Logistic) Class(y float64) (int, int) {
	if y > 0 {
		return 1, 2
	}
	return 0, 2
}
