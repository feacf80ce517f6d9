package main

import (
	"fmt"
	"math"
	"math/bits"
	"math/rand/v2"
	"slices"

	"gonum.org/v1/gonum/floats"

	"unlearn/certify"
	"unlearn/noise"
	"unlearn/olbfgs"
	"unlearn/stream"
	"unlearn/unlearn"
)

// mustShow measures the distribution of the Fashion-MNIST 0/6 release
// accuracy at (ε, δ) = (1, 10⁻⁵) over draws SEEDED noise draws (seeds
// 1…draws; reproducible, not for deployment) for the certifiable profile
// at the sample bound B = frac·√d (training rows clipped to B as the
// profile's store clips them, olbfgs.Config.ClipToBound; the test rows
// scored as they are), ridge λ and averaging power κ, with α as the
// store derives it: the scheduled bound's worst case over the ages the
// certificate discloses (pow2, docs/theory.md §16.12). It prints one row:
// B, λ, κ, α, σ, the model's and the counterfactual's accuracy, and the
// releases' min, 5th percentile and median.
func mustShow(ds data, frac, lambda, power float64, draws int) {
	cp := certifiableRun(ds, frac, lambda, power)
	b, train, test, cfg, loss, actual := cp.b, cp.train, cp.test, cp.cfg, cp.loss, cp.actual
	u := stream.NewIDSet(ds.deleted)
	cf, err := olbfgs.Replay(cfg, loss, stream.Counterfactual(train, u))
	must(err)
	out, _, err := unlearn.Run(unlearn.NoOp(), unlearn.Request{Actual: actual, Prefix: train, U: u})
	must(err)
	h, err := certify.HeaderOf(loss)
	must(err)
	ages := certify.AgesOf(train, u)
	for i, a := range ages {
		ages[i] = 1 << (bits.Len(uint(a)) - 1) // pow2 disclosure
	}
	sens, err := certify.DerivedAlpha(cfg, h, &certify.Deletion{Ages: ages, Steps: len(train), Disclosed: "pow2", Intervention: unlearn.Builtin{Kind: unlearn.KindNoop}})
	must(err)
	sigma, err := noise.SigmaAnalytic(sens.Alpha, 1, 1e-5)
	must(err)
	w := project(out.Deployed(), cfg.RadiusBound())
	acc := make([]float64, draws)
	for k := range acc {
		r := rand.New(rand.NewPCG(uint64(k+1), 1000))
		nw := slices.Clone(w)
		for i := range nw {
			nw[i] += sigma * r.NormFloat64()
		}
		acc[k] = accuracy(cfg, h, project(nw, cfg.RadiusBound()), test)
	}
	slices.Sort(acc)
	q := func(p float64) float64 { return acc[int(math.Floor(p*float64(draws-1)))] }
	fmt.Println("| B | λ | κ | α (disclosed ages) | σ at ε = 1 | model | counterfactual | release min | 5th percentile | median |")
	fmt.Println("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
	fmt.Printf("| %.3g·√d = %.4g | %g | %g | %.4g | %.4g | %.4f | %.4f | %.4f | %.4f | %.4f |\n", frac, b, lambda, power, sens.Alpha, sigma,
		accuracy(cfg, h, out.Deployed(), test), accuracy(cfg, h, cf.Deployed(), test), acc[0], q(0.05), q(0.5))
}

// clipped returns the events with every payload of norm above b scaled
// onto the ball of radius b (olbfgs.Config.ClipToBound), copies of the
// clipped payloads.
func clipped(ev []stream.Event, b float64) []stream.Event {
	out := make([]stream.Event, len(ev))
	for i, e := range ev {
		if floats.Norm(e.Sample.V, 2) > b {
			e.Sample.V = slices.Clone(e.Sample.V)
			olbfgs.Config{SampleBound: b}.ClipToBound(e.Sample.V)
		}
		out[i] = e
	}
	return out
}

// ageRanges measures, for every age range a pow2 certificate can disclose
// for one deletion from the Fashion-MNIST 0/6 training rows (T = 12,000:
// {0}, {1}, [2, 3], …, [4096, 8191], [8192, T − 1]), and for the "none"
// disclosure (any age below T), α as the store derives it
// (certify.DerivedAlpha with the disclosed ages, bound.Dynamics.WorstBound),
// σ at (ε, δ) = (1, 10⁻⁵), and the distribution of the release's accuracy on
// the test rows over draws SEEDED noise draws (seeds 1…draws, the same
// draws for every range; reproducible, not for deployment). The release is
// the no-op intervention's output, the model itself, whichever row is
// deleted: only σ differs between the ranges. Percentiles are the nearest
// rank below.
func ageRanges(ds data, frac, lambda, power float64, draws int) {
	cp := certifiableRun(ds, frac, lambda, power)
	b, train, test, cfg, loss, actual := cp.b, cp.train, cp.test, cp.cfg, cp.loss, cp.actual
	h, err := certify.HeaderOf(loss)
	must(err)
	w := project(actual.Deployed(), cfg.RadiusBound())
	steps := len(train)
	fmt.Printf("T = %d, B = %.3g·√d = %.4g, λ = %g, κ = %g, model %.4f, %d seeded draws\n\n", steps, frac, b, lambda, power, accuracy(cfg, h, actual.Deployed(), test), draws)
	fmt.Println("| disclosed | true ages | α | σ at ε = 1 | min | 1st pct. | 5th pct. | median | share ≥ 0.75 |")
	fmt.Println("|---|---|---:|---:|---:|---:|---:|---:|---:|")
	type disclosure struct {
		how    string
		listed int
		lo, hi int
	}
	var rows []disclosure
	for lo := 0; lo < steps; {
		hi := min(max(2*lo-1, lo), steps-1)
		rows = append(rows, disclosure{"pow2", lo, lo, hi})
		lo = hi + 1
	}
	rows = append(rows, disclosure{"none", 0, 0, steps - 1})
	noop := unlearn.Builtin{Kind: unlearn.KindNoop}
	for _, r := range rows {
		sens, err := certify.DerivedAlpha(cfg, h, &certify.Deletion{Ages: []int{r.listed}, Steps: steps, Disclosed: r.how, Intervention: noop})
		must(err)
		sigma, err := noise.SigmaAnalytic(sens.Alpha, 1, 1e-5)
		must(err)
		acc := make([]float64, draws)
		pass := 0
		for k := range acc {
			rng := rand.New(rand.NewPCG(uint64(k+1), 1000))
			nw := slices.Clone(w)
			for i := range nw {
				nw[i] += sigma * rng.NormFloat64()
			}
			acc[k] = accuracy(cfg, h, project(nw, cfg.RadiusBound()), test)
			if acc[k] >= 0.75 {
				pass++
			}
		}
		slices.Sort(acc)
		q := func(p float64) float64 { return acc[int(math.Floor(p*float64(draws-1)))] }
		fmt.Printf("| %s [%d] | [%d, %d] | %.4g | %.4g | %.4f | %.4f | %.4f | %.4f | %.3f |\n", r.how, r.listed, r.lo, r.hi, sens.Alpha, sigma, acc[0], q(0.01), q(0.05), q(0.5), float64(pass)/float64(draws))
	}
}

// certifiable is the certifiable profile's learner trained on a data set's
// rows clipped to its sample bound B = frac·√d.
type certifiable struct {
	b           float64
	train, test []stream.Event
	cfg         olbfgs.Config
	loss        stream.Loss
	actual      *olbfgs.Learner
}

// certifiableRun trains the certifiable profile (λ, averaging power) on
// ds's training rows clipped to B = frac·√d.
func certifiableRun(ds data, frac, lambda, power float64) certifiable {
	c := certifiable{b: frac * math.Sqrt(float64(ds.d))}
	c.train, c.test = clipped(ds.train, c.b), ds.test
	c.cfg = olbfgs.DefaultConfig(ds.d)
	c.cfg.SampleBound = c.b
	c.cfg = c.cfg.CertifiableProfile(lambda)
	c.cfg.AveragePower = power
	var err error
	c.loss, err = stream.NewLogistic(ds.d, lambda)
	must(err)
	c.actual, err = olbfgs.Replay(c.cfg, c.loss, c.train)
	must(err)
	return c
}
