package main

import (
	"fmt"
	"io"
	"os"
	"slices"

	"github.com/spf13/cobra"

	"unlearn/bound"
	"unlearn/certify"
	"unlearn/noise"
	"unlearn/olbfgs"
	"unlearn/stream"
)

func newCertifyCmd() *cobra.Command {
	b := boundFlags{
		agesHelp:    "; default: from --stream",
		horizonHelp: " (the state must be at t0 + horizon; usually 0)",
		stateHelp:   " (certify: default the state's)",
	}
	var (
		stateFile, outFile, certFile, publicFile string
		streamFile, actualFile, retainedFile     string
		epsilon, delta, beta, alpha              float64
		alphaSource, alphaMethod                 string
		calibration, memory, intervention        string
		retainedLast                             int
		seed                                     uint64
	)
	cmd := &cobra.Command{
		Use:   "certify --state FILE --out FILE --certificate FILE --epsilon E --delta D (--alpha A --alpha-source P | bound flags)",
		Short: "Add calibrated Gaussian noise to an unlearned state and write a certificate",
		Long: `certify releases an unlearned learner state with (ε, δ)-certified unlearning
(paper: Definition "(ε,δ)-State Certified Unlearning", Theorem "o-LBFGS
Unlearning Certificate"; SPEC §7; docs/theory.md §8–§9).

Input: a state snapshot (olbfgs-state/v1, e.g. from 'unlearn train' on a stream
whose delete events are the deletion request). Output: the released snapshot
(--out) and a JSON certificate (--certificate, format unlearn-certificate/v1).

The sensitivity α bounds ‖w̃ − w⁻‖₂, the distance of the state's parameters from
those of the deletion-edited counterfactual. Give it directly (--alpha, with
--alpha-source saying whether it is proved, estimated or assumed), or give the
bound's inputs as for 'unlearn bound' (--G, --hmin, --hmax, --constants-source,
--rho or --mu/--L, --memory-model …; η and τ default to the state's) with the
deletions' ages (--ages, or
--stream: the stream the state was trained on, from which the ages of the
state's deleted ids are computed). If the state comes from an intervention that
moved w, give --actual (the snapshot before the intervention): its shift
‖w̃ − w‖₂ is added to the bound's α. With --alpha every bound input, --stream
and --actual are rejected: a given α must already cover all of it.

Noise N(0, σ²I) is added to w only, as one Gaussian mechanism with σ computed
once (--calibration analytic, the default, or classic for ε < 1). Then the
memory policy (--memory):

  reset    (default) Z = ∅: the whole state (w, Z) is covered;
  rebuild  Z is rebuilt by replaying retained inserts (--retained FILE: the last
           --retained-last inserts of that stream whose ids are not deleted)
           from the noised w, which is kept: the whole state is covered;
  keep     Z unchanged: ONLY the parameters are covered, and the certificate
           says so.

A bound that fails with probability β (--beta) gives (ε, δ + β). Noise comes from
the secure sampler of the Google DP library (about 7 µs per coordinate, one
core). --insecure-seeded SEED uses a reproducible sampler instead, for
experiments only: the certificate then says "seeded" and NOT for deployment.

The certificate records the SHA-256 of the state before the noise; anyone who can
enumerate candidate states could test them against it, so publish only the
redacted copy (--public-certificate). Check a certificate with 'unlearn verify'.`,
		Example: `  # a stream whose delete events (lines such as {"op":"delete","id":42}) are the
  # deletion request, trained, then certified with a given α
  unlearn train --stream q.jsonl --out state.json
  unlearn certify --state state.json --out released.json --certificate cert.json \
      --epsilon 1 --delta 1e-5 --alpha 0.3 --alpha-source estimated

  # α from a proved bound; ages from the stream; memory rebuilt from retained data
  unlearn certify --state state.json --out released.json --certificate cert.json \
      --epsilon 1 --delta 1e-5 --stream q.jsonl --G 2 --hmin 0.25 --hmax 1 \
      --eta 0.2 --constants-source proved --mu 1 --L 4 --commuting \
      --memory rebuild --retained q.jsonl --public-certificate cert.public.json

  unlearn verify --certificate cert.json --before state.json --after released.json`,
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
			state, header, err := readSnapshot(stateFile)
			if err != nil {
				return err
			}
			spec := certify.Spec{Epsilon: epsilon, Delta: delta, Beta: beta, Header: &header, Intervention: intervention,
				Toolkit: "unlearn " + version}
			if spec.Calibration, err = noise.ParseCalibration(calibration); err != nil {
				return flagError("calibration", "%q: want analytic or classic", calibration)
			}
			if spec.Memory, err = certify.ParseMemoryPolicy(memory); err != nil {
				return flagError("memory", "%q: want reset, rebuild or keep", memory)
			}
			if changed("alpha") {
				for _, name := range append(boundFlagNames(), "stream", "actual") {
					if changed(name) {
						return flagError(name, "give --alpha or the bound's inputs, not both")
					}
				}
				p, err := bound.ParseProvenance(alphaSource)
				if err != nil {
					return flagError("alpha-source", "%q: want proved, estimated or assumed (required with --alpha)", alphaSource)
				}
				spec.Alpha = &certify.Given{Alpha: alpha, Provenance: p, Method: alphaMethod}
				spec.Deletions = len(state.Deleted())
			} else {
				for _, name := range []string{"alpha-source", "alpha-method"} {
					if changed(name) {
						return flagError(name, "only with --alpha")
					}
				}
				// η and τ are the state's learner's unless given.
				if !changed("eta") {
					b.eta = state.Config().StepSize
				}
				if !changed("tau") && state.Config().Memory >= 1 {
					b.tau = state.Config().Memory
				}
				s, err := b.scenario(changed)
				if err != nil {
					return err
				}
				if !changed("ages") {
					if streamFile == "" {
						return flagError("ages", "required: give --ages, or --stream to compute them")
					}
					if s.Ages, err = agesFromStream(streamFile, state); err != nil {
						return err
					}
				}
				spec.Scenario = &s
				if actualFile != "" {
					actual, _, err := readSnapshot(actualFile)
					if err != nil {
						return err
					}
					if actual.Config().Dim != state.Config().Dim {
						return flagError("actual", "d = %d, the state has d = %d", actual.Config().Dim, state.Config().Dim)
					}
					spec.Shift = certify.ShiftOf(actual, state)
				}
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
			out, cert, err := certify.Certify(state, spec)
			if err != nil {
				return specFlagError(err)
			}
			snap, err := olbfgs.MarshalSnapshot(out, header)
			if err != nil {
				return err
			}
			certJSON, err := cert.MarshalIndent()
			if err != nil {
				return err
			}
			var pubJSON []byte
			if publicFile != "" {
				pub, err := cert.Public()
				if err != nil {
					return err
				}
				if pubJSON, err = pub.MarshalIndent(); err != nil {
					return err
				}
			}
			for _, f := range []struct {
				path string
				data []byte
			}{{outFile, snap}, {certFile, certJSON}, {publicFile, pubJSON}} {
				if f.path == "" {
					continue
				}
				if err := writeFileAtomic(f.path, f.data); err != nil {
					return err
				}
			}
			w := cmd.OutOrStdout()
			fmt.Fprint(w, cert.Summary())
			fmt.Fprintf(w, "wrote %s and %s", outFile, certFile)
			if publicFile != "" {
				fmt.Fprintf(w, " (public copy %s)", publicFile)
			}
			fmt.Fprintln(w)
			return nil
		},
	}
	f := cmd.Flags()
	f.StringVar(&stateFile, "state", "", "unlearned state snapshot to certify (required)")
	f.StringVarP(&outFile, "out", "o", "", "released (noised) state snapshot to write (required)")
	f.StringVar(&certFile, "certificate", "", "certificate to write (required)")
	f.StringVar(&publicFile, "public-certificate", "", "also write a redacted copy for publication (no before-state hash)")
	f.Float64Var(&epsilon, "epsilon", 0, "privacy parameter ε > 0 (required)")
	f.Float64Var(&delta, "delta", 0, "privacy parameter δ ∈ (0, 1) (required)")
	f.Float64Var(&beta, "beta", 0, "probability β ∈ [0, 1) that the bound fails: the release is (ε, δ + β)")
	f.Float64Var(&alpha, "alpha", 0, "sensitivity α ≥ 0, given directly (instead of the bound flags)")
	f.StringVar(&alphaSource, "alpha-source", "", "provenance of --alpha: proved, estimated or assumed")
	f.StringVar(&alphaMethod, "alpha-method", "", "how --alpha was obtained, recorded in the certificate")
	f.StringVar(&calibration, "calibration", "analytic", "noise calibration: analytic or classic (ε < 1)")
	f.StringVar(&memory, "memory", "reset", "memory policy: reset, rebuild or keep")
	f.StringVar(&retainedFile, "retained", "", "stream file of retained data for --memory rebuild")
	f.IntVar(&retainedLast, "retained-last", 0, "replay the last N retained inserts of --retained (default: the state's τ)")
	f.StringVar(&streamFile, "stream", "", "the stream the state was trained on: computes --ages for the state's deleted ids")
	f.StringVar(&actualFile, "actual", "", "snapshot of the learner before the intervention: adds its shift ‖w̃ − w‖₂ to the bound")
	f.StringVar(&intervention, "intervention", "", "name of the intervention that produced the state, recorded in the certificate")
	f.Uint64Var(&seed, "insecure-seeded", 0, "use the SEEDED sampler with this seed: reproducible, for experiments only, NOT for deployment")
	b.register(f)
	return cmd
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

// agesFromStream returns the ages of the state's deleted ids in the first
// state.T() events of the stream file.
func agesFromStream(path string, state *olbfgs.Learner) ([]int, error) {
	h, err := stream.ReadFile(path)
	if err != nil {
		return nil, err
	}
	if len(h.Events) < state.T() {
		return nil, flagError("stream", "%s has %d events, the state has applied %d", path, len(h.Events), state.T())
	}
	u := stream.NewIDSet(state.Deleted()...)
	prefix := h.Events[:state.T()]
	ages := certify.AgesOf(prefix, u)
	if len(ages) != len(u) {
		return nil, flagError("stream", "%s does not insert every deleted id of the state in its first %d events", path, state.T())
	}
	return ages, nil
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
