package bound

import (
	"encoding/json"
	"math"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"pgregory.net/rapid"
)

// testConstants are valid constants used by several tests: G = 2,
// hMin = 0.25, hMax = 1, η = 0.1, τ = 3, so η·hMax·G = 0.2 and
// η·(hMax−hMin)·G = 0.15.
var testConstants = Constants{G: 2, HMin: 0.25, HMax: 1, Eta: 0.1, Tau: 3, Provenance: Proved}

func mustAssumed(t testing.TB, rho float64) Contraction {
	t.Helper()
	c, err := AssumedContraction(rho)
	require.NoError(t, err)
	return c
}

func TestScenarioHandComputed(t *testing.T) {
	// One deletion of the last insert before t0 (age 0), ρ = 0.5.
	// Step term 0.2 at t0; memory term 0.15 afterwards.
	//   worst-case: α0 = 0.2, α1 = 0.1 + 0.15 = 0.25, α2 = 0.125 + 0.15
	//               = 0.275, every later step adds 0.15.
	//   direct (τ = 3): the memory term at k = 1, 2, 3 only, then decay:
	//               α3 = 0.1375 + 0.15 = 0.2875, α4 = 0.14375.
	//   coupled (λ_Z = 2): jump 0.2 + 2·0.75 = 1.7 at t0, then decay.
	for _, tc := range []struct {
		name string
		mem  MemoryModel
		want []float64
	}{
		{"worst-case", MemoryWorstCase, []float64{0.2, 0.25, 0.275, 0.2875, 0.29375}},
		{"direct", MemoryDirect, []float64{0.2, 0.25, 0.275, 0.2875, 0.14375}},
		{"coupled", MemoryCoupled, []float64{1.7, 0.85, 0.425, 0.2125, 0.10625}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := Scenario{Constants: testConstants, Contraction: mustAssumed(t, 0.5), Memory: tc.mem,
				LambdaZ: new(2.0), Ages: []int{0}, Horizon: 4}
			r, err := s.Bound()
			require.NoError(t, err)
			for k, w := range tc.want {
				// Upward rounding: ≥ the exact value, within 1e-14.
				if r.Alpha[k] < w || !near(r.Alpha[k], w, 0, 1e-14) {
					t.Errorf("α_%d = %.17g, want %v", k, r.Alpha[k], w)
				}
			}
			assert.Equal(t, 1, r.Deletions, "deletions")
			assert.Len(t, r.Perturbations, 4, "perturbations")
		})
	}
	t.Run("old-deletion", func(t *testing.T) {
		// Age 5, direct: the step term 0.2 at step −5, memory 0.15 at −4,
		// −3, −2, then nothing: α0 = 0.2·0.5⁵ + 0.15·(0.5⁴ + 0.5³ + 0.5²)
		// = 0.00625 + 0.065625 = 0.071875.
		s := Scenario{Constants: testConstants, Contraction: mustAssumed(t, 0.5), Memory: MemoryDirect, Ages: []int{5}}
		r, err := s.Bound()
		require.NoError(t, err)
		if r.Alpha[0] < 0.071875 || !near(r.Alpha[0], 0.071875, 0, 1e-14) {
			t.Errorf("α0 = %.17g, want 0.071875", r.Alpha[0])
		}
	})
}

// TestLambdaZ: a nil λ_Z is the default 1 and new(0.0) is a real λ_Z = 0
// (it used to be impossible: 0 meant the default). With testConstants the
// coupled jump at a deleted insert's step is 0.2 + λ_Z·0.75.
func TestLambdaZ(t *testing.T) {
	for _, tc := range []struct {
		name    string
		lambdaZ *float64
		want    float64
	}{
		{"nil-is-1", nil, 0.95},
		{"zero", new(0.0), 0.2},
		{"two", new(2.0), 1.7},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := Scenario{Constants: testConstants, Contraction: mustAssumed(t, 0.5), Memory: MemoryCoupled,
				LambdaZ: tc.lambdaZ, Ages: []int{0}}
			r, err := s.Bound()
			require.NoError(t, err)
			// Upward rounding: ≥ the exact value, within 1e-14.
			if r.Alpha[0] < tc.want || !near(r.Alpha[0], tc.want, 0, 1e-14) {
				t.Errorf("α0 = %.17g, want %v", r.Alpha[0], tc.want)
			}
			tr, err := NewTracker(s.Constants, s.Contraction, TrackerOptions{Memory: MemoryCoupled, LambdaZ: tc.lambdaZ})
			require.NoError(t, err)
			_, err = tr.Step()
			require.NoError(t, err)
			a, err := tr.Delete(0)
			require.NoError(t, err)
			if a != r.Alpha[0] {
				t.Errorf("tracker α = %.17g, scenario %.17g", a, r.Alpha[0])
			}
			if fc := tr.Scenario(0); fc.LambdaZ == nil || (tc.lambdaZ != nil && *fc.LambdaZ != *tc.lambdaZ) {
				t.Errorf("tracker scenario λ_Z = %v, want %v", fc.LambdaZ, tc.lambdaZ)
			}
		})
	}
}

// bruteForce evaluates a scenario step by step from the definition of the
// perturbation model (docs/theory.md), independently of the segment fold:
// for each step u from the first deleted insert to t0 + Horizon, π(u) is
// η·hMax·G (+ λ_Z(hMax−hMin) if coupled) at a deleted insert's step, the
// memory term where the model charges it, else 0.
func bruteForce(t *rapid.T, s Scenario) []float64 {
	c := s.Constants
	lz := 1.0 // the documented default for a nil LambdaZ
	if s.LambdaZ != nil {
		lz = *s.LambdaZ
	}
	deleted := map[int]bool{}
	first := 1
	for _, a := range s.Ages {
		deleted[-a] = true
		first = min(first, -a)
	}
	pi := func(u int) float64 {
		if deleted[u] {
			if s.Memory == MemoryCoupled {
				return c.Eta*c.HMax*c.G + lz*(c.HMax-c.HMin)
			}
			return c.Eta * c.HMax * c.G
		}
		inWindow, after := false, false
		for p := range deleted {
			after = after || p < u
			inWindow = inWindow || (p < u && u <= p+c.Tau)
		}
		switch {
		case s.Memory == MemoryWorstCase && after, s.Memory == MemoryDirect && inWindow:
			return c.Eta * (c.HMax - c.HMin) * c.G
		}
		return 0
	}
	var past []float64
	for u := first; u <= 0; u++ {
		past = append(past, pi(u))
	}
	a0 := s.Delta0
	if s.Start == StartUntouched {
		ser, err := Series(nil, s.Contraction.Rho, 0, past)
		require.NoError(t, err)
		a0 = ser[len(ser)-1]
	}
	future := make([]float64, s.Horizon)
	for k := range future {
		future[k] = pi(k + 1)
	}
	out, err := Series(nil, s.Contraction.Rho, a0, future)
	require.NoError(t, err)
	return out
}

// genScenario draws a valid scenario with up to 6 deletions of age ≤ 300.
// The ranges are an arbitrary test domain around the paper's defaults
// (τ = 10, |U| = 5, η = 0.1), wide enough to reach the edges: hMin = hMax,
// G = 0, ρ = 0, windows longer than the ages.
// genLambdaZ draws λ_Z: nil (the default 1) or a value in [0, 3], with 0
// drawn explicitly often enough to be covered (it is a valid setting).
func genLambdaZ(t *rapid.T) *float64 {
	switch rapid.IntRange(0, 3).Draw(t, "lambdaZKind") {
	case 0:
		return nil
	case 1:
		return new(0.0)
	}
	return new(rapid.Float64Range(0, 3).Draw(t, "lambdaZ"))
}

func genScenario(t *rapid.T) Scenario {
	hMin := rapid.Float64Range(0, 2).Draw(t, "hMin")
	s := Scenario{
		Constants: Constants{
			G:          rapid.Float64Range(0, 10).Draw(t, "G"),
			HMin:       hMin,
			HMax:       hMin + rapid.Float64Range(0, 2).Draw(t, "hSpread"),
			Eta:        rapid.Float64Range(1e-3, 1).Draw(t, "eta"),
			Tau:        rapid.IntRange(1, 30).Draw(t, "tau"),
			Provenance: Proved,
		},
		Contraction: Contraction{Rho: rapid.Float64Range(0, 0.999).Draw(t, "rho"), Provenance: Proved},
		Memory:      rapid.SampledFrom([]MemoryModel{MemoryWorstCase, MemoryDirect, MemoryCoupled}).Draw(t, "memory"),
		LambdaZ:     genLambdaZ(t),
		Ages:        rapid.SliceOfNDistinct(rapid.IntRange(0, 300), 0, 6, rapid.ID[int]).Draw(t, "ages"),
		Horizon:     rapid.IntRange(0, 100).Draw(t, "horizon"),
	}
	if rapid.Bool().Draw(t, "given") {
		s.Start, s.Delta0, s.Delta0Provenance = StartGiven, rapid.Float64Range(0, 5).Draw(t, "delta0"), Estimated
	}
	return s
}

func TestScenarioEqualsIteratedRecursion(t *testing.T) {
	// The segment fold (closed form on runs of equal perturbation) equals
	// the step-by-step recursion of the model's definition, to 1e-12
	// relative (both rounded up; ≤ 400 steps of 1.5 ulps plus the closed
	// form's margin). 1e-300 absolute for values at the underflow limit.
	rapid.Check(t, func(t *rapid.T) {
		s := genScenario(t)
		r, err := s.Bound()
		require.NoError(t, err)
		want := bruteForce(t, s)
		for k := range want {
			if !near(r.Alpha[k], want[k], 1e-300, 1e-12) {
				t.Fatalf("α_%d = %.17g, step by step %.17g", k, r.Alpha[k], want[k])
			}
		}
	})
}

func TestScenarioMonotone(t *testing.T) {
	// α_{t0+k} is non-decreasing in ρ, η, G, hMax, τ, Δ_{t0} (StartGiven)
	// and in the set of deletions, and non-increasing in hMin, for every k.
	// Tolerance 1e-12 relative: the segment fold's breakpoints move with τ
	// and the deletions, and its upward round-off margins, up to
	// (2|n·ln ρ| + 40)·2⁻⁵³ ≈ 3e-13 near underflow, move with them; the
	// exact-arithmetic bound is monotone (docs/theory.md).
	rapid.Check(t, func(t *rapid.T) {
		s := genScenario(t)
		base, err := s.Bound()
		require.NoError(t, err)
		bigger := func(name string, edit func(*Scenario), increasing bool) {
			o := s
			o.Ages = slices.Clone(s.Ages)
			edit(&o)
			r, err := o.Bound()
			require.NoError(t, err, "%s", name)
			for k := range base.Alpha {
				lo, hi := base.Alpha[k], r.Alpha[k]
				if !increasing {
					lo, hi = hi, lo
				}
				if hi < lo*(1-1e-12) {
					t.Fatalf("α_%d moved the wrong way when %s changed: %v → %v", k, name, base.Alpha[k], r.Alpha[k])
				}
			}
		}
		f := rapid.Float64Range(1, 2).Draw(t, "factor")
		bigger("rho", func(o *Scenario) { o.Contraction.Rho = min(o.Contraction.Rho*f, 0.9999) }, true)
		bigger("eta", func(o *Scenario) { o.Constants.Eta *= f }, true)
		bigger("G", func(o *Scenario) { o.Constants.G *= f }, true)
		bigger("hMax", func(o *Scenario) { o.Constants.HMax *= f }, true)
		bigger("hMin", func(o *Scenario) { o.Constants.HMin = o.Constants.HMin + (o.Constants.HMax-o.Constants.HMin)*(f-1) }, false)
		bigger("tau", func(o *Scenario) { o.Constants.Tau += rapid.IntRange(0, 10).Draw(t, "dtau") }, true)
		bigger("deletions", func(o *Scenario) {
			a := rapid.IntRange(0, 300).Draw(t, "newAge")
			if !slices.Contains(o.Ages, a) {
				o.Ages = append(o.Ages, a)
			}
		}, true)
		if s.Start == StartGiven {
			bigger("delta0", func(o *Scenario) { o.Delta0 *= f }, true)
		}
	})
}

func TestScenarioDecaysWithoutPerturbation(t *testing.T) {
	// With no perturbation after t0 (the coupled model, or no deletion),
	// α_{t0+k} is non-increasing in k, exactly.
	rapid.Check(t, func(t *rapid.T) {
		s := genScenario(t)
		if rapid.Bool().Draw(t, "noDeletion") {
			s.Ages = nil
		} else {
			s.Memory = MemoryCoupled
		}
		r, err := s.Bound()
		require.NoError(t, err)
		for k := 1; k < len(r.Alpha); k++ {
			if r.Perturbations[k-1] != 0 || r.Alpha[k] > r.Alpha[k-1] {
				t.Fatalf("α_%d = %v > α_%d = %v (perturbation %v)", k, r.Alpha[k], k-1, r.Alpha[k-1], r.Perturbations[k-1])
			}
		}
	})
}

func TestScenarioProvenance(t *testing.T) {
	analytic, err := AnalyticContraction(AnalyticParams{Mu: 1, L: 4, Eta: 0.1, HMin: 0.25, HMax: 1, Case: Commuting})
	require.NoError(t, err)
	estimated := Contraction{Rho: 0.9, Provenance: Estimated, Method: "test"}
	for _, tc := range []struct {
		name   string
		k      Contraction
		mem    MemoryModel
		source Provenance
		want   Provenance
	}{
		{"analytic+worst-case", analytic, MemoryWorstCase, Proved, Proved},
		{"analytic+direct", analytic, MemoryDirect, Proved, Assumed},
		{"analytic+coupled", analytic, MemoryCoupled, Proved, Assumed},
		{"estimated-rho", estimated, MemoryWorstCase, Proved, Estimated},
		{"estimated-constants", analytic, MemoryWorstCase, Estimated, Estimated},
		{"assumed-rho", mustAssumed(t, 0.9), MemoryWorstCase, Estimated, Assumed},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := testConstants
			c.Provenance = tc.source
			r, err := Scenario{Constants: c, Contraction: tc.k, Memory: tc.mem, Ages: []int{2}}.Bound()
			require.NoError(t, err)
			assert.Equal(t, tc.want, r.Provenance, "provenance")
			b, err := json.Marshal(r)
			require.NoError(t, err)
			var back Result
			assert.NoError(t, json.Unmarshal(b, &back), "JSON round trip")
			assert.Equal(t, r.Provenance, back.Provenance, "JSON round trip: provenance")
			assert.Len(t, back.Terms, len(r.Terms), "JSON round trip: terms")
		})
	}
}

func TestScenarioNoDeletionIsExact(t *testing.T) {
	r, err := Scenario{Constants: testConstants, Contraction: mustAssumed(t, 0.9), Horizon: 5}.Bound()
	require.NoError(t, err)
	for k, a := range r.Alpha {
		if a != 0 {
			t.Fatalf("α_%d = %v without deletions, want 0", k, a)
		}
	}
}

func TestScenarioRefusesBadInput(t *testing.T) {
	ok := Scenario{Constants: testConstants, Contraction: Contraction{Rho: 0.5, Provenance: Assumed}, Ages: []int{1, 2}, Horizon: 3}
	for _, tc := range []struct {
		name     string
		edit     func(*Scenario)
		arg      string
		sentinel error
	}{
		{"G<0", func(s *Scenario) { s.Constants.G = -1 }, "G", ErrValue},
		{"G=NaN", func(s *Scenario) { s.Constants.G = math.NaN() }, "G", ErrValue},
		{"hMax=Inf", func(s *Scenario) { s.Constants.HMax = math.Inf(1) }, "HMax", ErrValue},
		{"hMin>hMax", func(s *Scenario) { s.Constants.HMin = 2 }, "HMin", ErrInvalid},
		{"eta=0", func(s *Scenario) { s.Constants.Eta = 0 }, "Eta", ErrValue},
		{"tau=0", func(s *Scenario) { s.Constants.Tau = 0 }, "Tau", ErrInvalid},
		{"no-source", func(s *Scenario) { s.Constants.Provenance = Unspecified }, "Provenance", ErrInvalid},
		{"rho=1", func(s *Scenario) { s.Contraction.Rho = 1 }, "rho", ErrRho},
		{"rho-no-provenance", func(s *Scenario) { s.Contraction.Provenance = Unspecified }, "Provenance", ErrInvalid},
		{"memory", func(s *Scenario) { s.Memory = 9 }, "Memory", ErrInvalid},
		{"lambdaZ<0", func(s *Scenario) { s.LambdaZ = new(-1.0) }, "LambdaZ", ErrValue},
		{"lambdaZ=NaN", func(s *Scenario) { s.LambdaZ = new(math.NaN()) }, "LambdaZ", ErrValue},
		{"age<0", func(s *Scenario) { s.Ages = []int{3, -1} }, "Ages[1]", ErrInvalid},
		{"repeated-age", func(s *Scenario) { s.Ages = []int{3, 3} }, "Ages", ErrInvalid},
		{"horizon<0", func(s *Scenario) { s.Horizon = -1 }, "Horizon", ErrInvalid},
		{"horizon>MaxHorizon", func(s *Scenario) { s.Horizon = MaxHorizon + 1 }, "Horizon", ErrInvalid},
		{"start", func(s *Scenario) { s.Start = 7 }, "Start", ErrInvalid},
		{"given-delta0<0", func(s *Scenario) { s.Start, s.Delta0, s.Delta0Provenance = StartGiven, -1, Proved }, "Delta0", ErrValue},
		{"given-no-source", func(s *Scenario) { s.Start, s.Delta0 = StartGiven, 1 }, "Delta0Provenance", ErrInvalid},
		{"overflow", func(s *Scenario) { s.Constants.G, s.Constants.Eta = math.MaxFloat64, 1 }, "Constants.G", ErrRange},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := ok
			tc.edit(&s)
			_, err := s.Bound()
			wantArgError(t, err, tc.arg, tc.sentinel)
		})
	}
}

func TestTrackerMatchesScenario(t *testing.T) {
	// A tracker driven by a random sequence of steps and deletions always
	// holds the α_{t0} of the equivalent scenario (1e-12 relative: the
	// tracker steps one at a time, the scenario folds segments), and its
	// Scenario forecast continues from it.
	rapid.Check(t, func(t *rapid.T) {
		s := genScenario(t)
		tr, err := NewTracker(s.Constants, s.Contraction, TrackerOptions{Memory: s.Memory, LambdaZ: s.LambdaZ})
		require.NoError(t, err)
		n := rapid.IntRange(0, 200).Draw(t, "actions")
		for range n {
			if rapid.IntRange(0, 4).Draw(t, "action") == 0 && tr.Steps() > 0 {
				age := rapid.IntRange(0, tr.Steps()-1).Draw(t, "age")
				before := tr.Alpha()
				if _, err := tr.Delete(age); err != nil {
					if tr.Alpha() != before {
						t.Fatal("a refused Delete changed α")
					}
					continue // already deleted
				}
			} else {
				_, err := tr.Step()
				require.NoError(t, err)
			}
			r, err := tr.Scenario(0).Bound()
			require.NoError(t, err)
			if !near(tr.Alpha(), r.Alpha[0], 1e-300, 1e-12) {
				t.Fatalf("after %d steps, %d deletions: tracker α = %.17g, scenario %.17g",
					tr.Steps(), tr.Deletions(), tr.Alpha(), r.Alpha[0])
			}
		}
	})
	t.Run("refuses", func(t *testing.T) {
		tr, err := NewTracker(testConstants, mustAssumed(t, 0.5), TrackerOptions{})
		require.NoError(t, err)
		_, err = tr.Delete(-1)
		require.Error(t, err, "negative age accepted")
		_, err = tr.Delete(0)
		require.NoError(t, err)
		_, err = tr.Delete(0)
		wantArgError(t, err, "age", ErrInvalid)
		_, err = NewTracker(testConstants, Contraction{Rho: 2, Provenance: Assumed}, TrackerOptions{})
		wantArgError(t, err, "rho", ErrRho)
		_, err = NewTracker(testConstants, mustAssumed(t, 0.5), TrackerOptions{Memory: 4})
		wantArgError(t, err, "Memory", ErrInvalid)
	})
}

func TestEnumText(t *testing.T) {
	for _, p := range []Provenance{Proved, Estimated, Assumed} {
		b, err := p.MarshalText()
		require.NoError(t, err)
		var back Provenance
		assert.NoError(t, back.UnmarshalText(b), "provenance %v round trip", p)
		assert.Equal(t, p, back, "provenance round trip")
	}
	_, err := Unspecified.MarshalText()
	assert.Error(t, err, "Unspecified marshalled")
	for _, m := range []MemoryModel{MemoryWorstCase, MemoryDirect, MemoryCoupled} {
		b, err := m.MarshalText()
		require.NoError(t, err)
		var back MemoryModel
		assert.NoError(t, back.UnmarshalText(b), "memory model %v round trip", m)
		assert.Equal(t, m, back, "memory model round trip")
	}
	_, err = ParseMemoryModel("none")
	assert.Error(t, err, "unknown memory model parsed")
	assert.Equal(t, Proved, Combine(), "Combine of nothing")
	assert.Equal(t, Estimated, Combine(Proved, Estimated), "Combine must return the weakest provenance")
	assert.Equal(t, Assumed, Combine(Assumed, Estimated, Proved), "Combine must return the weakest provenance")
	wantPanic(t, func() { Combine(Unspecified) })
}
