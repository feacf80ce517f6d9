package olbfgs

import "unlearn/stream"

// insertOptions is the insert of a learner with options (docs/spec.md
// §2.1): the o-LBFGS step of the model the options define, with the scheduled
// step η_t, followed by the options' updates, committed only when the step
// succeeds. Its loops are fused where that changes no rounded operation —
// the standardization with the first scores, the step with the new scores,
// the new gradient with y and the damping, the copy of w with the average —
// so that a step with every option on costs little more than the paper's
// (BenchmarkStepOptions); the result is the one the spec's sequence of
// operations gives, bit for bit.
func (l *Learner) insertOptions(id int64, z stream.Sample) error {
	o := &l.opt
	eta := l.cfg.StepAt(o.inserts)
	affine := l.cfg.Affine()
	averaging := l.averaging()
	var x []float64 // the features of the affine path
	switch {
	case affine:
		x = l.prepareScores(z, averaging && l.cfg.Progress)
		l.lin.Link(o.c, o.u, z.S)
		l.affineGradFrom(l.g, l.w, x, o.c)
		l.mem.Apply(l.p, l.g)
	case !l.cachedDirection(z):
		l.loss.Grad(l.g, l.w, z)
		l.mem.Apply(l.p, l.g)
	}
	if l.cfg.Progress {
		l.recordProgress(x, z, averaging)
	}
	l.dirOK = false // w changes below (or the step fails and nothing is kept)
	delta := l.cfg.Damping
	if affine && l.cfg.Radius == 0 {
		if !l.stepFused(eta, x) {
			return ErrDiverged
		}
		l.lin.Link(o.c, o.u, z.S)
		l.affineY(x, delta)
		l.pushPair(id)
		l.commitStep()
		return nil
	}
	for i, w := range l.w {
		l.wNew[i] = w - float64(eta*l.p[i])
	}
	if !finite(l.wNew) {
		return ErrDiverged
	}
	if l.cfg.Radius > 0 {
		project(l.wNew, l.cfg.Radius)
	}
	if affine {
		l.stepScores(x)
		l.lin.Link(o.c, o.u, z.S)
		l.affineY(x, delta)
	} else {
		for i, w := range l.w {
			l.s[i] = l.wNew[i] - w
		}
		l.loss.Grad(l.gNew, l.wNew, z)
		if delta > 0 {
			for i, g := range l.g {
				l.y[i] = (l.gNew[i] - g) + float64(delta*l.s[i])
			}
		} else {
			for i, g := range l.g {
				l.y[i] = l.gNew[i] - g
			}
		}
	}
	l.pushPair(id)
	l.commitStep()
	return nil
}

// prepareScores is prepare (the insert's features x̃) with the scores at w
// in opt.u and, if withAverage, at the average in opt.ub. For one output
// the scores are summed in the standardization's own loop, in Dot4's
// partial sums (the bits of Dot4 of the finished x̃).
func (l *Learner) prepareScores(z stream.Sample, withAverage bool) []float64 {
	o := &l.opt
	if !l.cfg.Standardize || len(o.u) != 1 {
		x := l.prepare(z)
		l.affineScores(o.u, l.w, x)
		if withAverage {
			l.affineScores(o.ub, o.avg, x)
		}
		return x
	}
	d := l.cfg.Dim
	xt := o.xt
	if z.Idx == nil {
		copy(xt, z.V)
	} else {
		clear(xt)
		for k, j := range z.Idx {
			xt[j] = z.V[k]
		}
	}
	avg := o.avg
	if !withAverage {
		avg = nil
	}
	u, ub := standardizeScores(xt, o.mean, o.m2, o.nextMean, o.nextM2, l.w[:d], avg, 1/float64(o.n+1))
	if l.cfg.Intercept {
		u += l.w[d]
		if withAverage {
			ub += o.avg[d]
		}
	}
	o.u[0] = u
	if withAverage {
		o.ub[0] = ub
	}
	return xt
}

// standardizeScores replaces x by x̃ (welford, each feature's statistics
// updated into nm, nq) and returns Dot4(x̃, w) and, if avg is not nil,
// Dot4(x̃, avg) — four entries at a time, each partial sum in its own
// variable, in Dot4's order; on amd64 with AVX2 the four-at-a-time part
// runs in assembly (standardize_amd64.s) with the same bits.
func standardizeScores(x, mean, m2, nm, nq, w, avg []float64, rn float64) (u, ub float64) {
	n := len(x)
	mean, m2, nm, nq, w = mean[:n], m2[:n], nm[:n], nq[:n], w[:n]
	var s0, s1, s2, s3, b0, b1, b2, b3 float64
	j := 0
	if useAVX2 {
		var acc [8]float64
		j, acc = standardizeBody(x, mean, m2, nm, nq, w, avg, rn)
		s0, s1, s2, s3, b0, b1, b2, b3 = acc[0], acc[1], acc[2], acc[3], acc[4], acc[5], acc[6], acc[7]
	}
	if avg == nil {
		for ; j+4 <= n; j += 4 {
			v0 := welford(x[j], mean[j], m2[j], rn, &nm[j], &nq[j])
			v1 := welford(x[j+1], mean[j+1], m2[j+1], rn, &nm[j+1], &nq[j+1])
			v2 := welford(x[j+2], mean[j+2], m2[j+2], rn, &nm[j+2], &nq[j+2])
			v3 := welford(x[j+3], mean[j+3], m2[j+3], rn, &nm[j+3], &nq[j+3])
			x[j], x[j+1], x[j+2], x[j+3] = v0, v1, v2, v3
			s0 += float64(v0 * w[j])
			s1 += float64(v1 * w[j+1])
			s2 += float64(v2 * w[j+2])
			s3 += float64(v3 * w[j+3])
		}
	} else {
		avg = avg[:n]
		for ; j+4 <= n; j += 4 {
			v0 := welford(x[j], mean[j], m2[j], rn, &nm[j], &nq[j])
			v1 := welford(x[j+1], mean[j+1], m2[j+1], rn, &nm[j+1], &nq[j+1])
			v2 := welford(x[j+2], mean[j+2], m2[j+2], rn, &nm[j+2], &nq[j+2])
			v3 := welford(x[j+3], mean[j+3], m2[j+3], rn, &nm[j+3], &nq[j+3])
			x[j], x[j+1], x[j+2], x[j+3] = v0, v1, v2, v3
			s0 += float64(v0 * w[j])
			s1 += float64(v1 * w[j+1])
			s2 += float64(v2 * w[j+2])
			s3 += float64(v3 * w[j+3])
			b0 += float64(v0 * avg[j])
			b1 += float64(v1 * avg[j+1])
			b2 += float64(v2 * avg[j+2])
			b3 += float64(v3 * avg[j+3])
		}
	}
	for r := 0; j < n; j, r = j+1, r+1 {
		v := welford(x[j], mean[j], m2[j], rn, &nm[j], &nq[j])
		x[j] = v
		p := float64(v * w[j])
		var q float64
		if avg != nil {
			q = float64(v * avg[j])
		}
		switch r {
		case 0:
			s0, b0 = s0+p, b0+q
		case 1:
			s1, b1 = s1+p, b1+q
		default:
			s2, b2 = s2+p, b2+q
		}
	}
	return (s0 + s1) + (s2 + s3), (b0 + b1) + (b2 + b3)
}

// affineGradFrom writes the affine path's gradient at w for the features x
// and ∂φ/∂u = c (see affineGrad).
func (l *Learner) affineGradFrom(dst, w, x, c []float64) {
	d, r := l.cfg.Dim, l.cfg.stride()
	lam := l.lin.Lambda()
	for k, ck := range c {
		row, wk := dst[k*r:k*r+d], w[k*r:k*r+d]
		for j, xj := range x {
			row[j] = float64(ck*xj) + float64(lam*wk[j])
		}
		if l.cfg.Intercept {
			if l.cfg.RidgeIntercept {
				dst[k*r+d] = ck + float64(lam*w[k*r+d])
			} else {
				dst[k*r+d] = ck
			}
		}
	}
}

// stepScores stores s = w⁺ − w and the scores at w⁺ (opt.u) for the
// features x, in one pass per output.
func (l *Learner) stepScores(x []float64) {
	o := &l.opt
	d, r := l.cfg.Dim, l.cfg.stride()
	for k := range o.u {
		wn, w, s := l.wNew[k*r:k*r+d], l.w[k*r:k*r+d], l.s[k*r:k*r+d]
		u := diffDot4(s, wn, w, x[:d])
		if l.cfg.Intercept {
			l.s[k*r+d] = l.wNew[k*r+d] - l.w[k*r+d]
			u += l.wNew[k*r+d]
		}
		o.u[k] = u
	}
}

// affineY stores y = ∇ℓ(w⁺) − ∇ℓ(w) (+ δ·s) with ∇ℓ(w⁺) formed from
// ∂φ/∂u = opt.c at w⁺ entry by entry (affineGradFrom's expressions).
func (l *Learner) affineY(x []float64, delta float64) {
	o := &l.opt
	d, r := l.cfg.Dim, l.cfg.stride()
	lam := l.lin.Lambda()
	for k, ck := range o.c {
		wn, g, y, s := l.wNew[k*r:k*r+d], l.g[k*r:k*r+d], l.y[k*r:k*r+d], l.s[k*r:k*r+d]
		x := x[:d]
		if delta > 0 {
			for j, v := range wn {
				y[j] = ((float64(ck*x[j]) + float64(lam*v)) - g[j]) + float64(delta*s[j])
			}
		} else {
			for j, v := range wn {
				y[j] = (float64(ck*x[j]) + float64(lam*v)) - g[j]
			}
		}
		if l.cfg.Intercept {
			i := k*r + d
			gn := ck
			if l.cfg.RidgeIntercept {
				gn = ck + float64(lam*l.wNew[i])
			}
			l.y[i] = gn - l.g[i]
			if delta > 0 {
				l.y[i] += float64(delta * l.s[i])
			}
		}
	}
}

// recordProgress records the insert's progressive statistics as pending
// (see scoreProgress): the scores of the deployed parameters are opt.u
// (the affine path's scores at w) or opt.ub (at the average), or are
// computed on the raw payload without the affine path.
func (l *Learner) recordProgress(x []float64, z stream.Sample, averaging bool) {
	o := &l.opt
	u := o.u
	switch {
	case x != nil && averaging:
		u = o.ub
	case averaging:
		rawScores(o.ub, o.avg, z, l.cfg.Dim)
		u = o.ub
	case x == nil:
		rawScores(o.u, l.w, z, l.cfg.Dim)
	}
	pp := pendingProgress{ok: true}
	if pred, ok := l.lin.Predict(u); ok {
		pp.correct = pred == z.S
		pp.predicted, _ = l.lin.Class(pred)
		pp.labelClass, _ = l.lin.Class(z.S)
	}
	pp.loss = clampLoss(l.lin.Link(o.c, u, z.S))
	clear(o.c) // the zero model's scores
	pp.zeroLoss = clampLoss(l.lin.Link(o.c, o.c, z.S))
	o.pending = pp
}

// commitStep makes w = w⁺ and commits the options' updates of a successful
// insert (the insert count, the statistics of prepare, the average — in
// the copy's loop — and the pending progress).
func (l *Learner) commitStep() {
	o := &l.opt
	o.inserts++
	if l.cfg.Average && o.inserts > l.cfg.AverageStart {
		o.avgN++
		if o.avgN == 1 {
			copy(o.avg, l.wNew)
			copy(l.w, l.wNew)
		} else {
			g := l.cfg.AveragePower
			rk := (g + 1) / (float64(o.avgN) + g) // 1/k for γ = 0, bit for bit
			avg := o.avg[:len(l.wNew)]
			for i, w := range l.wNew {
				avg[i] += float64((w - avg[i]) * rk)
				l.w[i] = w
			}
		}
	} else {
		copy(l.w, l.wNew)
	}
	if l.cfg.Standardize {
		o.mean, o.nextMean = o.nextMean, o.mean
		o.m2, o.nextM2 = o.nextM2, o.m2
		o.n++
		o.scoreOK = false
	}
	if o.pending.ok {
		o.prog.add(o.pending)
		o.pending = pendingProgress{}
	}
}

// stepFused is, for a learner without a radius, the step w⁺ = w − η·p,
// its finiteness check, s = w⁺ − w and the scores at w⁺ (opt.u) for the
// features x, in one pass per output: the operations of the unfused
// sequence, so the same bits. It reports false if w⁺ is not finite (the
// learner's state is then untouched: only scratch was written).
func (l *Learner) stepFused(eta float64, x []float64) bool {
	o := &l.opt
	d, r := l.cfg.Dim, l.cfg.stride()
	var bad float64 // w⁺ − w⁺ over every entry: NaN iff one is not finite
	for k := range o.u {
		lo := k * r
		wn, w, p, s := l.wNew[lo:lo+d], l.w[lo:lo+d], l.p[lo:lo+d], l.s[lo:lo+d]
		x := x[:d]
		var s0, s1, s2, s3 float64
		j := 0
		for ; j+4 <= d; j += 4 {
			a0 := w[j] - float64(eta*p[j])
			a1 := w[j+1] - float64(eta*p[j+1])
			a2 := w[j+2] - float64(eta*p[j+2])
			a3 := w[j+3] - float64(eta*p[j+3])
			wn[j], wn[j+1], wn[j+2], wn[j+3] = a0, a1, a2, a3
			s[j], s[j+1], s[j+2], s[j+3] = a0-w[j], a1-w[j+1], a2-w[j+2], a3-w[j+3]
			bad += ((a0 - a0) + (a1 - a1)) + ((a2 - a2) + (a3 - a3))
			s0 += float64(x[j] * a0)
			s1 += float64(x[j+1] * a1)
			s2 += float64(x[j+2] * a2)
			s3 += float64(x[j+3] * a3)
		}
		for q := 0; j < d; j, q = j+1, q+1 {
			a := w[j] - float64(eta*p[j])
			wn[j], s[j] = a, a-w[j]
			bad += a - a
			v := float64(x[j] * a)
			switch q {
			case 0:
				s0 += v
			case 1:
				s1 += v
			default:
				s2 += v
			}
		}
		u := (s0 + s1) + (s2 + s3)
		if l.cfg.Intercept {
			i := lo + d
			a := l.w[i] - float64(eta*l.p[i])
			l.wNew[i], l.s[i] = a, a-l.w[i]
			bad += a - a
			u += a
		}
		o.u[k] = u
	}
	return bad == 0
}

// diffDot4 stores s = a − b and returns Dot4(x, a), in one pass.
func diffDot4(s, a, b, x []float64) float64 {
	n := len(a)
	s, b, x = s[:n], b[:n], x[:n]
	var s0, s1, s2, s3 float64
	j := 0
	for ; j+4 <= n; j += 4 {
		s[j], s[j+1], s[j+2], s[j+3] = a[j]-b[j], a[j+1]-b[j+1], a[j+2]-b[j+2], a[j+3]-b[j+3]
		s0 += float64(x[j] * a[j])
		s1 += float64(x[j+1] * a[j+1])
		s2 += float64(x[j+2] * a[j+2])
		s3 += float64(x[j+3] * a[j+3])
	}
	if j < n {
		s[j] = a[j] - b[j]
		s0 += float64(x[j] * a[j])
	}
	if j+1 < n {
		s[j+1] = a[j+1] - b[j+1]
		s1 += float64(x[j+1] * a[j+1])
	}
	if j+2 < n {
		s[j+2] = a[j+2] - b[j+2]
		s2 += float64(x[j+2] * a[j+2])
	}
	return (s0 + s1) + (s2 + s3)
}
