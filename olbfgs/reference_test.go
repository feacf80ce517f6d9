package olbfgs

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"
	"gonum.org/v1/gonum/floats"
	"pgregory.net/rapid"

	"unlearn/internal/floatbits"
	"unlearn/stream"
)

// refLearner is docs/spec.md §2.1 written out literally, one operation at
// a time and unfused, with none of the learner's code for the options
// (only its Memory, for the two-loop and the pairs): the independent
// construction the fused insert (insertOptions) is checked against.
type refLearner struct {
	cfg           Config
	lin           stream.Linear
	w, avg        []float64
	avgN, inserts int
	n             int
	mean, m2      []float64
	mem           *Memory
	skipped       int
}

func newRef(cfg Config, lin stream.Linear) *refLearner {
	p := cfg.ParamDim()
	return &refLearner{cfg: cfg, lin: lin, w: make([]float64, p), avg: make([]float64, p),
		mean: make([]float64, cfg.Dim), m2: make([]float64, cfg.Dim), mem: NewMemory(p, cfg.Memory, cfg.InitialScale)}
}

// features returns x̃ and the updated statistics (item 2).
func (r *refLearner) features(z stream.Sample) (x, mean, m2 []float64) {
	x = make([]float64, r.cfg.Dim)
	copy(x, z.Dense(r.cfg.Dim))
	if !r.cfg.Standardize {
		return x, r.mean, r.m2
	}
	mean, m2 = append([]float64(nil), r.mean...), append([]float64(nil), r.m2...)
	rn := 1 / float64(r.n+1)
	for j := range x {
		delta := x[j] - mean[j]
		mean[j] = mean[j] + float64(delta*rn)
		m2[j] = m2[j] + float64(delta*(x[j]-mean[j]))
		s := math.Sqrt(float64(m2[j] * rn))
		v := 0.0
		if s > 0 {
			v = 1 / s
		}
		x[j] = float64((x[j] - mean[j]) * v)
	}
	return x, mean, m2
}

// grad is item 3 at parameters w: the affine path's gradient, or the
// loss's own on the raw payload z.
func (r *refLearner) grad(w, x []float64, z stream.Sample) []float64 {
	if !r.cfg.Affine() {
		g := make([]float64, len(w))
		r.lin.Grad(g, w, z)
		return g
	}
	y := z.S
	K, d, st := r.cfg.outputs(), r.cfg.Dim, r.cfg.stride()
	u := make([]float64, K)
	for k := range K {
		u[k] = stream.Dot4(x, w[k*st:k*st+d])
		if r.cfg.Intercept {
			u[k] += w[k*st+d]
		}
	}
	c := make([]float64, K)
	r.lin.Link(c, u, y)
	g := make([]float64, len(w))
	lam := r.lin.Lambda()
	for k := range K {
		for j := range d {
			g[k*st+j] = float64(c[k]*x[j]) + float64(lam*w[k*st+j])
		}
		if r.cfg.Intercept {
			g[k*st+d] = c[k]
			if r.cfg.RidgeIntercept {
				g[k*st+d] = c[k] + float64(lam*w[k*st+d])
			}
		}
	}
	return g
}

func (r *refLearner) step(z stream.Sample) {
	cfg := r.cfg
	eta := cfg.StepSize
	if cfg.StepDecay > 0 {
		c := cfg.StepPower
		if c == 0 {
			c = 1
		}
		eta = cfg.StepSize * math.Pow(1+float64((cfg.StepDecay*cfg.StepSize)*float64(r.inserts)), -c)
		if c == 1 { // docs/spec.md §2.1: η/(1 + a·η·t), the bound's evaluation
			eta = cfg.StepSize / (1 + float64((cfg.StepDecay*cfg.StepSize)*float64(r.inserts)))
		}
	}
	x, mean, m2 := r.features(z)
	g := r.grad(r.w, x, z)
	p := make([]float64, len(g))
	r.mem.Apply(p, g)
	wn := make([]float64, len(r.w))
	for i := range wn {
		wn[i] = r.w[i] - float64(eta*p[i])
	}
	s := make([]float64, len(wn))
	for i := range s {
		s[i] = wn[i] - r.w[i]
	}
	gn := r.grad(wn, x, z)
	y := make([]float64, len(wn))
	for i := range y {
		y[i] = gn[i] - g[i]
	}
	if cfg.Damping > 0 {
		for i := range y {
			y[i] += float64(cfg.Damping * s[i])
		}
	}
	sy := floats.Dot(s, y)
	if sy > cfg.CurvatureTol*floats.Norm(s, 2)*floats.Norm(y, 2) && !math.IsInf(sy, 0) {
		r.mem.push(s, y, sy, nil)
	} else {
		r.skipped++
	}
	r.w = wn
	r.inserts++
	r.mean, r.m2 = mean, m2
	if cfg.Standardize {
		r.n++
	}
	if cfg.Average && r.inserts > cfg.AverageStart {
		r.avgN++
		if r.avgN == 1 {
			copy(r.avg, r.w)
		} else {
			g := r.cfg.AveragePower
			rk := (g + 1) / (float64(r.avgN) + g)
			for i := range r.avg {
				r.avg[i] = r.avg[i] + float64((r.w[i]-r.avg[i])*rk)
			}
		}
	}
}

// TestOptionsInsertMatchesSpec checks the learner's (fused) insert against
// the literal reference of spec §2.1, bit for bit — w, the average, the
// statistics and every stored pair — for random streams of every linear
// kind, dense and sparse, and the options of the affine path.
func TestOptionsInsertMatchesSpec(t *testing.T) {
	rapid.Check(t, func(rt *rapid.T) {
		seed := rapid.Uint64().Draw(rt, "seed")
		d := rapid.IntRange(1, 9).Draw(rt, "d")
		n := rapid.IntRange(1, 40).Draw(rt, "n")
		loss, _, events := linearStream(rt, t, seed, d, n)
		if rapid.Bool().Draw(rt, "sparse") {
			for _, e := range events {
				e.Sample.V[0] = 0
			}
			events = sparseForm(events)
		}
		cfg := optionSet(rt, DefaultConfig(d)).ForLoss(loss)
		cfg.Memory = rapid.IntRange(0, 4).Draw(rt, "tau")
		l := mustReplay(rt, cfg, loss, events)
		ref := newRef(cfg, loss.(stream.Linear))
		for _, e := range events {
			ref.step(e.Sample)
		}
		require.True(rt, floatbits.Equal(l.W(), ref.w), "w")
		require.Equal(rt, ref.skipped, l.Skipped())
		require.Equal(rt, ref.mem.Len(), l.Memory().Len())
		for i := range ref.mem.Len() {
			require.True(rt, floatbits.Equal(ref.mem.Pair(i).S, l.Memory().Pair(i).S), "pair %d s", i)
			require.True(rt, floatbits.Equal(ref.mem.Pair(i).Y, l.Memory().Pair(i).Y), "pair %d y", i)
		}
		st := l.OptionState()
		if cfg.Standardize {
			require.True(rt, floatbits.Equal(st.Mean, ref.mean) && floatbits.Equal(st.M2, ref.m2), "statistics")
		}
		if cfg.Average {
			require.Equal(rt, ref.avgN, st.AverageN)
			require.True(rt, floatbits.Equal(st.Average, ref.avg), "average")
		}
	})
}

// TestStandardizeScoresMatchesReference checks standardizeScores, with and
// without its assembly body, bit for bit against welford and Dot4 written
// plainly, for lengths around every multiple of 4 and a long one, with
// features that have not varied (M2 = 0), subnormal and huge values.
func TestStandardizeScoresMatchesReference(t *testing.T) {
	r := rand.New(rand.NewPCG(31, 32))
	for _, n := range []int{1, 2, 3, 4, 5, 7, 8, 9, 15, 16, 17, 1001} {
		for _, withAvg := range []bool{false, true} {
			x, mean, m2, w, avg := make([]float64, n), make([]float64, n), make([]float64, n), make([]float64, n), make([]float64, n)
			for j := range n {
				x[j], mean[j], w[j], avg[j] = r.NormFloat64()*10, r.NormFloat64(), r.NormFloat64(), r.NormFloat64()
				switch j % 5 {
				case 0:
					m2[j] = 0 // not varied yet
					mean[j] = x[j]
				case 1:
					m2[j] = 5e-324 // subnormal
				case 2:
					m2[j] = 1e300
				default:
					m2[j] = r.Float64() * 100
				}
			}
			rn := 1 / float64(7)
			// The reference: welford and Dot4, plainly.
			wantX, wantM, wantQ := make([]float64, n), make([]float64, n), make([]float64, n)
			for j := range n {
				wantX[j] = welford(x[j], mean[j], m2[j], rn, &wantM[j], &wantQ[j])
			}
			wantU := stream.Dot4(wantX, w)
			wantB := 0.0
			var a []float64
			if withAvg {
				a, wantB = avg, stream.Dot4(wantX, avg)
			}
			for _, asm := range []bool{true, false} {
				gotX, nm, nq := append([]float64(nil), x...), make([]float64, n), make([]float64, n)
				var u, b float64
				run := func() { u, b = standardizeScores(gotX, mean, m2, nm, nq, w, a, rn) }
				if asm {
					run()
				} else {
					withoutAsm(run)
				}
				require.True(t, floatbits.Equal(gotX, wantX), "n=%d avg=%v asm=%v: x̃", n, withAvg, asm)
				require.True(t, floatbits.Equal(nm, wantM) && floatbits.Equal(nq, wantQ), "n=%d: statistics", n)
				require.True(t, floatbits.Equal([]float64{u, b}, []float64{wantU, wantB}), "n=%d avg=%v asm=%v: sums %v %v, want %v %v", n, withAvg, asm, u, b, wantU, wantB)
			}
		}
	}
}
