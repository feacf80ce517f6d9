package align

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/stretchr/testify/require"

	"unlearn/internal/testutil"
	"unlearn/olbfgs"
	"unlearn/stream"
)

// scenario is a deletion at t_del followed by a future of h events.
type scenario struct {
	loss   stream.Loss
	tau    int
	prefix []stream.Event
	future []stream.Event
	u      stream.IDSet
}

// newScenario builds a stream of tdel+h inserts (ids 1..tdel+h) at d = 8
// and deletes the ids u from its prefix.
func newScenario(t testing.TB, logistic bool, tau, tdel, h int, u ...int64) scenario {
	t.Helper()
	const d = 8 // small but above 4, so block rows have a tail
	var loss stream.Loss
	var events []stream.Event
	if logistic {
		loss, events = logisticStream(t, 5, d, tdel+h)
	} else {
		loss, events = quadStream(t, 5, d, tdel+h)
	}
	return scenario{loss: loss, tau: tau, prefix: events[:tdel], future: events[tdel:], u: stream.NewIDSet(u...)}
}

// reference returns the counterfactual state θ⁻_{t_del}.
func (s scenario) reference(t testing.TB) *olbfgs.Learner {
	t.Helper()
	return replay(t, s.loss, s.tau, stream.Counterfactual(s.prefix, s.u))
}

// actual returns the actual state θ_{t_del} with U marked (no-op deletion).
func (s scenario) actual(t testing.TB) *olbfgs.Learner {
	t.Helper()
	l := replay(t, s.loss, s.tau, s.prefix)
	l.MarkDeleted(s.u.Sorted()...)
	return l
}

func (s scenario) track(t testing.TB, e *Engine, states ...*olbfgs.Learner) []*Series {
	t.Helper()
	e.SetDeletion(s.u)
	series, err := e.Track(s.reference(t), states, s.future, len(s.future))
	require.NoError(t, err)
	return series
}

func TestOracleHasZeroErrorAtEveryStep(t *testing.T) {
	for _, logistic := range []bool{false, true} {
		t.Run(fmt.Sprintf("logistic=%v", logistic), func(t *testing.T) {
			s := newScenario(t, logistic, 5, 80, 60, 3, 41, 77, 80)
			oracle := s.reference(t) // an independent replay, not the reference itself
			oracle.MarkDeleted(s.u.Sorted()...)
			e := newEngine(t, 8, Options{Seed: 1})
			series := s.track(t, e, oracle, s.actual(t))
			or, noop := series[0], series[1]
			for k := 0; k < or.Len(); k++ {
				if p := or.At(k); p.Ew != 0 || p.EZ != 0 || p.ETheta != 0 || p.Dupd != 0 || p.Mdirect != 0 {
					t.Fatalf("oracle at k=%d: %+v, want all zero", k, p)
				}
			}
			sum := or.Summarize(s.tau)
			if !sum.ExactRecovery || sum.StateAUC != 0 || sum.Decay[0].OK {
				t.Fatalf("oracle summary %+v: want exact recovery, zero AUC, no decay fit", sum)
			}
			// The no-op trajectory of the same run is not exact: the test can fail.
			if ns := noop.Summarize(s.tau); ns.ExactRecovery || !(ns.StateAUC > 0) || !(ns.Initial.EZ > 0) {
				t.Fatalf("no-op summary %+v: want a positive error", ns)
			}
		})
	}
}

func TestMemoryErrorZeroForIdenticalMemories(t *testing.T) {
	s := newScenario(t, false, 5, 40, 1, 38, 39)
	ref := s.reference(t)
	e := newEngine(t, 8, Options{Seed: 2})
	e.SetDeletion(s.u)
	e.SetReference(ref, &s.future[0].Sample)

	sameMem := ref.Clone()
	w := slices.Clone(ref.W())
	w[0] += 0.5
	sameMem.SetW(w)

	// Same pairs, different sources: Memory.Equal is false, so the probe
	// block is computed, and must still give exactly 0.
	relabelled := olbfgs.NewMemory(8, s.tau, olbfgs.DefaultInitialScale)
	for i := 0; i < ref.Memory().Len(); i++ {
		p := ref.Memory().Pair(i)
		require.NoError(t, relabelled.Push(p.S, p.Y, 1000+int64(i)))
	}
	relab := ref.Clone()
	relab.Memory().CopyFrom(relabelled)

	other := s.actual(t) // a different memory

	tests := []struct {
		name      string
		st        *olbfgs.Learner
		zeroEZ    bool
		zeroEw    bool
		identical bool
	}{
		{"identical state", ref.Clone(), true, true, true},
		{"same memory, different w", sameMem, true, false, false},
		{"same pairs, other sources", relab, true, true, false},
		{"different memory", other, false, false, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := e.Measure(tt.st)
			if (p.EZ == 0) != tt.zeroEZ || (p.Ew == 0) != tt.zeroEw || p.Identical != tt.identical {
				t.Fatalf("point %+v: want EZ zero %v, Ew zero %v, identical %v", p, tt.zeroEZ, tt.zeroEw, tt.identical)
			}
			if tt.zeroEZ && tt.zeroEw && p.Dupd != 0 {
				t.Fatalf("D_upd = %v for identical directions, want exactly 0", p.Dupd)
			}
			if !tt.zeroEZ && !(p.EZ > 0) {
				t.Fatalf("EZ = %v, want > 0", p.EZ)
			}
		})
	}
}

// naiveEZ is the spec §3 definition with Memory.Apply on every probe.
func naiveEZ(a, b *olbfgs.Memory, probes [][]float64) float64 {
	d := a.Dim()
	ha, hb := make([]float64, d), make([]float64, d)
	var s float64
	for _, q := range probes {
		a.Apply(ha, q)
		b.Apply(hb, q)
		for i := range ha {
			s += (ha[i] - hb[i]) * (ha[i] - hb[i])
		}
	}
	return math.Sqrt(s / float64(len(probes)))
}

func TestMemoryErrorMatchesDefinition(t *testing.T) {
	s := newScenario(t, false, 6, 50, 1, 2, 30, 47, 49)
	ref, act := s.reference(t), s.actual(t)
	tests := []struct {
		name string
		opt  Options
	}{
		// 32 probes > d = 8: the Cholesky-factor basis.
		{"factor basis, 32 probes", Options{Seed: 3}},
		{"direct, 32 probes", Options{Seed: 3, DirectProbes: true}},
		// 5 probes < d: always direct.
		{"5 probes", Options{Seed: 4, Probes: 5}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newEngine(t, 8, tt.opt)
			e.SetReference(ref, nil)
			got := e.Measure(act).EZ
			want := naiveEZ(act.Memory(), ref.Memory(), e.Probes())
			// 1e-12 relative: the factor route changes only the rounding
			// (cond(QQᵀ) ≈ 30 here), the direct route only the order of sums.
			if !equalWithin(got, want, 1e-12) || !(want > 0) {
				t.Fatalf("E_Z = %v, definition gives %v", got, want)
			}
		})
	}
}

func TestUserProbesReproduceDrawnOnes(t *testing.T) {
	s := newScenario(t, true, 5, 40, 1, 39)
	ref, act := s.reference(t), s.actual(t)
	drawn := newEngine(t, 8, Options{Seed: 9})
	given := newEngine(t, 8, Options{ProbeVectors: DrawProbes(rand.New(rand.NewPCG(9, ProbeStream)), 8, DefaultProbes)})
	for _, e := range []*Engine{drawn, given} {
		e.SetReference(ref, &s.future[0].Sample)
	}
	if a, b := drawn.Measure(act), given.Measure(act); a != b {
		t.Fatalf("drawn probes give %+v, the same probes given explicitly %+v", a, b)
	}
}

func TestDrawProbes(t *testing.T) {
	p := DrawProbes(rand.New(rand.NewPCG(7, ProbeStream)), 5, 3)
	// The documented draw order: probe by probe, coordinates in order.
	rng := rand.New(rand.NewPCG(7, ProbeStream))
	for j, q := range p {
		raw := make([]float64, 5)
		var ss float64
		for i := range raw {
			raw[i] = rng.NormFloat64()
			ss += raw[i] * raw[i]
		}
		for i := range raw {
			if q[i] != raw[i]/math.Sqrt(ss) {
				t.Fatalf("probe %d entry %d = %v, want %v", j, i, q[i], raw[i]/math.Sqrt(ss))
			}
		}
	}
	require.NoError(t, CheckProbes(p, 5), "drawn probes rejected")
	if q := DrawProbes(rand.New(rand.NewPCG(8, ProbeStream)), 5, 3); slices.Equal(q[0], p[0]) {
		t.Fatal("different seeds drew the same probe")
	}
}

func TestCheckProbesAndOptions(t *testing.T) {
	unit := []float64{0.6, 0.8}
	tests := []struct {
		name string
		d    int
		opt  Options
		want error
	}{
		{"no probes", 2, Options{ProbeVectors: [][]float64{}}, ErrProbes},
		{"wrong length", 2, Options{ProbeVectors: [][]float64{{1, 0, 0}}}, ErrProbes},
		{"not unit", 2, Options{ProbeVectors: [][]float64{{0.6, 0.8 + 1e-9}}}, ErrProbes},
		{"NaN", 2, Options{ProbeVectors: [][]float64{{math.NaN(), 1}}}, ErrProbes},
		{"count mismatch", 2, Options{Probes: 2, ProbeVectors: [][]float64{unit}}, ErrConfig},
		{"negative probes", 2, Options{Probes: -1}, ErrConfig},
		{"negative lambda", 2, Options{LambdaZ: new(-1.0)}, ErrConfig},
		{"NaN lambda", 2, Options{LambdaZ: new(math.NaN())}, ErrConfig},
		{"infinite lambda", 2, Options{LambdaZ: new(math.Inf(1))}, ErrConfig},
		{"zero dimension", 0, Options{}, ErrConfig},
		{"too many probes", 25, Options{Probes: MaxProbeFloats/25 + 1}, ErrConfig},
		{"dimension too large", MaxProbeFloats + 1, Options{}, ErrConfig},
		{"valid given probes", 2, Options{ProbeVectors: [][]float64{unit, {0, 1}}}, nil},
		{"valid defaults", 2, Options{}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := NewEngine(tt.d, tt.opt)
			if tt.want == nil {
				require.NoError(t, err)
			} else {
				require.ErrorIs(t, err, tt.want)
			}
		})
	}
}

func TestDirectionError(t *testing.T) {
	// sqrt(x)·sqrt(x) ≠ x for this vector's squared norm, so identical
	// directions need the explicit bitwise rule to give exactly 0.
	v := []float64{0.1, 0.7, -0.3}
	neg := []float64{-0.1, -0.7, 0.3}
	tests := []struct {
		name string
		a, b []float64
		want float64
		tol  float64 // 0: exact
	}{
		{"both zero", []float64{0, 0, 0}, []float64{0, -0, 0}, 0, 0},
		{"one zero", []float64{0, 0, 0}, v, 1, 0},
		{"other zero", v, []float64{0, 0, 0}, 1, 0},
		{"identical", v, slices.Clone(v), 0, 0},
		{"opposite", v, neg, 2, 0},
		{"parallel, scaled", v, []float64{0.2, 1.4, -0.6}, 0, 2e-16},
		{"orthogonal", []float64{1, 0, 0}, []float64{0, 3, 0}, 1, 0},
		{"huge and tiny", []float64{1e300, 1e300, 0}, []float64{1e-300, 0, 0}, 1 - 1/math.Sqrt2, 1e-15},
		{"subnormal", []float64{5e-324, 5e-324, 0}, []float64{1, 0, 0}, 1 - 1/math.Sqrt2, 1e-15},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := DirectionError(tt.a, tt.b)
			if tt.tol == 0 && got != tt.want || tt.tol > 0 && !equalWithin(got, tt.want, tt.tol) {
				t.Fatalf("DirectionError = %v, want %v (tolerance %v)", got, tt.want, tt.tol)
			}
		})
	}
}

func TestFitDecay(t *testing.T) {
	const c, rho = 3.5, 0.93
	geo := make([]float64, 40)
	for k := range geo {
		geo[k] = c * math.Pow(rho, float64(k))
	}
	withZeros := slices.Clone(geo)
	for _, k := range []int{0, 5, 6, 17} {
		withZeros[k] = 0
	}
	tests := []struct {
		name     string
		series   []float64
		from, to int
		points   int
		ok       bool
	}{
		{"whole series", geo, 0, 39, 40, true},
		{"a range", geo, 10, 19, 10, true},
		{"zeros skipped", withZeros, 0, 39, 36, true},
		{"one point", withZeros, 4, 6, 1, false},
		{"only zeros", withZeros, 5, 6, 0, false},
		{"empty range", geo, 30, 29, 0, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := FitDecay(tt.series, tt.from, tt.to)
			require.Equal(t, tt.points, f.Points, "fit %+v: points", f)
			require.Equal(t, tt.ok, f.OK, "fit %+v: OK", f)
			// 1e-12: log(C·ρ^k) is exact to a few ulps of its value, so
			// the fitted slope and intercept are too.
			if tt.ok && (!equalWithin(f.Rho, rho, 1e-12) || !equalWithin(math.Exp(f.LogC), c, 1e-12)) {
				t.Fatalf("fit ρ̂ = %v, C = %v; want %v, %v", f.Rho, math.Exp(f.LogC), rho, c)
			}
			if !tt.ok && (f.Rho != 0 || f.LogRho != 0 || f.LogC != 0) {
				t.Fatalf("fit without value has numbers: %+v", f)
			}
		})
	}
	t.Run("range outside the series panics", func(t *testing.T) {
		require.Panics(t, func() { FitDecay(geo, 0, 40) })
	})
}

func TestPhases(t *testing.T) {
	tests := []struct {
		tau, h int
		want   [3]Range
	}{
		{5, 4500, [3]Range{{0, 4}, {5, 9}, {10, 4500}}},
		{10, 250, [3]Range{{0, 9}, {10, 19}, {20, 250}}},
		{20, 4500, [3]Range{{0, 19}, {20, 39}, {40, 4500}}},
		{10, 15, [3]Range{{0, 9}, {10, 15}, {20, 15}}}, // P3 empty
		{10, 3, [3]Range{{0, 3}, {10, 3}, {20, 3}}},    // P2, P3 empty
		{1, 0, [3]Range{{0, 0}, {1, 0}, {2, 0}}},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprintf("tau=%d/H=%d", tt.tau, tt.h), func(t *testing.T) {
			require.Equal(t, tt.want, Phases(tt.tau, tt.h))
		})
	}
}

func TestSummarize(t *testing.T) {
	// Four steps, k = 0..3. E_Θ = E_w + E_Z (λ_Z = 1).
	points := []Point{
		{Ew: 1, EZ: 0.5, ETheta: 1.5, Dupd: 0.25, DupdDefined: true, Mdirect: 2, RefWNorm: 1},
		{Ew: 0.5, EZ: 0.25, ETheta: 0.75, Dupd: 0.125, DupdDefined: true, Mdirect: 1, RefWNorm: 1},
		{Ew: 0.25, EZ: 0, ETheta: 0.25, Dupd: 0, DupdDefined: true, Mdirect: 0, RefWNorm: 1},
		{Ew: 2, EZ: 1, ETheta: 3, Dupd: 0, DupdDefined: false, Mdirect: 1, RefWNorm: 1},
	}
	s := NewSeries(len(points))
	for _, p := range points {
		s.Append(p)
	}
	sum := s.Summarize(2)
	// The last step counts in every AUC (k = 0..H inclusive) except the
	// update-direction one, where D_upd(H) is undefined.
	if sum.Horizon != 3 || sum.StateAUC != 5.5 || sum.ParamAUC != 3.75 || sum.MemoryAUC != 1.75 {
		t.Fatalf("AUCs %+v", sum)
	}
	if sum.UpdateAUC != 0.375 || sum.UpdateSteps != 3 {
		t.Fatalf("update AUC %v over %d steps, want 0.375 over 3", sum.UpdateAUC, sum.UpdateSteps)
	}
	require.True(t, sum.Cleared, "cleared")
	require.Equal(t, 2, sum.ClearanceStep, "clearance step")
	if sum.Initial != points[0] || sum.Final != points[3] {
		t.Fatalf("initial/final %+v, %+v", sum.Initial, sum.Final)
	}
	// Phases for τ = 2, H = 3: P1 = [0,1] (two points), P2 = [2,3], P3 = [4,3] empty.
	if !sum.Decay[0].OK || !equalWithin(sum.Decay[0].Rho, 0.5, 1e-15) || !sum.Decay[1].OK || sum.Decay[2].OK {
		t.Fatalf("decay fits %+v", sum.Decay)
	}
	never := NewSeries(1)
	never.Append(Point{Mdirect: 1})
	require.False(t, never.Summarize(2).Cleared, "cleared although M_direct never reaches 0")
}

func TestExactRecoveryThreshold(t *testing.T) {
	tests := []struct {
		name  string
		e, wn float64
		exact bool
	}{
		{"at the threshold, small w", 1e-9, 0.5, true},
		{"above it, small w", 1.0000001e-9, 0.5, false},
		{"relative for large w", 1e-6, 1000, true},
		{"above relative", 1.0000001e-6, 1000, false},
		{"zero", 0, 0, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := NewSeries(2)
			s.Append(Point{RefWNorm: 1})
			s.Append(Point{ETheta: tt.e, RefWNorm: tt.wn})
			require.Equal(t, tt.exact, s.Summarize(1).ExactRecovery, "exact recovery")
		})
	}
}

func TestNoOpClearanceWithinTau(t *testing.T) {
	for _, tau := range []int{3, 5, 10} {
		t.Run(fmt.Sprintf("tau=%d", tau), func(t *testing.T) {
			// Recent deletions: the last three inserts of the prefix.
			s := newScenario(t, false, tau, 60, 40, 58, 59, 60)
			noop := s.actual(t)
			e := newEngine(t, 8, Options{Seed: 5})
			series := s.track(t, e, noop)[0]
			if noop.Skipped() != 0 {
				t.Skip("a curvature pair was skipped: the bound does not apply")
			}
			sum := series.Summarize(tau)
			require.NotZero(t, series.Mdirect[0], "no direct memory at k = 0: the test would be empty")
			require.True(t, sum.Cleared, "cleared")
			require.LessOrEqual(t, sum.ClearanceStep, tau, "clearance step, want within τ")
			for k := sum.ClearanceStep; k < series.Len(); k++ {
				require.Zero(t, series.Mdirect[k], "M_direct(%d) after clearance", k)
			}
		})
	}
}

func TestDupdUndefinedWithoutNextInsert(t *testing.T) {
	s := newScenario(t, false, 4, 30, 5, 29, 30)
	// The future ends with two delete events: after the last insert no
	// direction exists.
	s.future = append(s.future, stream.DeleteEvent(3), stream.DeleteEvent(29))
	e := newEngine(t, 8, Options{Seed: 6})
	ser := s.track(t, e, s.actual(t))[0]
	want := []bool{true, true, true, true, true, false, false, false}
	require.Equal(t, want, ser.DupdDefined, "DupdDefined")
	sum := ser.Summarize(4)
	var auc float64
	for k := 0; k < 5; k++ {
		auc += ser.Dupd[k]
	}
	if sum.UpdateSteps != 5 || sum.UpdateAUC != auc || !(auc > 0) {
		t.Fatalf("update AUC %v over %d steps, want %v over 5", sum.UpdateAUC, sum.UpdateSteps, auc)
	}
}

func TestMetricDefinitions(t *testing.T) {
	s := newScenario(t, true, 5, 50, 1, 10, 45, 50)
	ref, act := s.reference(t), s.actual(t)
	const lambda = 0.25
	e := newEngine(t, 8, Options{Seed: 7, LambdaZ: new(lambda)})
	e.SetDeletion(s.u)
	next := s.future[0].Sample
	e.SetReference(ref, &next)
	p := e.Measure(act)
	var ss float64
	for i, v := range act.W() {
		ss += (v - ref.W()[i]) * (v - ref.W()[i])
	}
	da, dr := make([]float64, 8), make([]float64, 8)
	act.Direction(da, next)
	ref.Direction(dr, next)
	var dot, na, nr, wn float64
	for i := range da {
		dot += da[i] * dr[i]
		na += da[i] * da[i]
		nr += dr[i] * dr[i]
		wn += ref.W()[i] * ref.W()[i]
	}
	checks := []struct {
		name      string
		got, want float64
	}{
		// 1e-14: sums over 8 terms in a different order or with scaling.
		{"E_w", p.Ew, math.Sqrt(ss)},
		{"E_Θ", p.ETheta, p.Ew + lambda*p.EZ},
		{"D_upd", p.Dupd, 1 - dot/math.Sqrt(na*nr)},
		{"M_direct", float64(p.Mdirect), float64(touching(act.Memory(), s.u.Sorted()))},
		{"‖w⁻‖", p.RefWNorm, math.Sqrt(wn)},
	}
	for _, c := range checks {
		if !equalWithin(c.got, c.want, 1e-14) {
			t.Errorf("%s = %v, want %v", c.name, c.got, c.want)
		}
	}
	if p.Mdirect == 0 || !(p.Dupd > 0) {
		t.Fatalf("point %+v: the fixture should have direct memory and a direction error", p)
	}
}

// touching counts the pairs of mem whose source holds an id of u, without
// Memory.DirectMass (which the engine uses).
func touching(mem *olbfgs.Memory, u []int64) int {
	n := 0
	for i := 0; i < mem.Len(); i++ {
		if slices.ContainsFunc(mem.Pair(i).Source, func(id int64) bool { return slices.Contains(u, id) }) {
			n++
		}
	}
	return n
}

func TestTrackIsDeterministicOnEveryPath(t *testing.T) {
	run := func(t *testing.T) []*Series {
		s := newScenario(t, false, 5, 60, 50, 20, 59)
		e := newEngine(t, 8, Options{Seed: 8})
		return s.track(t, e, s.actual(t), s.reference(t))
	}
	saved := useAVX2
	defer func() { useAVX2 = saved }()
	useAVX2 = false
	portable := run(t)
	useAVX2 = saved
	for _, other := range [][]*Series{run(t), run(t)} {
		for i := range portable {
			a, b := portable[i], other[i]
			if !slices.Equal(a.ETheta, b.ETheta) || !slices.Equal(a.EZ, b.EZ) || !slices.Equal(a.Dupd, b.Dupd) ||
				!slices.Equal(a.Ew, b.Ew) || !slices.Equal(a.DupdDefined, b.DupdDefined) || !slices.Equal(a.Mdirect, b.Mdirect) {
				t.Fatalf("series %d differs between runs or between the portable and assembly paths", i)
			}
		}
	}
}

func TestMeasureDoesNotAllocate(t *testing.T) {
	s := newScenario(t, false, 10, 60, 1, 20, 59)
	ref, act := s.reference(t), s.actual(t)
	e := newEngine(t, 8, Options{Seed: 9})
	e.SetDeletion(s.u)
	next := s.future[0].Sample
	e.SetReference(ref, &next) // warm-up: scratch sized for the memories
	e.Measure(act)
	if n := testing.AllocsPerRun(100, func() {
		e.SetReference(ref, &next)
		e.Measure(act)
	}); n != 0 {
		t.Fatalf("SetReference + Measure allocate %v times per step", n)
	}
}

func TestTrackRejectsSharedStates(t *testing.T) {
	s := newScenario(t, false, 4, 20, 3, 20)
	ref, act := s.reference(t), s.actual(t)
	tests := []struct {
		name   string
		states []*olbfgs.Learner
	}{
		{"reference among the states", []*olbfgs.Learner{act, ref}},
		{"a state twice", []*olbfgs.Learner{act, act}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newEngine(t, 8, Options{})
			testutil.WantPanic(t, "align: ", func() { e.Track(ref, tt.states, s.future, len(s.future)) })
		})
	}
}

// TestZeroLambdaZ: λ_Z = 0 (new(0.0)) is a real setting, not the default:
// E_Θ is then E_w, while nil gives λ_Z = 1.
func TestZeroLambdaZ(t *testing.T) {
	s := newScenario(t, false, 5, 40, 1, 38, 39)
	ref, act := s.reference(t), s.actual(t)
	next := s.future[0].Sample
	for _, tt := range []struct {
		name   string
		lambda *float64
		want   func(Point) float64
	}{
		{"zero", new(0.0), func(p Point) float64 { return p.Ew }},
		{"default", nil, func(p Point) float64 { return p.Ew + p.EZ }},
	} {
		t.Run(tt.name, func(t *testing.T) {
			e := newEngine(t, 8, Options{Seed: 3, LambdaZ: tt.lambda})
			e.SetDeletion(s.u)
			e.SetReference(ref, &next)
			p := e.Measure(act)
			if !(p.EZ > 0) {
				t.Fatal("E_Z = 0: the test cannot tell λ_Z = 0 from λ_Z = 1")
			}
			if p.ETheta != tt.want(p) {
				t.Fatalf("E_Θ = %v, want %v", p.ETheta, tt.want(p))
			}
		})
	}
}

// TestTrackDirectionAtHorizon: spec §8 defines D_upd(H) whenever an insert
// follows state H, even past the horizon; it is undefined only when the
// stream has no further insert.
func TestTrackDirectionAtHorizon(t *testing.T) {
	s := newScenario(t, true, 5, 30, 6, 29)
	for _, tt := range []struct {
		name        string
		h           int
		wantDefined bool
	}{
		{"insert after the horizon", 5, true},
		{"stream ends at the horizon", 6, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			e := newEngine(t, 8, Options{Seed: 3})
			e.SetDeletion(s.u)
			series, err := e.Track(s.reference(t), []*olbfgs.Learner{s.actual(t)}, s.future, tt.h)
			require.NoError(t, err)
			require.Equal(t, tt.h+1, series[0].Len(), "series length, want H+1")
			require.Equal(t, tt.wantDefined, series[0].DupdDefined[tt.h], "D_upd(H) defined")
		})
	}
}

// TestSeededProbesArePinned pins the generator ProbeGenerator names: run
// records store (generator, seed, m_q) instead of the vectors, so a change
// of these bits would silently change every stored run's probes.
func TestSeededProbesArePinned(t *testing.T) {
	want := [][]float64{
		{-0.6817183131813299, -0.5536791033946703, 0.47822546140630806},
		{-0.8210731938563923, -0.1269512164839431, 0.556526907672675},
	}
	got := SeededProbes(1, 3, 2)
	for j := range want {
		if !slices.Equal(got[j], want[j]) {
			t.Fatalf("SeededProbes(1, 3, 2)[%d] = %v, want %v (the generator %s changed)", j, got[j], want[j], ProbeGenerator)
		}
	}
	drawn := DrawProbes(rand.New(rand.NewPCG(5, ProbeStream)), 7, 4)
	for j, q := range SeededProbes(5, 7, 4) {
		if !slices.Equal(q, drawn[j]) {
			t.Fatalf("SeededProbes(5, 7, 4)[%d] differs from DrawProbes with rand.NewPCG(5, ProbeStream)", j)
		}
	}
	e := newEngine(t, 7, Options{Seed: 5, Probes: 4})
	for j, q := range e.Probes() {
		if !slices.Equal(q, drawn[j]) {
			t.Fatalf("engine probe %d differs from SeededProbes", j)
		}
	}
}
