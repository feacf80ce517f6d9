package stream

// Linear is implemented by the losses of linear models — logistic,
// regression and multinomial — whose data term depends on the parameters
// only through K scores, one per output:
//
//	ℓ_z(w) = φ(u; y) + (λ/2)‖w‖²,   u_k = w_kᵀx  (k = 0 … K−1),
//
// with w_k the k-th block of d parameters of w (w = (w_0, …, w_{K−1}),
// K·d parameters in all; K = 1 for the binary and regression kinds). The
// gradient is then ∇_{w_k} ℓ = (∂φ/∂u_k)·x + λw_k, which is what lets a
// learner add an intercept or standardize the features without the loss
// knowing (olbfgs.Config.Intercept, olbfgs.Config.Standardize): it forms
// the scores itself, asks [Linear.Link] for ∂φ/∂u, and builds the
// gradient.
//
// Every method is safe for concurrent use and allocation-free.
type Linear interface {
	Loss
	// Outputs returns K, the number of scores (1 for logistic and
	// regression, the number of classes for multinomial).
	Outputs() int
	// Lambda returns the ridge λ.
	Lambda() float64
	// Link stores ∂φ/∂u_k at the scores u for the label y in dst[k] and
	// returns φ(u; y), the data term without the ridge. len(dst) and len(u)
	// must be Outputs(); dst may be u. It panics on a length mismatch.
	Link(dst, u []float64, y float64) float64
	// Predict returns the label the scores u predict (−1 or +1 for
	// logistic: +1 when u ≥ 0; the class index of the largest score for
	// multinomial, the smallest index on a tie) and true, or 0 and false
	// for a loss without classes (regression).
	Predict(u []float64) (y float64, ok bool)
	// Class returns the class index of a label (0 for −1 and 1 for +1
	// for logistic, the label itself for multinomial) and the number of
	// classes, or 0, 0 for a loss without classes.
	Class(y float64) (k, classes int)
}

// Outputs returns the number of scores of a loss per sample: its
// [Linear.Outputs], or 1 for a loss that is not Linear (quadratic).
func Outputs(l Loss) int {
	if lin, ok := l.(Linear); ok {
		return lin.Outputs()
	}
	return 1
}

// ParamDim returns the parameter dimension of a loss: the length of the w
// its Grad and Value take, Outputs(l)·l.Dim() (K·d for multinomial, d for
// the other kinds). l.Dim() is the feature dimension: the length of a
// dense payload and the header's d.
func ParamDim(l Loss) int { return Outputs(l) * l.Dim() }

// Dot4 returns Σ_j a[j]·b[j] over the len(a) terms, summed in four
// interleaved partial sums s_r = Σ_{j ≡ r mod 4} (in increasing j, each
// product rounded before it is added: no fused multiply-add), combined as
// (s_0 + s_1) + (s_2 + s_3). It is the one inner product of the
// multinomial loss and of the learner's scores (olbfgs), so that they
// agree bit for bit on every architecture. It panics if len(b) < len(a).
func Dot4(a, b []float64) float64 {
	b = b[:len(a)]
	var s0, s1, s2, s3 float64
	j := 0
	for ; j+4 <= len(a); j += 4 {
		s0 += float64(a[j] * b[j])
		s1 += float64(a[j+1] * b[j+1])
		s2 += float64(a[j+2] * b[j+2])
		s3 += float64(a[j+3] * b[j+3])
	}
	if j < len(a) {
		s0 += float64(a[j] * b[j])
	}
	if j+1 < len(a) {
		s1 += float64(a[j+1] * b[j+1])
	}
	if j+2 < len(a) {
		s2 += float64(a[j+2] * b[j+2])
	}
	return (s0 + s1) + (s2 + s3)
}

// SparseDot4 is [Dot4] of the sparse vector (idx, v) — v[i] at index
// idx[i], zero elsewhere — and the dense w: each nonzero product goes into
// the partial sum s_{j mod 4} of its index j, in increasing j, as Dot4
// adds it, so the result is Dot4 of the dense vector up to the sign of a
// zero sum. It panics if an index is outside w.
func SparseDot4(idx []int32, v, w []float64) float64 { return sparseDot4(idx, v, w) }
