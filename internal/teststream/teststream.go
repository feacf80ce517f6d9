// Package teststream builds small random streams for the tests of other
// packages. They are deliberately not the paper's generators (package stream
// has those): a quadratic loss with random SPD curvature H = AAᵀ/d + I
// (condition number a few units) and minimizers drifting around a centre, or
// a ridge-logistic loss with λ = 0.05 (spec §1 default) and unit-variance
// features scaled by 1/√d. Ids are 1..n. Everything is drawn from the given
// generator, in the order documented on each function, so a test's seed
// fixes its stream.
package teststream

import (
	"math"
	"math/rand/v2"

	"unlearn/stream"
)

// SPD returns the d×d matrix AAᵀ/d + I for a standard normal A (row by row),
// symmetric bit for bit since the products commute.
func SPD(rng *rand.Rand, d int) [][]float64 {
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

// Quadratic returns a quadratic loss with H0 = SPD(rng, d), H1 = SPD(rng, d)
// and n inserts whose minimizers are a_j = 1 + sin(i/20 + j) + 0.3·N(0,1) and
// whose α is uniform in [0,1) (drawn after a).
func Quadratic(rng *rand.Rand, d, n int) (stream.Loss, []stream.Event, error) {
	loss, err := stream.NewQuadratic(SPD(rng, d), SPD(rng, d))
	if err != nil {
		return nil, nil, err
	}
	events := make([]stream.Event, n)
	for i := range events {
		a := make([]float64, d)
		for j := range a {
			a[j] = 1 + math.Sin(float64(i)/20+float64(j)) + 0.3*rng.NormFloat64()
		}
		events[i] = stream.InsertEvent(int64(i+1), a, rng.Float64())
	}
	return loss, events, nil
}

// Logistic returns a ridge-logistic loss (λ = 0.05) and n inserts with
// features N(0, I/d) and labels −1 with probability 0.4 (drawn after x).
func Logistic(rng *rand.Rand, d, n int) (stream.Loss, []stream.Event, error) {
	loss, err := stream.NewLogistic(d, 0.05)
	if err != nil {
		return nil, nil, err
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
	return loss, events, nil
}
