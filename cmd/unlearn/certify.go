package main

import (
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"slices"

	"github.com/spf13/cobra"

	"unlearn/certify"
	"unlearn/model"
	"unlearn/noise"
	"unlearn/olbfgs"
	"unlearn/sign"
	"unlearn/stream"
	"unlearn/unlearn"
)

func newCertifyCmd() *cobra.Command {
	var (
		stateFile, outFile, certFile, streamFile, retainedFile  string
		epsilon, delta, beta, alpha                             float64
		alphaMethod, calibration, memory, intervention, keyFile string
		retainedLast                                            int
		seed                                                    uint64
	)
	cmd := &cobra.Command{
		Use:   "certify --state FILE --out FILE --certificate FILE --epsilon E --delta D [--stream FILE --intervention NAME]",
		Short: "Release an unlearned state with calibrated Gaussian noise and a certificate",
		Long: `certify releases an unlearned learner state with (ε, δ)-certified unlearning
(paper: Definition "(ε,δ)-State Certified Unlearning", Theorem "o-LBFGS
Unlearning Certificate"; spec §7; docs/theory.md).

Input: a state snapshot (olbfgs-state/v1, from 'unlearn train' on a stream whose
delete events are the deletion request). Output: the release (--out, format
unlearn-release/v1: the configuration, the loss header, the noised w and the
released memory, nothing else) and a certificate (--certificate,
unlearn-certificate/v2), both public.

The sensitivity α bounds ‖w̃ − w⁻‖₂, the distance of the released parameters
from those of the deletion-edited counterfactual. The toolkit computes it from
public quantities only — never from the data:

  --stream FILE   the stream the state was trained on: certify replays its
                  first events and requires the state bit for bit (so the
                  state is what the stream describes), reads the ages of the
                  deleted ids from it, and DERIVES α from the learner's
                  enforced configuration (train --radius, --sample-bound,
                  --pair-angle/--pair-min/--pair-max). Other interventions and
                  exact replays are certified where the toolkit runs them: the
                  model store (forget, then release) and certify.Wrap;
  (neither)       α is the diameter 2W' of the learner's ball (train --radius):
                  proved whatever produced the state;
  --alpha A       an α you supply. The toolkit cannot check it: the certificate
                  says it is ASSUMED and that the guarantee is conditional on it.

A learner trained without --radius has no proved α at all: certify then needs
--alpha (assumed).

Noise N(0, σ²I) is added to w (projected onto the learner's ball first), one
Gaussian mechanism with σ computed once (--calibration analytic, the default, or
classic for ε < 1). The memory (--memory) is released empty (reset, default) or
rebuilt by replaying retained inserts (--retained FILE, its last
--retained-last inserts whose ids are not deleted) from the noised w. The
un-noised memory is never released.

--key NAME.key signs the certificate (unlearn keygen). Noise comes from the
secure sampler of the Google DP library; --insecure-seeded SEED uses a
reproducible sampler instead, for experiments only: the certificate then says
"seeded" and NOT for deployment. Check a release with 'unlearn verify'.`,
		Example: `  unlearn train --stream q.jsonl --radius 5 --sample-bound 3 --out state.json
  unlearn keygen --out certifier
  unlearn certify --state state.json --stream q.jsonl --out release.json \
      --certificate cert.json --epsilon 1 --delta 1e-5 --key certifier.key
  unlearn verify --certificate cert.json --release release.json --public-key certifier.pub`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			changed := cmd.Flags().Changed
			for _, r := range []struct{ name, v string }{{"state", stateFile}, {"out", outFile}, {"certificate", certFile}} {
				if r.v == "" {
					return flagError(r.name, "required")
				}
			}
			for _, name := range []string{"epsilon", "delta"} {
				if !changed(name) {
					return flagError(name, "required")
				}
			}
			if err := new(paths).in("--state", stateFile).in("--stream", streamFile).in("--retained", retainedFile).in("--key", keyFile).
				out("--out", outFile).out("--certificate", certFile).check(); err != nil {
				return err
			}
			state, header, err := readSnapshot(stateFile)
			if err != nil {
				return err
			}
			spec := certify.Spec{Epsilon: epsilon, Delta: delta, Beta: beta, Header: &header, Toolkit: "unlearn " + version}
			var prefix []stream.Event
			if spec.Calibration, err = noise.ParseCalibration(calibration); err != nil {
				return flagError("calibration", "%q: want analytic or classic", calibration)
			}
			if spec.Memory, err = certify.ParseMemoryPolicy(memory); err != nil || spec.Memory == certify.Exact {
				return flagError("memory", "%q: want reset or rebuild (the un-noised memory is never released)", memory)
			}
			switch {
			case changed("alpha"):
				for _, name := range []string{"stream", "intervention"} {
					if changed(name) {
						return flagError(name, "give --alpha (assumed) or --stream (derived), not both")
					}
				}
				spec.Alpha = &certify.Given{Alpha: alpha, Method: alphaMethod}
			case changed("alpha-method"):
				return flagError("alpha-method", "only with --alpha")
			case streamFile != "":
				if intervention != "noop" {
					return flagError("intervention", "%q: certify releases a state trained on --stream (noop); other interventions are certified where the toolkit runs them — the model store (forget, then release) or certify.Wrap", intervention)
				}
				h, err := stream.ReadFile(streamFile)
				if err != nil {
					return err
				}
				prefix = h.Events
			case changed("intervention"):
				return flagError("intervention", "needs --stream (the ages of the deletions come from it)")
			}
			if spec.Memory == certify.Rebuild {
				if retainedFile == "" {
					return flagError("retained", "required with --memory rebuild")
				}
				n := retainedLast
				if !changed("retained-last") {
					n = state.Config().Memory
				}
				if n < 0 {
					return flagError("retained-last", "%d must be non-negative", n)
				}
				if spec.Retained, err = retainedEvents(retainedFile, state, n); err != nil {
					return err
				}
			} else if retainedFile != "" {
				return flagError("retained", "used only with --memory rebuild")
			}
			if changed("insecure-seeded") {
				spec.Sampler = noise.NewSeededSampler(seed, noise.SamplerOptions{})
			} else if d := state.Config().Dim; d >= 100_000 {
				fmt.Fprintf(cmd.ErrOrStderr(), "adding secure noise to %d coordinates (about 7 µs each on one core)…\n", d)
			}
			var key *sign.Secret
			if keyFile != "" {
				if key, err = sign.LoadSecret(keyFile); err != nil {
					return flagError("key", "%v", err)
				}
			}
			var rel *certify.Release
			var cert *certify.Certificate
			if prefix != nil {
				// The state must be the replay of the stream's first events:
				// then the ages and the no-op intervention are established.
				rel, cert, err = certify.CertifyTrained(state, prefix, spec)
			} else {
				spec.Deletions = len(state.Deleted())
				rel, cert, err = certify.Certify(state, spec)
			}
			if err != nil {
				var se *certify.SpecError
				if errors.As(err, &se) && se.Field == "Prefix" {
					return flagError("stream", "%v", se.Err)
				}
				return certifyFlagError(err)
			}
			if key != nil {
				if err := certify.Sign(cert, key); err != nil {
					return err
				}
			}
			relJSON, err := rel.Marshal()
			if err != nil {
				return err
			}
			certJSON, err := cert.MarshalIndent()
			if err != nil {
				return err
			}
			for _, f := range []struct {
				path string
				data []byte
			}{{outFile, relJSON}, {certFile, certJSON}} {
				if err := writeFileAtomic(f.path, f.data); err != nil {
					return err
				}
			}
			fmt.Fprint(cmd.OutOrStdout(), cert.Summary())
			printUtility(cmd.ErrOrStderr(), cert, rel)
			fmt.Fprintln(cmd.ErrOrStderr(), "note: every release spends privacy, and releases of one model compose (averaging them removes the noise): charge each to a budget ledger (unlearn budget --add)")
			fmt.Fprintf(cmd.ErrOrStderr(), "wrote %s and %s\n", outFile, certFile)
			return nil
		},
	}
	f := cmd.Flags()
	f.StringVar(&stateFile, "state", "", "unlearned state snapshot to release (required)")
	f.StringVarP(&outFile, "out", "o", "", "release to write (required)")
	f.StringVar(&certFile, "certificate", "", "certificate to write (required)")
	f.Float64Var(&epsilon, "epsilon", 0, "privacy parameter ε > 0 (required)")
	f.Float64Var(&delta, "delta", 0, "privacy parameter δ ∈ (0, 1) (required)")
	f.Float64Var(&beta, "beta", 0, "probability β ∈ [0, 1) that an assumed --alpha fails: the release is (ε, δ + β)")
	f.Float64Var(&alpha, "alpha", 0, "sensitivity α > 0 you supply: ASSUMED, the certificate says so")
	f.StringVar(&alphaMethod, "alpha-method", "", "how --alpha was obtained, recorded in the certificate")
	f.StringVar(&calibration, "calibration", "analytic", "noise calibration: analytic or classic (ε < 1)")
	f.StringVar(&memory, "memory", "reset", "memory released: reset (empty) or rebuild (from the noised w and retained data)")
	f.StringVar(&retainedFile, "retained", "", "stream file of retained data for --memory rebuild")
	f.IntVar(&retainedLast, "retained-last", 0, "replay the last N retained inserts of --retained (default: the state's τ)")
	f.StringVar(&streamFile, "stream", "", "the stream the state was trained on: α is derived from the deletions' ages in it")
	f.StringVar(&intervention, "intervention", "noop", "with --stream: noop (a trained state); other interventions are certified by the model store")
	f.StringVar(&keyFile, "key", "", "sign the certificate with this Ed25519 key (unlearn keygen)")
	f.Uint64Var(&seed, "insecure-seeded", 0, "use the SEEDED sampler with this seed: reproducible, for experiments only, NOT for deployment")
	return cmd
}

// builtinByName returns the built-in intervention certify derives α for.
func builtinByName(name string) (unlearn.Builtin, bool) {
	for _, op := range []unlearn.Operator{unlearn.NoOp(), unlearn.ParamOnly(), unlearn.PairDrop(), unlearn.MemoryReset(), unlearn.RetainFineTune(), unlearn.DropRefill()} {
		if op.Name() == name {
			b, _ := unlearn.BuiltinOf(op)
			return b, true
		}
	}
	return unlearn.Builtin{}, false
}

// printUtility prints what the noise costs: its expected norm σ·√d
// beside the radius W' of the learner's ball (half the certificate's
// diameter 2W'), which bounds ‖w‖ of every un-noised state. Both are
// public; the un-noised ‖w‖ is not (it is what the noise hides), and the
// released, noised ‖w‖ already contains the noise, so neither is compared.
// The warning fires when the expected noise is larger than any un-noised
// model can be.
func printUtility(w io.Writer, c *certify.Certificate, _ *certify.Release) {
	if c.Exact {
		return
	}
	nn := c.SigmaApplied * math.Sqrt(float64(c.Dim))
	rad := c.Sensitivity.Diameter / 2
	if rad <= 0 || math.IsInf(rad, 0) {
		fmt.Fprintf(w, "noise: expected ‖noise‖ = σ·√d ≈ %.4g\n", nn)
		return
	}
	fmt.Fprintf(w, "noise: expected ‖noise‖ = σ·√d ≈ %.4g; every un-noised model has ‖w‖ ≤ W' = %.4g (the learner's radius)\n", nn, rad)
	if b := c.Config.SampleBound; b > 0 {
		// What decides usefulness: the noise's effect on a score xᵀw is
		// xᵀn ~ N(0, σ²‖x‖²), and every accepted row has ‖x‖ ≤ B (with an
		// intercept, the payload (x, 1)).
		if c.Config.Intercept {
			b = math.Sqrt(b*b + 1)
		}
		sd := c.SigmaApplied * b
		fmt.Fprintf(w, "noise on a score: xᵀn ~ N(0, σ²‖x‖²) per row, sd(xᵀn) ≤ σ·B = %.4g and p99 |xᵀn| ≤ %.4g for every accepted row (‖x‖ ≤ B = %.4g); 'unlearn evaluate --release' reports sd(xᵀn) and p99 |xᵀn| over held-out rows beside the observed sd(xᵀw) and p99 |xᵀw|\n", sd, model.P99Factor*sd, b)
	}
	if nn >= rad {
		fmt.Fprintf(w, "WARNING: the expected noise norm is %.3g × the radius W' that bounds every un-noised model: the noise is larger than the model can be, so the release is likely of little use; see docs/theory.md on tightening α (a smaller radius, the pair guard, exact replay)\n", nn/rad)
	}
}

// certifyFlagError maps a certify.SpecError to the flag that set the field.
func certifyFlagError(err error) error {
	var se *certify.SpecError
	if !errors.As(err, &se) {
		return err
	}
	flag, ok := map[string]string{
		"Epsilon": "epsilon", "Delta": "delta", "Beta": "beta", "Calibration": "calibration",
		"Alpha.Alpha": "alpha", "Alpha": "alpha", "Memory": "memory", "Retained": "retained",
		"Sampler": "insecure-seeded", "Config.Radius": "state", "Deletion.Intervention": "intervention",
	}[se.Field]
	if !ok {
		return err
	}
	return usageError{fmt.Errorf("--%s: %w", flag, se.Err)}
}

// readSnapshot reads a state snapshot file.
func readSnapshot(path string) (*olbfgs.Learner, stream.Header, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, stream.Header{}, err
	}
	l, h, err := olbfgs.UnmarshalSnapshot(data)
	if err != nil {
		return nil, stream.Header{}, fmt.Errorf("%s: %w", path, err)
	}
	return l, h, nil
}

// retainedEvents returns the last n inserts of the stream file whose ids
// are not deleted (in the file or in the state), in stream order.
func retainedEvents(path string, state *olbfgs.Learner, n int) ([]stream.Event, error) {
	h, err := stream.ReadFile(path)
	if err != nil {
		return nil, err
	}
	if h.Header.D != state.Config().Dim || h.Header.Kind != state.Loss().Kind() {
		return nil, flagError("retained", "%s is a %s stream in d = %d; the state is %s in d = %d",
			path, h.Header.Kind, h.Header.D, state.Loss().Kind(), state.Config().Dim)
	}
	deleted := stream.DeletedIDs(h.Events)
	out := []stream.Event{}
	for i := len(h.Events) - 1; i >= 0 && len(out) < n; i-- {
		if e := h.Events[i]; e.Op == stream.Insert && !deleted.Has(e.ID) && !state.IsDeleted(e.ID) {
			out = append(out, e)
		}
	}
	slices.Reverse(out)
	return out, nil
}

// writeFileAtomic writes data to path atomically.
func writeFileAtomic(path string, data []byte) error {
	return writeAtomic(path, func(w io.Writer) error {
		_, err := w.Write(data)
		return err
	})
}
