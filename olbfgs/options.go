package olbfgs

import (
	"fmt"
	"math"
	"slices"

	"unlearn/internal/floatbits"
	"unlearn/stream"
)

// optState is the state the practitioner's options add to θ = (w, Z)
// (spec §2.1), with the scratch the insert uses for them. A vector is nil
// when its option is off.
type optState struct {
	// inserts is the number of inserts applied: t of the schedule η_t.
	// Counted only with options (Config.HasOptions).
	inserts int

	// Standardize: Welford's statistics of the n inserts' features,
	// mean m and M2 = Σ (x − m_old)(x − m_new); next* hold the statistics
	// with the current insert (committed by swapping); xt the features the
	// insert's gradients see. xt also holds a sparse payload made dense on
	// the affine path without standardization.
	n                int
	mean, m2         []float64
	nextMean, nextM2 []float64
	xt               []float64

	// Average: the average of the last avgN iterates (avgN = 0: none yet).
	avgN int
	avg  []float64

	// Progress: the statistics, and the insert's contribution pending
	// until its step succeeds.
	prog    Progress
	pending pendingProgress

	// Scores scratch: u (scores), c (∂φ/∂u), ub (scores of the average).
	u, c, ub []float64

	// scoreInv caches 1/s_j of the committed statistics for Scores, valid
	// while scoreN == n and scoreOK.
	scoreInv []float64
	scoreN   int
	scoreOK  bool
}

// pendingProgress is one insert's contribution to Progress.
type pendingProgress struct {
	ok                    bool
	loss, zeroLoss        float64
	correct               bool
	predicted, labelClass int
}

// ValidateFor is Validate, and checks that the configuration fits the loss:
// its dimension d, its number of outputs (Outputs), and a linear model's
// loss (stream.Linear) for Intercept, Standardize and Progress. It is what
// New checks before it allocates. Errors wrap ErrConfig (a *ConfigError
// for a field of c).
func (c Config) ValidateFor(loss stream.Loss) error {
	if err := c.Validate(); err != nil {
		return err
	}
	if loss == nil {
		return fmt.Errorf("%w: nil loss", ErrConfig)
	}
	if loss.Dim() != c.Dim {
		return fmt.Errorf("%w: Dim = %d but the loss has dimension %d", ErrConfig, c.Dim, loss.Dim())
	}
	return checkOptions(c, loss)
}

// checkOptions checks that the loss supports the options of cfg and that
// cfg.Outputs is the loss's number of outputs.
func checkOptions(cfg Config, loss stream.Loss) error {
	lin, _ := loss.(stream.Linear)
	k := stream.Outputs(loss)
	want := 0
	if k > 1 {
		want = k
	}
	if cfg.Outputs != want {
		return &ConfigError{Field: "Outputs", Symbol: "K", Value: cfg.Outputs,
			Want: fmt.Sprintf("must be %d for a %s loss with %d outputs (Config.ForLoss sets it)", want, loss.Kind(), k)}
	}
	if lin == nil {
		for _, o := range []struct {
			on    bool
			field string
		}{{cfg.Intercept, "Intercept"}, {cfg.Standardize, "Standardize"}, {cfg.Progress, "Progress"}} {
			if o.on {
				return &ConfigError{Field: o.field, Symbol: o.field, Value: true,
					Want: fmt.Sprintf("needs a linear model's loss (logistic, regression or multinomial), not %s", loss.Kind())}
			}
		}
	}
	return nil
}

// newOptState allocates the options' state for cfg.
func newOptState(cfg Config, lin stream.Linear) optState {
	var o optState
	if !cfg.HasOptions() {
		return o
	}
	d, p, k := cfg.Dim, cfg.ParamDim(), cfg.outputs()
	if cfg.Affine() {
		o.xt = make([]float64, d)
	}
	if cfg.Standardize {
		buf := make([]float64, 5*d)
		o.mean, o.m2 = buf[0:d:d], buf[d:2*d:2*d]
		o.nextMean, o.nextM2 = buf[2*d:3*d:3*d], buf[3*d:4*d:4*d]
		o.scoreInv = buf[4*d : 5*d : 5*d]
	}
	if cfg.Average {
		o.avg = make([]float64, p)
	}
	o.u, o.c, o.ub = make([]float64, k), make([]float64, k), make([]float64, k)
	if cfg.Progress && lin != nil {
		if _, classes := lin.Class(0); classes > 0 {
			o.prog.RecentPredicted = make([]float64, classes)
			o.prog.RecentLabels = make([]float64, classes)
		}
	}
	return o
}

// reset returns the options' state to its start.
func (o *optState) reset() {
	o.inserts, o.n, o.avgN = 0, 0, 0
	clear(o.mean)
	clear(o.m2)
	clear(o.avg)
	o.prog.reset()
	o.scoreOK = false
}

// copyFrom copies src's state (not its scratch).
func (o *optState) copyFrom(src *optState) {
	o.inserts, o.n, o.avgN = src.inserts, src.n, src.avgN
	copy(o.mean, src.mean)
	copy(o.m2, src.m2)
	copy(o.avg, src.avg)
	o.prog.copyFrom(&src.prog)
	o.scoreOK = false
}

// equal reports whether o and p hold bit-identical states.
func (o *optState) equal(p *optState) bool {
	return o.inserts == p.inserts && o.n == p.n && o.avgN == p.avgN &&
		floatbits.Equal(o.mean, p.mean) && floatbits.Equal(o.m2, p.m2) && floatbits.Equal(o.avg, p.avg) &&
		o.prog.equal(&p.prog)
}

// invStd returns 1/s for the standard deviation s = √(M2·(1/n)) of a
// feature, given rn = fl(1/n), or 0 when s is 0 (a feature that has not
// varied carries no information, and x̃ = 0 for it).
func invStd(m2, rn float64) float64 {
	s := math.Sqrt(float64(m2 * rn))
	if !(s > 0) {
		return 0
	}
	return 1 / s
}

// prepare returns the features the insert of z sees on the affine path:
// with Standardize, x̃_j = (x_j − m_j)·(1/s_j) from the statistics updated
// with z by Welford's method (Welford 1962, "Note on a method for
// calculating corrected sums of squares and products", Technometrics 4(3);
// Knuth, TAOCP vol. 2, 3rd ed., §4.2.2, eqs. 15–16):
//
//	n ← n + 1;  δ = x − m;  m ← m + δ·fl(1/n);  M2 ← M2 + δ·(x − m),
//
// each product rounded before it is added, s_j = √(M2_j·fl(1/n)); the new
// statistics go to the scratch (nextMean, nextM2), committed when the step
// succeeds. Without Standardize, z's dense vector (a sparse payload made
// dense in the scratch, so that both give the same bits). Every entry of x
// is visited, so the cost is O(d) whatever the sparsity.
func (l *Learner) prepare(z stream.Sample) []float64 {
	o := &l.opt
	if !l.cfg.Standardize {
		if z.Idx == nil {
			return z.V
		}
		clear(o.xt)
		for k, j := range z.Idx {
			o.xt[j] = z.V[k]
		}
		return o.xt
	}
	rn := 1 / float64(o.n+1)
	mean, m2, nm, nq, xt := o.mean, o.m2, o.nextMean, o.nextM2, o.xt
	if z.Idx == nil {
		x := z.V[:len(mean)]
		for j, xj := range x {
			xt[j] = welford(xj, mean[j], m2[j], rn, &nm[j], &nq[j])
		}
		return xt
	}
	k := 0
	for j := range mean {
		var xj float64
		if k < len(z.Idx) && int(z.Idx[k]) == j {
			xj = z.V[k]
			k++
		}
		xt[j] = welford(xj, mean[j], m2[j], rn, &nm[j], &nq[j])
	}
	return xt
}

// welford updates one feature's statistics (m, q = M2) with x, storing
// them in nm and nq, and returns x̃ = (x − m')·(1/s').
func welford(x, m, q, rn float64, nm, nq *float64) float64 {
	delta := x - m
	m += float64(delta * rn)
	q += float64(delta * (x - m))
	*nm, *nq = m, q
	return float64((x - m) * invStd(q, rn))
}

// affineGrad stores in dst the gradient at parameters w of the linear
// model with features x (dense, len d) and label y, and leaves the scores
// in opt.u and ∂φ/∂u in opt.c:
//
//	u_k = Dot4(x, w_k) + b_k,   c = ∂φ/∂u (stream.Linear.Link),
//	∂ℓ/∂w_kj = c_k·x_j + λ·w_kj,   ∂ℓ/∂b_k = c_k  (+ λ·b_k with RidgeIntercept),
//
// each product rounded before it is added.
func (l *Learner) affineGrad(dst, w, x []float64, y float64) {
	o := &l.opt
	l.affineScores(o.u, w, x)
	l.lin.Link(o.c, o.u, y)
	l.affineGradFrom(dst, w, x, o.c)
}

// averaging reports whether the average is the deployed iterate.
func (l *Learner) averaging() bool { return l.cfg.Average && l.opt.avgN > 0 }

// Deployed returns the parameters predictions, evaluation and releases use:
// the average of the iterates (Config.Average) once averaging has begun,
// else the last iterate w. The slice aliases the learner's state: do not
// modify it.
func (l *Learner) Deployed() []float64 {
	if l.averaging() {
		return l.opt.avg
	}
	return l.w
}

// Averaged returns the number of iterates in the average (0 before
// averaging begins, or without Config.Average).
func (l *Learner) Averaged() int { return l.opt.avgN }

// Inserts returns the number of inserts applied since θ0 when the learner
// has options (Config.HasOptions; the schedule's t), else 0.
func (l *Learner) Inserts() int { return l.opt.inserts }

// Standardization returns the number of inserts counted in the
// standardization statistics, and the features' means and standard
// deviations (new slices), or 0, nil, nil without Config.Standardize.
func (l *Learner) Standardization() (n int, mean, std []float64) {
	if !l.cfg.Standardize {
		return 0, nil, nil
	}
	std = make([]float64, len(l.opt.m2))
	if n := l.opt.n; n > 0 {
		rn := 1 / float64(n)
		for j, q := range l.opt.m2 {
			std[j] = math.Sqrt(float64(q * rn))
		}
	}
	return l.opt.n, slices.Clone(l.opt.mean), std
}

// clampLoss maps a progressive loss into [0, MaxFloat64] (NaN, from
// overflowing scores, to MaxFloat64), so that the statistics stay finite
// and a diverged learner can still be saved.
func clampLoss(v float64) float64 {
	if !(v <= math.MaxFloat64) {
		return math.MaxFloat64
	}
	return max(v, 0)
}

// affineScores stores the scores Dot4(x, w_k) + b_k in dst.
func (l *Learner) affineScores(dst, w, x []float64) {
	d, r := l.cfg.Dim, l.cfg.stride()
	for k := range dst {
		dst[k] = stream.Dot4(x, w[k*r:k*r+d])
		if l.cfg.Intercept {
			dst[k] += w[k*r+d]
		}
	}
}

// rawScores stores the scores w_kᵀx of the raw payload z (no intercept,
// no standardization; blocks of d) in dst.
func rawScores(dst, w []float64, z stream.Sample, d int) {
	for k := range dst {
		wk := w[k*d : (k+1)*d]
		if z.Idx != nil {
			dst[k] = stream.SparseDot4(z.Idx, z.V, wk)
		} else {
			dst[k] = stream.Dot4(z.V, wk)
		}
	}
}

// OptionState is the part of a learner's state that its options add to
// (w, Z), the deleted ids and the counters: what [Learner.OptionState]
// returns and [Learner.SetOptionState] restores (snapshots and releases).
// A field of an option that is off is zero.
type OptionState struct {
	// Inserts is the number of inserts applied (the schedule's t).
	Inserts int
	// StandardizeN, Mean and M2 are Welford's count, means and sums of
	// squared deviations (Config.Standardize; d values each).
	StandardizeN int
	Mean, M2     []float64
	// AverageN and Average are the number of iterates averaged and their
	// average (Config.Average; p values).
	AverageN int
	Average  []float64
	// Progress is the progressive statistics (Config.Progress).
	Progress Progress
}

// OptionState returns a copy of the options' state.
func (l *Learner) OptionState() OptionState {
	o := &l.opt
	st := OptionState{Inserts: o.inserts, StandardizeN: o.n, Mean: slices.Clone(o.mean), M2: slices.Clone(o.m2),
		AverageN: o.avgN, Average: slices.Clone(o.avg)}
	st.Progress, _ = l.Progress()
	return st
}

// SetOptionState replaces the options' state by a copy of st, after
// checking it against the configuration: counts non-negative and at most
// Inserts (the average's at most Inserts − AverageStart), vectors of the
// right lengths and finite, M2 ≥ 0 (and the statistics zero while n = 0),
// progressive shares in [0, 1] and losses finite and ≥ 0; the fields of
// options that are off must be zero. Errors name the field (wrapping
// ErrConfig); the state is unchanged after an error. Kept checkpoints are
// discarded, as for SetW.
func (l *Learner) SetOptionState(st OptionState) error {
	if err := l.checkOptionState(&st); err != nil {
		return err
	}
	o := &l.opt
	o.inserts, o.n, o.avgN = st.Inserts, st.StandardizeN, st.AverageN
	copy(o.mean, st.Mean)
	copy(o.m2, st.M2)
	copy(o.avg, st.Average)
	if l.cfg.Progress {
		o.prog.copyFrom(&st.Progress)
	}
	o.scoreOK = false
	l.dirOK, l.last.ok, l.ckpt = false, false, nil
	return nil
}

// checkOptionState checks st against the configuration (see
// SetOptionState).
func (l *Learner) checkOptionState(st *OptionState) error {
	c := l.cfg
	fail := func(field, format string, args ...any) error {
		return fmt.Errorf("%w: option state: %s: %s", ErrConfig, field, fmt.Sprintf(format, args...))
	}
	if !c.HasOptions() && st.Inserts != 0 {
		return fail("inserts", "%d for a learner without options", st.Inserts)
	}
	if st.Inserts < 0 {
		return fail("inserts", "%d: want ≥ 0", st.Inserts)
	}
	if c.Standardize {
		d := c.Dim
		switch {
		case st.StandardizeN < 0 || st.StandardizeN > st.Inserts:
			return fail("standardization.n", "%d: want 0 ≤ n ≤ inserts = %d", st.StandardizeN, st.Inserts)
		case len(st.Mean) != d || !finite(st.Mean):
			return fail("standardization.mean", "want %d finite values, got %d", d, len(st.Mean))
		case len(st.M2) != d || !finite(st.M2):
			return fail("standardization.m2", "want %d finite values, got %d", d, len(st.M2))
		}
		for j, q := range st.M2 {
			if q < 0 || (st.StandardizeN == 0 && (q != 0 || st.Mean[j] != 0)) {
				return fail("standardization.m2", "entry %d = %v: want M2 ≥ 0, and 0 (with a mean of 0) when n = 0", j, q)
			}
		}
	} else if st.StandardizeN != 0 || st.Mean != nil || st.M2 != nil {
		return fail("standardization", "set for a learner without Standardize")
	}
	if c.Average {
		p, most := c.ParamDim(), max(st.Inserts-c.AverageStart, 0)
		switch {
		case st.AverageN < 0 || st.AverageN > most:
			return fail("average.n", "%d: want 0 ≤ n ≤ inserts − average_start = %d", st.AverageN, most)
		case len(st.Average) != p || !finite(st.Average):
			return fail("average.w", "want %d finite values, got %d", p, len(st.Average))
		}
	} else if st.AverageN != 0 || st.Average != nil {
		return fail("average", "set for a learner without Average")
	}
	if c.Progress {
		return checkProgress(&st.Progress, st.Inserts, len(l.opt.prog.RecentPredicted), fail)
	}
	if st.Progress.N != 0 || st.Progress.RecentPredicted != nil {
		return fail("progress", "set for a learner without Progress")
	}
	return nil
}

// checkProgress checks progressive statistics of a learner with the given
// number of classes.
func checkProgress(p *Progress, inserts, classes int, fail func(field, format string, args ...any) error) error {
	share := func(v float64) bool { return v >= 0 && v <= 1 }
	finiteLoss := func(v float64) bool { return v >= 0 && !math.IsInf(v, 0) }
	switch {
	case p.N < 0 || p.N > inserts:
		return fail("progress.n", "%d: want 0 ≤ n ≤ inserts = %d", p.N, inserts)
	case p.Correct < 0 || p.Correct > p.N || (classes == 0 && p.Correct != 0):
		return fail("progress.correct", "%d: want 0 ≤ correct ≤ n = %d (0 without classes)", p.Correct, p.N)
	case !finiteLoss(p.LossSum):
		return fail("progress.loss_sum", "%v: want a finite sum ≥ 0", p.LossSum)
	case !finiteLoss(p.RecentLoss):
		return fail("progress.recent_loss", "%v: want a finite loss ≥ 0", p.RecentLoss)
	case !finiteLoss(p.RecentZeroLoss):
		return fail("progress.recent_zero_loss", "%v: want a finite loss ≥ 0", p.RecentZeroLoss)
	case !share(p.RecentAccuracy) || (classes == 0 && p.RecentAccuracy != 0):
		return fail("progress.recent_accuracy", "%v: want a share in [0, 1] (0 without classes)", p.RecentAccuracy)
	case len(p.RecentPredicted) != classes:
		return fail("progress.recent_predicted", "%d values, want one per class (%d)", len(p.RecentPredicted), classes)
	case len(p.RecentLabels) != classes:
		return fail("progress.recent_labels", "%d values, want one per class (%d)", len(p.RecentLabels), classes)
	}
	for k := range p.RecentPredicted {
		if !share(p.RecentPredicted[k]) || !share(p.RecentLabels[k]) {
			return fail("progress.recent_predicted", "class %d: shares %v and %v: want values in [0, 1]", k, p.RecentPredicted[k], p.RecentLabels[k])
		}
	}
	return nil
}

// The certifiable profile (docs/theory.md §16.10): the practitioner's
// learner restricted to what the scheduled bound of package bound proves,
// so that a noised release after an approximate forget derives an α of
// order G/(λT) that shrinks with the stream.
const (
	// CertifiableAveragePower is the profile's κ of polynomial-decay
	// averaging: κ ≥ 1 keeps the last iterate's order of sensitivity
	// (docs/theory.md §16.5).
	CertifiableAveragePower = 2
	// CertifiableLambda is the ridge λ the profile recommends (the CLI's
	// --lambda default under --profile certifiable), for features in [0, 1]
	// and the default sample bound CertifiableSampleBound (Fashion-MNIST's
	// pixels divided by 255, d = 784: the releases at ε = 1 score as the
	// model; docs/results-real.md).
	CertifiableLambda = 1
	// CertifiableBoundFraction is the profile's default sample bound as a
	// fraction of √d: B = √d/2, the norm of a row whose features in
	// [0, 1] have root mean square 1/2 (half the range's largest √d). It
	// is chosen a priori from the declared feature range, not from the
	// rows; a row above it is clipped onto it (Config.ClipToBound), which
	// the store and train apply under the profile. α and σ scale with
	// B̂ = √(B² + 1), and so does the noise's effect on a clipped row's
	// score xᵀn: halving B from the range's √d halves both
	// (docs/results-real.md measures the trade on Fashion-MNIST).
	CertifiableBoundFraction = 0.5
)

// CertifiableSampleBound is the certifiable profile's default sample
// bound for d features in [0, 1]: CertifiableBoundFraction·√d.
func CertifiableSampleBound(d int) float64 { return CertifiableBoundFraction * math.Sqrt(float64(d)) }

// CertifiableProfile returns c with the certifiable profile on, for a
// logistic loss of ridge λ > 0 and the sample bound c.SampleBound = B > 0
// (required: the norm of a payload as the loss sees it, refused above):
//
//   - no curvature memory (Memory = 0: H = γ₀I, γ₀ = InitialScale kept),
//     no damping, no standardization (statistics of the rows are not
//     public); features are scaled only by a fixed, declared map applied
//     before the sample bound (the data's own scale, e.g. pixels / 255);
//   - a regularized intercept (Intercept and RidgeIntercept): μ = λ,
//     L = λ + B̂²/4 with B̂ = √(B² + 1) the bound of the payload (x, 1);
//   - the schedule η(t) = η₀/(1 + η₀λt) (StepDecay = λ, StepPower = 1: the
//     bound's λ_η = γ₀μ) with η₀ = 1/(γ₀(L + μ)), so that η₀γ₀(L + μ) ≤ 2
//     (Theorem 16.5's conditions);
//   - the radius W = B̂/(2λ), which holds the ridge-logistic minimizer
//     (‖w*‖ ≤ ‖∇F(0)‖/λ ≤ B̂/(2λ)), kept if c.Radius is larger;
//   - polynomial-decay averaging from the first insert with
//     κ = CertifiableAveragePower.
//
// Progress is kept as set (it does not change the trajectory). The result
// is what [Config.CheckCertifiableProfile] accepts.
func (c Config) CertifiableProfile(lambda float64) Config {
	bh := math.Sqrt(c.SampleBound*c.SampleBound + 1)
	l := lambda + bh*bh/4
	c.Memory, c.Damping, c.Standardize = 0, 0, false
	c.PairAngle, c.PairMin, c.PairMax = 0, 0, 0
	c.Intercept, c.RidgeIntercept = true, true
	c.StepSize = 1 / (c.InitialScale * (l + lambda))
	c.StepDecay, c.StepPower = c.InitialScale*lambda, 1
	c.Radius = max(c.Radius, bh/(2*lambda))
	c.Average, c.AverageStart, c.AveragePower = true, 0, CertifiableAveragePower
	return c
}

// CheckCertifiableProfile reports, as a *ConfigError naming the field,
// the first option of c that the scheduled bound (docs/theory.md §16)
// does not cover: a curvature memory (Memory > 0), Standardize, an
// intercept without RidgeIntercept, a schedule exponent other than 1, no
// Radius or no SampleBound. Every other value is covered (the bound is
// sound for any schedule decay and averaging; §16.10 says which values
// make it small).
func (c Config) CheckCertifiableProfile() error {
	bad := func(field, symbol string, v any, want string) error {
		return &ConfigError{Field: field, Symbol: symbol, Value: v, Want: want}
	}
	switch {
	case c.Memory != 0:
		return bad("Memory", "tau", c.Memory, "must be 0 in the certifiable profile: a curvature memory leaves α at the diameter or a floor that does not decay (docs/theory.md §16.9)")
	case c.Standardize:
		return bad("Standardize", "standardize", true, "is refused in the certifiable profile: the statistics are functions of every row, the deleted ones included; scale the features by a fixed, declared map instead")
	case c.Intercept && !c.RidgeIntercept:
		return bad("RidgeIntercept", "intercept ridge", false, "must be on with an intercept in the certifiable profile: an unregularized intercept has no contraction (μ = 0)")
	case c.StepDecay > 0 && c.stepPower() != 1:
		return bad("StepPower", "c", c.StepPower, "must be 1 in the certifiable profile: the proved schedule is η₀/(1 + η₀·a·t)")
	case !(c.Radius > 0):
		return bad("Radius", "W", c.Radius, "must be positive in the certifiable profile")
	case !(c.SampleBound > 0):
		return bad("SampleBound", "B", c.SampleBound, "must be positive in the certifiable profile")
	}
	return nil
}
