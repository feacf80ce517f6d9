// Command contractivity measures the paper's Assumption "Contractive update
// map" in the state metric the paper's Lemma uses,
//
//	d_Θ(θ, θ') = ‖w − w'‖₂ + λ_Z·‖H_Z − H_Z'‖₂,
//
// by applying one o-LBFGS step on the same sample to random pairs of states
// and reporting the ratio d_Θ(after)/d_Θ(before). The states are reached by
// training the learner on two independent random streams of the same
// isotropic quadratic loss (H0 = I, H1 = 10·I: every Hessian is a multiple
// of I and commutes with every H_Z, the friendliest case for a proof). A ratio above 1 is an expansion: the
// assumption fails for that pair. docs/theory.md §15.8 reports the result.
//
//	go run ./tools/contractivity [-pairs N] [-seed S]
package main

import (
	"flag"
	"fmt"
	"io"
	"log"
	"math"
	"math/rand/v2"
	"os"
	"slices"

	"gonum.org/v1/gonum/mat"

	"unlearn/olbfgs"
	"unlearn/stream"
)

func main() {
	pairs := flag.Int("pairs", 2000, "random state pairs per configuration")
	seed := flag.Uint64("seed", 1, "seed")
	flag.Parse()
	if err := run(os.Stdout, *pairs, *seed); err != nil {
		log.Fatal(err)
	}
}

// Row is the outcome for one configuration.
type Row struct {
	Kind      string
	D, Tau    int
	Pairs     int
	Expanding float64 // share of pairs with ratio > 1
	Median    float64
	Max       float64
}

func run(w io.Writer, pairs int, seed uint64) error {
	fmt.Fprintf(w, "One o-LBFGS step on the same sample, %d random state pairs per row, isotropic quadratic (H0 = I, H1 = 10·I, α uniform in [0, 1], η = 0.1), λ_Z = 1.\n\n", pairs)
	fmt.Fprintln(w, "| pairs | d | τ | expanding pairs | median ratio | max ratio |")
	fmt.Fprintln(w, "| --- | ---: | ---: | ---: | ---: | ---: |")
	for _, kind := range []string{"independent", "nearby", "memory"} {
		for _, d := range []int{2, 3, 5} {
			for _, tau := range []int{1, 2, 3, 5} {
				r, err := Measure(d, tau, pairs, seed, kind)
				if err != nil {
					return err
				}
				fmt.Fprintf(w, "| %s | %d | %d | %.1f%% | %.3g | %.3g |\n", r.Kind, r.D, r.Tau, 100*r.Expanding, r.Median, r.Max)
			}
		}
	}
	return nil
}

// Measure draws pairs of states of a learner with dimension d and memory τ
// and returns the distribution of one-step ratios in d_Θ. kind is
// "independent" (two independent random streams), "nearby" (one stream's
// state and a copy whose w differs by a random vector of norm 10⁻³) or
// "memory" (two independent streams' memories at the same w: the states
// differ in memory only — after a deletion the memories differ long after
// the parameters have come close).
func Measure(d, tau, pairs int, seed uint64, kind string) (Row, error) {
	h0, h1 := make([][]float64, d), make([][]float64, d)
	for i := range h0 {
		h0[i], h1[i] = make([]float64, d), make([]float64, d)
		h0[i][i], h1[i][i] = 1, 10
	}
	loss, err := stream.NewQuadratic(h0, h1)
	if err != nil {
		return Row{}, err
	}
	cfg := olbfgs.DefaultConfig(d)
	cfg.Memory, cfg.StepSize = tau, 0.1
	r := rand.New(rand.NewPCG(seed, uint64(d*100+tau)))
	ratios := make([]float64, 0, pairs)
	for range pairs {
		a, err := olbfgs.Replay(cfg, loss, randomStream(r, d, 1+r.IntN(3*tau+3)))
		if err != nil {
			return Row{}, err
		}
		b, err := olbfgs.Replay(cfg, loss, randomStream(r, d, 1+r.IntN(3*tau+3)))
		if err != nil {
			return Row{}, err
		}
		switch kind {
		case "memory":
			b.SetW(a.W())
		case "nearby":
			b = a.Clone()
			w := append([]float64(nil), a.W()...)
			for j := range w {
				w[j] += 1e-3 * r.NormFloat64() / math.Sqrt(float64(d))
			}
			b.SetW(w)
		}
		before := dist(a, b)
		if before == 0 {
			continue
		}
		z := randomStream(r, d, 1)[0]
		z.ID = 1 << 40
		if err := a.Step(z); err != nil {
			return Row{}, err
		}
		if err := b.Step(z); err != nil {
			return Row{}, err
		}
		ratios = append(ratios, dist(a, b)/before)
	}
	slices.Sort(ratios)
	exp := 0
	for _, q := range ratios {
		if q > 1 {
			exp++
		}
	}
	return Row{Kind: kind, D: d, Tau: tau, Pairs: len(ratios), Expanding: float64(exp) / float64(len(ratios)),
		Median: ratios[len(ratios)/2], Max: ratios[len(ratios)-1]}, nil
}

// randomStream returns n inserts with minimizers in the unit ball scaled by 2.
func randomStream(r *rand.Rand, d, n int) []stream.Event {
	out := make([]stream.Event, n)
	for i := range out {
		a := make([]float64, d)
		for j := range a {
			a[j] = 2 * r.NormFloat64()
		}
		out[i] = stream.InsertEvent(int64(i+1), a, r.Float64())
	}
	return out
}

// dist is d_Θ with λ_Z = 1: ‖Δw‖₂ + ‖H_a − H_b‖₂ (spectral norm, from the
// dense matrices the two-loop applies).
func dist(a, b *olbfgs.Learner) float64 {
	d := a.Config().Dim
	var s float64
	for i, v := range a.W() {
		s += (v - b.W()[i]) * (v - b.W()[i])
	}
	diff := mat.NewDense(d, d, nil)
	e := make([]float64, d)
	ca, cb := make([]float64, d), make([]float64, d)
	for j := range d {
		clear(e)
		e[j] = 1
		a.Memory().Apply(ca, e)
		b.Memory().Apply(cb, e)
		for i := range d {
			diff.Set(i, j, ca[i]-cb[i])
		}
	}
	var svd mat.SVD
	if !svd.Factorize(diff, mat.SVDNone) {
		return math.NaN()
	}
	return math.Sqrt(s) + svd.Values(nil)[0]
}
