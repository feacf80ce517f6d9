package bound

import (
	"math"
	"math/big"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"gonum.org/v1/gonum/mat"
	"pgregory.net/rapid"
)

// ratOf returns x as an exact rational.
func ratOf(x float64) *big.Rat { return new(big.Rat).SetFloat64(x) }

// TestScheduleEnclose: the exact η(t) = η₀/(1 + η₀λt) (rational arithmetic)
// and the floats of several evaluation orders a learner may use lie in
// Enclose(t), with no tolerance; a constant schedule encloses η₀ exactly.
func TestScheduleEnclose(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		s := Schedule{
			Eta0:  math.Pow(10, rapid.Float64Range(-4, 2).Draw(t, "logEta0")),
			Decay: math.Pow(10, rapid.Float64Range(-6, 2).Draw(t, "logDecay")),
		}
		tt := rapid.IntRange(0, MaxSteps).Draw(t, "t")
		lo, hi := s.Enclose(tt)
		exact := new(big.Rat).Mul(ratOf(s.Eta0), ratOf(s.Decay))
		exact.Mul(exact, new(big.Rat).SetInt64(int64(tt)))
		exact.Add(exact, big.NewRat(1, 1))
		exact.Quo(ratOf(s.Eta0), exact)
		if ratOf(lo).Cmp(exact) > 0 || ratOf(hi).Cmp(exact) < 0 {
			t.Fatalf("exact η(%d) = %v outside [%v, %v]", tt, exact.FloatString(20), lo, hi)
		}
		tf := float64(tt)
		for name, v := range map[string]float64{
			"At":                 s.At(tt),
			"η₀/(1+η₀·(λ·t))":    s.Eta0 / (1 + s.Eta0*(s.Decay*tf)),
			"η₀/fma(η₀·λ, t, 1)": s.Eta0 / math.FMA(s.Eta0*s.Decay, tf, 1),
		} {
			if v < lo || v > hi {
				t.Fatalf("%s = %v outside [%v, %v]", name, v, lo, hi)
			}
		}
	})
	lo, hi := Schedule{Eta0: 0.1}.Enclose(12345)
	assert.Equal(t, 0.1, lo, "constant schedule: lo")
	assert.Equal(t, 0.1, hi, "constant schedule: hi")
	assert.Equal(t, 0.1, Schedule{Eta0: 0.1}.At(7), "constant schedule: At is η₀ bit for bit")
}

func TestDynamicsRefuses(t *testing.T) {
	ok := Dynamics{Schedule: Schedule{Eta0: 1, Decay: 0.1}, HMin: 1, HMax: 1, Mu: 0.1, L: 1, G: 1, Radius: 5, Provenance: Proved}
	for _, tc := range []struct {
		name     string
		edit     func(d *Dynamics, s *Stream)
		arg      string
		sentinel error
	}{
		{"eta0=0", func(d *Dynamics, _ *Stream) { d.Schedule.Eta0 = 0 }, "Eta0", ErrValue},
		{"decay<0", func(d *Dynamics, _ *Stream) { d.Schedule.Decay = -1 }, "Decay", ErrValue},
		{"hMin=0", func(d *Dynamics, _ *Stream) { d.HMin = 0 }, "HMin", ErrValue},
		{"hMin>hMax", func(d *Dynamics, _ *Stream) { d.HMin = 2 }, "HMin", ErrInvalid},
		{"mu>L", func(d *Dynamics, _ *Stream) { d.Mu = 2 }, "Mu", ErrInvalid},
		{"L=Inf", func(d *Dynamics, _ *Stream) { d.L = math.Inf(1) }, "L", ErrValue},
		{"G=NaN", func(d *Dynamics, _ *Stream) { d.G = math.NaN() }, "G", ErrValue},
		{"roundoff<0", func(d *Dynamics, _ *Stream) { d.RoundOff = -1 }, "RoundOff", ErrValue},
		{"provenance", func(d *Dynamics, _ *Stream) { d.Provenance = Unspecified }, "Provenance", ErrInvalid},
		{"steps<0", func(_ *Dynamics, s *Stream) { s.Steps = -1 }, "Steps", ErrInvalid},
		{"steps>max", func(_ *Dynamics, s *Stream) { s.Steps = MaxSteps + 1 }, "Steps", ErrInvalid},
		{"deleted 0", func(_ *Dynamics, s *Stream) { s.Deleted = []int{0} }, "Deleted[0]", ErrInvalid},
		{"deleted>steps", func(_ *Dynamics, s *Stream) { s.Deleted = []int{3, 11} }, "Deleted[1]", ErrInvalid},
		{"deleted twice", func(_ *Dynamics, s *Stream) { s.Deleted = []int{3, 3} }, "Deleted", ErrInvalid},
		{"after>steps", func(_ *Dynamics, s *Stream) { s.Interventions = []Intervention{{After: 11}} }, "Interventions[0].After", ErrInvalid},
		{"move NaN", func(_ *Dynamics, s *Stream) { s.Interventions = []Intervention{{After: 1, Move: math.NaN()}} }, "Interventions[0].Move", ErrValue},
		{"zero without radius", func(d *Dynamics, s *Stream) { d.Radius = 0; s.Interventions = []Intervention{{After: 1, Zero: true}} }, "Interventions[0].Zero", ErrInvalid},
		{"average without radius", func(d *Dynamics, _ *Stream) { d.Radius = 0; d.Average.From = 1 }, "Average.From", ErrInvalid},
		{"average<0", func(d *Dynamics, _ *Stream) { d.Average.From = -1 }, "Average.From", ErrInvalid},
		{"power NaN", func(d *Dynamics, _ *Stream) { d.Average.Power = math.NaN() }, "Average.Power", ErrValue},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d, s := ok, Stream{Steps: 10, Deleted: []int{4}}
			tc.edit(&d, &s)
			_, err := d.Bound(s)
			wantArgError(t, err, tc.arg, tc.sentinel)
		})
	}
}

// TestDynamicsExactZero: without deletions and interventions the two
// trajectories are the same, and the bound is exactly 0, averaged or not;
// without a memory, an intervention that does not move w changes nothing,
// while with a memory it may have changed the memory, and the bound is
// positive after it.
func TestDynamicsExactZero(t *testing.T) {
	mem := Dynamics{Schedule: Schedule{Eta0: 1, Decay: 0.1}, HMin: 0.5, HMax: 2, Mu: 0.1, L: 1, G: 1, Radius: 5, RoundOff: 1e-9, Provenance: Proved}
	memAvg := mem
	memAvg.Average = Averaging{From: 1}
	noMem := mem
	noMem.HMax = noMem.HMin
	noMem.Average = Averaging{From: 50, Power: 2}
	noop := Stream{Steps: 100, Interventions: []Intervention{{After: 30}}}
	for _, tc := range []struct {
		d Dynamics
		s Stream
	}{
		{mem, Stream{Steps: 100}},
		{memAvg, Stream{Steps: 100}},
		{noMem, noop},
	} {
		r, err := tc.d.Bound(tc.s)
		require.NoError(t, err)
		assert.Zero(t, r.Alpha, "α for %+v", tc.s)
		assert.Zero(t, r.Last, "last for %+v", tc.s)
	}
	r, err := mem.Bound(noop)
	require.NoError(t, err)
	assert.Positive(t, r.Alpha, "a memory intervention makes the memories differ")
}

// TestAveragingCases: before the window starts both release their last
// iterate; when only the counterfactual has not reached it, the bound is
// the (rounded) diameter; a polynomial-decay average of an old deletion is
// of the order of the last iterate's bound, a uniform one a log factor
// above it.
func TestAveragingCases(t *testing.T) {
	d := Dynamics{Schedule: Schedule{Eta0: 1, Decay: 0.5}, HMin: 1, HMax: 1, Mu: 0.5, L: 1, G: 1, Radius: 3, Provenance: Proved}
	d.Average = Averaging{From: 50}
	early, err := d.Bound(Stream{Steps: 40, Deleted: []int{5}})
	require.NoError(t, err)
	assert.Equal(t, early.Last, early.Alpha, "T < S: the last iterate is released")
	assert.Zero(t, early.Average)
	edge, err := d.Bound(Stream{Steps: 50, Deleted: []int{5}})
	require.NoError(t, err)
	assert.GreaterOrEqual(t, edge.Alpha, 6.0, "T − m < S ≤ T: the diameter")
	assert.Less(t, edge.Alpha, 6.0*(1+1e-12), "T − m < S ≤ T: the diameter, rounded")
	for _, tc := range []struct {
		power, maxRatio float64
	}{
		{0, 12}, // ≈ (ln(T/p) + ½ln²(T/p))/(1 + ln(T/p)) with T/p = 2·10⁴
		{2, 2},  // ≈ (1+κ)/κ
	} {
		d.Average = Averaging{From: 1, Power: tc.power}
		r, err := d.Bound(Stream{Steps: 100000, Deleted: []int{5}})
		require.NoError(t, err)
		assert.Equal(t, r.Average, r.Alpha)
		assert.Less(t, r.Alpha, tc.maxRatio*r.Last, "κ = %v: average %v, last %v", tc.power, r.Alpha, r.Last)
		assert.Greater(t, r.Alpha, r.Last/10, "κ = %v: the average is not below a tenth of the last iterate's bound", tc.power)
	}
}

// TestLipschitzBoundExact: for random symmetric H with spectrum in
// [hMin, hMax] and A in [μ, L], commuting or not, and η in an interval,
// ‖(I − ηHA)v‖ ≤ ρ‖v‖ with the model's ρ for the interval, checked in exact
// rational arithmetic for random v and for the top right singular vector
// (the worst direction, computed in floating point).
func TestLipschitzBoundExact(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		d := rapid.IntRange(1, 4).Draw(t, "d")
		mu := rapid.Float64Range(0.05, 2).Draw(t, "mu")
		l := mu * rapid.Float64Range(1, 10).Draw(t, "kappa")
		hMin := rapid.Float64Range(0.1, 2).Draw(t, "hMin")
		hMax := hMin * rapid.Float64Range(1, 3).Draw(t, "kappaH")
		if rapid.IntRange(0, 3).Draw(t, "identity") == 0 {
			hMax = hMin
		}
		commuting := rapid.Bool().Draw(t, "commuting")
		lo := rapid.Float64Range(0, 3).Draw(t, "etaLo") / (hMax * l)
		hi := lo * rapid.Float64Range(1, 1.5).Draw(t, "etaRatio")
		r := rand.New(rand.NewPCG(rapid.Uint64().Draw(t, "seed"), 5))
		spectrum := func(a, b float64) []float64 {
			e := make([]float64, d)
			for i := range e {
				e[i] = a + (b-a)*r.Float64()
			}
			e[0] = a
			e[d-1] = b
			return e
		}
		var h, a mat.Matrix
		switch {
		case hMax == hMin:
			h, a = mat.NewDiagDense(d, spectrum(hMin, hMin)), randomSPD(r, spectrum(mu, l))
		case commuting:
			h, a = mat.NewDiagDense(d, spectrum(hMin, hMax)), mat.NewDiagDense(d, spectrum(mu, l))
		default:
			h, a = randomSPD(r, spectrum(hMin, hMax)), randomSPD(r, spectrum(mu, l))
		}
		// The float matrices' exact spectra are within ≈1e-15 of the drawn
		// ones; the model is given bounds widened by 1e-9.
		m := newStepModel(Dynamics{Schedule: Schedule{Eta0: 1}, HMin: hMin * (1 - 1e-9), HMax: hMax * (1 + 1e-9),
			Mu: mu * (1 - 1e-9), L: l * (1 + 1e-9), Commuting: commuting || hMax == hMin})
		if hMax == hMin {
			m.identity, m.commutes = true, true // H = hMin·I exactly
		}
		rho := m.lipschitz(lo, hi)
		eta := lo + (hi-lo)*r.Float64()
		var ha, op mat.Dense
		ha.Mul(h, a)
		op.Scale(-eta, &ha)
		for i := range d {
			op.Set(i, i, 1+op.At(i, i))
		}
		var svd mat.SVD
		require.True(t, svd.Factorize(&op, mat.SVDFull))
		var vt mat.Dense
		svd.VTo(&vt)
		cands := [][]float64{mat.Col(nil, 0, &vt), randomVec(r, d, 1), randomVec(r, d, 1)}
		for _, v := range cands {
			// (I − ηHA)v exactly: v − η·H(Av).
			av := matVecRat(a, v)
			hav := matRatVec(h, av)
			norm2, vn2 := new(big.Rat), new(big.Rat)
			for i := range d {
				x := new(big.Rat).Mul(ratOf(eta), hav[i])
				x.Sub(ratOf(v[i]), x)
				norm2.Add(norm2, x.Mul(x, x))
				vn2.Add(vn2, new(big.Rat).Mul(ratOf(v[i]), ratOf(v[i])))
			}
			bound := new(big.Rat).Mul(ratOf(rho), ratOf(rho))
			if norm2.Cmp(bound.Mul(bound, vn2)) > 0 {
				t.Fatalf("‖(I − ηHA)v‖² = %v > ρ²‖v‖² (ρ = %v, η = %v)", norm2.FloatString(12), rho, eta)
			}
		}
	})
}

// matVecRat returns m·v exactly.
func matVecRat(m mat.Matrix, v []float64) []*big.Rat {
	r, _ := m.Dims()
	out := make([]*big.Rat, r)
	for i := range r {
		out[i] = new(big.Rat)
		for j, vj := range v {
			out[i].Add(out[i], new(big.Rat).Mul(ratOf(m.At(i, j)), ratOf(vj)))
		}
	}
	return out
}

// matRatVec returns m·v exactly for a rational v.
func matRatVec(m mat.Matrix, v []*big.Rat) []*big.Rat {
	r, _ := m.Dims()
	out := make([]*big.Rat, r)
	for i := range r {
		out[i] = new(big.Rat)
		for j, vj := range v {
			out[i].Add(out[i], new(big.Rat).Mul(ratOf(m.At(i, j)), vj))
		}
	}
	return out
}

// TestNearIsotropicContracts: with a memory spectrum narrow enough
// (e·L < μ) and small steps, the near-isotropic bound contracts where the
// general bound sqrt(hMax/hMin)·ρ₀ exceeds 1 (hand check: hMin = 0.95,
// hMax = 1.05, μ = 0.5, L = 1, η = 0.01: e = 0.05, hMid·(μ − e·L) = 0.45,
// sqrt(1 − 0.009 + 0.0001·1.1025) = 0.99555…; general
// sqrt(1.05/0.95)·(1 − 0.01·0.95·0.5) = 1.0461…).
func TestNearIsotropicContracts(t *testing.T) {
	m := newStepModel(Dynamics{Schedule: Schedule{Eta0: 1}, HMin: 0.95, HMax: 1.05, Mu: 0.5, L: 1})
	got := m.lipschitzAt(0.01)
	want := math.Sqrt(1 - 2*0.01*0.45 + 0.0001*1.05*1.05)
	assert.GreaterOrEqual(t, got, want, "rounded up")
	assert.True(t, near(got, want, 0, 1e-14), "ρ = %v, want %v", got, want)
	general := math.Sqrt(1.05/0.95) * (1 - 0.01*0.95*0.5)
	assert.Greater(t, general, 1.0, "the general bound does not contract here")
}

// TestConstantScheduleMatchesScenario: with a constant step, commuting
// Hessians and no radius, the scheduled recursion is the worst-case
// memory model of Scenario (same ρ, same step and memory terms, same
// round-off), up to rounding.
func TestConstantScheduleMatchesScenario(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		mu := rapid.Float64Range(0.1, 2).Draw(t, "mu")
		l := mu * rapid.Float64Range(1, 10).Draw(t, "kappa")
		hMin := rapid.Float64Range(0.1, 1).Draw(t, "hMin")
		hMax := hMin * rapid.Float64Range(1, 5).Draw(t, "kappaH")
		eta := rapid.Float64Range(0.05, 1.9).Draw(t, "etaFrac") / (hMax * l)
		g := rapid.Float64Range(0, 10).Draw(t, "G")
		ro := rapid.SampledFrom([]float64{0, 1e-9}).Draw(t, "roundOff")
		steps := rapid.IntRange(1, 3000).Draw(t, "steps")
		ages := rapid.SliceOfNDistinct(rapid.IntRange(0, steps-1), 1, 5, rapid.ID[int]).Draw(t, "ages")
		k, err := AnalyticContraction(AnalyticParams{Mu: mu, L: l, Eta: eta, HMin: hMin, HMax: hMax, Case: Commuting})
		if err != nil {
			t.Skip("no contraction")
		}
		sc := Scenario{Constants: Constants{G: g, HMin: hMin, HMax: hMax, Eta: eta, Tau: 1, Provenance: Proved},
			Contraction: k, Ages: ages, RoundOff: ro}
		want, err := sc.Bound()
		require.NoError(t, err)
		deleted := make([]int, len(ages))
		for i, a := range ages {
			deleted[i] = steps - a
		}
		got, err := Dynamics{Schedule: Schedule{Eta0: eta}, HMin: hMin, HMax: hMax, Mu: mu, L: l, Commuting: true, G: g,
			RoundOff: ro, Provenance: Proved}.Bound(Stream{Steps: steps, Deleted: deleted})
		require.NoError(t, err)
		if !near(got.Alpha, want.Alpha[0], 1e-300, 1e-9) {
			t.Fatalf("scheduled %v, scenario %v", got.Alpha, want.Alpha[0])
		}
	})
}

// decayCase draws a memory-free learner with the schedule of the theorem
// in docs/theory.md ("Sensitivity of order G/(λT)"): λ_η ≤ γμ and
// η₀γ(L + μ) ≤ 2.
func decayCase(t *rapid.T) (Dynamics, float64) {
	mu := math.Pow(10, rapid.Float64Range(-3, 0).Draw(t, "logMu"))
	l := mu * math.Pow(10, rapid.Float64Range(0, 3).Draw(t, "logKappa"))
	gamma := math.Pow(2, rapid.Float64Range(-2, 2).Draw(t, "logGamma"))
	lambda := gamma * mu * rapid.Float64Range(0.05, 1).Draw(t, "decayFrac")
	eta0 := rapid.Float64Range(0.01, 2).Draw(t, "etaFrac") / (gamma * (l + mu))
	g := rapid.Float64Range(0.1, 10).Draw(t, "G")
	return Dynamics{Schedule: Schedule{Eta0: eta0, Decay: lambda}, HMin: gamma, HMax: gamma, Mu: mu, L: l, G: g, Provenance: Proved}, lambda
}

// decayClosedForm is the theorem's bound for one deleted insert at step p of
// T: with c = 1/(η₀λ_η),
//
//	Δ_T ≤ (γG/λ_η)·[(c+p−2)/(c+p−1) + Σ_{s=p+1}^{T} 1/(c+s−1)]/(c+T−2)  (T > p),
//	Δ_p ≤ γG/(λ_η(c+p−1)),
//
// and its logarithmic form (γG/λ_η)·(1 + ln((c+T−1)/(c+p−1)))/(c+T−2).
func decayClosedForm(d Dynamics, lambda float64, p, T int) (sum, log float64) {
	c := 1 / (d.Schedule.Eta0 * lambda)
	k := d.HMin * d.G / lambda
	if T == p {
		v := k / (c + float64(p) - 1)
		return v, v
	}
	h := (c + float64(p) - 2) / (c + float64(p) - 1)
	for s := p + 1; s <= T; s++ {
		h += 1 / (c + float64(s) - 1)
	}
	den := c + float64(T) - 2
	return k * h / den, k * (1 + math.Log((c+float64(T)-1)/(c+float64(p)-1))) / den
}

// TestDecayTheorem: for a memory-free learner with the schedule
// η(t) = η₀/(1 + η₀λ_η t), λ_η ≤ γμ, η₀γ(L + μ) ≤ 2, one deleted insert of
// any age gives a bound below the theorem's closed form (up to the
// recursion's rounding, a relative 1e-8), so of order γG(1 + ln(T/p))/(λ_η T).
func TestDecayTheorem(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		d, lambda := decayCase(t)
		T := rapid.IntRange(1, 8000).Draw(t, "T")
		p := rapid.IntRange(1, T).Draw(t, "p")
		res, err := d.Bound(Stream{Steps: T, Deleted: []int{p}})
		require.NoError(t, err)
		sum, log := decayClosedForm(d, lambda, p, T)
		if res.Alpha > sum*(1+1e-8) {
			t.Fatalf("α = %v > closed form %v (T = %d, p = %d)", res.Alpha, sum, T, p)
		}
		if res.Alpha > log*(1+1e-8) {
			t.Fatalf("α = %v > logarithmic form %v (T = %d, p = %d)", res.Alpha, log, T, p)
		}
	})
}

// TestDecayShrinksWithStream: the bound of one deletion decreases with
// every later step (the number of events after it) and, for a deletion at
// a fixed age, with the stream's length — the property a useful release
// needs and the constant-step worst-case memory model lacks.
func TestDecayShrinksWithStream(t *testing.T) {
	d := Dynamics{Schedule: Schedule{Eta0: 1, Decay: 0.05}, HMin: 1, HMax: 1, Mu: 0.05, L: 0.3, G: 1.5, Radius: 10, Provenance: Proved}
	prev := math.Inf(1)
	for _, T := range []int{200, 1000, 5000, 25000, 125000} {
		r, err := d.Bound(Stream{Steps: T, Deleted: []int{100}})
		require.NoError(t, err)
		assert.Less(t, r.Alpha, prev, "T = %d: α must shrink with the events after the deletion", T)
		prev = r.Alpha
		age, err := d.Bound(Stream{Steps: T, Deleted: []int{T - 10}})
		require.NoError(t, err)
		assert.Less(t, age.Alpha, 2*1.5/(0.05*float64(T)), "T = %d: a young deletion is O(G/(λT))", T)
	}
}

// decayMultiForm is the theorem's bound for several deleted steps: with
// c = 1/(η₀λ_η) and j(s) the number of deleted steps before s,
//
//	Δ_T ≤ (γG/λ_η)·[m + Σ_{shared s, j(s) ≥ 1} j(s)/(c + s − 1 − j(s))]/(c + T − 1).
func decayMultiForm(d Dynamics, lambda float64, deleted map[int]bool, T int) float64 {
	c := 1 / (d.Schedule.Eta0 * lambda)
	var sum float64
	j := 0
	for s := 1; s <= T; s++ {
		if deleted[s] {
			sum++
			j++
		} else if j > 0 {
			sum += float64(j) / (c + float64(s-1-j))
		}
	}
	return d.HMin * d.G / lambda * sum / (c + float64(T) - 1)
}

// TestDecayTheoremSeveralDeletions: the bound of several deleted inserts
// (any ages) is below the theorem's closed form for m deletions.
func TestDecayTheoremSeveralDeletions(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		d, lambda := decayCase(t)
		T := rapid.IntRange(1, 3000).Draw(t, "T")
		steps := rapid.SliceOfNDistinct(rapid.IntRange(1, T), 1, 8, rapid.ID[int]).Draw(t, "deleted")
		deleted := map[int]bool{}
		for _, s := range steps {
			deleted[s] = true
		}
		res, err := d.Bound(Stream{Steps: T, Deleted: steps})
		require.NoError(t, err)
		if want := decayMultiForm(d, lambda, deleted, T); res.Alpha > want*(1+1e-8) {
			t.Fatalf("α = %v > closed form %v (T = %d, deleted %v)", res.Alpha, want, T, steps)
		}
	})
}
