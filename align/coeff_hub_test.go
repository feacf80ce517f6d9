package align

import (
	"math"
	"math/rand/v2"
	"testing"

	"pgregory.net/rapid"
)

// randVecs returns k vectors of length n with entries of mixed magnitudes
// (so that the order of the additions shows in the bits).
func randVecs(rng *rand.Rand, k, n int) [][]float64 {
	v := make([][]float64, k)
	for i := range v {
		v[i] = make([]float64, n)
		for j := range v[i] {
			v[i][j] = rng.NormFloat64() * math.Pow(10, float64(rng.IntN(7)-3))
		}
	}
	return v
}

// TestHubKernelsSameBits: the register-blocked sweeps give, for every
// partner, the bits of dot4 and dot2 on the Go loops (useAVX2 off), for
// lengths around multiples of eight, including a partner that is the hub
// itself. On a CPU without AVX-512 this checks the partner-by-partner path.
func TestHubKernelsSameBits(t *testing.T) {
	if !(useAVX2 && hasAVX512) {
		t.Log("no AVX-512: only the partner-by-partner path is checked")
	}
	rng := rand.New(rand.NewPCG(11, 12))
	for _, n := range []int{1, 7, 8, 9, 16, 63, 64, 65, 512, 1001} {
		v := randVecs(rng, 2+2*gramBlock, n)
		hs, hy := v[0], v[1]
		var os, oy [gramBlock][]float64
		for x := range gramBlock {
			os[x], oy[x] = v[2+2*x], v[3+2*x]
		}
		os[2], oy[2] = hs, hy // the hub against itself
		for k := 1; k <= gramBlock; k++ {
			var r [gramBlock][4]float64
			o2, y2 := os, oy
			dot4Hub(hs, hy, &o2, &y2, k, &r)
			save := useAVX2
			useAVX2 = false
			for x := range k {
				if want := dot4(hs, hy, os[x], oy[x]); !sameBits4(r[x], want) {
					useAVX2 = save
					t.Fatalf("n = %d, k = %d, partner %d: dot4Hub %v, Go loops %v", n, k, x, r[x], want)
				}
			}
			useAVX2 = save
		}

		q := v[0]
		var ps, py [probeBlock][]float64
		for x := range probeBlock {
			ps[x], py[x] = v[2+2*x], v[3+2*x]
		}
		ps[1] = q
		var r [probeBlock][2]float64
		p2, y2 := ps, py
		dot2Hub(q, &p2, &y2, &r)
		save := useAVX2
		useAVX2 = false
		for x := range probeBlock {
			a, b := dot2(q, ps[x], py[x])
			if math.Float64bits(a) != math.Float64bits(r[x][0]) || math.Float64bits(b) != math.Float64bits(r[x][1]) {
				useAVX2 = save
				t.Fatalf("n = %d, pair %d: dot2Hub %v, Go loops %v %v", n, x, r[x], a, b)
			}
		}
		useAVX2 = save
	}
}

func sameBits4(a, b [4]float64) bool {
	for i := range a {
		if math.Float64bits(a[i]) != math.Float64bits(b[i]) {
			return false
		}
	}
	return true
}

// TestGramGroupsPartition (rapid): whatever the jobs, gramGroups puts every
// job in exactly one group of at most gramBlock jobs, and every job of a
// group has the group's hub as one of its two entries.
func TestGramGroupsPartition(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		ne := rapid.IntRange(1, 12).Draw(t, "entries")
		ents := make([]*pairEntry, ne)
		for i := range ents {
			ents[i] = &pairEntry{key: uint64(2*i + 1)}
		}
		nj := rapid.IntRange(0, 60).Draw(t, "jobs")
		jobs := make([]gramJob, nj)
		for i := range jobs {
			a := rapid.IntRange(0, ne-1).Draw(t, "a")
			b := rapid.IntRange(0, ne-1).Draw(t, "b")
			jobs[i] = gramJob{a: ents[a], b: ents[b]}
		}
		var groups []gramGroup
		var byHub []int
		for range 2 { // the second time with the buffers of the first
			groups, byHub = gramGroups(jobs, groups, byHub)
			seen := make([]int, nj)
			for _, g := range groups {
				if g.k < 1 || g.k > gramBlock {
					t.Fatalf("group of %d jobs", g.k)
				}
				for _, x := range g.job[:g.k] {
					seen[x]++
					if jobs[x].a != g.hub && jobs[x].b != g.hub {
						t.Fatalf("job %d is not the hub's", x)
					}
				}
			}
			for x, n := range seen {
				if n != 1 {
					t.Fatalf("job %d in %d groups", x, n)
				}
			}
		}
	})
}

// TestBatchedProductsSameBits: the batches of a step — probe products of
// many new pairs and Gram entries swept in groups, on one and two workers
// — give the bits of the Go loops, job by job (d = 1030: two full chunks
// and a tail that is not a multiple of eight).
func TestBatchedProductsSameBits(t *testing.T) {
	const d, m = 1030, 5
	rng := rand.New(rand.NewPCG(13, 14))
	probes := randVecs(rng, m, d)
	run := func(workers int) ([]*pairEntry, []gramJob) {
		c := newCoeffSpace(probes, d)
		vecs := randVecs(rand.New(rand.NewPCG(15, 16)), 2*9, d)
		ents := make([]*pairEntry, 9)
		for i := range ents {
			ents[i] = &pairEntry{key: uint64(2*i + 1), s: vecs[2*i], y: vecs[2*i+1]}
		}
		var buf []float64
		c.probeProducts(ents, workers, &buf)
		// Two hubs with many partners (as a step's new pairs) and odd jobs.
		var jobs []gramJob
		for i := range ents {
			jobs = append(jobs, gramJob{ents[i], ents[8], &gramEntry{}})
			if i < 8 {
				jobs = append(jobs, gramJob{ents[7], ents[i], &gramEntry{}})
			}
		}
		jobs = append(jobs, gramJob{ents[0], ents[1], &gramEntry{}})
		var gbuf [][4]float64
		c.gramProducts(jobs, workers, &gbuf)
		return ents, jobs
	}
	save := useAVX2
	useAVX2 = false
	wantE, wantJ := run(1)
	useAVX2 = save
	for _, workers := range []int{1, 2} {
		gotE, gotJ := run(workers)
		for i := range gotE {
			g, w := gotE[i], wantE[i]
			if math.Float64bits(g.ns) != math.Float64bits(w.ns) || math.Float64bits(g.ny) != math.Float64bits(w.ny) {
				t.Fatalf("workers %d, pair %d: norms differ", workers, i)
			}
			for j := range m {
				if math.Float64bits(g.qs[j]) != math.Float64bits(w.qs[j]) || math.Float64bits(g.qy[j]) != math.Float64bits(w.qy[j]) {
					t.Fatalf("workers %d, pair %d, probe %d: %v %v, Go loops %v %v", workers, i, j, g.qs[j], g.qy[j], w.qs[j], w.qy[j])
				}
			}
		}
		for x := range gotJ {
			if !sameBits4(gotJ[x].g.v, wantJ[x].g.v) {
				t.Fatalf("workers %d, job %d: %v, Go loops %v", workers, x, gotJ[x].g.v, wantJ[x].g.v)
			}
		}
	}
	// And the Gram entries are the inner products (not only the same bits).
	for _, j := range wantJ {
		var ss float64
		for k := range d {
			ss += j.a.s[k] * j.b.y[k]
		}
		if !equalWithin(j.g.v[1], ss, 1e-9) {
			t.Fatalf("sᵀy' = %v, want %v", j.g.v[1], ss)
		}
	}
}

// BenchmarkBatchedProducts: a step's batches at d = 10⁵ (m_q = 32): the
// probe products of 8 new pairs and the Gram entries of 2 new pairs
// against 10 others each, one worker, with and without the AVX-512 blocks.
//
//	go test ./align -run '^$' -bench BatchedProducts -benchtime 20x
func BenchmarkBatchedProducts(b *testing.B) {
	const d, m = 100000, 32
	rng := rand.New(rand.NewPCG(17, 18))
	probes := randVecs(rng, m, d)
	vecs := randVecs(rng, 2*20, d)
	ents := make([]*pairEntry, 20)
	for i := range ents {
		ents[i] = &pairEntry{key: uint64(2*i + 1), s: vecs[2*i], y: vecs[2*i+1]}
	}
	var jobs []gramJob
	for _, h := range ents[:2] {
		for _, o := range ents[10:] {
			jobs = append(jobs, gramJob{h, o, &gramEntry{}})
		}
	}
	for _, blocked := range []bool{false, true} {
		if blocked && !(useAVX2 && hasAVX512) {
			continue
		}
		name := "pairwise"
		if blocked {
			name = "blocked"
		}
		save := hasAVX512
		hasAVX512 = blocked
		c := newCoeffSpace(probes, d)
		var buf []float64
		var gbuf [][4]float64
		b.Run("probes/"+name, func(b *testing.B) {
			for b.Loop() {
				c.probeProducts(ents[:8], 1, &buf)
			}
		})
		b.Run("gram/"+name, func(b *testing.B) {
			for b.Loop() {
				c.gramProducts(jobs, 1, &gbuf)
			}
		})
		hasAVX512 = save
	}
}
