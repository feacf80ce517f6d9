package stream

import (
	"fmt"
	"math"
)

// KindRegression is the least-squares (ridge regression) loss
// ℓ(w) = ½(xᵀw − y)² + (λ/2)‖w‖².
const KindRegression Kind = "regression"

// Regression is the ridge least-squares loss
//
//	ℓ(w) = ½ (xᵀw − y)² + (λ/2)‖w‖²,
//	∇ℓ(w) = (xᵀw − y)·x + λw,
//	∇²ℓ(w) = x xᵀ + λI,
//
// with payload (x, y), x ∈ R^d and a real target y, and the ridge λ ≥ 0
// shared by the stream (header field "lambda"). Create it with
// [NewRegression].
//
// Constants for certification. The Hessian x xᵀ + λI does not depend on w,
// and its eigenvalues are λ (multiplicity d−1) and λ + ‖x‖², so every
// per-sample loss is μ-strongly convex and L-smooth with
//
//	μ = λ,   L = λ + max_z ‖x_z‖²
//
// (the maximum over the stream's samples). Unlike the logistic loss, whose
// data term has gradient norm at most ‖x‖, the gradient (xᵀw − y)x grows
// with ‖w‖ and |y|: there is no global gradient bound G unless ‖w‖ ≤ R and
// |y| ≤ Y are assumed, and then ‖∇ℓ(w)‖ ≤ (‖x‖R + Y)‖x‖ + λR. A certificate
// that needs G must therefore state R and Y as assumptions.
type Regression struct {
	d      int
	lambda float64
}

// NewRegression returns the ridge least-squares loss on R^d with ridge λ.
// It returns a *FieldError naming "d" or "lambda" for d < 1 or λ that is
// negative or not finite.
func NewRegression(d int, lambda float64) (*Regression, error) {
	if err := checkRidge(d, lambda); err != nil {
		return nil, err
	}
	return &Regression{d: d, lambda: lambda}, nil
}

// checkRidge checks d ≥ 1 and a finite λ ≥ 0.
func checkRidge(d int, lambda float64) error {
	if d < 1 {
		return fieldErrorf("d", "d = %d must be at least 1: %w", d, ErrInvalidValue)
	}
	if math.IsNaN(lambda) || math.IsInf(lambda, 0) {
		return fieldErrorf("lambda", "lambda = %v: %w", lambda, ErrNonFinite)
	}
	if lambda < 0 {
		return fieldErrorf("lambda", "lambda = %v must be non-negative: %w", lambda, ErrInvalidValue)
	}
	return nil
}

// Kind returns KindRegression.
func (r *Regression) Kind() Kind { return KindRegression }

// Dim returns d.
func (r *Regression) Dim() int { return r.d }

// Lambda returns the ridge λ.
func (r *Regression) Lambda() float64 { return r.lambda }

// Header returns the stream header of the loss: format, kind "regression",
// d and lambda, without metadata.
func (r *Regression) Header() Header {
	return Header{Format: FormatV1, Kind: KindRegression, D: r.d, Lambda: r.lambda}
}

// Grad stores (xᵀw − y)·x + λw in dst, with the residual xᵀw − y
// accumulated in increasing index order (the margin first, then y
// subtracted), each product rounded before it is added.
//
// For a sparse x the residual costs O(nnz), and the result is the dense
// formula's bit for bit (see [Logistic.Grad]).
func (r *Regression) Grad(dst, w []float64, z Sample) {
	d := r.d
	if len(dst) != d || len(w) != d || !z.FitsDim(d) {
		panic("stream: Regression.Grad: dimension mismatch")
	}
	x := z.V
	if z.Idx != nil {
		c := sparseDot(z.Idx, x, w) - z.S
		zero := float64(c * 0)
		for i, wi := range w {
			dst[i] = zero + float64(r.lambda*wi)
		}
		for k, j := range z.Idx {
			dst[j] = float64(c*x[k]) + float64(r.lambda*w[j])
		}
		return
	}
	var m float64
	for j, xj := range x {
		m += float64(xj * w[j])
	}
	c := m - z.S
	for i, xi := range x {
		dst[i] = float64(c*xi) + float64(r.lambda*w[i])
	}
}

// Value returns ½(xᵀw − y)² + (λ/2)‖w‖².
func (r *Regression) Value(w []float64, z Sample) float64 {
	d := r.d
	if len(w) != d || !z.FitsDim(d) {
		panic("stream: Regression.Value: dimension mismatch")
	}
	if z.Idx != nil {
		var ww float64
		for _, wj := range w {
			ww += float64(wj * wj)
		}
		res := sparseDot(z.Idx, z.V, w) - z.S
		return res*res/2 + r.lambda/2*ww
	}
	var m, ww float64
	for j, xj := range z.V {
		m += float64(xj * w[j])
		ww += float64(w[j] * w[j])
	}
	res := m - z.S
	return res*res/2 + r.lambda/2*ww
}

// CheckSample checks x (len(x) = d, or a valid sparse vector of dimension
// d) finite and y finite.
func (r *Regression) CheckSample(z Sample) (string, error) {
	if field, err := checkPayload(z, r.d, "x"); err != nil {
		return field, err
	}
	if math.IsNaN(z.S) || math.IsInf(z.S, 0) {
		return "y", fmt.Errorf("y = %v: %w", z.S, ErrNonFinite)
	}
	return "", nil
}

// Outputs returns 1: one score per sample.
func (r *Regression) Outputs() int { return 1 }

// Link stores the residual u − y in dst[0] and returns ½(u − y)², for the
// single score u = u[0]. dst may be u.
func (r *Regression) Link(dst, u []float64, y float64) float64 {
	if len(dst) != 1 || len(u) != 1 {
		panic("stream: Regression.Link: dimension mismatch")
	}
	res := u[0] - y
	dst[0] = res
	return res * res / 2
}

// Predict returns 0 and false: a regression has no classes.
func (r *Regression) Predict([]float64) (float64, bool) { return 0, false }

// Class returns 0, 0: a regression has no classes.
func (r *Regression) Class(float64) (int, int) { return 0, 0 }
