package olbfgs

import (
	"fmt"
	"slices"

	"unlearn/stream"
)

// Outputs returns the number of scores per sample: K for a multinomial
// loss, 1 for every other.
func (l *Learner) Outputs() int { return l.cfg.outputs() }

// Scores stores in dst the Outputs() raw scores of the raw sample z under
// the learner's deployed parameters ([Learner.Deployed]: the average when
// Config.Average has begun) with the state's preprocessing applied:
//
//	u_k = Σ_j w_kj·x̃_j + b_k,   x̃_j = (x_j − m_j)·(1/s_j)  (Config.Standardize; else x_j),
//
// b_k the intercept (Config.Intercept; else 0), the sum a [stream.Dot4]
// in increasing j. A logistic model predicts +1 when u_0 ≥ 0 (probability
// σ(u_0)); a multinomial one the class of the largest score (probabilities
// softmax(u)); a regression predicts u_0 ([stream.Linear.Predict] and
// Link say the same). z.S is not read.
//
// A sparse z gives the bits of its dense form (with standardization the
// sum runs over every feature, O(d); without it over z's nonzeros). Scores
// does not allocate; it keeps 1/s_j of the current statistics in a cache,
// so it is not safe for concurrent use (see [Learner.Scorer]). It panics
// if len(dst) ≠ Outputs() or z does not have dimension d.
func (l *Learner) Scores(dst []float64, z stream.Sample) {
	o := &l.opt
	var inv []float64
	if l.cfg.Standardize {
		if !o.scoreOK || o.scoreN != o.n {
			fillInv(o.scoreInv, o.m2, o.n)
			o.scoreN, o.scoreOK = o.n, true
		}
		inv = o.scoreInv
	}
	scoreWith(dst, l.Deployed(), o.mean, inv, l.cfg, z)
}

// fillInv stores 1/s_j of the statistics (M2, n) in inv (zeros for n = 0).
func fillInv(inv, m2 []float64, n int) {
	if n == 0 {
		clear(inv)
		return
	}
	rn := 1 / float64(n)
	for j, q := range m2 {
		inv[j] = invStd(q, rn)
	}
}

// scoreWith computes the scores of z for the parameters w and, with
// standardization (inv not nil), the means and inverse deviations.
func scoreWith(dst, w, mean, inv []float64, c Config, z stream.Sample) {
	d, r := c.Dim, c.stride()
	if len(dst) != c.outputs() || !z.FitsDim(d) {
		panic(fmt.Sprintf("olbfgs: Scores: len(dst) = %d, want %d; payload of dimension %d", len(dst), c.outputs(), d))
	}
	for k := range dst {
		wk := w[k*r : k*r+d]
		var u float64
		switch {
		case inv != nil:
			u = standardizedDot(wk, mean, inv, z)
		case z.Idx != nil:
			u = stream.SparseDot4(z.Idx, z.V, wk)
		default:
			u = stream.Dot4(z.V, wk)
		}
		if c.Intercept {
			u += w[k*r+d]
		}
		dst[k] = u
	}
}

// standardizedDot returns Dot4(x̃, w) with x̃_j = (x_j − m_j)·v_j formed on
// the fly (the bits of forming x̃ first), for a dense or sparse z.
func standardizedDot(w, mean, inv []float64, z stream.Sample) float64 {
	if z.Idx == nil {
		n := len(w)
		x, mean, inv := z.V[:n], mean[:n], inv[:n]
		var s0, s1, s2, s3 float64
		j := 0
		for ; j+4 <= n; j += 4 {
			s0 += float64(w[j] * float64((x[j]-mean[j])*inv[j]))
			s1 += float64(w[j+1] * float64((x[j+1]-mean[j+1])*inv[j+1]))
			s2 += float64(w[j+2] * float64((x[j+2]-mean[j+2])*inv[j+2]))
			s3 += float64(w[j+3] * float64((x[j+3]-mean[j+3])*inv[j+3]))
		}
		for r := 0; j < n; j, r = j+1, r+1 {
			p := float64(w[j] * float64((x[j]-mean[j])*inv[j]))
			switch r {
			case 0:
				s0 += p
			case 1:
				s1 += p
			default:
				s2 += p
			}
		}
		return (s0 + s1) + (s2 + s3)
	}
	var s [4]float64
	k := 0
	for j, wj := range w {
		var xj float64
		if k < len(z.Idx) && int(z.Idx[k]) == j {
			xj = z.V[k]
			k++
		}
		s[j&3] += float64(wj * float64((xj-mean[j])*inv[j]))
	}
	return (s[0] + s[1]) + (s[2] + s[3])
}

// DeployedRidge returns the ridge term (λ/2)‖w‖² of the deployed
// parameters ([Learner.Deployed]) that the held-out loss of a learner with
// options adds to each sample's data term: the squares summed in
// coordinate order, the intercepts left out unless Config.RidgeIntercept,
// then multiplied by λ/2 (stream.Linear.Lambda). It is 0 for a loss that
// is not a linear model's (quadratic).
func (l *Learner) DeployedRidge() float64 {
	lin, ok := l.loss.(stream.Linear)
	if !ok {
		return 0
	}
	cfg := l.cfg
	r := cfg.stride()
	var ww float64
	for i, v := range l.Deployed() {
		if cfg.Intercept && !cfg.RidgeIntercept && i%r == cfg.Dim {
			continue
		}
		ww += float64(v * v)
	}
	return lin.Lambda() / 2 * ww
}

// Scorer applies one state of a learner to raw samples: the deployed
// parameters and the preprocessing, copied when it was made ([Learner.Scorer]),
// so that later steps of the learner do not change it. It is safe for
// concurrent use and its Scores does not allocate; it computes the same
// bits as the learner's Scores did when it was made.
type Scorer struct {
	cfg       Config
	w         []float64
	mean, inv []float64
}

// Scorer returns a Scorer of the learner's current state.
func (l *Learner) Scorer() *Scorer {
	s := &Scorer{cfg: l.cfg, w: slices.Clone(l.Deployed())}
	if l.cfg.Standardize {
		s.mean = slices.Clone(l.opt.mean)
		s.inv = make([]float64, len(s.mean))
		fillInv(s.inv, l.opt.m2, l.opt.n)
	}
	return s
}

// Outputs returns the number of scores per sample.
func (s *Scorer) Outputs() int { return s.cfg.outputs() }

// Dim returns the feature dimension d of the samples it scores.
func (s *Scorer) Dim() int { return s.cfg.Dim }

// Scores is [Learner.Scores] of the state the Scorer was made from.
func (s *Scorer) Scores(dst []float64, z stream.Sample) {
	scoreWith(dst, s.w, s.mean, s.inv, s.cfg, z)
}

// Gradient stores in dst the gradient at the last iterate w of the loss of
// the raw sample z for the model the learner trains: the loss's own
// gradient for a learner without Intercept or Standardize (bit for bit
// stream.Loss.Grad at w); with them, the affine path's (docs/spec.md
// §2.1) on the features standardized with the current statistics, as
// Scores standardizes them (an insert would count z's features first).
// It is what an intervention that corrects w by a sample's gradient needs
// (unlearn's parameter-only). It does not allocate once Scores has run at
// the current statistics; it panics if len(dst) is not the parameter
// dimension.
func (l *Learner) Gradient(dst []float64, z stream.Sample) {
	if len(dst) != len(l.w) {
		panic(fmt.Sprintf("olbfgs: Gradient: len(dst)=%d, want %d", len(dst), len(l.w)))
	}
	if !l.cfg.Affine() {
		l.loss.Grad(dst, l.w, z)
		return
	}
	o := &l.opt
	x := o.xt
	if l.cfg.Standardize {
		if !o.scoreOK || o.scoreN != o.n {
			fillInv(o.scoreInv, o.m2, o.n)
			o.scoreN, o.scoreOK = o.n, true
		}
		k := 0
		for j := range x {
			var xj float64
			if z.Idx == nil {
				xj = z.V[j]
			} else if k < len(z.Idx) && int(z.Idx[k]) == j {
				xj = z.V[k]
				k++
			}
			x[j] = float64((xj - o.mean[j]) * o.scoreInv[j])
		}
	} else {
		x = l.prepare(z)
	}
	l.affineGrad(dst, l.w, x, z.S)
}
