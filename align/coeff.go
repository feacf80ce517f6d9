package align

import (
	"math"
	"sync"

	"gonum.org/v1/gonum/floats"

	"unlearn/olbfgs"
)

// E_Z in the pairs' coefficient space.
//
// The two-loop recursion (Nocedal & Wright, Algorithm 7.4) only ever adds
// multiples of the pairs' vectors to its input, so for a memory Z with pairs
// (s_i, y_i), i = 1..n, and scale γ,
//
//	H_Z q = γ·q + Σ_i (σ_i·s_i + η_i·y_i),
//
// the compact form of Byrd, Nocedal & Schnabel ("Representations of
// quasi-Newton matrices and their use in limited memory methods", Math.
// Programming 63 (1994) 129–156, §2, Theorem 2.2: H = γI + [S γY] M [S γY]ᵀ).
// The coefficients σ, η follow from the two-loop run on coordinates: every
// dot product it takes, s_iᵀr or y_iᵀr, is a combination of the inner
// products qᵀs_k, qᵀy_k and the Gram matrix of the pairs, so they cost
// O(n²) per probe once those are known. For the state Z̃ and the reference
// Z⁻, with δγ = γ̃ − γ⁻ and Δc the difference of the two coefficient vectors
// over the union of their pairs (a pair stored bitwise equal in both is one
// vector, its coefficients subtracted exactly there),
//
//	‖(H_Z̃ − H_Z⁻) q‖² = δγ²‖q‖² + 2δγ·Σ_k Δc_k (qᵀv_k) + Σ_kl Δc_k Δc_l (v_kᵀv_l).
//
// Only Qᵀv and the Gram matrix VᵀV enter: E_Z depends on the probes through
// P = QQᵀ alone (E_Z² = tr(ΔH P ΔH)/m_q). Pairs are immutable once pushed,
// so both are kept per pair, keyed by the pair's bits, and computed once
// when a pair first appears in any state (m_q dot products of length d for
// Qᵀs and Qᵀy, four per other pair for the Gram entries): the cost per
// state and step is O(τ·m_q + τ·d) (plus O(τ²·m_q) for the recursion)
// instead of the block sweep's O(τ·d·m_q).
//
// # Accuracy and the fallback
//
// The inner-product form can cancel: when the two memories hold different
// but nearly equal pairs, Δc has large entries of both signs whose vectors
// nearly cancel, and the quadratic form loses what a vector difference would
// keep. Every value therefore comes with an a-posteriori round-off estimate
// (unit round-off u = 2⁻⁵³), and is used only when the estimate is within
// coeffTolFrac·max(1, ‖w⁻‖), a tenth of the spec's 10⁻⁹·max(1, ‖w⁻‖);
// otherwise the engine falls back to the block sweep for that state. With
// μ_j = (γ̃ + γ⁻)‖q_j‖ + Σ_k (|c̃_kj| + |c⁻_kj|)·‖v_k‖ the mass of the two
// representations of probe j, μΔ_j = |δγ|‖q_j‖ + Σ_k |Δc_kj|·‖v_k‖ that of
// their difference, x_j² = S_j the computed ‖ΔH q_j‖² and κ = max_i
// ‖s_i‖‖y_i‖/(s_iᵀy_i) over both memories:
//
//   - Representation error. Each of the 2n + 1 steps of the recursion forms
//     a dot product (of length d, through the Gram entries, whose error is
//     taken as the probabilistic u·√d of Higham & Mary, SIAM J. Sci. Comput.
//     41 (2019) A2815–A2835, rather than the worst-case u·d, plus a few u
//     for the sums over k), divides it by s_iᵀy_i and multiplies a vector
//     by it: its absolute error, as a vector, is at most about
//     u·(√d + 8)·κ times the norm of what it multiplies, and every such norm
//     is bounded by μ_j. So the vector the computed coefficients represent
//     is within e_j = u·(2n+2)·(√d + 8)·κ·μ_j of the exact ΔH q_j, which
//     moves ‖ΔH q_j‖² by at most 2·x_j·e_j + e_j².
//   - Evaluation error. The quadratic form itself, with Gram entries in
//     error by u·√d·‖v_k‖‖v_l‖ and sums of 2N + 2 terms, errs by at most
//     (u·(2N + 4) + u·√d)·μΔ_j²: this is the term that is large when Δc
//     cancels, since μΔ_j is then of the size of μ_j, not of x_j.
//
// The estimate of the error in E_Z² = (1/m_q) Σ_j S_j is δS = 2·(1/m_q) Σ_j
// of the above (a factor 2 of safety), and that of E_Z is
// √(S + δS) − √(max(S − δS, 0)). It is a first-order estimate, not a
// rigorous bound (the dot-product term is probabilistic);
// TestCoefficientEZErrorEstimate checks it against E_Z computed in
// 256-bit big.Float arithmetic on random memories, including nearly equal,
// shared and ill-conditioned pairs.
//
// Pairs are identified by a 64-bit hash of their bits (s, y and sᵀy): two
// different pairs with the same hash would be taken for one. Over a run
// with 10⁴ distinct pairs the chance is about 10⁸/2⁶⁵ ≈ 3·10⁻¹²; the hash
// is not keyed, so it is no defence against pairs crafted to collide.

// coeffTolFrac is the fraction of max(1, ‖w⁻‖) within which the round-off
// estimate must lie for the coefficient-space E_Z to be used: a tenth of
// the spec's reproducibility tolerance 10⁻⁹·max(1, ‖w⁻‖) (ExactTol).
const coeffTolFrac = 1e-10

// CoefficientMinDim is the smallest dimension d at which
// MemoryErrorAuto uses the coefficient space. Below it the block sweep is
// cheap (at d = 25 a state's block costs a few µs) and its results are the
// ones the benchmark's tables were made with, bit for bit.
const CoefficientMinDim = 4096

// MemoryErrorMethod selects how an [Engine] computes E_Z.
type MemoryErrorMethod int

const (
	// MemoryErrorAuto uses the coefficient space from d ≥
	// CoefficientMinDim (with the block sweep as fallback) and the block
	// sweep below.
	MemoryErrorAuto MemoryErrorMethod = iota
	// MemoryErrorBlock always applies both memories to the probe block.
	MemoryErrorBlock
	// MemoryErrorCoefficients always tries the coefficient space first,
	// whatever d (falling back to the block sweep when its round-off
	// estimate is too large). For tests and measurements.
	MemoryErrorCoefficients
)

// pairEntry is what the engine keeps of one distinct pair.
type pairEntry struct {
	key    uint64
	s, y   []float64 // alias a memory holding the pair; set when gen is refreshed
	gen    uint64    // the last step at which a memory held the pair
	once   sync.Once
	ns, ny float64   // ‖s‖, ‖y‖
	qs, qy []float64 // Qᵀs, Qᵀy (m_q each)
}

// gramEntry holds s_aᵀs_b, s_aᵀy_b, y_aᵀs_b, y_aᵀy_b for keys a ≤ b.
type gramEntry struct {
	once sync.Once
	v    [4]float64
}

type gramKey struct{ a, b uint64 }

// coeffSpace holds the per-pair inner products of one engine.
type coeffSpace struct {
	d, m   int
	probes [][]float64
	qn2    []float64 // ‖q_j‖²
	qn     []float64 // ‖q_j‖

	mu    sync.Mutex
	gen   uint64
	pairs map[uint64]*pairEntry
	gram  map[gramKey]*gramEntry

	used, fellBack uint64 // counters (under mu)
}

func newCoeffSpace(probes [][]float64, d int) *coeffSpace {
	c := &coeffSpace{
		d: d, m: len(probes), probes: probes,
		qn2:   make([]float64, len(probes)),
		qn:    make([]float64, len(probes)),
		pairs: map[uint64]*pairEntry{},
		gram:  map[gramKey]*gramEntry{},
	}
	for j, q := range probes {
		c.qn2[j] = floats.Dot(q, q)
		c.qn[j] = math.Sqrt(c.qn2[j])
	}
	return c
}

// newStep starts a step: entries that no memory held at the previous step
// are dropped (with their Gram entries).
func (c *coeffSpace) newStep() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.gen++
	for k, p := range c.pairs {
		if p.gen+1 < c.gen {
			delete(c.pairs, k)
		}
	}
	for k := range c.gram {
		if c.pairs[k.a] == nil || c.pairs[k.b] == nil {
			delete(c.gram, k)
		}
	}
}

// memView is one memory seen through the pair entries.
type memView struct {
	n     int
	ents  []*pairEntry
	sy    []float64
	gamma float64
	kappa float64
}

// pairHash mixes the bits of s, y and sᵀy.
func pairHash(s, y []float64, sy float64) uint64 {
	h1 := uint64(0x9e3779b97f4a7c15) ^ uint64(len(s))
	h2 := uint64(0xc2b2ae3d27d4eb4f)
	for k := range s {
		h1 ^= math.Float64bits(s[k])
		h1 *= 0xff51afd7ed558ccd
		h1 ^= h1 >> 32
		h2 ^= math.Float64bits(y[k])
		h2 *= 0xc4ceb9fe1a85ec53
		h2 ^= h2 >> 29
	}
	h := h1 ^ (h2 * 0x9e3779b97f4a7c15) ^ math.Float64bits(sy)
	h ^= h >> 31
	h *= 0xbf58476d1ce4e5b9
	h ^= h >> 27
	return h
}

// register fills v with mem's pairs, creating and computing the entries of
// new pairs. Safe for concurrent use.
func (c *coeffSpace) register(v *memView, mem *olbfgs.Memory) {
	n := mem.Len()
	v.n = n
	v.ents = v.ents[:0]
	v.sy = v.sy[:0]
	v.gamma = mem.Gamma()
	v.kappa = 1
	keys := make([]uint64, n)
	for i := range n {
		p := mem.Pair(i)
		sy := mem.Curvature(i)
		keys[i] = pairHash(p.S, p.Y, sy)
		v.sy = append(v.sy, sy)
	}
	c.mu.Lock()
	for i, k := range keys {
		e := c.pairs[k]
		if e == nil {
			e = &pairEntry{key: k}
			c.pairs[k] = e
		}
		if e.gen != c.gen || e.s == nil {
			p := mem.Pair(i)
			e.s, e.y, e.gen = p.S, p.Y, c.gen
		}
		v.ents = append(v.ents, e)
	}
	c.mu.Unlock()
	for i, e := range v.ents {
		e.once.Do(func() {
			e.ns = math.Sqrt(floats.Dot(e.s, e.s))
			e.ny = math.Sqrt(floats.Dot(e.y, e.y))
			e.qs = make([]float64, c.m)
			e.qy = make([]float64, c.m)
			for j, q := range c.probes {
				e.qs[j] = floats.Dot(q, e.s)
				e.qy[j] = floats.Dot(q, e.y)
			}
		})
		if k := e.ns * e.ny / v.sy[i]; k > v.kappa {
			v.kappa = k
		}
	}
}

// gramOf returns the four inner products of pairs a and b (a's vectors
// first), computing them on first use. Safe for concurrent use.
func (c *coeffSpace) gramOf(a, b *pairEntry) [4]float64 {
	swap := a.key > b.key
	k := gramKey{a.key, b.key}
	if swap {
		k = gramKey{b.key, a.key}
		a, b = b, a
	}
	c.mu.Lock()
	g := c.gram[k]
	if g == nil {
		g = &gramEntry{}
		c.gram[k] = g
	}
	c.mu.Unlock()
	g.once.Do(func() {
		g.v = [4]float64{floats.Dot(a.s, b.s), floats.Dot(a.s, b.y), floats.Dot(a.y, b.s), floats.Dot(a.y, b.y)}
	})
	if swap {
		return [4]float64{g.v[0], g.v[2], g.v[1], g.v[3]}
	}
	return g.v
}

// coefScratch is the scratch of one coefficient-space evaluation.
type coefScratch struct {
	st         memView
	union      []*pairEntry
	posS, posR []int
	gu         []float64 // (2N)×(2N) Gram matrix of the union's vectors
	a, cs, cy  []float64 // n×m per memory
	acc        []float64 // m
	dc, gd     []float64 // (2N)×m
	mass, dm   []float64 // m
}

func grow(b []float64, n int) []float64 {
	if cap(b) < n {
		return make([]float64, n)
	}
	b = b[:n]
	clear(b)
	return b
}

// coefficients runs the two-loop recursion on coordinates for every probe
// at once and adds sign·(its coefficients) to the union's Δc (cs.dc) and
// their magnitudes to cs.mass. pos maps the memory's pairs to the union.
func (c *coeffSpace) coefficients(cs *coefScratch, v *memView, pos []int, sign float64) {
	m, n := c.m, v.n
	ldu := 2 * len(cs.union)
	gu := cs.gu
	cs.a = grow(cs.a, n*m)
	cs.cs = grow(cs.cs, n*m)
	cs.cy = grow(cs.cy, n*m)
	cs.acc = grow(cs.acc, m)
	a, cS, cY, acc := cs.a, cs.cs, cs.cy, cs.acc
	// First loop, newest → oldest: a_i = s_iᵀr/(s_iᵀy_i), r = r − a_i·y_i,
	// with r = q + Σ_k cY_k·y_k.
	for i := n - 1; i >= 0; i-- {
		copy(acc, v.ents[i].qs)
		row := 2 * pos[i] * ldu
		for k := i + 1; k < n; k++ {
			g := gu[row+2*pos[k]+1] // s_iᵀy_k
			floats.AddScaled(acc, g, cY[k*m:(k+1)*m])
		}
		for j := range m {
			aij := acc[j] / v.sy[i]
			a[i*m+j] = aij
			cY[i*m+j] = -aij
		}
	}
	gamma := v.gamma
	floats.Scale(gamma, cY)
	// Second loop, oldest → newest: b = y_iᵀr/(s_iᵀy_i), r = r + (a_i − b)·s_i.
	for i := range n {
		floats.ScaleTo(acc, gamma, v.ents[i].qy)
		row := (2*pos[i] + 1) * ldu
		for k := range n {
			if gs := gu[row+2*pos[k]]; k < i { // y_iᵀs_k; cS_k = 0 for k ≥ i
				floats.AddScaled(acc, gs, cS[k*m:(k+1)*m])
			}
			floats.AddScaled(acc, gu[row+2*pos[k]+1], cY[k*m:(k+1)*m])
		}
		for j := range m {
			cS[i*m+j] += a[i*m+j] - acc[j]/v.sy[i]
		}
	}
	for i := range n {
		e := v.ents[i]
		rs, ry := 2*pos[i]*m, (2*pos[i]+1)*m
		for j := range m {
			x, y := cS[i*m+j], cY[i*m+j]
			cs.dc[rs+j] += sign * x
			cs.dc[ry+j] += sign * y
			cs.mass[j] += math.Abs(x)*e.ns + math.Abs(y)*e.ny
		}
	}
}

// memoryError returns E_Z of the state memory st against the reference view
// rv (registered at this step), and whether its round-off estimate is
// within tol. It does not touch the memories' own scratch.
func (c *coeffSpace) memoryError(cs *coefScratch, rv *memView, st *olbfgs.Memory, tol float64) (ez, est float64, ok bool) {
	c.register(&cs.st, st)
	sv := &cs.st
	// The union of the two memories' pairs.
	cs.union = cs.union[:0]
	cs.posR, cs.posS = cs.posR[:0], cs.posS[:0]
	index := func(e *pairEntry) int {
		for u, f := range cs.union {
			if f == e {
				return u
			}
		}
		cs.union = append(cs.union, e)
		return len(cs.union) - 1
	}
	for _, e := range rv.ents {
		cs.posR = append(cs.posR, index(e))
	}
	for _, e := range sv.ents {
		cs.posS = append(cs.posS, index(e))
	}
	nu := len(cs.union)
	ldu := 2 * nu
	cs.gu = grow(cs.gu, ldu*ldu)
	for u := range nu {
		for w := u; w < nu; w++ {
			g := c.gramOf(cs.union[u], cs.union[w])
			cs.gu[2*u*ldu+2*w], cs.gu[2*u*ldu+2*w+1] = g[0], g[1]
			cs.gu[(2*u+1)*ldu+2*w], cs.gu[(2*u+1)*ldu+2*w+1] = g[2], g[3]
			cs.gu[2*w*ldu+2*u], cs.gu[(2*w+1)*ldu+2*u] = g[0], g[1]
			cs.gu[2*w*ldu+2*u+1], cs.gu[(2*w+1)*ldu+2*u+1] = g[2], g[3]
		}
	}
	m := c.m
	cs.dc = grow(cs.dc, ldu*m)
	cs.mass = grow(cs.mass, m)
	c.coefficients(cs, sv, cs.posS, 1)
	c.coefficients(cs, rv, cs.posR, -1)
	// S_j = δγ²‖q_j‖² + 2δγ Σ_k Δc_kj (q_jᵀv_k) + Σ_kl Δc_kj G_kl Δc_lj.
	dg := sv.gamma - rv.gamma
	cs.gd = grow(cs.gd, ldu*m)
	for k := range ldu {
		for l := range ldu {
			if g := cs.gu[k*ldu+l]; g != 0 {
				floats.AddScaled(cs.gd[k*m:(k+1)*m], g, cs.dc[l*m:(l+1)*m])
			}
		}
	}
	cs.dm = grow(cs.dm, m)
	for j := range m {
		cs.dm[j] = math.Abs(dg) * c.qn[j]
	}
	var s, ds float64
	n := max(sv.n, rv.n)
	kappa := max(sv.kappa, rv.kappa)
	const u = 0x1p-53
	sqd := math.Sqrt(float64(c.d))
	epsC := u * float64(2*n+2) * (sqd + 8) * kappa
	epsE := u * (float64(2*ldu+4) + sqd)
	for j := range m {
		var lin, quad float64
		for w := range nu {
			e := cs.union[w]
			cs1, cy1 := cs.dc[2*w*m+j], cs.dc[(2*w+1)*m+j]
			lin += cs1*e.qs[j] + cy1*e.qy[j]
			quad += cs1*cs.gd[2*w*m+j] + cy1*cs.gd[(2*w+1)*m+j]
			cs.dm[j] += math.Abs(cs1)*e.ns + math.Abs(cy1)*e.ny
		}
		sj := dg*dg*c.qn2[j] + 2*dg*lin + quad
		s += sj
		mu := (sv.gamma+rv.gamma)*c.qn[j] + cs.mass[j]
		ej := epsC * mu
		x := math.Sqrt(max(sj, 0))
		ds += 2*x*ej + ej*ej + epsE*cs.dm[j]*cs.dm[j]
	}
	fm := float64(m)
	s /= fm
	ds = 2 * ds / fm
	if math.IsNaN(s) || math.IsInf(s, 0) || math.IsNaN(ds) || math.IsInf(ds, 0) {
		return 0, math.Inf(1), false
	}
	ez = math.Sqrt(max(s, 0))
	est = math.Sqrt(max(s, 0)+ds) - math.Sqrt(max(s-ds, 0))
	return ez, est, est <= tol
}
