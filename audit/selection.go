package audit

import (
	"crypto/rand"
	"encoding/binary"
	"math"

	"unlearn/noise"
)

// selection is what the selection split chose: the likelihood-ratio test
// and the black-box test, each with its rule and selection score, and a
// note for the report (how the split was drawn, when it matters).
type selection struct {
	lr, bb           statistic
	lrRule, bbRule   rule
	lrScore, bbScore float64
	note             string
}

// stepFunc draws one release of world w into dst (counting it).
type stepFunc func(w world, dst []float64, trial int) error

// selectKept draws the selection split once, keeps every artifact
// (2·sel·Dim floats, which fit the memory budget) and chooses the tests:
// the likelihood ratio along the mean difference, then the best black-box
// statistic, candidates in order, ties to the first.
func selectKept(r resolved, a, b world, step stepFunc) (*selection, error) {
	dim := r.dim
	selA, selB := make([]float64, r.sel*dim), make([]float64, r.sel*dim)
	for i := range r.sel {
		if err := step(a, selA[i*dim:(i+1)*dim], i); err != nil {
			return nil, err
		}
		if err := step(b, selB[i*dim:(i+1)*dim], i); err != nil {
			return nil, err
		}
	}
	upSel := cpTable(r.sel, r.Gamma/rateBounds)
	colA, colB := make([]float64, r.sel), make([]float64, r.sel)
	choose := func(st statistic) (rule, float64) {
		for i := range r.sel {
			colA[i] = st.value(selA[i*dim : (i+1)*dim])
			colB[i] = st.value(selB[i*dim : (i+1)*dim])
		}
		return bestRule(colA, colB, upSel, upSel, r.Delta)
	}
	diff := make([]float64, dim)
	for i := range r.sel {
		for j := range dim {
			diff[j] += selA[i*dim+j] - selB[i*dim+j]
		}
	}
	for j := range diff {
		diff[j] /= float64(r.sel)
	}
	out := &selection{lr: likelihoodRatio(diff), bbScore: -1}
	out.lrRule, out.lrScore = choose(out.lr)
	for _, st := range candidates(dim, r.WDim) {
		if ru, s := choose(st); s > out.bbScore {
			out.bb, out.bbRule, out.bbScore = st, ru, s
		}
	}
	return out, nil
}

// likelihoodRatio is the statistic ⟨m̂_A − m̂_B, x⟩ for the mean difference
// diff of the selection split.
func likelihoodRatio(diff []float64) statistic {
	return statistic{name: "projection on the mean difference", coord: -1, f: func(x []float64) float64 { return dot(diff, x) }}
}

// selectStreamed chooses the same tests as selectKept, holding at most
// r.MemoryBudget bytes, for artifacts too large to keep: it draws the
// selection split once for the mean difference, the three norms and which
// coordinates vary, then again once per block of varying coordinates, as
// many as fit the budget, keeping only their columns (the first pass also
// keeps the likelihood ratio's). A coordinate that is constant in each
// world — a memory released empty, say — is scored from its two values,
// without a column. Each pass redraws the same artifacts, so the tests,
// their scores and ties are those selectKept would choose.
//
// Drawing again needs samplers that repeat themselves. A seeded audit's
// are recreated from its seeds: the split, the tests and the evaluation
// (whose samplers go on from where the split ends) are bit for bit those of
// selectKept. A secure audit's selection split is drawn instead from seeded
// samplers with secret random seeds (crypto/rand) — it only chooses the
// tests, which need no guarantee — and its evaluation split from the secure
// sampler; the report's sampler note says so.
func selectStreamed(r resolved, a, b *world, step stepFunc, grow func(int)) (*selection, error) {
	dim, sel := r.dim, r.sel
	seedA, seedB := r.Seed, r.Seed^SeedB
	out := &selection{bbScore: -1}
	if !r.Seeded {
		seedA, seedB = secretSeed(), secretSeed()
		out.note = "the selection split, too large to keep in memory (Config.MemoryBudget), was drawn from seeded samplers with secret random seeds so that it could be drawn again; it only chooses the tests: the evaluation split's noise is secure"
	}
	redraw := func() (world, world) {
		wa, wb := *a, *b
		wa.s = noise.NewSeededSampler(seedA, noise.SamplerOptions{})
		wb.s = noise.NewSeededSampler(seedB, noise.SamplerOptions{})
		return wa, wb
	}
	cands := candidates(dim, r.WDim)
	norms := cands[dim:]
	xa, xb := make([]float64, dim), make([]float64, dim)

	// Pass 0: the mean difference, the norms, which coordinates vary.
	diff := make([]float64, dim)
	firstA, firstB := make([]uint64, dim), make([]uint64, dim)
	varies := make([]bool, dim)
	normA, normB := make([][]float64, len(norms)), make([][]float64, len(norms))
	for k := range norms {
		normA[k], normB[k] = make([]float64, sel), make([]float64, sel)
	}
	wa, wb := redraw()
	for i := range sel {
		if err := step(wa, xa, i); err != nil {
			return nil, err
		}
		if err := step(wb, xb, i); err != nil {
			return nil, err
		}
		for j := range dim {
			diff[j] += xa[j] - xb[j]
			ba, bb := math.Float64bits(xa[j]), math.Float64bits(xb[j])
			if i == 0 {
				firstA[j], firstB[j] = ba, bb
			} else if ba != firstA[j] || bb != firstB[j] {
				varies[j] = true
			}
		}
		for k, st := range norms {
			normA[k][i], normB[k][i] = st.value(xa), st.value(xb)
		}
	}
	for j := range diff {
		diff[j] /= float64(sel)
	}
	var live []int // the varying coordinates, ascending
	for j, v := range varies {
		if v {
			live = append(live, j)
		}
	}

	// Blocks of varying coordinates: what the budget leaves after the
	// per-trial columns, 16 bytes per trial per coordinate.
	fixed := int64(sel) * (BytesPerSelectionTrial - 16)
	width := max(1, int((r.MemoryBudget-fixed)/(16*int64(sel))))
	passes := max(1, (len(live)+width-1)/width)
	grow(2 * sel * passes)
	width = min(width, max(1, len(live)))
	blockA, blockB := make([]float64, sel*width), make([]float64, sel*width)
	lrA, lrB := make([]float64, sel), make([]float64, sel)
	out.lr = likelihoodRatio(diff)
	loaded := -1
	load := func(p int) error {
		wa, wb = redraw()
		cols := live[min(p*width, len(live)):min((p+1)*width, len(live))]
		for i := range sel {
			if err := step(wa, xa, i); err != nil {
				return err
			}
			if err := step(wb, xb, i); err != nil {
				return err
			}
			if p == 0 {
				lrA[i], lrB[i] = out.lr.value(xa), out.lr.value(xb)
			}
			for c, j := range cols {
				blockA[c*sel+i], blockB[c*sel+i] = xa[j], xb[j]
			}
		}
		loaded = p
		return nil
	}
	if err := load(0); err != nil {
		return nil, err
	}
	upSel := cpTable(sel, r.Gamma/rateBounds)
	colA, colB := make([]float64, sel), make([]float64, sel)
	score := func(ca, cb []float64) (rule, float64) {
		copy(colA, ca)
		copy(colB, cb)
		return bestRule(colA, colB, upSel, upSel, r.Delta)
	}
	out.lrRule, out.lrScore = score(lrA, lrB)
	next := 0 // index in live of the next varying coordinate
	for ci, st := range cands {
		var (
			ru rule
			s  float64
		)
		switch {
		case ci >= dim:
			k := ci - dim
			ru, s = score(normA[k], normB[k])
		case !varies[ci]:
			va, vb := math.Float64frombits(firstA[ci]), math.Float64frombits(firstB[ci])
			for i := range sel {
				colA[i], colB[i] = va, vb
			}
			ru, s = bestRule(colA, colB, upSel, upSel, r.Delta)
		default:
			p, c := next/width, next%width
			next++
			if p != loaded {
				if err := load(p); err != nil {
					return nil, err
				}
			}
			ru, s = score(blockA[c*sel:(c+1)*sel], blockB[c*sel:(c+1)*sel])
		}
		if s > out.bbScore {
			out.bb, out.bbRule, out.bbScore = st, ru, s
		}
	}
	// The evaluation goes on from where the split ended: the seeded
	// streams of selectKept (every pass drew the split whole).
	if r.Seeded {
		a.s, b.s = wa.s, wb.s
	}
	return out, nil
}

// secretSeed returns a seed from crypto/rand.
func secretSeed() uint64 {
	var b [8]byte
	if _, err := rand.Read(b[:]); err != nil {
		panic("audit: crypto/rand: " + err.Error()) // crypto/rand.Read does not fail on supported platforms
	}
	return binary.LittleEndian.Uint64(b[:])
}
