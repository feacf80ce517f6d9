package stream

import (
	"fmt"
	"math"
)

// KindMultinomial is the multinomial (softmax) logistic loss with ridge,
// for K classes:
//
//	ℓ(W) = log Σ_k exp(w_kᵀx) − w_yᵀx + (λ/2)‖W‖².
const KindMultinomial Kind = "multinomial"

// MaxClasses is the largest number of classes K of a multinomial stream.
const MaxClasses = 1 << 16

// Multinomial is the ridge multinomial logistic (softmax cross-entropy)
// loss for K ≥ 2 classes:
//
//	u_k = w_kᵀx,   p_k = exp(u_k) / Σ_i exp(u_i),
//	ℓ(W) = log Σ_k exp(u_k) − u_y + (λ/2)‖W‖²,
//	∇_{w_k} ℓ = (p_k − [k = y])·x + λw_k,
//
// with payload (x, y), x ∈ R^d and the class index y ∈ {0, …, K−1}, the
// number of classes K (header field "k") and the ridge λ ≥ 0 (header field
// "lambda") shared by the stream. The parameters are W = (w_0, …, w_{K−1}),
// K blocks of d: parameter dimension K·d ([ParamDim]), feature dimension d
// ([Multinomial.Dim]). Create it with [NewMultinomial].
//
// Numerics. The scores are [Dot4] inner products. The log-sum-exp is
// evaluated around the largest score m = max_k u_k:
//
//	log Σ_k exp(u_k) − u_y = (m − u_y) + log Σ_k exp(u_k − m),
//
// whose every exponent is ≤ 0 and whose sum is in [1, K], so nothing
// overflows, and both terms are non-negative, so the loss is computed
// without cancellation; p_k = exp(u_k − m)/Σ_i exp(u_i − m) (Blanchard,
// Higham & Higham, "Accurately computing the log-sum-exp and softmax
// functions", IMA J. Numer. Anal. 41 (2021), §2: the shifted forms are
// backward stable).
//
// Constants for certification (docs/theory.md §15). The data term's
// Hessian at w is (diag(p) − ppᵀ) ⊗ xxᵀ, and diag(p) − ppᵀ ⪯ ½I
// (Böhning, "Multinomial logistic regression algorithm", Ann. Inst.
// Statist. Math. 44 (1992), Lemma: diag(p) − ppᵀ ⪯ ½(I − 11ᵀ/K)), so
// every per-sample loss is μ-strongly convex and L-smooth with
//
//	μ = λ,   L = λ + ½·max_z ‖x_z‖²,
//
// and ‖p − e_y‖ ≤ √2 gives the gradient bound ‖∇ℓ(W)‖ ≤ √2·‖x‖ + λ‖W‖.
type Multinomial struct {
	d, k   int
	lambda float64
}

// NewMultinomial returns the ridge multinomial loss on K classes with
// feature dimension d and ridge λ. It returns a *FieldError naming "d",
// "k" or "lambda" for d < 1, K outside [2, MaxClasses], or λ negative or
// not finite.
func NewMultinomial(d, k int, lambda float64) (*Multinomial, error) {
	if err := checkRidge(d, lambda); err != nil {
		return nil, err
	}
	if k < 2 || k > MaxClasses {
		return nil, fieldErrorf("k", "k = %d classes: want 2 to %d: %w", k, MaxClasses, ErrInvalidValue)
	}
	return &Multinomial{d: d, k: k, lambda: lambda}, nil
}

// Kind returns KindMultinomial.
func (m *Multinomial) Kind() Kind { return KindMultinomial }

// Dim returns the feature dimension d.
func (m *Multinomial) Dim() int { return m.d }

// Outputs returns K, the number of classes.
func (m *Multinomial) Outputs() int { return m.k }

// Lambda returns the ridge λ.
func (m *Multinomial) Lambda() float64 { return m.lambda }

// Header returns the stream header of the loss: format, kind
// "multinomial", d, k and lambda, without metadata.
func (m *Multinomial) Header() Header {
	return Header{Format: FormatV1, Kind: KindMultinomial, D: m.d, K: m.k, Lambda: m.lambda}
}

// scores stores u_k = w_kᵀx in u (len K), by Dot4 for a dense x; for a
// sparse x, the same partial sums over the nonzero terms only (the dense
// sum's value, up to the sign of a zero score, which the softmax ignores).
func (m *Multinomial) scores(u, w []float64, z Sample) {
	d := m.d
	for k := range u {
		wk := w[k*d : (k+1)*d]
		if z.Idx != nil {
			u[k] = sparseDot4(z.Idx, z.V, wk)
		} else {
			u[k] = Dot4(z.V, wk)
		}
	}
}

// sparseDot4 is Dot4 of the sparse vector (idx, v) and the dense w: each
// nonzero product goes into the partial sum s_{j mod 4} of its index j,
// in increasing j, as Dot4 adds it.
func sparseDot4(idx []int32, v, w []float64) float64 {
	var s [4]float64
	for k, j := range idx {
		s[j&3] += float64(v[k] * w[j])
	}
	return (s[0] + s[1]) + (s[2] + s[3])
}

// Link stores p − e_y (the softmax of u minus the indicator of class y)
// in dst and returns log Σ_k exp(u_k) − u_y. dst may be u.
func (m *Multinomial) Link(dst, u []float64, y float64) float64 {
	if len(dst) != m.k || len(u) != m.k {
		panic("stream: Multinomial.Link: dimension mismatch")
	}
	return softmaxLink(dst, u, int(y))
}

// softmaxLink stores softmax(u) − e_c in dst (which may be u) and returns
// (max u − u_c) + log Σ_k exp(u_k − max u): Softmax's probabilities, bit
// for bit, minus the indicator.
func softmaxLink(dst, u []float64, c int) float64 {
	mx := u[0]
	for _, v := range u[1:] {
		mx = math.Max(mx, v)
	}
	uc := u[c]
	var sum float64
	for k, v := range u {
		e := math.Exp(v - mx)
		dst[k] = e
		sum += e
	}
	for k := range dst {
		dst[k] /= sum
	}
	dst[c]--
	return (mx - uc) + math.Log(sum)
}

// Predict returns the class index of the largest score (the smallest index
// on a tie) and true.
func (m *Multinomial) Predict(u []float64) (float64, bool) {
	best := 0
	for k, v := range u {
		if v > u[best] {
			best = k
		}
	}
	return float64(best), true
}

// Class returns y itself (a class index) and K.
func (m *Multinomial) Class(y float64) (int, int) { return int(y), m.k }

// Grad stores (p_k − [k = y])·x + λw_k in dst, block k at dst[k·d:(k+1)·d],
// without allocating: the scores and then the coefficients p_k − [k = y]
// are kept in dst[0:K] while they are needed, and the blocks are written
// from the last to the first (block k starts at k·d ≥ k, so it overwrites
// only coefficients of blocks already written, and its own, which is read
// first). For a sparse x the entries off its support are (c_k·0) + λw_kj,
// as the dense formula gives them: the result is the dense one's, bit for
// bit (up to the sign of a zero score).
func (m *Multinomial) Grad(dst, w []float64, z Sample) {
	d, K := m.d, m.k
	if len(dst) != K*d || len(w) != K*d || !z.FitsDim(d) {
		panic("stream: Multinomial.Grad: dimension mismatch")
	}
	c := dst[:K]
	m.scores(c, w, z)
	softmaxLink(c, c, int(z.S))
	x := z.V
	for k := K - 1; k >= 0; k-- {
		ck := c[k]
		row, wk := dst[k*d:(k+1)*d], w[k*d:(k+1)*d]
		if z.Idx != nil {
			zero := float64(ck * 0)
			for j, wj := range wk {
				row[j] = zero + float64(m.lambda*wj)
			}
			for i, j := range z.Idx {
				row[j] = float64(ck*x[i]) + float64(m.lambda*wk[j])
			}
			continue
		}
		for j, xj := range x {
			row[j] = float64(ck*xj) + float64(m.lambda*wk[j])
		}
	}
}

// Value returns log Σ_k exp(w_kᵀx) − w_yᵀx + (λ/2)‖W‖², evaluated as the
// type's doc says. It does not allocate: the scores are computed twice
// (for the maximum, then for the sum), with the same bits each time.
func (m *Multinomial) Value(w []float64, z Sample) float64 {
	d, K := m.d, m.k
	if len(w) != K*d || !z.FitsDim(d) {
		panic("stream: Multinomial.Value: dimension mismatch")
	}
	score := func(k int) float64 {
		wk := w[k*d : (k+1)*d]
		if z.Idx != nil {
			return sparseDot4(z.Idx, z.V, wk)
		}
		return Dot4(z.V, wk)
	}
	mx := math.Inf(-1)
	for k := range K {
		mx = math.Max(mx, score(k))
	}
	var sum float64
	for k := range K {
		sum += math.Exp(score(k) - mx)
	}
	var ww float64
	for _, wj := range w {
		ww += float64(wj * wj)
	}
	return ((mx - score(int(z.S))) + math.Log(sum)) + m.lambda/2*ww
}

// CheckSample checks x (len(x) = d, or a valid sparse vector of dimension
// d) finite and y a class index: an integer in [0, K).
func (m *Multinomial) CheckSample(z Sample) (string, error) {
	if field, err := checkPayload(z, m.d, "x"); err != nil {
		return field, err
	}
	y := z.S
	switch {
	case math.IsNaN(y) || math.IsInf(y, 0):
		return "y", fmt.Errorf("y = %v: %w", y, ErrNonFinite)
	case y != math.Trunc(y) || y < 0 || y >= float64(m.k):
		return "y", fmt.Errorf("y = %v is not a class index in {0, …, %d}: %w", y, m.k-1, ErrInvalidValue)
	}
	return "", nil
}

// Softmax stores softmax(u)_k = exp(u_k − m)/Σ_i exp(u_i − m), m = max u, in
// dst (which may be u): the class probabilities of multinomial scores,
// computed without overflow as the loss computes them. It panics if the
// lengths differ or u is empty.
func Softmax(dst, u []float64) {
	if len(dst) != len(u) || len(u) == 0 {
		panic("stream: Softmax: dimension mismatch")
	}
	mx := u[0]
	for _, v := range u[1:] {
		mx = math.Max(mx, v)
	}
	var sum float64
	for k, v := range u {
		e := math.Exp(v - mx)
		dst[k] = e
		sum += e
	}
	for k := range dst {
		dst[k] /= sum
	}
}
