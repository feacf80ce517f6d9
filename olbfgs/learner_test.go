package olbfgs

import (
	"errors"
	"math"
	"testing"

	"gonum.org/v1/gonum/floats"
	"gonum.org/v1/gonum/floats/scalar"
	"pgregory.net/rapid"

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
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := DefaultConfig(3)
			tt.edit(&c)
			err := c.Validate()
			if !errors.Is(err, ErrConfig) {
				t.Fatalf("Validate() = %v, want ErrConfig", err)
			}
			if !contains(err.Error(), tt.field) {
				t.Fatalf("error %q does not name the field %q", err, tt.field)
			}
		})
	}
	if err := DefaultConfig(3).Validate(); err != nil {
		t.Fatalf("default config invalid: %v", err)
	}
	c := DefaultConfig(3)
	c.Memory = 0 // τ = 0 is valid: no curvature memory
	if err := c.Validate(); err != nil {
		t.Fatalf("tau = 0 rejected: %v", err)
	}
}

func contains(s, sub string) bool {
	for i := 0; i+len(sub) <= len(s); i++ {
		if s[i:i+len(sub)] == sub {
			return true
		}
	}
	return false
}

// TestFirstStepByHand checks one step from θ0 against the rules of SPEC §2
// written out: with Z empty, p = −γ0 g, w⁺ = −η γ0 g, s = w⁺, y = H(α)s.
func TestFirstStepByHand(t *testing.T) {
	h := [][]float64{{2, 0.5}, {0.5, 1}}
	loss, err := stream.NewQuadratic(h, h)
	if err != nil {
		t.Fatal(err)
	}
	cfg := DefaultConfig(2)
	cfg.InitialScale = 0.5
	l, err := New(cfg, loss)
	if err != nil {
		t.Fatal(err)
	}
	a := []float64{1, -2}
	if err := l.Step(stream.InsertEvent(7, a, 0.3)); err != nil {
		t.Fatal(err)
	}
	// g = H(0 − a) = −H a = −(2−1, 0.5−2) = (−1, 1.5)
	g := []float64{-1, 1.5}
	wantW := []float64{-0.1 * 0.5 * g[0], -0.1 * 0.5 * g[1]}
	for i := range wantW {
		if !scalar.EqualWithinAbsOrRel(l.W()[i], wantW[i], 1e-15, 1e-15) {
			t.Fatalf("w = %v, want %v", l.W(), wantW)
		}
	}
	if l.Memory().Len() != 1 {
		t.Fatalf("memory holds %d pairs, want 1", l.Memory().Len())
	}
	p := l.Memory().Pair(0)
	wantY := []float64{h[0][0]*p.S[0] + h[0][1]*p.S[1], h[1][0]*p.S[0] + h[1][1]*p.S[1]}
	for i := range wantY {
		if !scalar.EqualWithinAbsOrRel(p.Y[i], wantY[i], 1e-15, 1e-12) {
			t.Fatalf("y = %v, want H s = %v", p.Y, wantY)
		}
	}
	if len(p.Source) != 1 || p.Source[0] != 7 {
		t.Fatalf("source = %v, want [7]", p.Source)
	}
}

func TestStepDeleteAndErrors(t *testing.T) {
	loss, _, events := quadraticStream(t, 1, 3, 4)
	l, err := New(DefaultConfig(3), loss)
	if err != nil {
		t.Fatal(err)
	}
	if err := l.Run(events); err != nil {
		t.Fatal(err)
	}
	w := append([]float64(nil), l.W()...)
	z := l.Memory().Clone()
	if err := l.Step(stream.DeleteEvent(2)); err != nil {
		t.Fatal(err)
	}
	if !bitsEqual(w, l.W()) || !z.Equal(l.Memory()) || !l.IsDeleted(2) || l.T() != 5 {
		t.Fatal("a delete changed w or Z, or was not recorded")
	}
	if err := l.Step(stream.DeleteEvent(2)); !errors.Is(err, stream.ErrRepeatedDeletion) {
		t.Fatalf("repeated delete: err = %v, want ErrRepeatedDeletion", err)
	}
	if err := l.Step(stream.InsertEvent(9, []float64{1}, 0)); !errors.Is(err, ErrEvent) {
		t.Fatalf("wrong dimension: err = %v, want ErrEvent", err)
	}
	if _, err := New(DefaultConfig(4), loss); !errors.Is(err, ErrConfig) {
		t.Fatalf("dimension mismatch with the loss: err = %v, want ErrConfig", err)
	}
}

func TestDivergenceIsReported(t *testing.T) {
	// η = 1e308 overflows w on the first step (‖g‖ is of order 1–10).
	loss, _, events := quadraticStream(t, 2, 3, 2)
	cfg := DefaultConfig(3)
	cfg.StepSize = 1e308
	l, err := New(cfg, loss)
	if err != nil {
		t.Fatal(err)
	}
	err = l.Step(events[0])
	if !errors.Is(err, ErrDiverged) {
		t.Fatalf("err = %v, want ErrDiverged", err)
	}
	if l.T() != 0 || floats.Norm(l.W(), 2) != 0 {
		t.Fatal("a diverged step changed the state")
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
	if !bitsEqual(got, want) {
		t.Fatalf("Direction = %v, want −H∇ℓ = %v", got, want)
	}
	// The next step moves w by exactly η·Direction.
	w0 := append([]float64(nil), l.W()...)
	if err := l.Step(events[29]); err != nil {
		t.Fatal(err)
	}
	for i := range w0 {
		if l.W()[i] != w0[i]+0.1*got[i] {
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
			if a.Memory().Len() != DefaultMemory {
				t.Fatalf("memory holds %d pairs after 400 inserts, want τ = %d", a.Memory().Len(), DefaultMemory)
			}
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
	if bitsEqual(full.W(), cf.W()) {
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
	if err := a.Run(events[40:]); err != nil {
		t.Fatal(err)
	}
	if a.Equal(b) {
		t.Fatal("stepping the original changed the clone (shared state)")
	}
	c, _ := New(DefaultConfig(4), loss)
	c.CopyFrom(a)
	if !c.Equal(a) {
		t.Fatal("CopyFrom not Equal")
	}
	if got := c.Deleted(); len(got) != 2 || got[0] != 2 || got[1] != 5 {
		t.Fatalf("Deleted = %v, want [2 5]", got)
	}
}

func TestStepDoesNotAllocate(t *testing.T) {
	loss, _, events := quadraticStream(t, 8, 25, 200)
	l := mustReplay(t, DefaultConfig(25), loss, events[:100])
	if err := l.KeepCheckpoints(50); err != nil {
		t.Fatal(err)
	}
	i := 100
	allocs := testing.AllocsPerRun(99, func() {
		if err := l.Step(events[i]); err != nil {
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
		if err := l.KeepCheckpoints(window); err != nil {
			rt.Fatal(err)
		}
		for t := start; ; t++ {
			for k := 0; k <= window; k++ {
				got, replayed, err := l.StateAgo(k)
				if err != nil {
					rt.Fatal(err)
				}
				if replayed >= 2*window {
					rt.Fatalf("t=%d k=%d: replayed %d events, want < 2·window", t, k, replayed)
				}
				want := mustReplay(rt, cfg, loss, events[:max(start, t-k)])
				if !got.Equal(want) {
					rt.Fatalf("t=%d k=%d: StateAgo differs from replay of %d events", t, k, max(start, t-k))
				}
			}
			if t == len(events) {
				break
			}
			if err := l.Step(events[t]); err != nil {
				rt.Fatal(err)
			}
		}
		if _, _, err := l.StateAgo(window + 1); !errors.Is(err, ErrNoCheckpoint) {
			rt.Fatalf("StateAgo(window+1): err = %v, want ErrNoCheckpoint", err)
		}
	})
}

func TestReplaySkipping(t *testing.T) {
	loss, _, events := quadraticStream(t, 10, 3, 30)
	a := mustReplay(t, DefaultConfig(3), loss, events[:10])
	b := a.Clone()
	a.MarkDeleted(14)
	n, err := a.ReplaySkipping(events[10:], stream.NewIDSet(12, 20))
	if err != nil {
		t.Fatal(err)
	}
	if n != 17 {
		t.Fatalf("applied %d events, want 20 − 3 skipped = 17", n)
	}
	want := stream.Counterfactual(events[10:], stream.NewIDSet(12, 14, 20))
	if err := b.Run(want); err != nil {
		t.Fatal(err)
	}
	b.MarkDeleted(14)
	if !a.Equal(b) {
		t.Fatal("ReplaySkipping differs from running the filtered events")
	}
}
