package align

import (
	"math"
	"slices"
	"sync"

	"gonum.org/v1/gonum/floats"

	"unlearn/internal/floatbits"
	par "unlearn/internal/parallel"
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
//   - Evaluation error. The quadratic form over the 2N vectors of the N
//     distinct pairs, with Gram entries in error by u·√d·‖v_k‖‖v_l‖ and
//     sums of at most 4N + 2 terms, errs by at most (u·(4N + 4) + u·√d)·μΔ_j²:
//     this is the term that is large when Δc cancels, since μΔ_j is then of
//     the size of μ_j, not of x_j.
//
// The estimate of the error in E_Z² = (1/m_q) Σ_j S_j is δS = 2·(1/m_q) Σ_j
// of the above (a factor 2 of safety), and that of E_Z is
// √(S + δS) − √(max(S − δS, 0)) + 4u·E_Z (the last divisions and square
// root). It is a first-order estimate, not a rigorous bound (the
// dot-product term is probabilistic); TestCoefficientEZErrorEstimate checks
// it against E_Z computed in
// 256-bit big.Float arithmetic on random memories, including nearly equal,
// shared and ill-conditioned pairs.
//
// Pairs are identified by a 64-bit hash of their bits (sᵀy and sampled
// coordinates of s and y, pairHash), computed once per pair and reused while the pair stays in its slot
// (slotTag). A hash is only a candidate: when a newly hashed pair finds an
// entry under its key, the entry is taken only if its vectors, read
// through a memory that holds them at this step, are bitwise equal to the
// pair's (and sᵀy too); otherwise — a collision, or an entry from an
// earlier step whose memory may have changed since — the next key
// (key + 2) is tried, so two different pairs are never merged whatever the
// hash (TestCoefficientCollidingHash forces every pair onto one hash).
// Sharing an entry between memories at the same step, the point of the
// keys, is kept; a pair that first appears in a new memory after the step
// it was hashed at gets an entry of its own, which costs its inner
// products again but changes nothing else.

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
	sy     float64   // sᵀy as the memory stores it
	gen    uint64    // the last step at which a memory held the pair
	mark   uint64    // prepare's step stamp: the entry is in its batch
	once   sync.Once
	ns, ny float64   // ‖s‖, ‖y‖
	qs, qy []float64 // Qᵀs, Qᵀy (m_q each)

	nj, hubAt int // gramGroups' scratch (under gramProducts' caller)
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

	// hash is pairHash, replaceable by tests to force collisions.
	hash func(s, y []float64, sy float64) uint64

	mu    sync.Mutex
	gen   uint64
	pairs map[uint64]*pairEntry
	gram  map[gramKey]*gramEntry
	slots map[*olbfgs.Memory]*slotTags

	// Entries dropped by newStep, reused (with their Qᵀs, Qᵀy storage) for
	// new pairs, so that a step does not allocate once the engine has held
	// as many pairs as it holds at once.
	freeP []*pairEntry
	freeG []*gramEntry

	// Buffers of prepare, reused from step to step: partial sums of the
	// batches, the states' views, the new pairs, the Gram jobs.
	partP []float64
	partG [][4]float64
	views []memView
	fresh []*pairEntry
	jobs  []gramJob
	all   []*pairEntry

	// refFresh are the reference's new pairs of the step, registered but
	// not computed yet (registerRef, then prepare or finishRef).
	refFresh []*pairEntry

	groups []gramGroup // gramProducts' grouping of the jobs (gramGroups)
	byHub  []int

	used, fellBack uint64 // counters (under mu)
}

func newCoeffSpace(probes [][]float64, d int) *coeffSpace {
	c := &coeffSpace{
		d: d, m: len(probes), probes: probes,
		qn2:   make([]float64, len(probes)),
		qn:    make([]float64, len(probes)),
		hash:  pairHash,
		pairs: map[uint64]*pairEntry{},
		gram:  map[gramKey]*gramEntry{},
		slots: map[*olbfgs.Memory]*slotTags{},
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
			c.freeP = append(c.freeP, p)
		}
	}
	for k, g := range c.gram {
		if c.pairs[k.a] == nil || c.pairs[k.b] == nil {
			delete(c.gram, k)
			c.freeG = append(c.freeG, g)
		}
	}
}

// newEntry returns an entry for key k, recycled if possible (under mu).
func (c *coeffSpace) newEntry(k uint64) *pairEntry {
	var e *pairEntry
	if n := len(c.freeP); n > 0 {
		e = c.freeP[n-1]
		c.freeP = c.freeP[:n-1]
		qs, qy := e.qs[:0], e.qy[:0]
		*e = pairEntry{qs: qs, qy: qy} // qs, qy empty: not computed
	} else {
		e = &pairEntry{}
	}
	e.key = k
	return e
}

// newGram returns an empty Gram entry, recycled if possible (under mu).
func (c *coeffSpace) newGram() *gramEntry {
	if n := len(c.freeG); n > 0 {
		g := c.freeG[n-1]
		c.freeG = c.freeG[:n-1]
		*g = gramEntry{}
		return g
	}
	return &gramEntry{}
}

// computed reports whether the entry's norms and probe products are set.
func (e *pairEntry) computed() bool { return len(e.qs) > 0 }

// memView is one memory seen through the pair entries.
type memView struct {
	keys  []uint64
	tags  []slotTag // keysOf's scratch
	n     int
	ents  []*pairEntry
	sy    []float64
	gamma float64
	kappa float64
}

// hashSamples is the number of coordinates of s and y that pairHash mixes.
const hashSamples = 64

// pairHash mixes the bits of sᵀy and of up to hashSamples evenly spaced
// coordinates of s and y (all of them for d ≤ hashSamples). A hash only
// proposes an entry, which resolve checks bit for bit, so it need not read
// every coordinate: pairs equal on the samples cost one comparison, never
// a merge, and a new pair is hashed in O(1) instead of O(d).
func pairHash(s, y []float64, sy float64) uint64 {
	h1 := uint64(0x9e3779b97f4a7c15) ^ uint64(len(s))
	h2 := uint64(0xc2b2ae3d27d4eb4f)
	step := max(1, len(s)/hashSamples)
	for k := 0; k < len(s); k += step {
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

// slotTag identifies the pair a memory held at a position when its key
// was last computed: the slot's storage, sᵀy and the first and last
// coordinates of s and y, and the source. The tags are trusted only across
// no change of the memory, or one push (Memory.PushedSince), which leaves
// every other pair in its slot untouched; the pushed pair, newest, is
// always hashed again (it may fill an evicted pair's slot with the same
// tag). After any other change (Reset, CopyFrom, DropTouching, several
// pushes) every pair is hashed again: a tag does not identify a pair's
// vectors (a refill with other middle coordinates, the same sᵀy and source
// has the same tag; ADV5-F2), only the memory's version does.
type slotTag struct {
	s, y               *float64
	sy, s0, sl, y0, yl uint64
	src0               int64
	nsrc               int
	key                uint64
}

// slotTags are the tags of one memory's pairs, set at step gen. They are
// used only at the step they were set at or the next one: an entry held at
// step g is not dropped before step g + 2 (newStep), so until then its key
// names it and no other pair; later the key may have been given to another
// pair, and every pair of the memory is hashed again.
type slotTags struct {
	gen  uint64
	ver  uint64 // the memory's Version when tagged
	tags []slotTag
}

func tagOf(p olbfgs.Pair, sy float64) slotTag {
	t := slotTag{s: &p.S[0], y: &p.Y[0], sy: math.Float64bits(sy),
		s0: math.Float64bits(p.S[0]), sl: math.Float64bits(p.S[len(p.S)-1]),
		y0: math.Float64bits(p.Y[0]), yl: math.Float64bits(p.Y[len(p.Y)-1]), nsrc: len(p.Source)}
	if len(p.Source) > 0 {
		t.src0 = p.Source[0]
	}
	return t
}

// keysOf stores in v.keys the keys of mem's pairs, hashing only pairs not
// seen at their position before, and resolving a new hash to an entry with
// bitwise the same pair (resolve). Safe for concurrent use on distinct
// memories.
func (c *coeffSpace) keysOf(v *memView, mem *olbfgs.Memory) {
	n := mem.Len()
	keys := v.keys[:0]
	c.mu.Lock()
	st := c.slots[mem]
	if st == nil {
		st = &slotTags{}
		c.slots[mem] = st
	}
	old := st.tags
	ver := mem.Version()
	fresh := n // positions below fresh may keep a tagged key
	switch {
	case st.gen+1 < c.gen:
		old = nil // too old to be trusted
	case ver == st.ver:
	case mem.PushedSince(st.ver):
		fresh = n - 1 // the pushed pair is hashed again
	default:
		old = nil // reset, copied, dropped or pushed more than once
	}
	c.mu.Unlock()
	if cap(v.tags) < n {
		v.tags = make([]slotTag, n, mem.Cap())
	}
	tags := v.tags[:n]
	for i := range n {
		p := mem.Pair(i)
		sy := mem.Curvature(i)
		t := tagOf(p, sy)
		t.key = 0
		for _, o := range old {
			if i >= fresh {
				break
			}
			k := o.key
			o.key = 0
			if o == t {
				t.key = k
				break
			}
		}
		if t.key == 0 {
			t.key = c.resolve(c.hash(p.S, p.Y, sy)|1, p, sy) // odd: never 0
		}
		tags[i] = t
		keys = append(keys, t.key)
	}
	v.keys = keys
	c.mu.Lock()
	st.tags = append(st.tags[:0], tags...)
	st.gen, st.ver = c.gen, ver
	c.mu.Unlock()
}

// resolve returns the key of the entry for pair p with curvature sy, given
// its hash k (odd): the first of k, k+2, k+4, … that is free (an entry is
// then created, aliasing p) or holds an entry whose vectors, aliased from a
// memory that holds them at this step, are bitwise p's. An entry from an
// earlier step cannot be checked (its memory may have changed since) and
// is passed over like a collision.
func (c *coeffSpace) resolve(k uint64, p olbfgs.Pair, sy float64) uint64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	for ; ; k += 2 {
		e := c.pairs[k]
		if e == nil {
			e = c.newEntry(k)
			e.s, e.y, e.sy, e.gen = p.S, p.Y, sy, c.gen
			c.pairs[k] = e
			return k
		}
		if e.gen == c.gen && math.Float64bits(e.sy) == math.Float64bits(sy) &&
			floatbits.Equal(e.s, p.S) && floatbits.Equal(e.y, p.Y) {
			return k
		}
	}
}

// attach fills v with mem's pairs under the given keys, creating the
// entries of new pairs (not computed). Safe for concurrent use.
func (c *coeffSpace) attach(v *memView, mem *olbfgs.Memory, keys []uint64) {
	n := mem.Len()
	v.n = n
	v.ents = v.ents[:0]
	v.sy = v.sy[:0]
	v.gamma = mem.Gamma()
	v.kappa = 1
	c.mu.Lock()
	for i, k := range keys {
		e := c.pairs[k]
		if e == nil { // a key kept by its slot tag whose entry was dropped
			e = c.newEntry(k)
			c.pairs[k] = e
		}
		if e.gen != c.gen || e.s == nil {
			p := mem.Pair(i)
			e.s, e.y, e.sy, e.gen = p.S, p.Y, mem.Curvature(i), c.gen
		}
		v.ents = append(v.ents, e)
		v.sy = append(v.sy, mem.Curvature(i))
	}
	c.mu.Unlock()
}

// chunk is the number of coordinates the kernels sweep at a time: the
// chunks of a probe and of every pair involved stay in L1/L2 while they are
// combined, so each vector is read from memory once per batch. Partial
// sums are kept per chunk and added in chunk order, so the results do not
// depend on the number of workers nor on the batch a pair is computed in.
const chunk = 512

// probeProducts fills the norms and probe products Qᵀs, Qᵀy of the entries,
// on up to workers goroutines.
// buf, if not nil, is reused for the partial sums.
func (c *coeffSpace) probeProducts(fresh []*pairEntry, workers int, buf *[]float64) {
	if len(fresh) == 0 {
		return
	}
	d, m, w := c.d, c.m, 2*len(fresh)+2*len(fresh)
	nch := (d + chunk - 1) / chunk
	var part []float64
	if buf != nil {
		*buf = grow(*buf, nch*(m+1)*w)
		part = *buf
	} else {
		part = make([]float64, nch*(m+1)*w)
	}
	if workers <= 1 || nch <= 1 { // no closure: nothing allocated
		for ci := range nch {
			c.probeChunk(ci, fresh, part, w)
		}
	} else {
		parallel(workers, nch, func(ci int) { c.probeChunk(ci, fresh, part, w) })
	}
	for x, e := range fresh {
		e.qs = grow(e.qs, m)
		e.qy = grow(e.qy, m)
		var ss, yy float64
		for ci := range nch {
			base := ci * (m + 1) * w
			ss += part[base+2*x]
			yy += part[base+2*len(fresh)+x]
			for j := range m {
				row := base + (j+1)*w
				e.qs[j] += part[row+2*x]
				e.qy[j] += part[row+2*x+1]
			}
		}
		e.ns, e.ny = math.Sqrt(ss), math.Sqrt(yy)
	}
}

// probeChunk computes the partial sums of chunk ci for probeProducts.
func (c *coeffSpace) probeChunk(ci int, fresh []*pairEntry, part []float64, w int) {
	m := c.m
	lo, hi := ci*chunk, min(c.d, (ci+1)*chunk)
	base := ci * (m + 1) * w
	for x, e := range fresh {
		part[base+2*x], part[base+2*x+1] = dot2(e.s[lo:hi], e.s[lo:hi], e.y[lo:hi])
		_, part[base+2*len(fresh)+x] = dot2(e.y[lo:hi], e.s[lo:hi], e.y[lo:hi])
	}
	// Pairs in groups of probeBlock, each group against every probe: the
	// group's chunks stay in L1 while the probes stream past them.
	x := 0
	for ; x+probeBlock <= len(fresh); x += probeBlock {
		var ps, py [probeBlock][]float64
		for t := range probeBlock {
			e := fresh[x+t]
			ps[t], py[t] = e.s[lo:hi], e.y[lo:hi]
		}
		for j, q := range c.probes {
			row := base + (j+1)*w
			var r [probeBlock][2]float64
			p2, y2 := ps, py
			dot2Hub(q[lo:hi], &p2, &y2, &r)
			for t := range probeBlock {
				part[row+2*(x+t)], part[row+2*(x+t)+1] = r[t][0], r[t][1]
			}
		}
	}
	for j, q := range c.probes {
		qc := q[lo:hi]
		row := base + (j+1)*w
		for y := x; y < len(fresh); y++ {
			e := fresh[y]
			part[row+2*y], part[row+2*y+1] = dot2(qc, e.s[lo:hi], e.y[lo:hi])
		}
	}
}

// probeBlock is the number of pairs dot2Hub sweeps a probe against at once.
const probeBlock = 4

// dot2Hub sets r[t] = dot2(q, ps[t], py[t]) for every t, bit for bit: with
// AVX-512 in one sweep that loads q once for all the pairs
// (dot2HubAVX512), otherwise pair by pair.
func dot2Hub(q []float64, ps, py *[probeBlock][]float64, r *[probeBlock][2]float64) {
	n := len(q)
	n8 := n &^ 7
	if !useAVX2 || !hasAVX512 || n8 == 0 {
		for t := range probeBlock {
			r[t][0], r[t][1] = dot2(q, ps[t], py[t])
		}
		return
	}
	var v [1 + 2*probeBlock]*float64
	v[0] = &q[0]
	for t := range probeBlock {
		ps[t], py[t] = ps[t][:n], py[t][:n]
		v[1+2*t], v[2+2*t] = &ps[t][0], &py[t][0]
	}
	var l [2 * probeBlock][8]float64
	dot2HubAVX512(&v, n8, &l)
	for t := range probeBlock {
		a, b := ps[t], py[t]
		for k := n8; k < n; k++ {
			j := k & 7
			l[2*t][j] += float64(q[k] * a[k])
			l[2*t+1][j] += float64(q[k] * b[k])
		}
		r[t][0], r[t][1] = sum8(l[2*t][:]), sum8(l[2*t+1][:])
	}
}

type gramJob struct {
	a, b *pairEntry
	g    *gramEntry
}

// gramProducts fills the jobs' Gram entries, on up to workers goroutines.
// buf, if not nil, is reused for the partial sums, and the jobs are swept
// in groups sharing an entry (gramGroups); buf is nil only for gramOf's
// single jobs, which may run concurrently.
func (c *coeffSpace) gramProducts(jobs []gramJob, workers int, buf *[][4]float64) {
	if len(jobs) == 0 {
		return
	}
	d := c.d
	nch := (d + chunk - 1) / chunk
	var part [][4]float64
	if buf != nil {
		if cap(*buf) < nch*len(jobs) {
			*buf = make([][4]float64, nch*len(jobs))
		}
		*buf = (*buf)[:nch*len(jobs)]
		part = *buf
	} else {
		part = make([][4]float64, nch*len(jobs))
	}
	var groups []gramGroup
	if buf != nil { // prepare's batch (not concurrent): the entries' nj, hubAt are free
		c.groups, c.byHub = gramGroups(jobs, c.groups, c.byHub)
		groups = c.groups
	} else { // gramOf's single job, possibly concurrent with others
		groups = make([]gramGroup, len(jobs))
		for t, j := range jobs {
			groups[t] = gramGroup{hub: j.a, k: 1, job: [gramBlock]int{t}}
		}
	}
	if workers <= 1 || nch <= 1 { // no closure: nothing allocated
		for ci := range nch {
			gramChunk(ci, d, jobs, groups, part)
		}
	} else {
		parallel(workers, nch, func(ci int) { gramChunk(ci, d, jobs, groups, part) })
	}
	for t, j := range jobs {
		var v [4]float64
		for ci := range nch {
			p := part[ci*len(jobs)+t]
			v[0] += p[0]
			v[1] += p[1]
			v[2] += p[2]
			v[3] += p[3]
		}
		j.g.v = v
	}
}

// gramChunk computes the partial sums of chunk ci for gramProducts, group
// by group (gramGroups): each group's hub is swept once against its
// partners (dot4Hub). A job's sums are the bits of dot4 on its own pair
// of entries, in either order (a product or a sum of two terms does not
// depend on their order), so the grouping changes no result.
func gramChunk(ci, d int, jobs []gramJob, groups []gramGroup, part [][4]float64) {
	lo, hi := ci*chunk, min(d, (ci+1)*chunk)
	for gi := range groups {
		g := &groups[gi]
		var os, oy [gramBlock][]float64
		for x := range g.k {
			j := jobs[g.job[x]]
			o := j.b
			if o == g.hub {
				o = j.a
			}
			os[x], oy[x] = o.s[lo:hi], o.y[lo:hi]
		}
		var r [gramBlock][4]float64
		dot4Hub(g.hub.s[lo:hi], g.hub.y[lo:hi], &os, &oy, g.k, &r)
		for x := range g.k {
			t := g.job[x]
			v := r[x]
			if jobs[t].a != g.hub { // hub is b: sᵀs', sᵀy', yᵀs', yᵀy' of (a, b)
				v[1], v[2] = v[2], v[1]
			}
			part[ci*len(jobs)+t] = v
		}
	}
}

// gramBlock is the number of partners dot4Hub sweeps a hub against at once.
const gramBlock = 4

// gramGroup is up to gramBlock jobs sharing the entry hub.
type gramGroup struct {
	hub *pairEntry
	k   int
	job [gramBlock]int
}

// gramGroups groups the jobs by a shared entry: each job goes to the one of
// its two entries that occurs in more jobs (a step's new pairs: each state's
// against its memory and the reference's, the reference's against every
// state's pairs), and a hub's jobs are cut into groups of gramBlock, in
// order of first occurrence. byHub is scratch. Allocates only to grow
// groups and byHub.
func gramGroups(jobs []gramJob, groups []gramGroup, byHub []int) ([]gramGroup, []int) {
	for _, j := range jobs {
		j.a.nj, j.b.nj = 0, 0
	}
	for _, j := range jobs {
		j.a.nj++
		if j.b != j.a {
			j.b.nj++
		}
	}
	hub := func(j gramJob) *pairEntry {
		if j.b.nj > j.a.nj {
			return j.b
		}
		return j.a
	}
	// Counting sort of the jobs by hub, hubs in order of first occurrence:
	// nj becomes the hub's first position in byHub, then its next free one.
	for _, j := range jobs {
		j.a.hubAt, j.b.hubAt = -1, -1
	}
	n := 0
	for _, j := range jobs {
		if h := hub(j); h.hubAt < 0 {
			h.hubAt = n
			n += h.nj
		}
	}
	// Jobs of a hub are at most nj (its count over all jobs), so the ranges
	// above are large enough; unused places are skipped (−1).
	byHub = slices.Grow(byHub[:0], n)[:n]
	for i := range byHub {
		byHub[i] = -1
	}
	for t, j := range jobs {
		h := hub(j)
		byHub[h.hubAt] = t
		h.hubAt++
	}
	groups = groups[:0]
	var g gramGroup
	for _, t := range byHub {
		if t < 0 {
			continue
		}
		h := hub(jobs[t])
		if g.k == gramBlock || (g.k > 0 && g.hub != h) {
			groups = append(groups, g)
			g = gramGroup{}
		}
		g.hub = h
		g.job[g.k] = t
		g.k++
	}
	if g.k > 0 {
		groups = append(groups, g)
	}
	return groups, byHub
}

// registerRef is register for the reference, except that the reference's
// new pairs are not computed here: they join the states' new pairs in
// prepare's batch (so that the probes sweep them in full groups), or are
// computed alone by finishRef before a Measure. Not safe for concurrent
// use with prepare or itself.
func (c *coeffSpace) registerRef(v *memView, mem *olbfgs.Memory) {
	c.keysOf(v, mem)
	c.attach(v, mem, v.keys)
	pend := c.refFresh[:0]
	for _, e := range v.ents {
		if !e.computed() && e.mark != c.gen {
			e.mark = c.gen
			pend = append(pend, e)
		}
	}
	c.refFresh = pend
	if len(pend) == 0 {
		c.refKappa(v)
	}
}

// finishRef computes the reference's pending new pairs (registerRef) on up
// to workers goroutines, if any, and the reference view's κ.
func (c *coeffSpace) finishRef(v *memView, workers int) {
	if len(c.refFresh) == 0 {
		return
	}
	c.probeProducts(c.refFresh, workers, &c.partP)
	for _, e := range c.refFresh {
		e.once.Do(func() {}) // computed above
	}
	c.refFresh = c.refFresh[:0]
	c.refKappa(v)
}

// refKappa sets v.kappa = max(1, max_i ‖s_i‖‖y_i‖/(s_iᵀy_i)) over its
// (computed) entries.
func (c *coeffSpace) refKappa(v *memView) {
	v.kappa = 1
	for i, e := range v.ents {
		if k := e.ns * e.ny / v.sy[i]; k > v.kappa {
			v.kappa = k
		}
	}
}

// register fills v with mem's pairs, computing the entries of new pairs.
// Safe for concurrent use on distinct memories.
func (c *coeffSpace) register(v *memView, mem *olbfgs.Memory) {
	c.keysOf(v, mem)
	c.attach(v, mem, v.keys)
	for i, e := range v.ents {
		e.once.Do(func() {
			one := [1]*pairEntry{e}
			c.probeProducts(one[:], 1, nil)
		})
		if k := e.ns * e.ny / v.sy[i]; k > v.kappa {
			v.kappa = k
		}
	}
}

// prepare computes, for the states about to be measured against the
// reference view rv, every new pair's probe products and every missing Gram
// entry in batches on up to workers goroutines: the probes are read once
// for all new pairs of the step (not once per pair), and each Gram entry
// is one fused sweep (dot4). Measuring then only looks them up.
//
// prepare is not safe for concurrent use. Once the engine has held as many
// pairs at once as it holds now it does not allocate (entries are recycled,
// buffers kept), except for parallel's goroutines.
func (c *coeffSpace) prepare(rv *memView, mems []*olbfgs.Memory, workers int) {
	for len(c.views) < len(mems) {
		c.views = append(c.views, memView{})
	}
	views := c.views[:len(mems)]
	fresh := append(c.fresh[:0], c.refFresh...) // the reference's (registerRef)
	for i, mem := range mems {
		c.keysOf(&views[i], mem)
		c.attach(&views[i], mem, views[i].keys)
		for _, e := range views[i].ents {
			if !e.computed() && e.mark != c.gen {
				e.mark = c.gen
				fresh = append(fresh, e)
			}
		}
	}
	c.fresh = fresh
	workers = max(workers, 1)
	c.probeProducts(fresh, workers, &c.partP)
	for _, e := range fresh {
		e.once.Do(func() {}) // computed above
	}
	if len(c.refFresh) > 0 {
		c.refFresh = c.refFresh[:0]
		c.refKappa(rv)
	}
	jobs := c.jobs[:0]
	c.mu.Lock()
	for i := range views {
		c.all = append(append(c.all[:0], views[i].ents...), rv.ents...)
		for x, a := range c.all {
			for _, b := range c.all[x:] {
				k := gramKey{a.key, b.key}
				a, b := a, b
				if a.key > b.key {
					k = gramKey{b.key, a.key}
					a, b = b, a
				}
				if c.gram[k] == nil {
					g := c.newGram()
					c.gram[k] = g
					jobs = append(jobs, gramJob{a, b, g})
				}
			}
		}
	}
	c.mu.Unlock()
	c.jobs = jobs
	c.gramProducts(jobs, workers, &c.partG)
	for _, j := range jobs {
		j.g.once.Do(func() {}) // computed above
	}
}

// parallel runs f(0..n−1) on up to workers goroutines (parallel.For).
func parallel(workers, n int, f func(int)) { par.For(workers, n, f) }

// dot2 returns qᵀa and qᵀb in one sweep: eight partial sums each, over
// the coordinates k mod 8, combined as ((l0+l1)+(l2+l3))+((l4+l5)+(l6+l7)).
// On amd64 with AVX2 the multiple-of-eight part runs in assembly with the
// same operations (two YMM accumulators per result: lanes 0–3 and 4–7).
func dot2(q, a, b []float64) (float64, float64) {
	n := len(q)
	a, b = a[:n], b[:n]
	var l [16]float64
	n8 := n &^ 7
	k := 0
	if useAVX2 && n8 > 0 {
		dot2AVX2(&q[0], &a[0], &b[0], n8, &l)
		k = n8
	}
	for ; k < n; k++ {
		j := k & 7
		l[j] += float64(q[k] * a[k])
		l[8+j] += float64(q[k] * b[k])
	}
	return sum8(l[0:8]), sum8(l[8:16])
}

func sum8(l []float64) float64 {
	return ((l[0] + l[1]) + (l[2] + l[3])) + ((l[4] + l[5]) + (l[6] + l[7]))
}

// dot4 returns sᵀs', sᵀy', yᵀs', yᵀy' in one sweep, each summed as in dot2.
func dot4(s, y, s2, y2 []float64) [4]float64 {
	n := len(s)
	y, s2, y2 = y[:n], s2[:n], y2[:n]
	var l [32]float64
	n8 := n &^ 7
	k := 0
	if useAVX2 && n8 > 0 {
		dot4AVX2(&s[0], &y[0], &s2[0], &y2[0], n8, &l)
		k = n8
	}
	for ; k < n; k++ {
		j := k & 7
		l[j] += float64(s[k] * s2[k])
		l[8+j] += float64(s[k] * y2[k])
		l[16+j] += float64(y[k] * s2[k])
		l[24+j] += float64(y[k] * y2[k])
	}
	return [4]float64{sum8(l[0:8]), sum8(l[8:16]), sum8(l[16:24]), sum8(l[24:32])}
}

// dot4Hub sets r[x] = dot4(hs, hy, os[x], oy[x]) for x < k, bit for bit:
// with AVX-512 and k = gramBlock in one sweep that loads the hub once for
// all partners (dot4HubAVX512), otherwise partner by partner.
func dot4Hub(hs, hy []float64, os, oy *[gramBlock][]float64, k int, r *[gramBlock][4]float64) {
	n := len(hs)
	n8 := n &^ 7
	if !useAVX2 || !hasAVX512 || k != gramBlock || n8 == 0 {
		for x := range k {
			r[x] = dot4(hs, hy, os[x], oy[x])
		}
		return
	}
	hy = hy[:n]
	var v [10]*float64
	v[0], v[1] = &hs[0], &hy[0]
	for x := range gramBlock {
		os[x], oy[x] = os[x][:n], oy[x][:n]
		v[2+2*x], v[3+2*x] = &os[x][0], &oy[x][0]
	}
	var l [4 * gramBlock][8]float64
	dot4HubAVX512(&v, n8, &l)
	for x := range gramBlock {
		ls, ly := os[x], oy[x]
		for k := n8; k < n; k++ {
			j := k & 7
			l[4*x][j] += float64(hs[k] * ls[k])
			l[4*x+1][j] += float64(hs[k] * ly[k])
			l[4*x+2][j] += float64(hy[k] * ls[k])
			l[4*x+3][j] += float64(hy[k] * ly[k])
		}
		r[x] = [4]float64{sum8(l[4*x][:]), sum8(l[4*x+1][:]), sum8(l[4*x+2][:]), sum8(l[4*x+3][:])}
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
		g = c.newGram()
		c.gram[k] = g
	}
	c.mu.Unlock()
	g.once.Do(func() {
		job := [1]gramJob{{a, b, g}}
		c.gramProducts(job[:], 1, nil)
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
	est = math.Sqrt(max(s, 0)+ds) - math.Sqrt(max(s-ds, 0)) + 4*u*ez // + the final rounding
	return ez, est, est <= tol
}
