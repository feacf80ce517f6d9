package main

import (
	"errors"
	"fmt"
	"math"

	"github.com/spf13/cobra"
	"gonum.org/v1/gonum/floats"

	"unlearn/olbfgs"
	"unlearn/stream"
)

func newTrainCmd() *cobra.Command {
	var (
		in, out      string
		tau, upTo    int
		eta, gamma0  float64
		curvatureTol float64
	)
	var certifiable certifiableFlags
	cmd := &cobra.Command{
		Use:   "train --stream FILE --out FILE",
		Short: "Replay a stream file through the o-LBFGS learner and save the state",
		Long: `train replays the events of a stream file (deletions included: a delete
records the id as deleted and changes neither w nor Z, spec §2) from θ0 and
writes the learner's full state — parameters, curvature memory with the source
ids of every pair, deleted ids, configuration and stream header — as a
versioned JSON snapshot (olbfgs-state/v1).`,
		Example: `  unlearn gen --out q.jsonl && unlearn train --stream q.jsonl --out state.json`,
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if in == "" {
				return flagError("stream", "required")
			}
			if out == "" {
				return flagError("out", "required")
			}
			// As run and decay: τ ≥ 1 and η > 0, never 0 for "default".
			if tau < 1 {
				return flagError("tau", "%d must be at least 1", tau)
			}
			if !(eta > 0) || math.IsInf(eta, 0) {
				return flagError("eta", "%v must be positive and finite", eta)
			}
			h, err := stream.ReadFile(in)
			if err != nil {
				return err
			}
			events := h.Events
			if upTo < 0 || upTo > len(events) {
				return flagError("events", "%d outside [0, %d] (the stream has %d events)", upTo, len(events), len(events))
			}
			if upTo > 0 {
				events = events[:upTo]
			}
			cfg := olbfgs.Config{Dim: h.Header.D, Memory: tau, StepSize: eta, InitialScale: gamma0, CurvatureTol: curvatureTol}
			certifiable.apply(&cfg)
			if err := cfg.Validate(); err != nil {
				var ce *olbfgs.ConfigError
				if errors.As(err, &ce) && ce.Field == "Dim" {
					return fmt.Errorf("%s: header field \"d\": %w", in, err)
				}
				return configFlagError(err)
			}
			l, err := olbfgs.Replay(cfg, h.Loss, events)
			if err != nil {
				return fmt.Errorf("%s: %w", in, err)
			}
			snap, err := olbfgs.MarshalSnapshot(l, h.Header)
			if err != nil {
				return err
			}
			if err := writeFileAtomic(out, snap); err != nil {
				return err
			}
			fmt.Fprintf(cmd.ErrOrStderr(), "wrote %s\n", out)
			fmt.Fprintf(cmd.OutOrStdout(), "events %d, pairs %d/%d, skipped %d, deleted %d, ‖w‖ = %.4g\n",
				l.T(), l.Memory().Len(), cfg.Memory, l.Skipped(), len(l.Deleted()), floats.Norm(l.W(), 2))
			return nil
		},
	}
	f := cmd.Flags()
	f.StringVar(&in, "stream", "", "input stream file (required)")
	f.StringVarP(&out, "out", "o", "", "output state snapshot (required)")
	f.IntVar(&tau, "tau", olbfgs.DefaultMemory, "memory size τ (number of curvature pairs)")
	f.Float64Var(&eta, "eta", olbfgs.DefaultStepSize, "step size η")
	f.Float64Var(&gamma0, "gamma0", olbfgs.DefaultInitialScale, "initial inverse-Hessian scale γ0 (empty memory)")
	f.Float64Var(&curvatureTol, "curvature-tol", olbfgs.DefaultCurvatureTol, "relative curvature guard: store a pair only if sᵀy > tol·‖s‖‖y‖")
	f.IntVar(&upTo, "events", 0, "replay only the first N events (0: all)")
	certifiable.register(f)
	return cmd
}
