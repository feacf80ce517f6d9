// Command memorycost measures what curvature memory costs in
// certifiability: for the same logistic streams, it compares the proved
// sensitivity α of bound.Dynamics (a deleted insert of a given age, a
// release after T inserts, no intervention) for a learner without memory
// (H = γ₀I) and for guarded o-LBFGS memories, with the deviation of the
// two simulated trajectories (with and without the deleted insert),
// measured. Both learners use the decaying step schedule of the
// certifiable profile, η(t) = η₀/(1 + η₀λ_η·t), and the projection onto the
// ball of radius W. docs/theory.md §16.9 reports the result.
//
// The learner is simulated here (projected online L-BFGS with the pair
// guard of olbfgs.Config, whose spectral bounds it uses): the toolkit's
// learner has no step schedule yet.
//
//	go run ./tools/memorycost [-d 20] [-seed 1] [-max 100000]
package main

import (
	"flag"
	"fmt"
	"io"
	"log"
	"math"
	"math/rand/v2"
	"os"

	"gonum.org/v1/gonum/floats"

	"unlearn/bound"
	"unlearn/internal/floatbits"
	"unlearn/olbfgs"
)

func main() {
	d := flag.Int("d", 20, "dimension")
	seed := flag.Uint64("seed", 1, "seed of the stream")
	maxT := flag.Int("max", 100000, "longest stream (inserts); streams of 10³, 10⁴, … up to it")
	flag.Parse()
	if err := run(os.Stdout, *d, *maxT, *seed); err != nil {
		log.Fatal(err)
	}
}

// Problem is the public setting: ridge-logistic loss with λ, payloads of
// norm ≤ B = 1, radius W = B/(2λ) (it holds the ridge minimizer).
type Problem struct {
	D      int
	Lambda float64
}

func (p Problem) radius() float64 { return 1 / (2 * p.Lambda) }

// Learner is one learner configuration: memory τ (0: none), initial scale
// γ₀, pair guard window and angle (with τ > 0), and its step schedule.
type Learner struct {
	Name             string
	Tau              int
	Gamma0           float64
	PairMin, PairMax float64
	PairAngle        float64
	Schedule         bound.Schedule
}

// config returns the olbfgs configuration whose guard and spectral bounds
// the simulation uses.
func (l Learner) config(p Problem) olbfgs.Config {
	c := olbfgs.DefaultConfig(p.D)
	c.Memory, c.InitialScale, c.StepSize = l.Tau, l.Gamma0, l.Schedule.Eta0
	c.Radius, c.SampleBound = p.radius(), 1
	if l.Tau > 0 {
		c.PairAngle, c.PairMin, c.PairMax = l.PairAngle, l.PairMin, l.PairMax
	}
	return c
}

// Dynamics returns the public constants of the learner for bound.Dynamics:
// μ = λ, L = λ + B'²/4, G = B' + λW', the spectral bounds of the guard
// (γ₀ exactly without memory), and a per-step round-off bound as in
// certify.DeriveProfile (docs/theory.md §15.6).
func (l Learner) Dynamics(p Problem) (bound.Dynamics, error) {
	c := l.config(p)
	wp, bp := c.RadiusBound(), c.SampleBoundExact()
	hMin, hMax := l.Gamma0, l.Gamma0
	if l.Tau > 0 {
		var ok bool
		if hMin, hMax, ok = c.SpectralBounds(); !ok {
			return bound.Dynamics{}, fmt.Errorf("%s: the guard gives no spectral bounds", l.Name)
		}
	}
	g := (bp + p.Lambda*wp) * (1 + 1e-15)
	k := bp*(1+bp*wp) + p.Lambda*wp
	tau := float64(l.Tau + 2)
	c2t := math.Pow(1+l.PairAngle*l.PairAngle, float64(l.Tau))
	ro := 2 * 0x1p-40 * tau * tau * float64(p.D+8) * c2t * (wp + l.Schedule.Eta0*hMax*(g+k))
	return bound.Dynamics{Schedule: l.Schedule, HMin: hMin, HMax: hMax, Mu: p.Lambda, L: (p.Lambda + bp*bp/4) * (1 + 1e-15),
		G: g, Radius: wp, RoundOff: ro, Provenance: bound.Proved}, nil
}

// Row is one measurement.
type Row struct {
	Learner    string
	HMin, HMax float64
	T, Age     int
	Alpha      float64 // proved bound on the last iterates' deviation
	Deviation  float64 // measured, exactly
	Diameter   float64
	PairShare  float64 // share of the actual learner's steps that stored a pair
}

// Measure simulates the stream of T inserts with and without the insert of
// the given age and returns the bound and the measured deviation.
func Measure(p Problem, l Learner, T, age int, seed uint64) (Row, error) {
	dyn, err := l.Dynamics(p)
	if err != nil {
		return Row{}, err
	}
	cfg := l.config(p)
	r := rand.New(rand.NewPCG(seed, uint64(p.D)))
	xs, ys := stream(r, p.D, T)
	act, cf := newSim(cfg, p.Lambda, l.Schedule), newSim(cfg, p.Lambda, l.Schedule)
	del := T - age
	for s := 1; s <= T; s++ {
		act.step(xs[s-1], ys[s-1])
		if s != del {
			cf.step(xs[s-1], ys[s-1])
		}
	}
	dev, err := dyn.Bound(bound.Stream{Steps: T, Deleted: []int{del}})
	if err != nil {
		return Row{}, err
	}
	return Row{Learner: l.Name, HMin: dyn.HMin, HMax: dyn.HMax, T: T, Age: age, Alpha: dev.Alpha,
		Deviation: floatbits.ExactDistance(act.w, cf.w), Diameter: 2 * dyn.Radius, PairShare: float64(act.pushed) / float64(T)}, nil
}

// stream draws T logistic samples: two classes with means ±0.4·e (e a
// random unit vector) and unit Gaussian noise of variance 0.3/d per
// coordinate, scaled into the unit ball (the sample bound B = 1).
func stream(r *rand.Rand, d, n int) ([][]float64, []float64) {
	e := make([]float64, d)
	for i := range e {
		e[i] = r.NormFloat64()
	}
	floats.Scale(1/floats.Norm(e, 2), e)
	xs, ys := make([][]float64, n), make([]float64, n)
	for i := range xs {
		y := float64(1 - 2*r.IntN(2))
		x := make([]float64, d)
		for j := range x {
			x[j] = 0.4*y*e[j] + math.Sqrt(0.3/float64(d))*r.NormFloat64()
		}
		for floats.Norm(x, 2) > 1 {
			floats.Scale(1/floats.Norm(x, 2)*(1-0x1p-40), x)
		}
		xs[i], ys[i] = x, y
	}
	return xs, ys
}

func run(w io.Writer, d, maxT int, seed uint64) error {
	p := Problem{D: d, Lambda: 0.05}
	lmax := p.Lambda + 0.25
	learners := []Learner{
		{Name: "no memory", Gamma0: 1, Schedule: bound.Schedule{Eta0: 1 / (lmax + p.Lambda), Decay: p.Lambda}},
		{Name: "memory τ=5, window [λ, λ + 1/4], angle ≤ 0.5", Tau: 5, Gamma0: 1 / (p.Lambda + 0.125),
			PairMin: p.Lambda, PairMax: lmax, PairAngle: 0.5},
		{Name: "memory τ=5, window [λ, λ + 1/4], angle ≤ 0.2", Tau: 5, Gamma0: 1 / (p.Lambda + 0.125),
			PairMin: p.Lambda, PairMax: lmax, PairAngle: 0.2},
		{Name: "memory τ=5, window [0.1, 0.105], angle ≤ 0.01", Tau: 5, Gamma0: 1 / 0.1025,
			PairMin: 0.1, PairMax: 0.105, PairAngle: 0.01},
	}
	for i := 1; i < len(learners); i++ {
		// A step of the same size as the memory-free learner's on the
		// memory's mean scale, decaying at the rate μ·hMin.
		c := learners[i].config(p)
		hMin, hMax, ok := c.SpectralBounds()
		if !ok {
			return fmt.Errorf("%s: no spectral bounds", learners[i].Name)
		}
		learners[i].Schedule = bound.Schedule{Eta0: 1 / (hMax * (lmax + p.Lambda)), Decay: p.Lambda * hMin}
	}
	fmt.Fprintf(w, "Ridge-logistic stream, d = %d, λ = %g, ‖x‖ ≤ 1, W = %g (diameter 2W' ≈ %g), one deleted insert, no intervention, last iterate; α proved (bound.Dynamics), deviation measured exactly (seed %d).\n\n",
		d, p.Lambda, p.radius(), 2*p.radius(), seed)
	fmt.Fprintln(w, "| learner | hMin … hMax | T | age | α (proved) | deviation (measured) | α / deviation | pairs stored |")
	fmt.Fprintln(w, "| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: |")
	for _, l := range learners {
		for T := 1000; T <= maxT; T *= 10 {
			for _, age := range []int{T / 2, 10} {
				row, err := Measure(p, l, T, age, seed)
				if err != nil {
					return err
				}
				fmt.Fprintf(w, "| %s | %.3g … %.3g | %d | %d | %.3g | %.3g | %.3g | %.0f%% |\n", row.Learner, row.HMin, row.HMax,
					row.T, row.Age, row.Alpha, row.Deviation, row.Alpha/row.Deviation, 100*row.PairShare)
			}
		}
	}
	return nil
}
