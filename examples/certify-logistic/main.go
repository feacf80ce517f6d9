// Command certify-logistic certifies a deletion in a streaming ridge-logistic
// model end to end: generate a stream, train online L-BFGS on it, receive a
// deletion request, apply an intervention, certify the result with Gaussian
// noise calibrated to the state-deviation bound, verify the certificate and
// print its summary.
//
// The logistic loss gives no computable constants (docs/theory.md §12): the
// gradient bound G, the spectral bounds hMin, hMax of the inverse-Hessian
// approximations and the contraction ρ are measured along the run, so the
// certificate is labelled ESTIMATED and says so. Run it with
//
//	go run ./examples/certify-logistic
package main

import (
	"errors"
	"fmt"
	"io"
	"log"
	"math"
	"math/rand/v2"
	"os"

	"gonum.org/v1/gonum/floats"
	"gonum.org/v1/gonum/mat"

	"unlearn/bound"
	"unlearn/certify"
	"unlearn/olbfgs"
	"unlearn/stream"
	"unlearn/unlearn"
)

func main() {
	if err := run(os.Stdout); err != nil {
		log.Fatal(err)
	}
}

const (
	d    = 8   // dimension
	T    = 700 // events in the stream
	tDel = 600 // the deletion request arrives after this event
	tau  = 5   // memory size τ
)

func run(w io.Writer) error {
	// 1. A ridge-logistic stream of the paper's generator (SPEC §1.2).
	opts := stream.DefaultLogisticOptions()
	opts.D, opts.T, opts.Seed = d, T, 7
	h, err := stream.GenerateLogistic(opts)
	if err != nil {
		return err
	}
	prefix := h.Prefix(tDel)

	// 2. Train online L-BFGS on the prefix, measuring G and the spectrum of
	// every H_Z the learner uses (estimates: only this run's points).
	cfg := olbfgs.DefaultConfig(d)
	cfg.Memory = tau
	actual, err := olbfgs.New(cfg, h.Loss)
	if err != nil {
		return err
	}
	var g float64
	hMin, hMax := math.Inf(1), 0.0
	grad := make([]float64, d)
	for _, e := range prefix {
		h.Loss.Grad(grad, actual.W(), e.Sample)
		g = max(g, floats.Norm(grad, 2))
		lo, hi := spectrum(actual.Memory())
		hMin, hMax = min(hMin, lo), max(hMax, hi)
		if err := actual.Step(e); err != nil {
			return err
		}
	}

	// 3. The deletion request: five samples of the prefix, chosen at random.
	ids, err := stream.ChooseDeletions(prefix, stream.Random, 5, stream.ChooseOptions{Seed: 3})
	if err != nil {
		return err
	}
	req := unlearn.Request{Actual: actual, Prefix: prefix, U: stream.NewIDSet(ids...)}

	// 4. The contraction ρ, estimated from pairs of trajectories driven by the
	// same events from nearby starting states (the empirical counterpart of
	// the paper's Assumption "Contractive update map"), with a 5% margin.
	rho, err := estimateRho(cfg, h.Loss, prefix)
	if err != nil {
		return err
	}

	// 5. Wrap the intervention: retain fine-tuning, then noise calibrated to
	// α = (the untouched learner's bound for the deletions' ages) + (how far
	// the intervention moved w), and a memory rebuilt from retained data.
	scenario := &bound.Scenario{
		Constants: bound.Constants{G: 1.1 * g, HMin: hMin / 1.1, HMax: 1.1 * hMax, Eta: cfg.StepSize, Tau: tau,
			Source: bound.Estimated},
		Contraction: rho,
	}
	op, err := certify.Wrap(unlearn.RetainFineTune(), certify.Spec{
		Epsilon: 1, Delta: 1e-5, Scenario: scenario, Memory: certify.Rebuild,
	})
	if err != nil {
		return err
	}
	released, cert, cost, err := op.ApplyCertified(req)
	if err != nil {
		return err
	}

	// 6. Verify, as an auditor would, from the snapshots of the states before
	// and after the noise.
	intervened, _, err := unlearn.Run(unlearn.RetainFineTune(), req)
	if err != nil {
		return err
	}
	hdr, err := certify.HeaderOf(h.Loss)
	if err != nil {
		return err
	}
	before, err := olbfgs.MarshalSnapshot(intervened, hdr)
	if err != nil {
		return err
	}
	after, err := olbfgs.MarshalSnapshot(released, hdr)
	if err != nil {
		return err
	}
	report, err := certify.Verify(cert, before, after)
	if err != nil {
		return err
	}

	// 7. How the bound compares with the truth, which only this experiment
	// can know: the oracle's counterfactual state.
	oracle, _, err := unlearn.Run(unlearn.Oracle(), req)
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "stream: ridge logistic, d = %d, %d events; deletion of ids %v after event %d\n", d, T, ids, tDel)
	fmt.Fprintf(w, "estimated constants: G = %.3g, H_Z spectrum in [%.3g, %.3g], ρ = %.4f (%s)\n",
		scenario.Constants.G, scenario.Constants.HMin, scenario.Constants.HMax, rho.Rho, rho.Method)
	fmt.Fprintf(w, "intervention %s replayed %d events\n\n", cert.Intervention, cost.EventsReplayed)
	fmt.Fprint(w, report)
	fmt.Fprintf(w, "\ndistance of the intervened parameters to the oracle: %.4g (α = %.4g)\n",
		floats.Distance(intervened.W(), oracle.W(), 2), cert.Sensitivity.Alpha)
	fmt.Fprintf(w, "distance of the released parameters to the oracle:   %.4g (σ·sqrt(d) = %.4g)\n",
		floats.Distance(released.W(), oracle.W(), 2), cert.Sigma*math.Sqrt(d))
	fmt.Fprintln(w, "certificate VALID")
	fmt.Fprintln(w, "\nThe worst-case memory model charges η·(hMax−hMin)·G at every step after a deletion;")
	fmt.Fprintln(w, "with the wide H_Z spectrum measured here that dominates α, and σ swamps the model.")
	fmt.Fprintln(w, "Narrower curvature (hMax/hMin), a faster contraction or a larger ε all shrink σ.")
	return nil
}

// spectrum returns the extreme eigenvalues of H_Z, formed column by column
// from the two-loop recursion and symmetrized (H_Z is symmetric in exact
// arithmetic).
func spectrum(m *olbfgs.Memory) (lo, hi float64) {
	n := m.Dim()
	a := mat.NewSymDense(n, nil)
	e, col := make([]float64, n), make([][]float64, n)
	for j := range n {
		clear(e)
		e[j] = 1
		col[j] = make([]float64, n)
		m.Apply(col[j], e)
	}
	for i := range n {
		for j := i; j < n; j++ {
			a.SetSym(i, j, (col[j][i]+col[i][j])/2)
		}
	}
	var eig mat.EigenSym
	if !eig.Factorize(a, false) {
		return math.Inf(1), 0
	}
	v := eig.Values(nil)
	return v[0], v[n-1]
}

// estimateRho runs pairs of learners from the state after event 400 and a
// perturbed copy of it over the next 200 events and estimates ρ from the
// one-step ratios of their distances (bound.EstimateFromPairs).
func estimateRho(cfg olbfgs.Config, loss stream.Loss, prefix []stream.Event) (bound.Contraction, error) {
	base, err := olbfgs.Replay(cfg, loss, prefix[:400])
	if err != nil {
		return bound.Contraction{}, err
	}
	r := rand.New(rand.NewPCG(1, 2))
	var dists [][]float64
	for range 4 {
		a, b := base.Clone(), base.Clone()
		wb := append([]float64(nil), b.W()...)
		for i := range wb {
			wb[i] += 0.01 * r.NormFloat64()
		}
		b.SetW(wb)
		ds := []float64{floats.Distance(a.W(), b.W(), 2)}
		for _, e := range prefix[400:] {
			if err := a.Step(e); err != nil {
				return bound.Contraction{}, err
			}
			if err := b.Step(e); err != nil {
				return bound.Contraction{}, err
			}
			ds = append(ds, floats.Distance(a.W(), b.W(), 2))
		}
		dists = append(dists, ds)
	}
	k, err := bound.EstimateFromPairs(dists, bound.PairOptions{Margin: 0.05})
	if err == nil || !errors.Is(err, bound.ErrNoContraction) {
		return k, err
	}
	// No per-step contraction is observed: some one-step ratios exceed 1
	// (the paper reports ρ̂ > 1 right after perturbations). Fall back to
	// the average decay rate of the mean distance, with a margin — an
	// estimate that can be optimistic (docs/theory.md §6), and the
	// certificate will say that α rests on it.
	mean := make([]float64, len(dists[0]))
	for _, ds := range dists {
		for k, v := range ds {
			mean[k] += v / float64(len(dists))
		}
	}
	return bound.EstimateFromDecay(mean, bound.DecayOptions{Margin: 0.005})
}
