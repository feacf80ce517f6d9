package olbfgs

import (
	"testing"

	"pgregory.net/rapid"

	"unlearn/internal/floatbits"
	"unlearn/stream"
)

// TestEqualSinceProperty (rapid): two memories change by random operations
// (pushes of pairs from a small pool, with pairs that differ only in y or
// only in the source, Reset, DropTouching, CopyFrom, on one or both); after
// every operation EqualSince, given the versions of the last moment at which
// they were equal, agrees with Equal.
func TestEqualSinceProperty(t *testing.T) {
	rapid.Check(t, func(rt *rapid.T) {
		const d = 3
		pool := [][2][]float64{
			{{1, 0, 0}, {2, 0, 0}}, {{0, 1, 0}, {0, 1, 1}}, {{1, 1, 0}, {1, 2, 0}},
			{{1, 0, 0}, {2, 0, 1e-300}}, // sᵀy as the first pair's, y different
		}
		tau := rapid.IntRange(0, 3).Draw(rt, "tau")
		a, b := NewMemory(d, tau, 1), NewMemory(d, tau, 1)
		var mv, ov uint64
		seen := true // both empty: equal
		for range rapid.IntRange(1, 30).Draw(rt, "ops") {
			op := rapid.IntRange(0, 10).Draw(rt, "op")
			k := rapid.IntRange(0, len(pool)-1).Draw(rt, "pair")
			src := int64(rapid.IntRange(0, 1).Draw(rt, "source"))
			switch {
			case op < 5: // both push, usually the same pair
				k2, src2 := k, src
				if op == 4 {
					k2 = rapid.IntRange(0, len(pool)-1).Draw(rt, "pair2")
					src2 = int64(rapid.IntRange(0, 1).Draw(rt, "source2"))
				}
				if err := a.Push(pool[k][0], pool[k][1], src); err != nil {
					rt.Fatal(err)
				}
				if err := b.Push(pool[k2][0], pool[k2][1], src2); err != nil {
					rt.Fatal(err)
				}
			case op == 5: // one pushes
				if err := a.Push(pool[k][0], pool[k][1], src); err != nil {
					rt.Fatal(err)
				}
			case op == 6:
				b.Reset()
			case op == 7:
				a.DropTouching(stream.NewIDSet(src))
			case op == 8:
				a.CopyFrom(b)
			case op == 9: // b pushes; a becomes (CopyFrom, not a push) b with
				// every pool[0] replaced by pool[3]: the same sᵀy and
				// sources, an older y different
				c := NewMemory(d, tau, 1)
				for i := range b.Len() {
					p := b.Pair(i)
					s, y := p.S, p.Y
					if floatbits.Equal(y, pool[0][1]) {
						y = pool[3][1]
					}
					if err := c.Push(s, y, p.Source...); err != nil {
						rt.Fatal(err)
					}
				}
				if err := b.Push(pool[k][0], pool[k][1], src); err != nil {
					rt.Fatal(err)
				}
				if err := c.Push(pool[k][0], pool[k][1], src); err != nil {
					rt.Fatal(err)
				}
				a.CopyFrom(c)
			default: // nothing changes
			}
			want := a.Equal(b)
			if seen {
				if got := a.EqualSince(b, mv, ov); got != want {
					rt.Fatalf("EqualSince = %v, Equal = %v", got, want)
				}
			}
			if want {
				seen, mv, ov = true, a.Version(), b.Version()
			} else {
				seen = false
			}
		}
	})
}

// TestPushedSince: true only when the one change since the version is a
// push (stored or, at capacity 0, not), false with no change, after two
// pushes, and after Reset, DropTouching or CopyFrom.
func TestPushedSince(t *testing.T) {
	s, y := []float64{1, 0, 0}, []float64{2, 0, 0}
	m, o := NewMemory(3, 2, 1), NewMemory(3, 2, 1)
	v := m.Version()
	if m.PushedSince(v) {
		t.Fatal("no change is not a push")
	}
	for i := range 3 { // the third push evicts
		v = m.Version()
		if err := m.Push(s, y, int64(i)); err != nil {
			t.Fatal(err)
		}
		if !m.PushedSince(v) {
			t.Fatalf("push %d not seen", i)
		}
	}
	v = m.Version()
	for i := range 2 {
		if err := m.Push(s, y, int64(10+i)); err != nil {
			t.Fatal(err)
		}
	}
	if m.PushedSince(v) {
		t.Fatal("two pushes taken for one")
	}
	for name, change := range map[string]func(){
		"Reset":        m.Reset,
		"DropTouching": func() { m.DropTouching(stream.NewIDSet(10)) },
		"CopyFrom":     func() { m.CopyFrom(o) },
	} {
		v = m.Version()
		change()
		if m.PushedSince(v) {
			t.Fatalf("%s taken for a push", name)
		}
	}
}
