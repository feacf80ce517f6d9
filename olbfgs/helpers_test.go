package olbfgs

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"
	"gonum.org/v1/gonum/mat"

	"unlearn/stream"
)

// randSPD returns a random symmetric positive definite d×d matrix with
// eigenvalues log-spaced in [1, kappa] and random orthogonal eigenvectors.
func randSPD(rng *rand.Rand, d int, kappa float64) [][]float64 {
	g := mat.NewDense(d, d, nil)
	for i := 0; i < d; i++ {
		for j := 0; j < d; j++ {
			g.Set(i, j, rng.NormFloat64())
		}
	}
	var qr mat.QR
	qr.Factorize(g)
	var q mat.Dense
	qr.QTo(&q)
	out := make([][]float64, d)
	for i := range out {
		out[i] = make([]float64, d)
	}
	for k := 0; k < d; k++ {
		lam := 1.0
		if d > 1 {
			lam = math.Pow(kappa, float64(k)/float64(d-1))
		}
		for i := 0; i < d; i++ {
			for j := 0; j < d; j++ {
				out[i][j] += lam * q.At(i, k) * q.At(j, k)
			}
		}
	}
	for i := 0; i < d; i++ { // symmetrize exactly
		for j := i + 1; j < d; j++ {
			v := (out[i][j] + out[j][i]) / 2
			out[i][j], out[j][i] = v, v
		}
	}
	return out
}

func randVec(rng *rand.Rand, d int) []float64 {
	v := make([]float64, d)
	for i := range v {
		v[i] = rng.NormFloat64()
	}
	return v
}

// quadraticStream returns a quadratic loss and n insert events with ids 1..n,
// minimizers around a fixed point and α uniform in [0,1].
func quadraticStream(t testing.TB, seed uint64, d, n int) (*stream.Quadratic, stream.Header, []stream.Event) {
	t.Helper()
	rng := rand.New(rand.NewPCG(seed, 1))
	h0, h1 := randSPD(rng, d, 10), randSPD(rng, d, 10)
	loss, err := stream.NewQuadratic(h0, h1)
	require.NoError(t, err)
	center := randVec(rng, d)
	events := make([]stream.Event, n)
	for i := range events {
		a := randVec(rng, d)
		for j := range a {
			a[j] = center[j] + 0.3*a[j]
		}
		events[i] = stream.InsertEvent(int64(i+1), a, rng.Float64())
	}
	h := stream.Header{Format: stream.FormatV1, Kind: stream.KindQuadratic, D: d, H0: h0, H1: h1}
	return loss, h, events
}

// logisticStream returns a ridge-logistic loss and n insert events.
func logisticStream(t testing.TB, seed uint64, d, n int) (*stream.Logistic, stream.Header, []stream.Event) {
	t.Helper()
	rng := rand.New(rand.NewPCG(seed, 2))
	loss, err := stream.NewLogistic(d, 0.05)
	require.NoError(t, err)
	beta := randVec(rng, d)
	events := make([]stream.Event, n)
	for i := range events {
		x := randVec(rng, d)
		var m float64
		for j := range x {
			x[j] /= math.Sqrt(float64(d))
			m += x[j] * beta[j]
		}
		y := -1.0
		if rng.Float64() < stream.Sigmoid(m) {
			y = 1
		}
		events[i] = stream.InsertEvent(int64(i+1), x, y)
	}
	h := stream.Header{Format: stream.FormatV1, Kind: stream.KindLogistic, D: d, Lambda: 0.05}
	return loss, h, events
}

// fataler is the part of testing.TB and *rapid.T that mustReplay needs.
type fataler interface {
	require.TestingT
	Helper()
}

func mustReplay(t fataler, cfg Config, loss stream.Loss, events []stream.Event) *Learner {
	t.Helper()
	l, err := Replay(cfg, loss, events)
	require.NoError(t, err)
	return l
}

// multinomialStream returns a K-class softmax stream of n inserts with
// features of scale O(1) and labels drawn from the softmax of a random
// model (ids 1…n).
func multinomialStream(t testing.TB, seed uint64, d, k, n int) (*stream.Multinomial, stream.Header, []stream.Event) {
	t.Helper()
	rng := rand.New(rand.NewPCG(seed, 3))
	loss, err := stream.NewMultinomial(d, k, 0.05)
	require.NoError(t, err)
	beta := randVec(rng, k*d)
	events := make([]stream.Event, n)
	p := make([]float64, k)
	for i := range events {
		x := randVec(rng, d)
		var sum float64
		for c := range k {
			p[c] = math.Exp(stream.Dot4(x, beta[c*d:(c+1)*d]))
			sum += p[c]
		}
		u, y := rng.Float64()*sum, k-1
		for c := range k {
			if u < p[c] {
				y = c
				break
			}
			u -= p[c]
		}
		events[i] = stream.InsertEvent(int64(i+1), x, float64(y))
	}
	return loss, loss.Header(), events
}

// regressionStream returns a ridge-regression stream of n inserts whose
// features have a nonzero mean and unequal scales (what standardization
// is for).
func regressionStream(t testing.TB, seed uint64, d, n int) (*stream.Regression, stream.Header, []stream.Event) {
	t.Helper()
	rng := rand.New(rand.NewPCG(seed, 4))
	loss, err := stream.NewRegression(d, 0.01)
	require.NoError(t, err)
	beta := randVec(rng, d)
	events := make([]stream.Event, n)
	for i := range events {
		x := randVec(rng, d)
		for j := range x {
			x[j] = 3 + float64(j+1)*x[j]
		}
		events[i] = stream.InsertEvent(int64(i+1), x, stream.Dot4(x, beta)+rng.NormFloat64())
	}
	return loss, loss.Header(), events
}

// allOptions returns c with every practitioner option on: an intercept,
// standardization, averaging after 5 inserts, a decaying step and
// progressive statistics.
func allOptions(c Config) Config {
	c.Intercept, c.Standardize, c.Average, c.AverageStart, c.Progress = true, true, true, 5, true
	c.StepDecay, c.StepPower, c.Damping = 0.01, 0.75, 2
	return c
}
