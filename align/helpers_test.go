package align

import (
	"math"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/floats/scalar"

	"unlearn/olbfgs"
	"unlearn/stream"
)

// Test streams are built here rather than with stream's generators (being
// written concurrently): a quadratic loss with random SPD H0, H1
// (H = AAᵀ/d + I) and minimizers drifting around a centre.

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
				s += a[i][k] * a[j][k]
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
	rng := rand.New(rand.NewPCG(seed, 21))
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

// logisticStream returns a ridge-logistic loss (λ = 0.05) and n inserts.
func logisticStream(t testing.TB, seed uint64, d, n int) (stream.Loss, []stream.Event) {
	t.Helper()
	rng := rand.New(rand.NewPCG(seed, 22))
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

func replay(t testing.TB, loss stream.Loss, tau int, events []stream.Event) *olbfgs.Learner {
	t.Helper()
	cfg := olbfgs.DefaultConfig(loss.Dim())
	cfg.Memory = tau
	l, err := olbfgs.Replay(cfg, loss, events)
	if err != nil {
		t.Fatal(err)
	}
	return l
}

func newEngine(t testing.TB, d int, opt Options) *Engine {
	t.Helper()
	e, err := NewEngine(d, opt)
	if err != nil {
		t.Fatal(err)
	}
	return e
}

// equalWithin wraps scalar.EqualWithinAbsOrRel (NaN is never equal).
func equalWithin(a, b, tol float64) bool { return scalar.EqualWithinAbsOrRel(a, b, tol, tol) }
