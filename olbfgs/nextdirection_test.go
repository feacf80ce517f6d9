package olbfgs

import (
	"slices"
	"testing"

	"github.com/stretchr/testify/require"
	"pgregory.net/rapid"

	"unlearn/internal/floatbits"
	"unlearn/stream"
)

// TestNextDirectionSameBits steps two learners on the same events, one of
// them asked for NextDirection before some events (of the next sample, of
// another sample, or twice), with deletes, external memory changes and SetW
// in between: they must stay bit-identical, and NextDirection must equal
// Memory.Apply of the gradient, bit for bit.
func TestNextDirectionSameBits(t *testing.T) {
	rapid.Check(t, func(rt *rapid.T) {
		d := rapid.IntRange(1, 9).Draw(rt, "d")
		n := rapid.IntRange(2, 40).Draw(rt, "n")
		seed := rapid.Uint64().Draw(rt, "seed")
		var loss stream.Loss
		var events []stream.Event
		if rapid.Bool().Draw(rt, "quadratic") {
			loss, _, events = quadraticStream(t, seed, d, n)
		} else {
			loss, _, events = logisticStream(t, seed, d, n)
		}
		cfg := DefaultConfig(d)
		cfg.Memory = rapid.IntRange(0, 4).Draw(rt, "tau")
		plain, err := New(cfg, loss)
		require.NoError(rt, err)
		cached, err := New(cfg, loss)
		require.NoError(rt, err)
		g := make([]float64, d)
		want := make([]float64, d)
		for i, e := range events {
			switch rapid.IntRange(0, 6).Draw(rt, "action") {
			case 1, 2: // the sample the next insert uses
				checkNext(rt, cached, loss, e.Sample, g, want)
			case 3: // another sample, then the next one's
				checkNext(rt, cached, loss, events[(i+1)%n].Sample, g, want)
				checkNext(rt, cached, loss, e.Sample, g, want)
			case 4: // the cache, then a change of the memory behind its back
				checkNext(rt, cached, loss, e.Sample, g, want)
				if i > 0 {
					u := stream.IDSet{events[i-1].ID: {}}
					plain.Memory().DropTouching(u)
					cached.Memory().DropTouching(u)
					if rapid.Bool().Draw(rt, "push") && plain.Memory().Len() > 0 {
						p := plain.Memory().Pair(0)
						require.NoError(rt, plain.Memory().Push(p.S, p.Y, 99))
						require.NoError(rt, cached.Memory().Push(p.S, p.Y, 99))
					}
				}
			case 5: // the cache, then a delete event, then the insert
				checkNext(rt, cached, loss, e.Sample, g, want)
				if i > 0 {
					del := stream.Event{Op: stream.Delete, ID: events[i-1].ID}
					require.NoError(rt, plain.Step(del))
					require.NoError(rt, cached.Step(del))
				}
			case 6: // the cache, then SetW
				checkNext(rt, cached, loss, e.Sample, g, want)
				w := append([]float64(nil), plain.W()...)
				w[0] += 0.25
				plain.SetW(w)
				cached.SetW(w)
			}
			require.NoError(rt, plain.Step(e))
			require.NoError(rt, cached.Step(e))
			if !plain.Equal(cached) {
				rt.Fatalf("event %d: the learner asked for NextDirection differs from the plain one", i)
			}
		}
	})
}

func checkNext(rt *rapid.T, l *Learner, loss stream.Loss, z stream.Sample, g, want []float64) {
	loss.Grad(g, l.W(), z)
	l.Memory().Apply(want, g)
	if got := l.NextDirection(z); !floatbits.Equal(got, want) {
		rt.Fatalf("NextDirection = %v, want H_Z∇ℓ = %v", got, want)
	}
}

// TestNextDirectionIsReused shows that the insert really takes the cached
// values (so that the test above checks the reuse, not a recomputation): a
// corrupted cache changes the step.
func TestNextDirectionIsReused(t *testing.T) {
	loss, _, events := logisticStream(t, 5, 6, 12)
	a := mustReplay(t, DefaultConfig(6), loss, events[:11])
	b := a.Clone()
	p := b.NextDirection(events[11].Sample)
	p[0] += 1 // white box: the cache is the learner's scratch
	require.NoError(t, a.Step(events[11]))
	require.NoError(t, b.Step(events[11]))
	if a.Equal(b) {
		t.Fatal("the insert recomputed the direction instead of reusing NextDirection's")
	}
	// A different sample is not taken for the cached one.
	c := mustReplay(t, DefaultConfig(6), loss, events[:11])
	d := c.Clone()
	p = d.NextDirection(events[3].Sample)
	p[0] += 1
	require.NoError(t, c.Step(events[11]))
	require.NoError(t, d.Step(events[11]))
	if !c.Equal(d) {
		t.Fatal("the insert used the direction cached for another sample")
	}
}

func TestNextDirectionDoesNotAllocate(t *testing.T) {
	loss, _, events := logisticStream(t, 6, 8, 20)
	l := mustReplay(t, DefaultConfig(8), loss, events[:19])
	l.NextDirection(events[19].Sample)
	if n := testing.AllocsPerRun(50, func() { l.NextDirection(events[19].Sample); l.NextDirection(events[2].Sample) }); n != 0 {
		t.Fatalf("NextDirection allocates %v times", n)
	}
}

// TestMemoryEqualProperty: Memory.Equal (which compares sᵀy and sources
// before the vectors) agrees with a plain comparison of the pairs, on
// memories filled from a small pool of pairs so that equal, shared and
// different pairs all occur.
func TestMemoryEqualProperty(t *testing.T) {
	rapid.Check(t, func(rt *rapid.T) {
		const d = 3
		pool := [][2][]float64{
			{{1, 0, 0}, {2, 0, 0}}, {{0, 1, 0}, {0, 1, 1}}, {{1, 1, 0}, {1, 2, 0}},
			{{1, 0, 0}, {2, 0, 1e-300}}, // sᵀy as the first pair's, y different
		}
		fill := func(label string) *Memory {
			m := NewMemory(d, 3, 1)
			for _, k := range rapid.SliceOfN(rapid.IntRange(0, len(pool)-1), 0, 5).Draw(rt, label) {
				src := int64(k % 2)
				require.NoError(rt, m.Push(pool[k][0], pool[k][1], src))
			}
			return m
		}
		a, b := fill("a"), fill("b")
		want := a.Len() == b.Len()
		for i := 0; want && i < a.Len(); i++ {
			p, q := a.Pair(i), b.Pair(i)
			want = floatbits.Equal(p.S, q.S) && floatbits.Equal(p.Y, q.Y) && slices.Equal(p.Source, q.Source)
		}
		if got := a.Equal(b); got != want {
			rt.Fatalf("Equal = %v, want %v", got, want)
		}
	})
}
