package parallel

import (
	"sync/atomic"
	"testing"

	"pgregory.net/rapid"
)

// TestForRunsEachIndexOnce: every index in 0..n−1 is run exactly once,
// whatever the number of workers.
func TestForRunsEachIndexOnce(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		workers := rapid.IntRange(-1, 9).Draw(t, "workers")
		n := rapid.IntRange(0, 200).Draw(t, "n")
		counts := make([]atomic.Int32, n)
		For(workers, n, func(i int) { counts[i].Add(1) })
		for i := range counts {
			if c := counts[i].Load(); c != 1 {
				t.Fatalf("index %d ran %d times (workers %d, n %d)", i, c, workers, n)
			}
		}
	})
}

// TestForSerialOrder: with one worker the indices run in order on the
// caller's goroutine.
func TestForSerialOrder(t *testing.T) {
	var got []int
	For(1, 5, func(i int) { got = append(got, i) })
	for i, v := range got {
		if v != i {
			t.Fatalf("order %v", got)
		}
	}
	if len(got) != 5 {
		t.Fatalf("ran %d of 5", len(got))
	}
}
