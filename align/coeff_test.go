package align

import (
	"fmt"
	"math"
	"math/big"
	"math/rand/v2"
	"slices"
	"testing"

	"pgregory.net/rapid"

	"unlearn/internal/floatbits"
	"unlearn/olbfgs"
	"unlearn/stream"
)

// TestCoefficientMatchesBlock: on trajectories of both losses, E_Z from the
// coefficient space (with its fallback) agrees with the block sweep within
// the spec's tolerance 1e-9·max(1, ‖w⁻‖), D_upd and the other metrics are
// bit-identical, and MeasureAll gives the bits of Measure. The coefficient
// space must actually be used (not only the fallback).
func TestCoefficientMatchesBlock(t *testing.T) {
	for _, kind := range []string{"quadratic", "logistic"} {
		t.Run(kind, func(t *testing.T) { coefficientMatchesBlock(t, kind, nil) })
	}
}

// TestCoefficientCollidingHash forces hash collisions (every pair on one
// hash, or on one of two) and checks that no two different pairs are ever
// merged: every memory's keys lead to entries holding its own pairs' bits,
// the entries of a step are pairwise different, and E_Z still agrees with
// the block sweep (with merged pairs it would not: a state and the
// reference would share "pairs" they do not hold).
func TestCoefficientCollidingHash(t *testing.T) {
	for _, h := range []struct {
		name string
		f    func(s, y []float64, sy float64) uint64
	}{
		{"one hash", func([]float64, []float64, float64) uint64 { return 42 }},
		{"two hashes", func(s, _ []float64, _ float64) uint64 { return uint64(len(s)) + math.Float64bits(s[0])&2 }},
	} {
		for _, kind := range []string{"quadratic", "logistic"} {
			t.Run(h.name+"/"+kind, func(t *testing.T) { coefficientMatchesBlock(t, kind, h.f) })
		}
	}
}

// checkEntries checks that the keys of every memory lead to entries whose
// vectors are bitwise the memory's pairs, and that the entries of the
// current step are pairwise different pairs or one shared entry.
func checkEntries(t *testing.T, c *coeffSpace, mems []*olbfgs.Memory) {
	t.Helper()
	for x, mem := range mems {
		st := c.slots[mem]
		if st == nil || len(st.tags) != mem.Len() {
			t.Fatalf("memory %d: no tags for its %d pairs", x, mem.Len())
		}
		for i, tag := range st.tags {
			e := c.pairs[tag.key]
			p := mem.Pair(i)
			if e == nil || !floatbits.Equal(e.s, p.S) || !floatbits.Equal(e.y, p.Y) || e.sy != mem.Curvature(i) {
				t.Fatalf("memory %d pair %d: its key %#x leads to another pair", x, i, tag.key)
			}
		}
	}
	var cur []*pairEntry
	for _, e := range c.pairs {
		if e.gen == c.gen {
			cur = append(cur, e)
		}
	}
	for a := range cur {
		for b := range a {
			if floatbits.Equal(cur[a].s, cur[b].s) && floatbits.Equal(cur[a].y, cur[b].y) {
				t.Fatalf("keys %#x and %#x: one pair in two entries of the same step", cur[a].key, cur[b].key)
			}
		}
	}
}

func coefficientMatchesBlock(t *testing.T, kind string, hash func(s, y []float64, sy float64) uint64) {
	{
		{
			const d, tau, mq = 12, 4, 6
			var loss stream.Loss
			var events []stream.Event
			if kind == "quadratic" {
				loss, events = quadStream(t, 5, d, 120)
			} else {
				loss, events = logisticStream(t, 5, d, 120)
			}
			u := stream.NewIDSet(20, 58, 59)
			prefix, future := events[:60], events[60:]
			ref := replay(t, loss, tau, stream.Counterfactual(prefix, u))
			act := replay(t, loss, tau, prefix)
			states := []*olbfgs.Learner{act.Clone(), act.Clone(), act.Clone(), ref.Clone()}
			states[1].Memory().Reset()
			states[2].Memory().DropTouching(u)
			blk := newEngine(t, d, Options{Seed: 2, Probes: mq, MemoryError: MemoryErrorBlock})
			cof := newEngine(t, d, Options{Seed: 2, Probes: mq, MemoryError: MemoryErrorCoefficients})
			if hash != nil {
				cof.coef.hash = hash
			}
			got := make([]Point, len(states))
			for k := range future {
				var next *stream.Sample
				if k+1 < len(future) {
					next = &future[k+1].Sample
				}
				blk.SetReference(ref, next)
				cof.SetReference(ref, next)
				cof.MeasureAll(got, states, 3)
				if hash != nil {
					checkEntries(t, cof.coef, append([]*olbfgs.Memory{ref.Memory()}, cof.mems...))
				}
				for i, st := range states {
					want := blk.Measure(st)
					one := cof.Measure(st)
					if one != got[i] {
						t.Fatalf("step %d state %d: Measure %+v, MeasureAll %+v", k, i, one, got[i])
					}
					tol := ExactTol * max(1, want.RefWNorm)
					if math.Abs(one.EZ-want.EZ) > tol {
						t.Fatalf("step %d state %d: E_Z %v (coefficients), %v (block): more than %v apart", k, i, one.EZ, want.EZ, tol)
					}
					one.EZ, one.ETheta, want.EZ, want.ETheta = 0, 0, 0, 0
					if one != want {
						t.Fatalf("step %d state %d: %+v, block %+v", k, i, one, want)
					}
				}
				for _, l := range append([]*olbfgs.Learner{ref}, states...) {
					if err := l.Step(future[k]); err != nil {
						t.Fatal(err)
					}
				}
			}
			used, fell := cof.CoefficientStats()
			t.Logf("coefficient space used %d times, fell back %d times", used, fell)
			if used == 0 {
				t.Fatal("the coefficient space was never used")
			}
		}
	}
}

// exactApply returns H_Z q in big.Float arithmetic of prec bits: the
// two-loop recursion of olbfgs.Memory.Apply on the stored float64 pairs,
// with every operation rounded to prec bits instead of 53.
func exactApply(m *olbfgs.Memory, q []float64, prec uint) []*big.Float {
	nf := func(x float64) *big.Float { return new(big.Float).SetPrec(prec).SetFloat64(x) }
	dot := func(a []float64, r []*big.Float) *big.Float {
		s := nf(0)
		for k, v := range a {
			s.Add(s, new(big.Float).SetPrec(prec).Mul(nf(v), r[k]))
		}
		return s
	}
	r := make([]*big.Float, len(q))
	for k, v := range q {
		r[k] = nf(v)
	}
	n := m.Len()
	alpha := make([]*big.Float, n)
	for i := n - 1; i >= 0; i-- {
		p := m.Pair(i)
		alpha[i] = new(big.Float).SetPrec(prec).Quo(dot(p.S, r), nf(m.Curvature(i)))
		for k, v := range p.Y {
			r[k].Sub(r[k], new(big.Float).SetPrec(prec).Mul(alpha[i], nf(v)))
		}
	}
	gamma := nf(m.InitialScale())
	if n > 0 {
		p := m.Pair(n - 1)
		gamma = new(big.Float).SetPrec(prec).Quo(nf(m.Curvature(n-1)), dot(p.Y, floatsToBig(p.Y, prec)))
	}
	for k := range r {
		r[k].Mul(r[k], gamma)
	}
	for i := range n {
		p := m.Pair(i)
		b := new(big.Float).SetPrec(prec).Quo(dot(p.Y, r), nf(m.Curvature(i)))
		c := new(big.Float).SetPrec(prec).Sub(alpha[i], b)
		for k, v := range p.S {
			r[k].Add(r[k], new(big.Float).SetPrec(prec).Mul(c, nf(v)))
		}
	}
	return r
}

func floatsToBig(v []float64, prec uint) []*big.Float {
	out := make([]*big.Float, len(v))
	for k, x := range v {
		out[k] = new(big.Float).SetPrec(prec).SetFloat64(x)
	}
	return out
}

// exactEZ returns E_Z of two memories on the probes, in 256-bit arithmetic,
// rounded to float64.
func exactEZ(a, b *olbfgs.Memory, probes [][]float64) float64 {
	const prec = 256
	s := new(big.Float).SetPrec(prec)
	for _, q := range probes {
		x, y := exactApply(a, q, prec), exactApply(b, q, prec)
		for k := range x {
			t := new(big.Float).SetPrec(prec).Sub(x[k], y[k])
			s.Add(s, t.Mul(t, t))
		}
	}
	s.Quo(s, new(big.Float).SetPrec(prec).SetInt64(int64(len(probes))))
	v, _ := s.Sqrt(s).Float64()
	return v
}

// genPair draws a pair with sᵀy > 0: y = A s + noise, with A's scale and
// the noise chosen so that κ = ‖s‖‖y‖/sᵀy ranges from 1 to about 10³.
func genPair(t *rapid.T, d int, label string) (s, y []float64) {
	s = make([]float64, d)
	y = make([]float64, d)
	scale := rapid.Float64Range(0.01, 10).Draw(t, label+"scale")
	skew := rapid.Float64Range(0, 0.999).Draw(t, label+"skew")
	for {
		for k := range s {
			s[k] = scale * rapid.Float64Range(-1, 1).Draw(t, fmt.Sprintf("%ss%d", label, k))
		}
		for k := range y {
			y[k] = (1-skew)*s[k] + skew*rapid.Float64Range(-1, 1).Draw(t, fmt.Sprintf("%sy%d", label, k))*scale
		}
		var sy float64
		for k := range s {
			sy += s[k] * y[k]
		}
		if sy > 1e-3*scale*scale {
			return s, y
		}
		skew /= 2
	}
}

// TestCoefficientEZErrorEstimate: on random pairs of memories — sharing
// some pairs bit for bit, holding nearly equal pairs (one perturbed by a
// relative 10⁻¹⁴…10⁻²), or unrelated, with curvatures from well to badly
// conditioned — the coefficient-space E_Z is within its round-off estimate
// of E_Z computed in 256-bit arithmetic, and the engine's value (the
// coefficient space or its fallback) is within the spec's tolerance
// 1e-9·max(1, ‖w⁻‖) of it.
func TestCoefficientEZErrorEstimate(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		// Small d, and d past a chunk (512) with tails, for the kernels.
		d := rapid.SampledFrom([]int{2, 3, 5, 8, 9, 17, 517, 1030}).Draw(t, "d")
		mq := rapid.IntRange(1, 5).Draw(t, "mq")
		tau := rapid.IntRange(1, 5).Draw(t, "tau")
		probes := SeededProbes(rapid.Uint64().Draw(t, "seed"), d, mq)
		loss, err := stream.NewLogistic(d, 0.1)
		if err != nil {
			t.Fatal(err)
		}
		cfg := olbfgs.DefaultConfig(d)
		cfg.Memory = tau
		ref, err := olbfgs.New(cfg, loss)
		if err != nil {
			t.Fatal(err)
		}
		st, err := olbfgs.New(cfg, loss)
		if err != nil {
			t.Fatal(err)
		}
		nr := rapid.IntRange(0, tau).Draw(t, "nref")
		ns := rapid.IntRange(0, tau).Draw(t, "nstate")
		var shared [][2][]float64
		for i := range nr {
			s, y := genPair(t, d, fmt.Sprintf("r%d", i))
			if err := ref.Memory().Push(s, y, int64(i)); err != nil {
				t.Fatal(err)
			}
			shared = append(shared, [2][]float64{s, y})
		}
		for i := range ns {
			var s, y []float64
			switch kind := rapid.IntRange(0, 2).Draw(t, fmt.Sprintf("kind%d", i)); {
			case kind == 0 && i < len(shared): // the same pair, bit for bit
				s, y = slices.Clone(shared[i][0]), slices.Clone(shared[i][1])
			case kind == 1 && i < len(shared): // nearly the same pair
				rel := math.Pow(10, rapid.Float64Range(-14, -2).Draw(t, fmt.Sprintf("rel%d", i)))
				s, y = slices.Clone(shared[i][0]), slices.Clone(shared[i][1])
				for k := range s {
					s[k] *= 1 + rel*rapid.Float64Range(-1, 1).Draw(t, fmt.Sprintf("ps%d.%d", i, k))
					y[k] *= 1 + rel*rapid.Float64Range(-1, 1).Draw(t, fmt.Sprintf("py%d.%d", i, k))
				}
			default:
				s, y = genPair(t, d, fmt.Sprintf("s%d", i))
			}
			if err := st.Memory().Push(s, y, int64(i)); err != nil {
				continue // a perturbed pair may lose sᵀy > 0: skip it
			}
		}
		if st.Memory().Equal(ref.Memory()) {
			return
		}
		want := exactEZ(st.Memory(), ref.Memory(), probes)

		c := newCoeffSpace(probes, d)
		c.newStep()
		var rv memView
		c.register(&rv, ref.Memory())
		got, est, _ := c.memoryError(&coefScratch{}, &rv, st.Memory(), math.Inf(1))
		if e := math.Abs(got - want); !(e <= est) {
			t.Fatalf("coefficient E_Z %v, exact %v: error %.3g above the estimate %.3g", got, want, e, est)
		}

		eng, err := NewEngine(d, Options{ProbeVectors: probes, MemoryError: MemoryErrorCoefficients, DirectProbes: true})
		if err != nil {
			t.Fatal(err)
		}
		eng.SetReference(ref, nil)
		p := eng.Measure(st)
		if tol := ExactTol * max(1, p.RefWNorm); !(math.Abs(p.EZ-want) <= tol) {
			t.Fatalf("engine E_Z %v, exact %v: more than %v apart", p.EZ, want, tol)
		}
	})
}

// TestDotKernelsSameBitsWithoutAsm: dot2 and dot4 give the same bits with
// and without the assembly, for lengths around multiples of four.
func TestDotKernelsSameBitsWithoutAsm(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	for _, n := range []int{1, 3, 4, 5, 8, 13, 512, 1001} {
		v := make([][]float64, 4)
		for i := range v {
			v[i] = make([]float64, n)
			for k := range v[i] {
				v[i][k] = rng.NormFloat64() * math.Pow(10, float64(rng.IntN(7)-3))
			}
		}
		save := useAVX2
		a1, b1 := dot2(v[0], v[1], v[2])
		f1 := dot4(v[0], v[1], v[2], v[3])
		useAVX2 = false
		a2, b2 := dot2(v[0], v[1], v[2])
		f2 := dot4(v[0], v[1], v[2], v[3])
		useAVX2 = save
		if math.Float64bits(a1) != math.Float64bits(a2) || math.Float64bits(b1) != math.Float64bits(b2) || f1 != f2 {
			t.Fatalf("n = %d: dot2 %v %v vs %v %v, dot4 %v vs %v", n, a1, b1, a2, b2, f1, f2)
		}
		var want float64
		for k := range n {
			want += v[0][k] * v[1][k]
		}
		if !equalWithin(a1, want, 1e-12) {
			t.Fatalf("n = %d: dot2 %v, want %v", n, a1, want)
		}
	}
}

// TestCoefficientStepAllocs: in the steady state of a run (entries
// recycled, buffers grown) a step with the coefficient space — SetReference,
// MeasureAll on one worker, stepping the learners — allocates nothing. (With
// more workers each parallel section starts its goroutines: a constant
// number of allocations per step, whatever d, τ and the number of pairs.)
func TestCoefficientStepAllocs(t *testing.T) {
	step := coefficientStepper(t, 1030, 1)
	for range 30 {
		step()
	}
	if n := testing.AllocsPerRun(20, step); n != 0 {
		t.Fatalf("a step allocates %v times", n)
	}
}
