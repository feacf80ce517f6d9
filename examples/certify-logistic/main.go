// Command certify-logistic certifies a deletion in a streaming
// ridge-logistic model end to end, with every published number computed
// from public quantities only (issue 9; docs/packages/certify.md):
//
//  1. generate a logistic stream (the paper's generator, spec §1.2);
//  2. train a CERTIFIABLE o-LBFGS learner on it: a radius W (w is projected
//     onto ‖w‖ ≤ W after every step), a sample bound B (inserts with
//     ‖x‖ > B are refused), and the pair guard (curvature pairs are stored
//     only when their curvature and angle lie in a window, which bounds the
//     spectrum of every H_Z);
//  3. receive a deletion request, apply an intervention through
//     certify.Wrap, which derives α from the learner's configuration, the
//     loss header and the deletions' ages, and releases w + N(0, σ²I);
//  4. sign the certificate with a freshly generated Ed25519 key
//     (sign.Generate) and verify it against the release, as an auditor
//     would;
//  5. show the exact path beside it: oracle replay and a window replay
//     whose window holds every deleted insert are established exact by the
//     toolkit, and released without noise (α = 0, σ = 0).
//
// For the reader only — never published — it compares α with the TRUE
// deviation ‖w̃ − w⁻‖ of the intervened parameters from the oracle's
// counterfactual ones, and prints the noise-to-signal ratio σ·√d/‖w̃‖.
//
// The sample bound. The generator's features are Gaussian, x ~ N(0, Σ_t)
// with the eigenvalues of Σ_t at most the feature scale s, so ‖x‖² ≤ s·χ²_d
// in distribution and no finite bound holds surely. The example does not
// clip or normalize the data: it picks B = √s·(√d + 3) from the
// generator's PUBLIC parameters (s and d; P[χ_d > √d + 3] ≤ e^{−9/2}), and
// the learner REFUSES every insert with ‖x‖ > B (olbfgs.ErrSampleBound);
// a refused insert never enters the model, and the example prints how many
// were refused. The certificate rests on B because the learner enforces
// it, not because the data happens to satisfy it.
//
// Run it with
//
//	go run ./examples/certify-logistic
package main

import (
	"errors"
	"fmt"
	"io"
	"log"
	"math"
	"os"
	"unlearn/experiment"

	"gonum.org/v1/gonum/floats"

	"unlearn/certify"
	"unlearn/olbfgs"
	"unlearn/sign"
	"unlearn/stream"
	"unlearn/unlearn"
)

func main() {
	if _, err := run(os.Stdout); err != nil {
		log.Fatal(err)
	}
}

const (
	d      = 8    // dimension
	T      = 700  // events generated
	tDel   = 600  // the deletion request arrives after this many events
	recent = 40   // the request deletes samples among the last `recent` inserts
	nDel   = 5    // |U|
	tau    = 5    // memory size τ
	eta    = 1.0  // step size η
	lambda = 1.0  // ridge λ (the header's, public)
	scale  = 0.01 // the generator's feature scale s (public)
	radius = 1.0  // W: the learner projects w onto ‖w‖ ≤ W
	angle  = 0.02 // r̄: the pair guard's largest tan∠(s, y)
)

// path is one way of answering the request: its certificate and, for the
// reader only, the true deviation of its un-noised parameters from the
// counterfactual.
type path struct {
	Name      string
	Cert      *certify.Certificate
	Deviation float64 // ‖w̃ − w⁻‖₂, computed exactly and rounded up
	WNorm     float64 // ‖w̃‖₂ of the un-noised parameters
}

// result is what run computed, for the test.
type result struct {
	Refused  int    // inserts the learner refused (‖x‖ > B)
	Pairs    int    // curvature pairs in the actual learner's memory at the request
	Noised   path   // the intervention through Wrap: derived α, Gaussian noise
	Exact    []path // oracle replay and window replay within its window
	Verified bool
}

func run(w io.Writer) (*result, error) {
	// 1. A ridge-logistic stream of the paper's generator.
	opts := stream.DefaultLogisticOptions()
	opts.D, opts.T, opts.Seed, opts.FeatureScale = d, T, 7, scale
	opts.Lambda = new(float64)
	*opts.Lambda = lambda
	h, err := stream.GenerateLogistic(opts)
	if err != nil {
		return nil, err
	}

	// 2. The certifiable learner. B from the generator's public parameters;
	// the pair window [λ, λ + B²/4] holds the curvature sᵀy/‖s‖² of every
	// logistic pair (every Hessian is λI + c·xxᵀ with c ≤ 1/4), the angle
	// r̄ keeps only pairs close to isotropic.
	b := math.Sqrt(scale) * (math.Sqrt(d) + 3)
	cfg := olbfgs.DefaultConfig(d)
	cfg.Memory, cfg.StepSize = tau, eta
	cfg.Radius, cfg.SampleBound = radius, b
	cfg.PairAngle, cfg.PairMin, cfg.PairMax = angle, lambda, lambda+b*b/4
	cfg.InitialScale = 1 / cfg.PairMax
	actual, err := olbfgs.New(cfg, h.Loss)
	if err != nil {
		return nil, err
	}
	if err := actual.KeepCheckpoints(recent); err != nil {
		return nil, err
	}
	res := &result{}
	var prefix []stream.Event // the inserts the learner accepted
	for _, e := range h.Prefix(tDel) {
		err := actual.Step(e)
		if errors.Is(err, olbfgs.ErrSampleBound) {
			res.Refused++
			continue
		}
		if err != nil {
			return nil, err
		}
		prefix = append(prefix, e)
	}
	res.Pairs = actual.Memory().Len()
	hdr, err := certify.HeaderOf(h.Loss)
	if err != nil {
		return nil, err
	}
	prof, err := certify.DeriveProfile(cfg, hdr)
	if err != nil {
		return nil, err
	}

	// 3. The deletion request: nDel samples among the last `recent` inserts.
	ids, err := stream.ChooseDeletions(prefix[len(prefix)-recent:], stream.Random, nDel, stream.ChooseOptions{Seed: 3})
	if err != nil {
		return nil, err
	}
	req := unlearn.Request{Actual: actual, Prefix: prefix, U: stream.NewIDSet(ids...)}
	oracle, _, err := unlearn.Run(unlearn.Oracle(), req) // the counterfactual w⁻: for the reader only
	if err != nil {
		return nil, err
	}

	// The certifier's key, and the three paths.
	key, err := sign.Generate()
	if err != nil {
		return nil, err
	}
	spec := certify.Spec{Epsilon: 1, Delta: 1e-5, Memory: certify.Rebuild}
	answer := func(op unlearn.Operator) (path, []byte, error) {
		c, err := certify.Wrap(op, spec)
		if err != nil {
			return path{}, nil, err
		}
		rel, cert, _, err := c.ApplyCertified(req)
		if err != nil {
			return path{}, nil, err
		}
		if err := certify.Sign(cert, key); err != nil {
			return path{}, nil, err
		}
		relJSON, err := rel.Marshal()
		if err != nil {
			return path{}, nil, err
		}
		// The un-noised parameters, as Certify releases them before the
		// noise: the operator's output projected onto the learner's ball.
		out, _, err := unlearn.Run(op, req)
		if err != nil {
			return path{}, nil, err
		}
		wt := projected(out.W(), cfg.RadiusBound())
		return path{Name: op.Name(), Cert: cert, Deviation: exactDistance(wt, oracle.W()), WNorm: floats.Norm(wt, 2)}, relJSON, nil
	}
	var relJSON []byte
	if res.Noised, relJSON, err = answer(unlearn.PairDrop()); err != nil {
		return nil, err
	}
	for _, op := range []unlearn.Operator{unlearn.WindowReplay(recent, "window-replay", "Window replay"), unlearn.Oracle()} {
		p, _, err := answer(op)
		if err != nil {
			return nil, err
		}
		res.Exact = append(res.Exact, p)
	}

	// 4. Verification, as an auditor would: the certificate, the release
	// file and the certifier's public key; nothing else.
	rep, err := certify.Verify(res.Noised.Cert, relJSON, key.Public())
	if err != nil {
		return nil, err
	}
	res.Verified = true

	// Report.
	c := res.Noised.Cert
	s := c.Sensitivity
	fmt.Fprintf(w, "stream: ridge logistic (λ = %g), d = %d, features N(0, Σ) with λ(Σ) ≤ s = %g; %d events, request after event %d\n", lambda, d, scale, T, tDel)
	fmt.Fprintf(w, "learner: τ = %d, η = %g, radius W = %g, sample bound B = √s·(√d + 3) = %.4g, pair guard tan∠ ≤ %g, sᵀy/‖s‖² in [%.4g, %.4g]\n",
		tau, eta, radius, b, angle, cfg.PairMin, cfg.PairMax)
	fmt.Fprintf(w, "refused inserts (‖x‖ > B): %d of %d; pairs stored: %d, skipped by the guards: %d\n", res.Refused, tDel, actual.Memory().Len(), actual.Skipped())
	if prof.Recursion {
		fmt.Fprintf(w, "derived constants (proved): G = %.4g, H_Z spectrum in [%.4g, %.4g], μ = %.4g, L = %.4g, ρ = %.4f (%s)\n",
			prof.Constants.G, prof.Constants.HMin, prof.Constants.HMax, prof.Mu, prof.L, prof.Contraction.Rho, commuting(prof.Commuting))
	} else {
		fmt.Fprintf(w, "no recursion: %s\n", prof.Why)
	}
	fmt.Fprintf(w, "request: delete ids %v (ages %v)\n\n", ids, s.Deletion.Ages)

	fmt.Fprintf(w, "%s through certify.Wrap, signed by a fresh key and verified:\n", res.Noised.Name)
	fmt.Fprint(w, rep.String())
	fmt.Fprintln(w, "certificate VALID")
	fmt.Fprintln(w)

	fmt.Fprintln(w, "For the reader only (needs the deleted data, never published):")
	fmt.Fprintf(w, "  α (%s, %s)          %.4g   = min(recursion %.4g + allowance %.4g, diameter 2W' %.4g) + projection round-off\n",
		s.Source, s.Provenance, s.Alpha, s.Recursion, s.Allowance, s.Diameter)
	fmt.Fprintf(w, "  true deviation ‖w̃ − w⁻‖      %.4g\n", res.Noised.Deviation)
	fmt.Fprintf(w, "  looseness α / deviation      %.4g\n", looseness(s.Alpha, res.Noised.Deviation))
	fmt.Fprintf(w, "  σ                            %.4g (ε = %g, δ = %g)\n", c.Sigma, c.Epsilon, c.Delta)
	fmt.Fprintf(w, "  noise-to-signal σ·√d/‖w̃‖     %.4g (‖w̃‖ = %.4g)\n", noiseToSignal(c.Sigma, res.Noised.WNorm), res.Noised.WNorm)
	fmt.Fprintln(w)
	fmt.Fprintf(w, "The bound is loose: α is %.3g times the true deviation, and the noise (expected norm σ·√d) is %.3g times ‖w̃‖.\n",
		looseness(s.Alpha, res.Noised.Deviation), noiseToSignal(c.Sigma, res.Noised.WNorm))
	fmt.Fprintln(w, "α is a worst case over every stream the learner accepts and every deletion set with these ages:")
	fmt.Fprintln(w, "the worst-case memory model charges η·(hMax − hMin)·G at every step, so α has a floor that no")
	if prof.Commuting {
		fmt.Fprintln(w, "age removes.")
	} else {
		fmt.Fprintln(w, "age removes, and in d > 1 the logistic Hessians do not commute with H_Z (ρ of the general case).")
	}
	fmt.Fprintln(w, "This release is private and of little use; the exact paths below cost a replay and need no noise.")
	fmt.Fprintln(w)

	fmt.Fprintln(w, "The noised path beside the exact ones (exactness established by the toolkit's own replay; no noise):")
	fmt.Fprintf(w, "  %-14s %-9s %-9s %-9s %s\n", "intervention", "α", "σ", "deviation", "why exact")
	for _, p := range append([]path{res.Noised}, res.Exact...) {
		why := "not exact: noised"
		if p.Cert.Exact {
			why = p.Cert.Sensitivity.Method
		}
		fmt.Fprintf(w, "  %-14s %-9.3g %-9.3g %-9.3g %s\n", p.Name, p.Cert.Sensitivity.Alpha, p.Cert.Sigma, p.Deviation, why)
	}
	return res, nil
}

func commuting(c bool) string {
	if c {
		return "commuting case"
	}
	return "general case: the Hessians do not commute with H_Z"
}

// looseness returns α / deviation (+Inf for a zero deviation).
func looseness(alpha, dev float64) float64 {
	if dev == 0 {
		return math.Inf(1)
	}
	return alpha / dev
}

// noiseToSignal returns σ·√d / ‖w‖, the expected norm of the noise over the
// norm of the un-noised parameters.
func noiseToSignal(sigma, wNorm float64) float64 {
	return sigma * math.Sqrt(d) / wNorm
}

// projected returns w projected onto the ball of radius r, as Certify
// projects it before the noise.
func projected(w []float64, r float64) []float64 {
	out := append([]float64(nil), w...)
	if n := floats.Norm(out, 2); n > r {
		floats.Scale(r/n, out)
	}
	return out
}

// exactDistance is experiment.ExactDistance: ‖a − b‖₂ computed exactly
// and rounded up, so that a deviation is compared with α without tolerance.
func exactDistance(a, b []float64) float64 { return experiment.ExactDistance(a, b) }
