package main

import (
	"bytes"
	"strings"
	"testing"

	"unlearn/bound"
)

// TestMemoryCost: on the same streams, the proved α covers the measured
// deviation of every learner; without memory it shrinks with the stream,
// while every guarded memory keeps the old deletion's α at a floor far
// above it (docs/theory.md §16.9 reports the table).
func TestMemoryCost(t *testing.T) {
	p := Problem{D: 5, Lambda: 0.05}
	noMem := Learner{Name: "no memory", Gamma0: 1, Schedule: bound.Schedule{Eta0: 1 / 0.35, Decay: 0.05}}
	mem := Learner{Name: "narrow", Tau: 3, Gamma0: 1 / 0.1025, PairMin: 0.1, PairMax: 0.105, PairAngle: 0.01,
		Schedule: bound.Schedule{Eta0: 0.2, Decay: 0.05 * 9}}
	var prev float64
	for i, T := range []int{1000, 10000} {
		a, err := Measure(p, noMem, T, T/2, 3)
		if err != nil {
			t.Fatal(err)
		}
		b, err := Measure(p, mem, T, T/2, 3)
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range []Row{a, b} {
			if !(r.Deviation <= r.Alpha) {
				t.Errorf("%s, T = %d: measured deviation %v > α = %v", r.Learner, T, r.Deviation, r.Alpha)
			}
		}
		if b.Alpha < 20*a.Alpha {
			t.Errorf("T = %d: α with memory %v is not far above α without %v", T, b.Alpha, a.Alpha)
		}
		if i > 0 && a.Alpha > prev/5 {
			t.Errorf("T = %d: α without memory %v did not shrink from %v", T, a.Alpha, prev)
		}
		prev = a.Alpha
	}
}

func TestRunPrintsTable(t *testing.T) {
	var b bytes.Buffer
	if err := run(&b, 3, 1000, 1); err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(b.String(), "\n| "); n != 10 {
		t.Errorf("the table has %d rows, want 10 (four learners × two ages, the header and its rule):\n%s", n, b.String())
	}
}
