package olbfgs

import (
	"math"
	"testing"

	"github.com/stretchr/testify/require"
	"gonum.org/v1/gonum/floats"
	"gonum.org/v1/gonum/floats/scalar"
	"pgregory.net/rapid"

	"unlearn/internal/floatbits"
	"unlearn/stream"
)

func nan() float64 { return math.NaN() }

func TestConfigValidate(t *testing.T) {
	tests := []struct {
		name  string
		edit  func(*Config)
		field string
	}{
		{"dimension", func(c *Config) { c.Dim = 0 }, "Dim"},
		{"negative tau", func(c *Config) { c.Memory = -1 }, "Memory (tau)"},
		{"zero eta", func(c *Config) { c.StepSize = 0 }, "StepSize (eta)"},
		{"negative eta", func(c *Config) { c.StepSize = -0.1 }, "StepSize (eta)"},
		{"NaN eta", func(c *Config) { c.StepSize = nan() }, "StepSize (eta)"},
		{"Inf eta", func(c *Config) { c.StepSize = math.Inf(1) }, "StepSize (eta)"},
		{"zero gamma0", func(c *Config) { c.InitialScale = 0 }, "InitialScale (gamma0)"},
		{"negative tol", func(c *Config) { c.CurvatureTol = -1 }, "CurvatureTol"},
		// Sizes past MaxStateFloats are errors, not allocator failures.
		{"huge dimension", func(c *Config) { c.Dim = MaxStateFloats/7 + 1 }, "Dim"},
		{"huge tau", func(c *Config) { c.Memory = (MaxStateFloats-7*3)/(2*3+10) + 1 }, "Memory (tau)"},
		{"tau·d overflows int", func(c *Config) { c.Memory = math.MaxInt / 2 }, "Memory (tau)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := DefaultConfig(3)
			tt.edit(&c)
			err := c.Validate()
			require.ErrorIs(t, err, ErrConfig)
			require.ErrorContains(t, err, tt.field, "the error must name the field")
		})
	}
	require.NoError(t, DefaultConfig(3).Validate(), "default config invalid")
	c := DefaultConfig(3)
	c.Memory = 0 // τ = 0 is valid: no curvature memory
	require.NoError(t, c.Validate(), "tau = 0 rejected")
	c.Memory = (MaxStateFloats - 7*3) / (2*3 + 10) // the largest τ at d = 3 (not allocated here)
	require.NoError(t, c.Validate(), "the largest tau at d = 3 rejected")
	require.LessOrEqual(t, 7*3+c.Memory*(2*3+10), MaxStateFloats)
	c.Dim, c.Memory = MaxStateFloats/7, 0 // the largest d, without memory
	require.NoError(t, c.Validate(), "the largest d rejected")
}

// TestFirstStepByHand checks one step from θ0 against the rules of spec §2
// written out: with Z empty, p = −γ0 g, w⁺ = −η γ0 g, s = w⁺, y = H(α)s.
func TestFirstStepByHand(t *testing.T) {
	h := [][]float64{{2, 0.5}, {0.5, 1}}
	loss, err := stream.NewQuadratic(h, h)
	require.NoError(t, err)
	cfg := DefaultConfig(2)
	cfg.InitialScale = 0.5
	l, err := New(cfg, loss)
	require.NoError(t, err)
	a := []float64{1, -2}
	require.NoError(t, l.Step(stream.InsertEvent(7, a, 0.3)))
	// g = H(0 − a) = −H a = −(2−1, 0.5−2) = (−1, 1.5)
	g := []float64{-1, 1.5}
	wantW := []float64{-0.1 * 0.5 * g[0], -0.1 * 0.5 * g[1]}
	for i := range wantW {
		if !scalar.EqualWithinAbsOrRel(l.W()[i], wantW[i], 1e-15, 1e-15) {
			t.Fatalf("w = %v, want %v", l.W(), wantW)
		}
	}
	require.Equal(t, 1, l.Memory().Len(), "pairs in memory")
	p := l.Memory().Pair(0)
	wantY := []float64{h[0][0]*p.S[0] + h[0][1]*p.S[1], h[1][0]*p.S[0] + h[1][1]*p.S[1]}
	for i := range wantY {
		if !scalar.EqualWithinAbsOrRel(p.Y[i], wantY[i], 1e-15, 1e-12) {
			t.Fatalf("y = %v, want H s = %v", p.Y, wantY)
		}
	}
	require.Equal(t, []int64{7}, p.Source, "source of the pair")
}

func TestStepDeleteAndErrors(t *testing.T) {
	loss, _, events := quadraticStream(t, 1, 3, 4)
	l, err := New(DefaultConfig(3), loss)
	require.NoError(t, err)
	require.NoError(t, l.Run(events))
	w := append([]float64(nil), l.W()...)
	z := l.Memory().Clone()
	require.NoError(t, l.Step(stream.DeleteEvent(2)))
	if !floatbits.Equal(w, l.W()) || !z.Equal(l.Memory()) {
		t.Fatal("a delete changed w or Z")
	}
	require.True(t, l.IsDeleted(2), "the delete was not recorded")
	require.Equal(t, 5, l.T(), "a delete advances t")
	require.ErrorIs(t, l.Step(stream.DeleteEvent(2)), stream.ErrRepeatedDeletion, "repeated delete")
	require.ErrorIs(t, l.Step(stream.InsertEvent(9, []float64{1}, 0)), ErrEvent, "wrong dimension")
	_, err = New(DefaultConfig(4), loss)
	require.ErrorIs(t, err, ErrConfig, "dimension mismatch with the loss")
}

func TestDivergenceIsReported(t *testing.T) {
	// η = 1e308 overflows w on the first step (‖g‖ is of order 1–10).
	loss, _, events := quadraticStream(t, 2, 3, 2)
	cfg := DefaultConfig(3)
	cfg.StepSize = 1e308
	l, err := New(cfg, loss)
	require.NoError(t, err)
	require.ErrorIs(t, l.Step(events[0]), ErrDiverged)
	require.Equal(t, 0, l.T(), "a diverged step advanced t")
	if floats.Norm(l.W(), 2) != 0 {
		t.Fatal("a diverged step changed w")
	}
}

func TestDirection(t *testing.T) {
	loss, _, events := logisticStream(t, 3, 6, 30)
	l := mustReplay(t, DefaultConfig(6), loss, events[:29])
	z := events[29].Sample
	got := make([]float64, 6)
	l.Direction(got, z)
	g := make([]float64, 6)
	loss.Grad(g, l.W(), z)
	want := make([]float64, 6)
	l.Memory().Apply(want, g)
	floats.Scale(-1, want)
	if !floatbits.Equal(got, want) {
		t.Fatalf("Direction = %v, want −H∇ℓ = %v", got, want)
	}
	// The next step moves w by exactly η·Direction.
	w0 := append([]float64(nil), l.W()...)
	require.NoError(t, l.Step(events[29]))
	for i := range w0 {
		if l.W()[i] != w0[i]+float64(0.1*got[i]) { // no multiply-add: the step rounds η·p first
			t.Fatalf("step moved w by %v, want η·direction", l.W()[i]-w0[i])
		}
	}
}

func TestReplayIsBitIdentical(t *testing.T) {
	for _, kind := range []string{"quadratic", "logistic"} {
		t.Run(kind, func(t *testing.T) {
			var loss stream.Loss
			var events []stream.Event
			if kind == "quadratic" {
				loss, _, events = quadraticStream(t, 5, 8, 400)
			} else {
				loss, _, events = logisticStream(t, 5, 8, 400)
			}
			events = append(events, stream.DeleteEvent(17), stream.DeleteEvent(3))
			a := mustReplay(t, DefaultConfig(8), loss, events)
			b := mustReplay(t, DefaultConfig(8), loss, events)
			if !a.Equal(b) {
				t.Fatal("two replays of the same history differ")
			}
			require.Equal(t, DefaultMemory, a.Memory().Len(), "pairs in memory after 400 inserts (τ)")
		})
	}
}

// TestCounterfactualEqualsNeverInserted: replaying the deletion-edited
// counterfactual equals replaying a stream built without the deleted inserts.
func TestCounterfactualEqualsNeverInserted(t *testing.T) {
	loss, _, events := logisticStream(t, 6, 5, 200)
	u := stream.NewIDSet(3, 50, 51, 199)
	actual := append([]stream.Event(nil), events...)
	actual = append(actual, stream.DeleteEvent(50), stream.DeleteEvent(3))
	var never []stream.Event
	for _, e := range events {
		if e.ID != 3 && e.ID != 50 && e.ID != 51 && e.ID != 199 {
			never = append(never, e)
		}
	}
	cf := mustReplay(t, DefaultConfig(5), loss, stream.Counterfactual(actual, u))
	direct := mustReplay(t, DefaultConfig(5), loss, never)
	if !cf.Equal(direct) {
		t.Fatal("counterfactual replay differs from the stream that never saw U")
	}
	full := mustReplay(t, DefaultConfig(5), loss, actual)
	if floatbits.Equal(full.W(), cf.W()) {
		t.Fatal("the deletions made no difference: the test cannot tell the streams apart")
	}
}

func TestCopyFromAndClone(t *testing.T) {
	loss, _, events := quadraticStream(t, 7, 4, 60)
	a := mustReplay(t, DefaultConfig(4), loss, events[:40])
	a.MarkDeleted(5, 2)
	b := a.Clone()
	if !a.Equal(b) {
		t.Fatal("Clone not Equal")
	}
	require.NoError(t, a.Run(events[40:]))
	if a.Equal(b) {
		t.Fatal("stepping the original changed the clone (shared state)")
	}
	c, err := New(DefaultConfig(4), loss)
	require.NoError(t, err)
	c.CopyFrom(a)
	if !c.Equal(a) {
		t.Fatal("CopyFrom not Equal")
	}
	require.Equal(t, []int64{2, 5}, c.Deleted())
}

func TestStepDoesNotAllocate(t *testing.T) {
	loss, _, events := quadraticStream(t, 8, 25, 200)
	l := mustReplay(t, DefaultConfig(25), loss, events[:100])
	require.NoError(t, l.KeepCheckpoints(50))
	i := 100
	allocs := testing.AllocsPerRun(99, func() {
		if err := l.Step(events[i]); err != nil { // plain if: keep require out of the measured closure
			t.Fatal(err)
		}
		i++
	})
	if allocs != 0 {
		t.Fatalf("Step allocates %v times per call, want 0", allocs)
	}
	dst := make([]float64, 25)
	if a := testing.AllocsPerRun(100, func() { l.Memory().Apply(dst, l.W()) }); a != 0 {
		t.Fatalf("Apply allocates %v times per call, want 0", a)
	}
}

// TestCheckpointsMatchReplay: after every step of a stream with deletes,
// StateAgo(k) equals the replay of the first t−k events, for every k in the
// window (rapid draws the stream, the window and the checkpoints' start).
func TestCheckpointsMatchReplay(t *testing.T) {
	loss, _, base := logisticStream(t, 9, 3, 120)
	rapid.Check(t, func(rt *rapid.T) {
		n := rapid.IntRange(1, 60).Draw(rt, "n")
		events := append([]stream.Event(nil), base[:n]...)
		// Sprinkle deletes of earlier inserts.
		for _, id := range rapid.SliceOfNDistinct(rapid.Int64Range(1, int64(n)), 0, 3, rapid.ID[int64]).Draw(rt, "deletes") {
			at := rapid.IntRange(int(id), len(events)).Draw(rt, "at")
			events = append(events[:at], append([]stream.Event{stream.DeleteEvent(id)}, events[at:]...)...)
		}
		window := rapid.IntRange(1, 12).Draw(rt, "window")
		start := rapid.IntRange(0, len(events)).Draw(rt, "start")
		cfg := DefaultConfig(3)
		cfg.Memory = rapid.IntRange(0, 4).Draw(rt, "tau")
		l := mustReplay(rt, cfg, loss, events[:start])
		require.NoError(rt, l.KeepCheckpoints(window))
		for t := start; ; t++ {
			for k := 0; k <= window; k++ {
				got, replayed, err := l.StateAgo(k)
				require.NoError(rt, err)
				require.Less(rt, replayed, 2*window, "t=%d k=%d: events replayed, want < 2·window", t, k)
				want := mustReplay(rt, cfg, loss, events[:max(start, t-k)])
				if !got.Equal(want) {
					rt.Fatalf("t=%d k=%d: StateAgo differs from replay of %d events", t, k, max(start, t-k))
				}
			}
			if t == len(events) {
				break
			}
			require.NoError(rt, l.Step(events[t]))
		}
		_, _, err := l.StateAgo(window + 1)
		require.ErrorIs(rt, err, ErrNoCheckpoint, "StateAgo(window+1)")
	})
}

func TestReplaySkipping(t *testing.T) {
	loss, _, events := quadraticStream(t, 10, 3, 30)
	a := mustReplay(t, DefaultConfig(3), loss, events[:10])
	b := a.Clone()
	a.MarkDeleted(14)
	n, err := a.ReplaySkipping(events[10:], stream.NewIDSet(12, 20))
	require.NoError(t, err)
	require.Equal(t, 17, n, "events applied, want 20 − 3 skipped")
	want := stream.Counterfactual(events[10:], stream.NewIDSet(12, 14, 20))
	require.NoError(t, b.Run(want))
	b.MarkDeleted(14)
	if !a.Equal(b) {
		t.Fatal("ReplaySkipping differs from running the filtered events")
	}
}

// TestEditsDiscardCheckpoints: an edit outside Step cannot be replayed from
// the checkpoint log, so StateAgo must refuse rather than rebuild a past
// state that ignores the edit.
func TestEditsDiscardCheckpoints(t *testing.T) {
	loss, _, events := quadraticStream(t, 13, 3, 20)
	for _, tt := range []struct {
		name string
		edit func(l *Learner)
		kept bool
	}{
		{"SetW", func(l *Learner) { l.SetW([]float64{1, 2, 3}) }, false},
		{"MarkDeleted new id", func(l *Learner) { l.MarkDeleted(4) }, false},
		{"MarkDeleted known id", func(l *Learner) { l.MarkDeleted(4) }, true},
		{"Reset", func(l *Learner) { l.Reset() }, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			l := mustReplay(t, DefaultConfig(3), loss, events[:10])
			if tt.kept {
				l.MarkDeleted(4) // already recorded before the checkpoints start
			}
			require.NoError(t, l.KeepCheckpoints(5))
			require.NoError(t, l.Run(events[10:14]))
			tt.edit(l)
			_, _, err := l.StateAgo(2)
			if tt.kept {
				require.NoError(t, err, "an edit that changes nothing must keep the checkpoints")
				return
			}
			require.ErrorIs(t, err, ErrNoCheckpoint)
		})
	}
}
