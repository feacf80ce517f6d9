package align

import (
	"fmt"
	"maps"
	"math"
	"slices"
	"sync"
	"sync/atomic"

	"gonum.org/v1/gonum/mat"

	"unlearn/internal/floatbits"
	"unlearn/olbfgs"
	"unlearn/stream"
)

// Options configures an [Engine]. The zero value gives the paper's defaults
// (32 probes drawn with seed 0, λ_Z = 1).
type Options struct {
	// Probes is m_q, the number of probe vectors to draw. If 0, it defaults
	// to DefaultProbes (32), or to len(ProbeVectors) when those are given;
	// otherwise it must equal len(ProbeVectors) when both are set.
	Probes int
	// Seed seeds the probe draw: SeededProbes(Seed, d, Probes). Ignored
	// when ProbeVectors is set.
	Seed uint64
	// ProbeVectors, if not nil, are the probes to use instead of drawing
	// them (for example the probes of a run record, or of another
	// implementation): each of length d, finite, of unit norm within
	// ProbeNormTol (see CheckProbes). They are copied and used as given.
	ProbeVectors [][]float64
	// LambdaZ is the weight λ_Z ≥ 0 of the memory error in
	// E_Θ = E_w + λ_Z·E_Z. If nil, it defaults to 1 (the paper's Table 1);
	// new(0.0) sets λ_Z = 0, for which E_Θ = E_w.
	LambdaZ *float64
	// DirectProbes makes the engine apply the memories to the probes
	// themselves. By default, when there are more probes than dimensions
	// (m_q > d, as at the paper's m_q = 32, d = 25), it applies them to the
	// d columns of the Cholesky factor L of QQᵀ instead, which gives the same
	// E_Z in exact arithmetic at d/m_q of the cost; see the package
	// documentation. The two agree to round-off (tested at 1e-12 relative).
	DirectProbes bool
	// MemoryError selects how E_Z is computed. The zero value,
	// MemoryErrorAuto, uses the pairs' coefficient space from d ≥
	// CoefficientMinDim and the block sweep below; see coeff.go.
	MemoryError MemoryErrorMethod
}

// Point holds the alignment metrics of one state against the reference at
// one post-deletion step (spec §3).
type Point struct {
	// Ew is the parameter error ‖w̃ − w⁻‖₂.
	Ew float64
	// EZ is the memory-operator error sqrt((1/m_q) Σ_j ‖H_Z̃ q_j − H_Z⁻ q_j‖²).
	EZ float64
	// ETheta is the state error E_w + λ_Z·E_Z.
	ETheta float64
	// Dupd is the update-direction error for the next insert; it is 0 and
	// meaningless when DupdDefined is false (no insert follows the step).
	Dupd        float64
	DupdDefined bool
	// Mdirect is the direct memory mass: the number of pairs of Z̃ whose
	// source meets the deletion set U.
	Mdirect int
	// RefWNorm is ‖w⁻‖₂ of the reference at this step, the scale of the
	// exact-recovery threshold.
	RefWNorm float64
	// Identical reports that the state was bitwise identical to the
	// reference in w and Z (so every error is exactly 0 and nothing was
	// computed).
	Identical bool
}

// Engine computes the alignment metrics of states against a reference,
// step after step, for one run: it holds the probes (drawn once), the
// reference's probe block of the current step (computed once and shared by
// every state measured at that step) and all scratch space, so that
// measuring a state allocates nothing. Create it with [NewEngine]. An Engine
// is not safe for concurrent use; use one per goroutine.
type Engine struct {
	d, m    int
	lambdaZ float64
	probes  [][]float64

	nb, ld  int         // basis columns; row stride (column nb holds a gradient)
	basis   [][]float64 // the probes or the columns of their Cholesky factor
	refOut  []float64   // H_Z⁻ applied to the input block, for the current reference
	scratch             // the buffers of Measure (and SetReference)
	extra   []*scratch  // more buffers, one per extra goroutine of MeasureAll

	u stream.IDSet // the deletion set (a private copy)

	// The current step's reference.
	ref      *olbfgs.Learner
	refW     []float64
	refWNorm float64
	hasNext  bool
	next     stream.Sample
	quad     bool      // the loss is quadratic: gradients use hess
	hess     []float64 // H(α) of the next event, row-major d×d
	refG     []float64 // ∇ℓ_e(w⁻)
	refDir   []float64 // H_Z⁻ ∇ℓ_e(w⁻), column nb of refOut

	// The coefficient space (nil: the block sweep only). The reference's
	// block is then computed only when a state falls back to the block
	// sweep, once per step (refMu, refBlock).
	coef     *coeffSpace
	refView  memView
	refMu    sync.Mutex
	refBlock bool
	refIn    []float64
	refBA    *blockApplier
	mems     []*olbfgs.Memory // MeasureAll's scratch

	// The memories found equal to the reference's memory eqRef, with both
	// versions at that moment: the next identity check of such a memory
	// costs O(d) instead of O(τd) (memEqual, Memory.EqualSince).
	eqMu   sync.Mutex
	eqRef  *olbfgs.Memory
	eqSeen map[*olbfgs.Memory][2]uint64
}

// memEqual reports mem.Equal(e.ref.Memory()), through EqualSince when mem
// was found equal to the same reference memory before. Safe for concurrent
// use on distinct memories.
func (e *Engine) memEqual(mem *olbfgs.Memory) bool {
	ref := e.ref.Memory()
	e.eqMu.Lock()
	if e.eqRef != ref || e.eqSeen == nil {
		e.eqRef = ref
		e.eqSeen = map[*olbfgs.Memory][2]uint64{}
	}
	v, seen := e.eqSeen[mem]
	e.eqMu.Unlock()
	var eq bool
	if seen {
		eq = mem.EqualSince(ref, v[0], v[1])
	} else {
		eq = mem.Equal(ref)
	}
	e.eqMu.Lock()
	if eq {
		e.eqSeen[mem] = [2]uint64{mem.Version(), ref.Version()}
	} else if seen {
		delete(e.eqSeen, mem)
	}
	e.eqMu.Unlock()
	return eq
}

// scratch is what measuring one state writes: the input block (basis
// columns, the state's gradient column, zero padding), its image under the
// state's memory, the block applier's coefficients and vectors of length d.
// MeasureAll gives each goroutine its own.
type scratch struct {
	in  []float64 // d×ld: basis columns, gradient column, zero padding
	out []float64 // H_Z̃ applied to in, for the state being measured
	ba  *blockApplier
	dir []float64
	g   []float64
	// diff is the scratch of grad and of E_w.
	diff []float64
	// cs is the scratch of the coefficient space (nil until used).
	cs *coefScratch
}

func newScratch(d int) *scratch {
	return &scratch{
		dir:  make([]float64, d),
		g:    make([]float64, d),
		diff: make([]float64, d),
	}
}

// ensureBlock allocates sc's probe blocks (two d×ld blocks and the block
// applier) and writes the basis columns, unless done already. With the
// coefficient space this happens only for a scratch whose state falls back
// to the block sweep, so that a run at high d does not hold blocks it never
// uses (29 MB each at d = 10⁵, m_q = 32).
func (e *Engine) ensureBlock(sc *scratch) {
	if sc.in != nil {
		return
	}
	d, ld := e.d, e.ld
	sc.in = make([]float64, d*ld)
	sc.out = make([]float64, d*ld)
	sc.ba = newBlockApplier(d, ld)
	for j, q := range e.basis {
		for k, v := range q {
			sc.in[k*ld+j] = v
		}
	}
}

// MaxProbeFloats bounds m_q·d, the size of one probe block: the engine keeps
// a few such blocks (and τ·m_q coefficients), and NewEngine rejects larger
// requests (over 512 MiB a block) rather than fail in the allocator.
const MaxProbeFloats = 1 << 26

// NewEngine returns an engine for states of dimension d ≥ 1. It returns an
// error wrapping ErrConfig for invalid options or ErrProbes for invalid
// probe vectors.
func NewEngine(d int, opt Options) (*Engine, error) {
	if d < 1 || d > MaxProbeFloats {
		return nil, fmt.Errorf("%w: dimension d = %d must be in [1, %d]", ErrConfig, d, MaxProbeFloats)
	}
	lambdaZ := 1.0
	if opt.LambdaZ != nil {
		lambdaZ = *opt.LambdaZ
	}
	if !(lambdaZ >= 0) || math.IsInf(lambdaZ, 0) {
		return nil, fmt.Errorf("%w: LambdaZ = %v must be non-negative and finite", ErrConfig, lambdaZ)
	}
	var probes [][]float64
	switch {
	case opt.ProbeVectors != nil:
		if opt.Probes != 0 && opt.Probes != len(opt.ProbeVectors) {
			return nil, fmt.Errorf("%w: Probes = %d but %d ProbeVectors are given", ErrConfig, opt.Probes, len(opt.ProbeVectors))
		}
		if err := CheckProbes(opt.ProbeVectors, d); err != nil {
			return nil, err
		}
		probes = make([][]float64, len(opt.ProbeVectors))
		for j, q := range opt.ProbeVectors {
			probes[j] = slices.Clone(q)
		}
	default:
		m := opt.Probes
		if m == 0 {
			m = DefaultProbes
		}
		if m < 1 || m > MaxProbeFloats/d {
			return nil, fmt.Errorf("%w: Probes = %d must be in [1, %d] at d = %d (m_q·d at most 2^26)", ErrConfig, opt.Probes, MaxProbeFloats/d, d)
		}
		probes = SeededProbes(opt.Seed, d, m)
	}
	m := len(probes)
	basis := probes
	if m > d && !opt.DirectProbes {
		if l, ok := probeFactor(probes, d); ok {
			basis = l
		}
	}
	nb := len(basis)
	ld := (nb + 1 + 3) &^ 3
	if opt.MemoryError < MemoryErrorAuto || opt.MemoryError > MemoryErrorCoefficients {
		return nil, fmt.Errorf("%w: MemoryError = %d is not a MemoryErrorMethod", ErrConfig, opt.MemoryError)
	}
	e := &Engine{
		d: d, m: m, lambdaZ: lambdaZ, probes: probes,
		nb: nb, ld: ld,
		basis:   basis,
		scratch: *newScratch(d),
		refW:    make([]float64, d),
		refG:    make([]float64, d),
		refDir:  make([]float64, d),
	}
	useCoef := opt.MemoryError == MemoryErrorCoefficients ||
		(opt.MemoryError == MemoryErrorAuto && d >= CoefficientMinDim)
	if useCoef {
		e.coef = newCoeffSpace(probes, d)
	} else {
		e.ensureBlock(&e.scratch)
		e.refOut = make([]float64, d*ld)
	}
	return e, nil
}

// probeFactor returns the d columns of the lower Cholesky factor L of
// P = QQᵀ = Σ_j q_j q_jᵀ. For any symmetric Δ, ‖ΔQ‖_F² = tr(ΔPΔ) =
// ‖ΔL‖_F², so Σ_j ‖Δq_j‖² = Σ_i ‖Δl_i‖². It reports false when P is not
// numerically positive definite (the probes do not span R^d).
func probeFactor(probes [][]float64, d int) ([][]float64, bool) {
	p := mat.NewSymDense(d, nil)
	for a := 0; a < d; a++ {
		for b := a; b < d; b++ {
			var s float64
			for _, q := range probes {
				s += q[a] * q[b]
			}
			p.SetSym(a, b, s)
		}
	}
	var ch mat.Cholesky
	if !ch.Factorize(p) {
		return nil, false
	}
	var l mat.TriDense
	ch.LTo(&l)
	cols := make([][]float64, d)
	for i := range cols {
		cols[i] = make([]float64, d)
		for k := 0; k < d; k++ {
			cols[i][k] = l.At(k, i)
		}
	}
	return cols, true
}

// Dim returns d.
func (e *Engine) Dim() int { return e.d }

// NumProbes returns m_q.
func (e *Engine) NumProbes() int { return e.m }

// LambdaZ returns the weight λ_Z in use.
func (e *Engine) LambdaZ() float64 { return e.lambdaZ }

// Probes returns a copy of the unit probe vectors.
func (e *Engine) Probes() [][]float64 {
	out := make([][]float64, len(e.probes))
	for j, q := range e.probes {
		out[j] = slices.Clone(q)
	}
	return out
}

// SetDeletion sets the deletion set U whose direct memory mass Measure
// reports. It may be called at any time; it allocates.
func (e *Engine) SetDeletion(u stream.IDSet) {
	e.u = maps.Clone(u)
}

// SetReference makes ref the reference θ⁻ of the current step and next the
// payload of the next insert event after it (nil when there is none: D_upd is
// then undefined). It computes the reference's probe block and update
// direction once for every state measured at this step; call it again after
// the reference changes (Measure reads ref's parameters and memory). It
// panics if ref's dimension or next's length is not d.
func (e *Engine) SetReference(ref *olbfgs.Learner, next *stream.Sample) {
	d := e.d
	if len(ref.W()) != d {
		panic(fmt.Sprintf("align: SetReference: dimension %d, engine has %d", len(ref.W()), d))
	}
	e.ref = ref
	copy(e.refW, ref.W())
	e.refWNorm = norm2(e.refW)
	e.hasNext = next != nil
	if e.hasNext {
		if !next.FitsDim(d) {
			panic(fmt.Sprintf("align: SetReference: next sample of length %d, want %d", len(next.V), d))
		}
		e.next = *next
		q, ok := ref.Loss().(*stream.Quadratic)
		e.quad = ok
		if ok {
			if e.hess == nil {
				e.hess = make([]float64, d*d)
			}
			q.HessianTo(e.hess, e.next)
		}
		e.grad(&e.scratch, e.refG, e.refW)
	} else {
		clear(e.refG)
	}
	if e.coef != nil {
		// The block only if a state falls back to it (refBlockOut);
		// Apply gives the bits of the block's gradient column.
		e.refBlock = false
		e.coef.newStep()
		e.coef.registerRef(&e.refView, ref.Memory())
		if e.hasNext {
			copy(e.refDir, e.direction(e.refDir, ref, e.refG))
		} else {
			clear(e.refDir)
		}
		return
	}
	e.setGradColumn(&e.scratch, e.refG)
	e.ba.apply(ref.Memory(), e.refOut, e.in)
	for k := range e.refDir {
		e.refDir[k] = e.refOut[k*e.ld+e.nb]
	}
}

// refBlockOut computes the reference's probe block of the current step
// once, for the states that fall back to the block sweep in coefficient
// mode. Safe for concurrent use.
func (e *Engine) refBlockOut() {
	e.refMu.Lock()
	defer e.refMu.Unlock()
	if e.refBlock {
		return
	}
	if e.refIn == nil {
		e.refIn = make([]float64, e.d*e.ld)
		for j, q := range e.basis {
			for k, v := range q {
				e.refIn[k*e.ld+j] = v
			}
		}
		e.refBA = newBlockApplier(e.d, e.ld)
		e.refOut = make([]float64, e.d*e.ld)
	}
	for k, v := range e.refG {
		e.refIn[k*e.ld+e.nb] = v
	}
	e.refBA.apply(e.ref.Memory(), e.refOut, e.refIn)
	e.refBlock = true
}

// CoefficientStats returns how many states' E_Z the coefficient space gave
// and how many fell back to the block sweep, since the engine was made.
func (e *Engine) CoefficientStats() (used, fellBack uint64) {
	if e.coef == nil {
		return 0, 0
	}
	e.coef.mu.Lock()
	defer e.coef.mu.Unlock()
	return e.coef.used, e.coef.fellBack
}

// grad stores ∇ℓ_e(w) of the next event in dst. For a quadratic loss it is
// H(α)(w − a) with H(α) formed once per step (stream.Quadratic.HessianTo),
// each component summed in increasing index order (four rows at a time,
// each row its own sum); it agrees with stream.Quadratic.Grad to round-off
// and is the same computation for every state of a step.
func (e *Engine) grad(sc *scratch, dst, w []float64) {
	if !e.quad {
		e.ref.Loss().Grad(dst, w, e.next)
		return
	}
	d := e.d
	r := sc.diff[:d]
	for j, a := range e.next.V {
		r[j] = w[j] - a
	}
	h := e.hess
	i := 0
	for ; i+4 <= d; i += 4 {
		h0 := h[i*d : (i+1)*d : (i+1)*d]
		h1 := h[(i+1)*d : (i+2)*d : (i+2)*d]
		h2 := h[(i+2)*d : (i+3)*d : (i+3)*d]
		h3 := h[(i+3)*d : (i+4)*d : (i+4)*d]
		var s0, s1, s2, s3 float64
		for j, rj := range r {
			s0 += h0[j] * rj
			s1 += h1[j] * rj
			s2 += h2[j] * rj
			s3 += h3[j] * rj
		}
		dst[i], dst[i+1], dst[i+2], dst[i+3] = s0, s1, s2, s3
	}
	for ; i < d; i++ {
		row := h[i*d : (i+1)*d : (i+1)*d]
		var s float64
		for j, rj := range r {
			s += row[j] * rj
		}
		dst[i] = s
	}
}

// direction returns H_Z ∇ℓ_e(w) of learner l for the next insert e, with
// the bits of the block's gradient column. With the coefficient space and a
// loss other than the quadratic, it is the learner's own
// olbfgs.Learner.NextDirection (Loss.Grad, then Memory.Apply: the bits of
// the gradient column), which the learner keeps and reuses at that insert,
// so that D_upd costs no two-loop of its own; g is then not read. Otherwise
// (block sweep, or a quadratic loss, whose gradient grad forms from the
// step's Hessian) it is Memory.Apply of the gradient g, computed into dst.
// The returned slice is dst or the learner's scratch; only read it.
func (e *Engine) direction(dst []float64, l *olbfgs.Learner, g []float64) []float64 {
	if e.coef != nil && !e.quad {
		return l.NextDirection(e.next)
	}
	l.Memory().Apply(dst, g)
	return dst
}

func (e *Engine) setGradColumn(sc *scratch, g []float64) {
	for k, v := range g {
		sc.in[k*e.ld+e.nb] = v
	}
}

// Measure returns the metrics of state st against the current reference
// (set by SetReference). It does not allocate. When st is bitwise identical
// to the reference in w and Z (memory pairs, order and sources, see
// olbfgs.Memory.Equal) every error is exactly 0 and nothing else is
// computed; when only Z is identical, E_Z = 0 exactly and the probe block is
// skipped. It panics if no reference is set or st's dimension is not d.
//
// With the coefficient space (Options.MemoryError, d ≥ CoefficientMinDim by
// default) and a loss other than the quadratic, the update direction is the
// learner's olbfgs.Learner.NextDirection, which st keeps for its next insert
// (so Measure writes st's scratch, never its state; SetReference does the
// same with the reference). Measure allocates when a state brings new pairs, and reads pairs
// through the memories that held them when first seen at this step: a
// memory measured at a step must not change until the next SetReference.
func (e *Engine) Measure(st *olbfgs.Learner) Point {
	if e.ref == nil {
		panic("align: Measure before SetReference")
	}
	if e.coef != nil {
		e.coef.finishRef(&e.refView, 1) // the reference's new pairs, if not yet
	}
	return e.measure(&e.scratch, st)
}

// MeasureAll stores in dst[i] the metrics of states[i] against the current
// reference, exactly as Measure would (the same bits), measuring up to
// workers states at a time on as many goroutines. The states must be
// distinct learners, none of them the reference, and must not change
// during the call. The first call with more workers than before allocates
// their buffers (two d×(m_q+1) blocks each, or d×(d+1) when the engine uses
// the probes' Cholesky factor; with the coefficient space only when a state
// falls back to the block sweep); later calls do not allocate except for the
// goroutines (with one worker, nothing: the coefficient space recycles its
// pair entries once it has held as many as it holds at once,
// TestCoefficientStepAllocs). It panics if no
// reference is set, len(dst) ≠ len(states) or a state's dimension is not d.
func (e *Engine) MeasureAll(dst []Point, states []*olbfgs.Learner, workers int) {
	if e.ref == nil {
		panic("align: MeasureAll before SetReference")
	}
	if len(dst) != len(states) {
		panic(fmt.Sprintf("align: MeasureAll: %d points for %d states", len(dst), len(states)))
	}
	workers = min(workers, len(states))
	if e.coef != nil {
		// New pairs' inner products in batches, on all workers.
		// (A memory equal to the reference's only looks its pairs up.)
		e.mems = e.mems[:0]
		for _, st := range states {
			e.mems = append(e.mems, st.Memory())
		}
		e.coef.prepare(&e.refView, e.mems, workers)
	}
	if workers <= 1 {
		for i, st := range states {
			dst[i] = e.measure(&e.scratch, st)
		}
		return
	}
	for len(e.extra) < workers-1 {
		sc := newScratch(e.d)
		if e.coef == nil {
			e.ensureBlock(sc) // the basis columns; gradient columns are set per state
		}
		e.extra = append(e.extra, sc)
	}
	var next atomic.Int64
	var wg sync.WaitGroup
	run := func(sc *scratch) {
		for {
			i := int(next.Add(1)) - 1
			if i >= len(states) {
				return
			}
			dst[i] = e.measure(sc, states[i])
		}
	}
	for _, sc := range e.extra[:workers-1] {
		wg.Go(func() { run(sc) })
	}
	run(&e.scratch)
	wg.Wait()
}

// measure is Measure with the buffers of sc, which no other goroutine may
// use meanwhile; it only reads the engine's reference fields.
func (e *Engine) measure(sc *scratch, st *olbfgs.Learner) Point {
	w := st.W()
	if len(w) != e.d {
		panic(fmt.Sprintf("align: Measure: dimension %d, engine has %d", len(w), e.d))
	}
	mem := st.Memory()
	p := Point{RefWNorm: e.refWNorm, Mdirect: mem.DirectMass(e.u), DupdDefined: e.hasNext}
	wEq := floatbits.Equal(w, e.refW)
	memEq := e.memEqual(mem)
	if wEq && memEq {
		p.Identical = true
		return p
	}
	if !wEq {
		for k := range w {
			sc.diff[k] = w[k] - e.refW[k]
		}
		p.Ew = norm2(sc.diff)
	}
	switch {
	case memEq:
		// E_Z = 0; wEq is false, so the direction needs H_Z̃ ∇ℓ_e(w̃), which
		// Apply gives with the same bits as the block's gradient column.
		if e.hasNext {
			g := sc.g
			if e.coef == nil || e.quad {
				e.grad(sc, g, w)
			}
			p.Dupd = DirectionError(e.direction(sc.dir, st, g), e.refDir)
		}
	default:
		if e.coef != nil {
			if sc.cs == nil {
				sc.cs = &coefScratch{}
			}
			ez, _, ok := e.coef.memoryError(sc.cs, &e.refView, mem, coeffTolFrac*max(1, e.refWNorm))
			e.coef.mu.Lock()
			if ok {
				e.coef.used++
			} else {
				e.coef.fellBack++
			}
			e.coef.mu.Unlock()
			if ok {
				p.EZ = ez
				if e.hasNext {
					g := e.refG
					if !wEq && e.quad {
						e.grad(sc, sc.g, w)
						g = sc.g
					}
					p.Dupd = DirectionError(e.direction(sc.dir, st, g), e.refDir)
				}
				break
			}
			e.refBlockOut()
			e.ensureBlock(sc)
		}
		if e.hasNext {
			g := e.refG // the same w gives the same gradient
			if !wEq {
				e.grad(sc, sc.g, w)
				g = sc.g
			}
			e.setGradColumn(sc, g)
		}
		sc.ba.apply(mem, sc.out, sc.in)
		p.EZ = e.memoryError(sc.out)
		if e.hasNext {
			for k := range sc.dir {
				sc.dir[k] = sc.out[k*e.ld+e.nb]
			}
			p.Dupd = DirectionError(sc.dir, e.refDir)
		}
	}
	p.ETheta = p.Ew + e.lambdaZ*p.EZ
	return p
}

// memoryError returns sqrt((1/m_q)·Σ ‖out_j − refOut_j‖²) over the basis
// columns: row by row, the squared differences of columns j go into partial
// sum j mod 4, combined as (s0+s1)+(s2+s3) at the end.
func (e *Engine) memoryError(out []float64) float64 {
	ld, nb := e.ld, e.nb
	var s0, s1, s2, s3 float64
	for k := 0; k < e.d; k++ {
		a := out[k*ld : k*ld+nb : k*ld+nb]
		b := e.refOut[k*ld : k*ld+nb : k*ld+nb]
		j := 0
		for ; j+4 <= nb; j += 4 {
			t0, t1, t2, t3 := a[j]-b[j], a[j+1]-b[j+1], a[j+2]-b[j+2], a[j+3]-b[j+3]
			s0 += t0 * t0
			s1 += t1 * t1
			s2 += t2 * t2
			s3 += t3 * t3
		}
		for ; j < nb; j++ {
			t := a[j] - b[j]
			s0 += t * t
		}
	}
	s := (s0 + s1) + (s2 + s3)
	if !math.IsInf(s, 1) {
		return math.Sqrt(s / float64(e.m))
	}
	// Entries beyond ~1e154: rescale by a power of two.
	var mx float64
	for k := 0; k < e.d; k++ {
		for j := 0; j < nb; j++ {
			mx = math.Max(mx, math.Abs(out[k*ld+j]-e.refOut[k*ld+j]))
		}
	}
	_, ex := math.Frexp(mx)
	s = 0
	for k := 0; k < e.d; k++ {
		for j := 0; j < nb; j++ {
			t := math.Ldexp(out[k*ld+j]-e.refOut[k*ld+j], -ex)
			s += t * t
		}
	}
	return math.Ldexp(math.Sqrt(s/float64(e.m)), ex)
}
