package stream

import (
	"fmt"
	"math"
	"math/rand/v2"

	"gonum.org/v1/gonum/mat"
)

// GeneratorStream is the second (stream-selection) word of the PCG source of
// both generators: rand.NewPCG(seed, GeneratorStream). It is the ASCII of
// "olbfgs-1", chosen once and never to be changed, since it fixes every
// generated stream.
const GeneratorStream uint64 = 0x6f6c626667732d31

// Names of the generators, recorded as the header metadata field
// "generator".
const (
	GeneratorQuadratic = "drifting-quadratic"
	GeneratorLogistic  = "ridge-logistic"
)

// QuadraticOptions are the parameters of [GenerateQuadratic]. The zero value
// gives the paper's defaults (spec §8); fields whose zero is meaningful are
// pointers (nil means the default; new(0.0) sets zero) or, for drift, a
// negated bool. [DefaultQuadraticOptions] returns the defaults explicitly.
type QuadraticOptions struct {
	// D is the dimension d ≥ 2 (two orthonormal drift directions are
	// needed). If zero, defaults to 25 (paper, Table 1).
	D int
	// T is the number of events, all inserts, with ids 1..T. If zero,
	// defaults to 5000 (paper, Table 1, state-aware benchmark).
	T int
	// Seed seeds the generator; every value, zero included, is a seed.
	Seed uint64
	// Kappa is the condition number κ ≥ 1 of H0 and H1. If zero, defaults
	// to 10.
	Kappa float64
	// Mu is the smallest eigenvalue μ > 0 of H0 and H1. If zero, defaults
	// to 1.
	Mu float64
	// DeltaA is the minimizer drift amplitude δa ≥ 0. If nil, defaults to 1.
	DeltaA *float64
	// PeriodA is the minimizer drift period Pa > 0, in events. If zero,
	// defaults to 200.
	PeriodA float64
	// SigmaA is the standard deviation σa ≥ 0 of the minimizer noise ξ_t.
	// If nil, defaults to 0.1.
	SigmaA *float64
	// DeltaH is the curvature drift amplitude δH ∈ [0,1]; α_t ∈ [0, δH].
	// If nil, defaults to 0.5.
	DeltaH *float64
	// PeriodH is the curvature drift period PH > 0, in events. If zero,
	// defaults to 300.
	PeriodH float64
	// A0Norm is ‖a0‖ ≥ 0. If nil, defaults to 1.
	A0Norm *float64
	// NoDrift turns curvature drift off (α_t = 0 for every t). If false,
	// the default, drift is on as in the paper's experiments.
	NoDrift bool
}

// DefaultQuadraticOptions returns the paper's defaults with every field set
// (T = 5000, Seed = 0), for callers that bind options to flags or print them.
func DefaultQuadraticOptions() QuadraticOptions {
	return QuadraticOptions{
		D: 25, T: 5000, Kappa: 10, Mu: 1,
		DeltaA: new(1.0), PeriodA: 200, SigmaA: new(0.1),
		DeltaH: new(0.5), PeriodH: 300, A0Norm: new(1.0),
	}
}

// quadraticParams are resolved QuadraticOptions.
type quadraticParams struct {
	d, t                   int
	seed                   uint64
	kappa, mu              float64
	deltaA, periodA, sigma float64
	deltaH, periodH, a0    float64
	drift                  bool
}

func (o QuadraticOptions) resolve() (quadraticParams, error) {
	p := quadraticParams{
		d: o.D, t: o.T, seed: o.Seed, kappa: o.Kappa, mu: o.Mu,
		deltaA: deref(o.DeltaA, 1), periodA: o.PeriodA, sigma: deref(o.SigmaA, 0.1),
		deltaH: deref(o.DeltaH, 0.5), periodH: o.PeriodH, a0: deref(o.A0Norm, 1),
		drift: !o.NoDrift,
	}
	setDefault(&p.d, 25)
	setDefault(&p.t, 5000)
	setDefault(&p.kappa, 10)
	setDefault(&p.mu, 1)
	setDefault(&p.periodA, 200)
	setDefault(&p.periodH, 300)
	const opt = "QuadraticOptions"
	return p, firstError(
		checkInt(opt, "D", p.d, 2, MaxGeneratedDim),
		checkInt(opt, "T", p.t, 1, MaxGeneratedValues/(max(p.d, 1)+6)),
		checkRange(opt, "Kappa", p.kappa, 1, math.Inf(1)),
		checkPositive(opt, "Mu", p.mu),
		checkRange(opt, "DeltaA", p.deltaA, 0, math.Inf(1)),
		checkPositive(opt, "PeriodA", p.periodA),
		checkRange(opt, "SigmaA", p.sigma, 0, math.Inf(1)),
		checkRange(opt, "DeltaH", p.deltaH, 0, 1),
		checkPositive(opt, "PeriodH", p.periodH),
		checkRange(opt, "A0Norm", p.a0, 0, math.Inf(1)),
	)
}

// GenerateQuadratic returns the drifting quadratic stream of the paper
// (Appendix "Synthetic Data-Generating Processes"; spec §1.2, §8): T inserts
// with ids t = 1..T and payload (a_t, α_t), where
//
//	H0 = Q0 Λ Q0ᵀ,  H1 = Q1 Λ Q1ᵀ,   Λ = diag(λ_0..λ_{d−1}),  λ_i = μ·κ^{i/(d−1)},
//	a_t = a0 + δa·sin(2πt/Pa)·u1 + δa·cos(2πt/Pa)·u2 + σa·ξ_t,
//	α_t = (δH/2)·(1 + sin(2πt/PH))   (0 when NoDrift),
//
// Q0, Q1 Haar-random orthogonal matrices, ‖a0‖ = A0Norm, u1 ⊥ u2 unit
// vectors and ξ_t ~ N(0, I). H(α_t) = (1−α_t)H0 + α_tH1 then has its
// eigenvalues in [μ, κμ]. The header records every parameter, the seed and
// the generator name in Meta ("generator", "seed", "T", "kappa", "mu",
// "delta_a", "P_a", "sigma_a", "delta_H", "P_H", "a0_norm", "drift").
//
// Random draws, in order (see the package section on randomness):
//
//  1. G0, d×d normals; Q0 = haar(G0) (below). H0 = sym(Q0 Λ Q0ᵀ).
//  2. G1, d×d normals; Q1 = haar(G1). H1 = sym(Q1 Λ Q1ᵀ).
//  3. g, d normals; a0 = A0Norm · g/‖g‖.
//  4. g1, d normals; u1 = g1/‖g1‖.
//  5. g2, d normals; u2 = r/‖r‖ with r = g2 − (u1ᵀg2)·u1.
//  6. for t = 1..T: ξ_t, d normals.
//
// haar(G): G = QR by Householder QR (gonum mat.QR); the columns of Q are
// multiplied by the signs of R's diagonal (a zero counts as +1), which makes
// Q Haar-distributed (Mezzadri 2007, "How to generate random matrices from
// the classical compact groups", Notices AMS 54(5), p. 597). sym(M) has
// entries (M_ij + M_ji)/2, exactly symmetric; (QΛQᵀ)_ij = Σ_k Q_ik·λ_k·Q_jk.
// ‖g‖ = sqrt(Σ g_i²). The event's a_t is evaluated as
// ((a0_i + s·u1_i) + c·u2_i) + σa·ξ_t,i with s = δa·sin(2πt/Pa),
// c = δa·cos(2πt/Pa).
//
// Invalid options are errors wrapping ErrInvalidValue or ErrNonFinite.
func GenerateQuadratic(o QuadraticOptions) (*History, error) {
	p, err := o.resolve()
	if err != nil {
		return nil, err
	}
	r := rand.New(rand.NewPCG(p.seed, GeneratorStream))
	m := newQuadraticModel(r, p)
	d := p.d
	back := make([]float64, p.t*d)
	xi := make([]float64, d)
	events := make([]Event, p.t)
	for t := 1; t <= p.t; t++ {
		normals(r, xi)
		a := back[(t-1)*d : t*d : t*d]
		m.minimizer(a, t, xi)
		events[t-1] = InsertEvent(int64(t), a, m.alpha(t))
	}
	h := Header{Format: FormatV1, Kind: KindQuadratic, D: d, H0: m.h0, H1: m.h1}
	if err := setMeta(&h, []metaField{
		{"generator", GeneratorQuadratic}, {"seed", p.seed}, {"T", p.t},
		{"kappa", p.kappa}, {"mu", p.mu}, {"delta_a", p.deltaA}, {"P_a", p.periodA},
		{"sigma_a", p.sigma}, {"delta_H", p.deltaH}, {"P_H", p.periodH},
		{"a0_norm", p.a0}, {"drift", p.drift},
	}); err != nil {
		return nil, err
	}
	return NewHistory(h, events)
}

// quadraticModel holds the fixed parts of a drifting quadratic stream.
type quadraticModel struct {
	p          quadraticParams
	eig        []float64 // λ_i, ascending
	h0, h1     [][]float64
	a0, u1, u2 []float64
}

func newQuadraticModel(r *rand.Rand, p quadraticParams) *quadraticModel {
	d := p.d
	m := &quadraticModel{p: p, eig: logSpaced(p.mu, p.kappa, d)}
	m.h0 = fromSpectrum(haar(r, d), m.eig)
	m.h1 = fromSpectrum(haar(r, d), m.eig)
	m.a0 = unitNormal(r, d)
	for i := range m.a0 {
		m.a0[i] *= p.a0
	}
	m.u1, m.u2 = orthonormalPair(r, d)
	return m
}

// alpha returns the curvature weight α_t (see [driftAlpha]).
func (m *quadraticModel) alpha(t int) float64 {
	return driftAlpha(t, m.p.drift, m.p.deltaH, m.p.periodH)
}

// minimizer stores a_t for the noise draw xi in dst.
func (m *quadraticModel) minimizer(dst []float64, t int, xi []float64) {
	phase := 2 * math.Pi * float64(t) / m.p.periodA
	s, c := m.p.deltaA*math.Sin(phase), m.p.deltaA*math.Cos(phase)
	for i := range dst {
		dst[i] = m.a0[i] + s*m.u1[i] + c*m.u2[i] + m.p.sigma*xi[i]
	}
}

// LogisticOptions are the parameters of [GenerateLogistic]. The zero value
// gives the paper's defaults (spec §8); fields whose zero is meaningful are
// pointers (nil means the default) or, for drift, a negated bool.
// [DefaultLogisticOptions] returns the defaults explicitly.
type LogisticOptions struct {
	// D is the dimension d ≥ 1. If zero, defaults to 25 (paper, Table 1).
	D int
	// T is the number of events, all inserts, with ids 1..T. If zero,
	// defaults to 5000 (paper, Table 1, state-aware benchmark).
	T int
	// Seed seeds the generator; every value, zero included, is a seed.
	Seed uint64
	// Kappa is the condition number κ ≥ 1 of Σ0 and Σ1 (at d = 1 it is
	// validated and recorded but has no effect: Σ0 = Σ1 = s). If zero,
	// defaults to 10.
	Kappa float64
	// FeatureScale s > 0 is the largest eigenvalue of Σ0 and Σ1: their
	// eigenvalues are log-spaced in [s/κ, s]. If zero, defaults to 1, the
	// paper's unit largest eigenvalue. At s = κ (eigenvalues in [1, κ]) the
	// default learner (η = 0.1, spec §2) is unstable on this stream and its
	// runs are chaotic (spec §1.2): the features' scale, not the learner,
	// then dominates any comparison of trajectories. That regime is worth
	// studying, not a default.
	FeatureScale float64
	// Lambda is the ridge λ ≥ 0 written to the header. If nil, defaults to
	// 0.05 (paper, Table 1).
	Lambda *float64
	// DeltaBeta is the drift amplitude δβ ≥ 0 of the true coefficients β_t.
	// If nil, defaults to 1.
	DeltaBeta *float64
	// PeriodBeta is the coefficient drift period Pβ > 0, in events. If zero,
	// defaults to 300.
	PeriodBeta float64
	// Beta0Norm is ‖β0‖ ≥ 0. If nil, defaults to 1.
	Beta0Norm *float64
	// DeltaH is the covariance drift amplitude δH ∈ [0,1]; α_t ∈ [0, δH] as
	// for the quadratic stream. If nil, defaults to 0.5.
	DeltaH *float64
	// PeriodH is the covariance drift period PH > 0, in events. If zero,
	// defaults to 300.
	PeriodH float64
	// NoDrift turns covariance drift off (α_t = 0, Σ_t = Σ0). If false, the
	// default, drift is on.
	NoDrift bool
}

// DefaultLogisticOptions returns the paper's defaults with every field set
// (T = 5000, Seed = 0).
func DefaultLogisticOptions() LogisticOptions {
	return LogisticOptions{
		D: 25, T: 5000, Kappa: 10, FeatureScale: 1, Lambda: new(0.05),
		DeltaBeta: new(1.0), PeriodBeta: 300, Beta0Norm: new(1.0),
		DeltaH: new(0.5), PeriodH: 300,
	}
}

// logisticParams are resolved LogisticOptions.
type logisticParams struct {
	d, t                 int
	seed                 uint64
	kappa, scale, lambda float64
	deltaB, periodB, b0  float64
	deltaH, periodH      float64
	drift                bool
}

func (o LogisticOptions) resolve() (logisticParams, error) {
	p := logisticParams{
		d: o.D, t: o.T, seed: o.Seed, kappa: o.Kappa, scale: o.FeatureScale,
		lambda: deref(o.Lambda, 0.05), deltaB: deref(o.DeltaBeta, 1), periodB: o.PeriodBeta,
		b0: deref(o.Beta0Norm, 1), deltaH: deref(o.DeltaH, 0.5), periodH: o.PeriodH,
		drift: !o.NoDrift,
	}
	setDefault(&p.d, 25)
	setDefault(&p.t, 5000)
	setDefault(&p.kappa, 10)
	setDefault(&p.scale, 1)
	setDefault(&p.periodB, 300)
	setDefault(&p.periodH, 300)
	const opt = "LogisticOptions"
	return p, firstError(
		checkInt(opt, "D", p.d, 1, MaxGeneratedDim),
		checkInt(opt, "T", p.t, 1, MaxGeneratedValues/(max(p.d, 1)+6)),
		checkRange(opt, "Kappa", p.kappa, 1, math.Inf(1)),
		checkPositive(opt, "FeatureScale", p.scale),
		checkRange(opt, "Lambda", p.lambda, 0, math.Inf(1)),
		checkRange(opt, "DeltaBeta", p.deltaB, 0, math.Inf(1)),
		checkPositive(opt, "PeriodBeta", p.periodB),
		checkRange(opt, "Beta0Norm", p.b0, 0, math.Inf(1)),
		checkRange(opt, "DeltaH", p.deltaH, 0, 1),
		checkPositive(opt, "PeriodH", p.periodH),
	)
}

// GenerateLogistic returns the ridge logistic stream of the paper (Appendix
// "Synthetic Data-Generating Processes"; spec §1.2, §8): T inserts with ids
// t = 1..T and payload (x_t, y_t), where
//
//	Σ0 = Q0 Λ Q0ᵀ,  Σ1 = Q1 Λ Q1ᵀ,  λ_i = (s/κ)·κ^{i/(d−1)}  (eigenvalues in [s/κ, s]; s at d = 1),
//	α_t = (δH/2)·(1 + sin(2πt/PH))   (0 when NoDrift),
//	x_t = sqrt(1−α_t)·L0 z_t + sqrt(α_t)·L1 z'_t  ~ N(0, Σ_t),  Σ_t = (1−α_t)Σ0 + α_tΣ1,
//	β_t = β0 + δβ·sin(2πt/Pβ)·v,
//	y_t = +1 if u_t < σ(x_tᵀβ_t), else −1    (so P(y_t = 1 | x_t) = σ(x_tᵀβ_t)),
//
// with L0, L1 the lower Cholesky factors of Σ0, Σ1 (gonum mat.Cholesky),
// z_t, z'_t ~ N(0, I) independent, u_t ~ U[0,1), ‖β0‖ = Beta0Norm, ‖v‖ = 1.
// The covariance of x_t is exactly Σ_t because z_t and z'_t are independent.
// The header has λ = Lambda and records every parameter, the seed and the
// generator name in Meta ("generator", "seed", "T", "kappa",
// "feature_scale", "delta_beta", "P_beta", "beta0_norm", "delta_H", "P_H",
// "drift").
//
// Random draws, in order (see the package section on randomness; haar, sym
// and ‖·‖ as in [GenerateQuadratic]):
//
//  1. G0, d×d normals; Q0 = haar(G0); Σ0 = sym(Q0 Λ Q0ᵀ).
//  2. G1, d×d normals; Q1 = haar(G1); Σ1 = sym(Q1 Λ Q1ᵀ).
//  3. g, d normals; β0 = Beta0Norm · g/‖g‖.
//  4. g, d normals; v = g/‖g‖.
//  5. for t = 1..T: z_t (d normals), z'_t (d normals), u_t (one Float64).
//
// (Lz)_i = Σ_{j≤i} L_ij z_j; x_t,i = c0·(L0 z_t)_i + c1·(L1 z'_t)_i with
// c0 = sqrt(1−α_t), c1 = sqrt(α_t); β_t,i = β0_i + (δβ·sin(2πt/Pβ))·v_i; the
// margin x_tᵀβ_t sums in increasing i; σ is [Sigmoid].
//
// Invalid options are errors wrapping ErrInvalidValue or ErrNonFinite.
func GenerateLogistic(o LogisticOptions) (*History, error) {
	p, err := o.resolve()
	if err != nil {
		return nil, err
	}
	r := rand.New(rand.NewPCG(p.seed, GeneratorStream))
	m, err := newLogisticModel(r, p)
	if err != nil {
		return nil, err
	}
	d := p.d
	back := make([]float64, p.t*d)
	z, z2, beta := make([]float64, d), make([]float64, d), make([]float64, d)
	events := make([]Event, p.t)
	for t := 1; t <= p.t; t++ {
		normals(r, z)
		normals(r, z2)
		u := r.Float64()
		x := back[(t-1)*d : t*d : t*d]
		m.features(x, z, z2, m.alpha(t))
		m.beta(beta, t)
		var margin float64
		for i, xi := range x {
			margin += xi * beta[i]
		}
		y := -1.0
		if u < Sigmoid(margin) {
			y = 1
		}
		events[t-1] = InsertEvent(int64(t), x, y)
	}
	h := Header{Format: FormatV1, Kind: KindLogistic, D: d, Lambda: p.lambda}
	if err := setMeta(&h, []metaField{
		{"generator", GeneratorLogistic}, {"seed", p.seed}, {"T", p.t},
		{"kappa", p.kappa}, {"feature_scale", p.scale}, {"delta_beta", p.deltaB},
		{"P_beta", p.periodB}, {"beta0_norm", p.b0}, {"delta_H", p.deltaH},
		{"P_H", p.periodH}, {"drift", p.drift},
	}); err != nil {
		return nil, err
	}
	return NewHistory(h, events)
}

// logisticModel holds the fixed parts of a ridge logistic stream.
type logisticModel struct {
	p              logisticParams
	eig            []float64
	sigma0, sigma1 [][]float64
	l0, l1         [][]float64 // lower Cholesky factors
	beta0, v       []float64
}

func newLogisticModel(r *rand.Rand, p logisticParams) (*logisticModel, error) {
	d := p.d
	m := &logisticModel{p: p, eig: logSpaced(p.scale/p.kappa, p.kappa, d)}
	if d == 1 {
		m.eig[0] = p.scale // the largest eigenvalue is s, whatever κ
	}
	m.sigma0 = fromSpectrum(haar(r, d), m.eig)
	m.sigma1 = fromSpectrum(haar(r, d), m.eig)
	var ok0, ok1 bool
	m.l0, ok0 = cholLower(m.sigma0)
	m.l1, ok1 = cholLower(m.sigma1)
	if !ok0 || !ok1 {
		return nil, fmt.Errorf("stream: LogisticOptions: Σ0 or Σ1 (κ = %v, scale %v) is numerically singular: %w",
			p.kappa, p.scale, ErrNotSPD)
	}
	m.beta0 = unitNormal(r, d)
	for i := range m.beta0 {
		m.beta0[i] *= p.b0
	}
	m.v = unitNormal(r, d)
	return m, nil
}

// alpha returns the covariance weight α_t (see [driftAlpha]).
func (m *logisticModel) alpha(t int) float64 {
	return driftAlpha(t, m.p.drift, m.p.deltaH, m.p.periodH)
}

// driftAlpha returns the drift weight α_t = (δH/2)(1 + sin(2πt/PH)) of
// both generators (the curvature of the quadratic stream, the covariance of
// the logistic one), or 0 without drift.
func driftAlpha(t int, drift bool, deltaH, periodH float64) float64 {
	if !drift {
		return 0
	}
	return deltaH / 2 * (1 + math.Sin(2*math.Pi*float64(t)/periodH))
}

// features stores sqrt(1−α)·L0 z + sqrt(α)·L1 z2 in dst.
func (m *logisticModel) features(dst, z, z2 []float64, alpha float64) {
	c0, c1 := math.Sqrt(1-alpha), math.Sqrt(alpha)
	for i := range dst {
		var s0, s1 float64
		for j := 0; j <= i; j++ {
			s0 += m.l0[i][j] * z[j]
		}
		for j := 0; j <= i; j++ {
			s1 += m.l1[i][j] * z2[j]
		}
		dst[i] = c0*s0 + c1*s1
	}
}

// beta stores β_t = β0 + δβ·sin(2πt/Pβ)·v in dst.
func (m *logisticModel) beta(dst []float64, t int) {
	s := m.p.deltaB * math.Sin(2*math.Pi*float64(t)/m.p.periodB)
	for i := range dst {
		dst[i] = m.beta0[i] + s*m.v[i]
	}
}

// metaField is a header metadata field a generator records.
type metaField struct {
	key string
	v   any
}

// setMeta records the fields in h's metadata, in order.
func setMeta(h *Header, fields []metaField) error {
	for _, f := range fields {
		if err := h.SetMeta(f.key, f.v); err != nil {
			return err
		}
	}
	return nil
}

// logSpaced returns λ_i = lo·κ^{i/(d−1)}, i = 0..d−1 (just lo when d = 1).
func logSpaced(lo, kappa float64, d int) []float64 {
	out := make([]float64, d)
	for i := range out {
		if d == 1 {
			out[i] = lo
			continue
		}
		out[i] = lo * math.Pow(kappa, float64(i)/float64(d-1))
	}
	return out
}

// haar returns a Haar-random d×d orthogonal matrix from d² standard normals
// drawn row by row (see GenerateQuadratic).
func haar(r *rand.Rand, d int) *mat.Dense {
	g := mat.NewDense(d, d, nil)
	for i := 0; i < d; i++ {
		for j := 0; j < d; j++ {
			g.Set(i, j, r.NormFloat64())
		}
	}
	var qr mat.QR
	qr.Factorize(g)
	var q, rr mat.Dense
	qr.QTo(&q)
	qr.RTo(&rr)
	for j := 0; j < d; j++ {
		if rr.At(j, j) < 0 {
			for i := 0; i < d; i++ {
				q.Set(i, j, -q.At(i, j))
			}
		}
	}
	return &q
}

// fromSpectrum returns sym(Q diag(eig) Qᵀ) as rows.
func fromSpectrum(q *mat.Dense, eig []float64) [][]float64 {
	d := len(eig)
	m := make([]float64, d*d)
	for i := 0; i < d; i++ {
		for j := 0; j < d; j++ {
			var s float64
			for k := 0; k < d; k++ {
				s += q.At(i, k) * eig[k] * q.At(j, k)
			}
			m[i*d+j] = s
		}
	}
	out := make([][]float64, d)
	for i := range out {
		out[i] = make([]float64, d)
		for j := range out[i] {
			out[i][j] = (m[i*d+j] + m[j*d+i]) / 2
		}
	}
	return out
}

// cholLower returns the lower Cholesky factor of the SPD matrix a, or false
// if the factorization fails (a numerically singular a, from a huge κ).
func cholLower(a [][]float64) ([][]float64, bool) {
	d := len(a)
	sym := mat.NewSymDense(d, nil)
	for i := 0; i < d; i++ {
		for j := i; j < d; j++ {
			sym.SetSym(i, j, a[i][j])
		}
	}
	var chol mat.Cholesky
	if !chol.Factorize(sym) {
		return nil, false
	}
	var l mat.TriDense
	chol.LTo(&l)
	out := make([][]float64, d)
	for i := range out {
		out[i] = make([]float64, i+1)
		for j := range out[i] {
			out[i][j] = l.At(i, j)
		}
	}
	return out, true
}

// normals fills dst with standard normals.
func normals(r *rand.Rand, dst []float64) {
	for i := range dst {
		dst[i] = r.NormFloat64()
	}
}

// unitNormal returns g/‖g‖ for d standard normals g.
func unitNormal(r *rand.Rand, d int) []float64 {
	g := make([]float64, d)
	normals(r, g)
	scaleToUnit(g)
	return g
}

// orthonormalPair returns u1 = g1/‖g1‖ and u2 = r/‖r‖ with
// r = g2 − (u1ᵀg2)u1, from 2d standard normals (g1 first).
func orthonormalPair(r *rand.Rand, d int) (u1, u2 []float64) {
	u1 = unitNormal(r, d)
	u2 = make([]float64, d)
	normals(r, u2)
	var dot float64
	for i := range u1 {
		dot += u1[i] * u2[i]
	}
	for i := range u2 {
		u2[i] -= dot * u1[i]
	}
	scaleToUnit(u2)
	return u1, u2
}

// scaleToUnit divides v by sqrt(Σ v_i²).
func scaleToUnit(v []float64) {
	var ss float64
	for _, x := range v {
		ss += x * x
	}
	n := math.Sqrt(ss)
	for i := range v {
		v[i] /= n
	}
}

func deref(p *float64, def float64) float64 {
	if p == nil {
		return def
	}
	return *p
}

func setDefault[T int | float64](p *T, def T) {
	if *p == 0 {
		*p = def
	}
}

func firstError(errs ...error) error {
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}

func checkInt(opt, field string, v, lo, hi int) error {
	if v < lo || v > hi {
		return fmt.Errorf("stream: %s.%s = %d must be in [%d, %d]: %w", opt, field, v, lo, hi, ErrInvalidValue)
	}
	return nil
}

// Size limits of the generators, which reject larger requests rather than
// fail in the allocator.
const (
	// MaxGeneratedDim is the largest D: the generators build dense d×d
	// matrices, factor them (O(d³)) and, for the quadratic stream, write
	// two of them in the header.
	MaxGeneratedDim = 2048
	// MaxGeneratedValues bounds T·(D+6), the 8-byte words the generated
	// events take (D floats and a 6-word event each; 2 GiB).
	MaxGeneratedValues = 1 << 28
)

func checkRange(opt, field string, v, lo, hi float64) error {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return fmt.Errorf("stream: %s.%s = %v: %w", opt, field, v, ErrNonFinite)
	}
	if v < lo || v > hi {
		return fmt.Errorf("stream: %s.%s = %v must be in [%v, %v]: %w", opt, field, v, lo, hi, ErrInvalidValue)
	}
	return nil
}

func checkPositive(opt, field string, v float64) error {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return fmt.Errorf("stream: %s.%s = %v: %w", opt, field, v, ErrNonFinite)
	}
	if v <= 0 {
		return fmt.Errorf("stream: %s.%s = %v must be positive: %w", opt, field, v, ErrInvalidValue)
	}
	return nil
}
