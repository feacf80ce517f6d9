package unlearn_test

import (
	"math"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/floats/scalar"

	"unlearn/olbfgs"
	"unlearn/stream"
)

// The test streams are built here rather than with stream's generators,
// which are developed concurrently: a quadratic loss with random SPD H0, H1
// (H = AAᵀ/d + I, condition number a few units) and minimizers drifting
// around a centre, or a ridge-logistic loss with λ = 0.05 (SPEC §1 default).

func randSPD(rng *rand.Rand, d int) [][]float64 {
	a := make([][]float64, d)
	for i := range a {
		a[i] = make([]float64, d)
		for j := range a[i] {
			a[i][j] = rng.NormFloat64()
		}
	}
	h := make([][]float64, d)
	for i := range h {
		h[i] = make([]float64, d)
		for j := range h[i] {
			var s float64
			for k := 0; k < d; k++ {
				s += a[i][k] * a[j][k] // symmetric bit for bit: products commute
			}
			h[i][j] = s / float64(d)
		}
		h[i][i]++
	}
	return h
}

// quadStream returns a quadratic loss and n inserts with ids 1..n.
func quadStream(t testing.TB, seed uint64, d, n int) (stream.Loss, []stream.Event) {
	t.Helper()
	rng := rand.New(rand.NewPCG(seed, 11))
	loss, err := stream.NewQuadratic(randSPD(rng, d), randSPD(rng, d))
	if err != nil {
		t.Fatal(err)
	}
	events := make([]stream.Event, n)
	for i := range events {
		a := make([]float64, d)
		for j := range a {
			a[j] = 1 + math.Sin(float64(i)/20+float64(j)) + 0.3*rng.NormFloat64()
		}
		events[i] = stream.InsertEvent(int64(i+1), a, rng.Float64())
	}
	return loss, events
}

// logisticStream returns a ridge-logistic loss and n inserts with ids 1..n.
func logisticStream(t testing.TB, seed uint64, d, n int) (stream.Loss, []stream.Event) {
	t.Helper()
	rng := rand.New(rand.NewPCG(seed, 12))
	loss, err := stream.NewLogistic(d, 0.05)
	if err != nil {
		t.Fatal(err)
	}
	events := make([]stream.Event, n)
	for i := range events {
		x := make([]float64, d)
		for j := range x {
			x[j] = rng.NormFloat64() / math.Sqrt(float64(d))
		}
		y := 1.0
		if rng.Float64() < 0.4 {
			y = -1
		}
		events[i] = stream.InsertEvent(int64(i+1), x, y)
	}
	return loss, events
}

// actualAt trains a learner with memory tau on prefix, keeping checkpoints
// for window events from θ0.
func actualAt(t testing.TB, loss stream.Loss, tau, window int, prefix []stream.Event) *olbfgs.Learner {
	t.Helper()
	cfg := olbfgs.DefaultConfig(loss.Dim())
	cfg.Memory = tau
	l, err := olbfgs.New(cfg, loss)
	if err != nil {
		t.Fatal(err)
	}
	if window > 0 {
		if err := l.KeepCheckpoints(window); err != nil {
			t.Fatal(err)
		}
	}
	if err := l.Run(prefix); err != nil {
		t.Fatal(err)
	}
	return l
}

// sameState reports whether a and b hold bit-identical w and Z (the event
// counters and deleted ids may differ).
func sameState(a, b *olbfgs.Learner) bool {
	if len(a.W()) != len(b.W()) {
		return false
	}
	for i := range a.W() {
		if math.Float64bits(a.W()[i]) != math.Float64bits(b.W()[i]) {
			return false
		}
	}
	return a.Memory().Equal(b.Memory())
}

// close reports |a − b| ≤ tol·max(1, |b|) via scalar.EqualWithinAbsOrRel
// (NaN-aware: NaN is never close).
func close(a, b, tol float64) bool { return scalar.EqualWithinAbsOrRel(a, b, tol, tol) }
