package bound

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"gonum.org/v1/gonum/floats"
	"gonum.org/v1/gonum/mat"
	"pgregory.net/rapid"

	"unlearn/internal/floatbits"
)

// memLearner is online L-BFGS (the test olbfgs of simulation_test.go) with
// a step schedule indexed by its own count, on any loss, recording which
// insert produced each stored pair.
type memLearner struct {
	olbfgs
	sched Schedule
	count int
	src   []int // src[i]: the insert (step of the actual stream) of pair i
}

func (m *memLearner) step(z simLoss, id int) {
	eta := m.sched.At(m.count)
	g := make([]float64, len(m.w))
	z.grad(g, m.w)
	p := m.apply(g)
	wNew := slices.Clone(m.w)
	floats.AddScaled(wNew, -eta, p)
	s := slices.Clone(wNew)
	floats.Sub(s, m.w)
	y := make([]float64, len(m.w))
	z.grad(y, wNew)
	floats.Sub(y, g)
	if floats.Dot(s, y) > 1e-10*floats.Norm(s, 2)*floats.Norm(y, 2) {
		m.s, m.y, m.src = append(m.s, s), append(m.y, y), append(m.src, id)
		if len(m.s) > m.tau {
			m.s, m.y, m.src = m.s[1:], m.y[1:], m.src[1:]
		}
	}
	m.w = wNew
	m.count++
}

// spectrum returns the extreme eigenvalues of the learner's H_Z (formed
// column by column with the two-loop recursion, symmetrized).
func (m *memLearner) spectrum() (lo, hi float64) {
	d := len(m.w)
	h := mat.NewSymDense(d, nil)
	cols := make([][]float64, d)
	for j := range d {
		e := make([]float64, d)
		e[j] = 1
		cols[j] = m.apply(e)
	}
	for i := range d {
		for j := i; j < d; j++ {
			h.SetSym(i, j, (cols[j][i]+cols[i][j])/2)
		}
	}
	var es mat.EigenSym
	if !es.Factorize(h, false) {
		panic("bound: test: eigen decomposition failed")
	}
	v := es.Values(nil)
	return v[0], v[d-1]
}

// TestScheduledMemoryBoundHolds: online L-BFGS with a decaying step
// schedule, on isotropic quadratics (the Hessians commute with every H_Z,
// whose spectrum lies in [1/L, 1/μ]) and on non-isotropic quadratics with
// a narrow spectrum (the general and near-isotropic contractions; hMin,
// hMax measured over both trajectories, as G is: exact for the run), with
// deletions of every age and the memory interventions (memory reset, pair
// drop) at the requests: the deviation after every step stays within the
// bound with the worst-case memory term and the schedule shift, with no
// tolerance.
func TestScheduledMemoryBoundHolds(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		d := rapid.IntRange(1, 3).Draw(t, "d")
		isotropic := rapid.Bool().Draw(t, "isotropic")
		mu := rapid.Float64Range(0.2, 2).Draw(t, "mu")
		kappa := rapid.Float64Range(1, 8).Draw(t, "kappa")
		if !isotropic {
			kappa = rapid.Float64Range(1, 1.3).Draw(t, "kappaNarrow")
		}
		l := mu * kappa
		tau := rapid.IntRange(1, 5).Draw(t, "tau")
		n := rapid.IntRange(1, 150).Draw(t, "n")
		gamma0 := 1/l + (1/mu-1/l)*rapid.Float64Range(0, 1).Draw(t, "gamma0")
		eta0 := rapid.Float64Range(0.05, 1.9).Draw(t, "etaFrac") / (l / mu * l)
		decay := mu / l * rapid.Float64Range(0, 1).Draw(t, "decayFrac")
		sched := Schedule{Eta0: eta0, Decay: decay}
		r := rand.New(rand.NewPCG(rapid.Uint64().Draw(t, "seed"), 13))
		zs := make([]simLoss, n)
		for i := range zs {
			b := randomVec(r, d, 2*r.Float64())
			if isotropic {
				a := mu + (l-mu)*r.Float64()
				zs[i] = simLoss{x: b, a: mat.NewSymDense(d, nil)}
				for j := range d {
					zs[i].a.SetSym(j, j, a)
				}
				continue
			}
			spec := make([]float64, d)
			for j := range spec {
				spec[j] = mu + (l-mu)*r.Float64()
			}
			zs[i] = simLoss{x: b, a: randomSPD(r, spec)}
		}
		deleted := map[int]bool{}
		for range rapid.IntRange(1, 4).Draw(t, "deletions") {
			deleted[1+r.IntN(n)] = true
		}
		reqAt := rapid.IntRange(0, n).Draw(t, "request")
		op := rapid.SampledFrom([]string{"noop", "memory-reset", "pair-drop"}).Draw(t, "op")
		act := &memLearner{olbfgs: olbfgs{tau: tau, gamma0: gamma0, w: make([]float64, d)}, sched: sched}
		cf := &memLearner{olbfgs: olbfgs{tau: tau, gamma0: gamma0, w: make([]float64, d)}, sched: sched}
		hMin, hMax, g := gamma0, gamma0, 0.0
		track := func() {
			for _, m := range []*memLearner{act, cf} {
				lo, hi := m.spectrum()
				hMin, hMax = min(hMin, lo), max(hMax, hi)
			}
		}
		var acts, cfs [][]float64
		stream := Stream{Steps: n}
		for s := 1; s <= n; s++ {
			gr := make([]float64, d)
			for _, w := range [][]float64{act.w, cf.w} {
				zs[s-1].grad(gr, w)
				g = max(g, floats.Norm(gr, 2))
			}
			act.step(zs[s-1], s)
			if deleted[s] {
				stream.Deleted = append(stream.Deleted, s)
			} else {
				cf.step(zs[s-1], s)
			}
			acts, cfs = append(acts, slices.Clone(act.w)), append(cfs, slices.Clone(cf.w))
			if s == reqAt {
				switch op {
				case "memory-reset":
					act.s, act.y, act.src = nil, nil, nil
				case "pair-drop":
					keep := 0
					for i := range act.s {
						if s0 := act.src[i]; !deleted[s0] || s0 > reqAt {
							act.s[keep], act.y[keep], act.src[keep] = act.s[i], act.y[i], act.src[i]
							keep++
						}
					}
					act.s, act.y, act.src = act.s[:keep], act.y[:keep], act.src[:keep]
				}
				stream.Interventions = append(stream.Interventions, Intervention{After: s})
			}
			track()
		}
		// Measured constants, widened far above their round-off.
		hMin, hMax, g = hMin*(1-1e-9), hMax*(1+1e-9), g*(1+1e-12)
		c := Constants{G: g, HMin: hMin, HMax: hMax, Eta: eta0, Tau: tau}
		dyn := Dynamics{Schedule: sched, HMin: hMin, HMax: hMax, Mu: mu * (1 - 1e-9), L: l * (1 + 1e-9), Commuting: isotropic,
			G: g, RoundOff: simRoundOff(c), Provenance: Proved}
		pos, iv, err := stream.validate(dyn)
		require.NoError(t, err)
		_ = dyn.walk(stream, pos, iv, func(s int, alpha float64, _ bool, _ int) {
			if exceeds(acts[s-1], cfs[s-1], alpha) {
				t.Fatalf("step %d: deviation %v > α_s = %v (hMin %v, hMax %v, isotropic %v)", s,
					floatbits.ExactDistance(acts[s-1], cfs[s-1]), alpha, hMin, hMax, isotropic)
			}
		})
	})
}

// TestMemoryNotLipschitzInParameters is the counterexample of
// docs/theory.md ("Curvature memory: what it costs"): a deleted insert that
// moves w by ε leaves the two memories a constant 1 − 1/κ apart after one
// more step, whatever ε — so no bound ‖H_Z̃ − H_Z⁻‖ ≤ K·‖w̃ − w⁻‖ exists, for
// any guard that accepts pairs of exact curvature in [1, κ] and angle 0 —
// and one step later the parameters are η·(1 − 1/κ)·‖g‖ apart, not O(ε).
func TestMemoryNotLipschitzInParameters(t *testing.T) {
	const kappa, eta, gamma0 = 4.0, 0.5, 1.0
	a := mat.NewSymDense(2, []float64{1, 0, 0, kappa})
	for _, eps := range []float64{1e-2, 1e-4, 1e-6} {
		t.Run(fmt.Sprint(eps), func(t *testing.T) {
			// z2: ½(w − b)ᵀA(w − b), b = −ε·e₂, so that the counterfactual
			// (still at 0) sits at b + ε·e₂ and the actual learner, moved by
			// the deleted z1 to w1 = b + ε·e₁, at b + ε·e₁.
			b := []float64{0, -eps}
			w1 := []float64{eps, -eps}
			// z1: ½‖w − b1‖² (isotropic), whose first step from 0 with the
			// empty memory (H = γ₀I) lands on w1: w1 = η·γ₀·b1.
			b1 := []float64{w1[0] / (eta * gamma0), w1[1] / (eta * gamma0)}
			ident := mat.NewSymDense(2, []float64{1, 0, 0, 1})
			z1 := simLoss{x: b1, a: ident}
			z2 := simLoss{x: b, a: a}
			// z3: far away, gradient of norm ≈ 1 at both states.
			z3 := simLoss{x: []float64{1 / math.Sqrt2, 1 / math.Sqrt2}, a: ident}
			sched := Schedule{Eta0: eta}
			act := &memLearner{olbfgs: olbfgs{tau: 1, gamma0: gamma0, w: make([]float64, 2)}, sched: sched}
			cf := &memLearner{olbfgs: olbfgs{tau: 1, gamma0: gamma0, w: make([]float64, 2)}, sched: sched}
			act.step(z1, 1) // the deleted insert (a constant step: no schedule shift)
			dw1 := floats.Distance(act.w, cf.w, 2)
			require.InDelta(t, math.Sqrt2*eps, dw1, 1e-12*eps, "the deleted insert moved w by √2·ε")
			act.step(z2, 2)
			cf.step(z2, 2)
			// Both pairs pass any guard with window [1, κ] and angle 0: y = A·s
			// with s along an eigenvector.
			for _, m := range []*memLearner{act, cf} {
				require.Len(t, m.s, 1)
				sy, ss, yy := floats.Dot(m.s[0], m.y[0]), floats.Dot(m.s[0], m.s[0]), floats.Dot(m.y[0], m.y[0])
				assert.InDelta(t, 1.0, ss*yy/(sy*sy), 1e-9, "tan∠(s, y) = 0")
			}
			hA, hC := act.apply([]float64{1, 0}), cf.apply([]float64{1, 0})
			dh := floats.Distance(hA, hC, 2)
			assert.InDelta(t, 1-1/kappa, dh, 1e-9, "‖(H_Z̃ − H_Z⁻)e₁‖ = 1 − 1/κ, whatever ε")
			dw2 := floats.Distance(act.w, cf.w, 2)
			assert.Less(t, dw2, 3*eps, "the parameters are still O(ε) apart")
			act.step(z3, 3)
			cf.step(z3, 3)
			dw3 := floats.Distance(act.w, cf.w, 2)
			assert.Greater(t, dw3, 0.5*eta*(1-1/kappa)*0.5, "one step later the memory difference moved w by Θ(η(1 − 1/κ)‖g‖)")
			assert.Greater(t, dw3/dw1, 0.05/eps, "the deviation grew by a factor of order 1/ε")
		})
	}
}

// TestMemoryFloorDoesNotDecay: with a guarded memory (hMin < hMax) the
// proved bound keeps a floor of order (hMax − hMin)·G/(hMid·(μ − e·L))
// however long the stream, while without memory it shrinks like
// log(T)/T: what memory costs in certifiability.
func TestMemoryFloorDoesNotDecay(t *testing.T) {
	base := Dynamics{Schedule: Schedule{Eta0: 1, Decay: 0.05}, Mu: 0.5, L: 0.6, G: 1, Provenance: Proved}
	noMem, mem := base, base
	noMem.HMin, noMem.HMax = 1, 1
	mem.HMin, mem.HMax = 0.95, 1.05
	var prevNo float64
	for i, T := range []int{1000, 10000, 100000} {
		a, err := noMem.Bound(Stream{Steps: T, Deleted: []int{10}})
		require.NoError(t, err)
		b, err := mem.Bound(Stream{Steps: T, Deleted: []int{10}})
		require.NoError(t, err)
		t.Logf("T = %d: α without memory %.3g, with a guarded memory %.3g", T, a.Alpha, b.Alpha)
		// Floor: η·spread·G/(1 − ρ) → spread·G/(hMid·(μ − e·L)) = 0.1/(1·(0.5 − 0.05·0.6)).
		assert.Greater(t, b.Alpha, 0.5*0.1/(0.5-0.05*0.6), "T = %d: the memory floor", T)
		if i > 0 {
			assert.Less(t, a.Alpha, prevNo/5, "T = %d: without memory α shrinks ≈ 10× per decade", T)
		}
		prevNo = a.Alpha
	}
}
