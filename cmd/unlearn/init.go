package main

import (
	"errors"
	"fmt"
	"os"

	"github.com/spf13/cobra"

	"unlearn/olbfgs"
	"unlearn/store"
	"unlearn/stream"
)

func init() { register(newInitCmd) }

func newInitCmd() *cobra.Command {
	var (
		dir, kind, headerFile string
		d, tau, every         int
		lambda, eta, gamma0   float64
		curvatureTol          float64
	)
	cmd := &cobra.Command{
		Use:   "init --store DIR (--header FILE | --kind logistic --d N) [--tau --eta --gamma0 --checkpoint-every K]",
		Short: "Create a model store: a live learner's log, checkpoints and state on disk",
		Long: `init creates a model store in DIR: one SQLite database (DIR/store.db) that will
hold the learner's event log, a checkpoint of the full state every K events, the
current state and the record of deletion requests (docs/deployment.md).

The loss comes from the header of a stream file (--header FILE: its first line
is read; kind, d and the loss constants) or, for a logistic loss, from --kind
logistic --d N --lambda L. A quadratic loss needs --header (H0 and H1 are d×d
matrices). Every stream ingested later must have the same kind, d and constants.

The checkpoint interval K trades storage (one full state every K events) against
the cost of an exact forget (a replay of up to K events after the checkpoint
before the oldest deleted sample, plus everything after it).`,
		Example: `  unlearn gen --kind logistic --events 10000 --out l.jsonl
  unlearn init --store model --header l.jsonl --tau 10 --checkpoint-every 1000`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if dir == "" {
				return flagError("store", "required")
			}
			var h stream.Header
			switch {
			case headerFile != "":
				f, err := os.Open(headerFile)
				if err != nil {
					return err
				}
				rd, err := stream.NewReader(f)
				f.Close()
				if err != nil {
					return fmt.Errorf("%s: %w", headerFile, err)
				}
				h = rd.Header()
				if kind != "" && stream.Kind(kind) != h.Kind {
					return flagError("kind", "%q, but the header of %s says %q", kind, headerFile, h.Kind)
				}
			case kind == string(stream.KindLogistic):
				if d < 1 {
					return flagError("d", "%d: must be at least 1 (required with --kind logistic and no --header)", d)
				}
				h = stream.Header{Format: stream.FormatV1, Kind: stream.KindLogistic, D: d, Lambda: lambda}
				if _, err := h.Loss(); err != nil {
					return flagError("lambda", "%v", err)
				}
			case kind == string(stream.KindQuadratic):
				return flagError("header", "required for --kind quadratic: H0 and H1 come from a stream file's header")
			case kind == "":
				return flagError("header", "required (or --kind logistic --d N)")
			default:
				return flagError("kind", "%q: want quadratic or logistic", kind)
			}
			if every < 1 {
				return flagError("checkpoint-every", "%d: must be at least 1", every)
			}
			cfg := olbfgs.Config{Dim: h.D, Memory: tau, StepSize: eta, InitialScale: gamma0, CurvatureTol: curvatureTol}
			if err := cfg.Validate(); err != nil {
				return configFlagError(err)
			}
			s, err := store.Create(dir, store.Config{Header: h, Learner: cfg, CheckpointEvery: every})
			if err != nil {
				if errors.Is(err, store.ErrExists) {
					return flagError("store", "%v", err)
				}
				return err
			}
			defer s.Close()
			fmt.Fprintf(cmd.OutOrStdout(), "store %s: %s loss, d = %d, τ = %d, η = %.4g, γ0 = %.4g, checkpoint every %d events\n",
				dir, h.Kind, h.D, tau, eta, gamma0, every)
			fmt.Fprintf(cmd.ErrOrStderr(), "wrote %s\n", dir)
			return nil
		},
	}
	f := cmd.Flags()
	f.StringVar(&dir, "store", "", "store directory to create (required)")
	f.StringVar(&headerFile, "header", "", "stream file whose header defines the loss")
	f.StringVar(&kind, "kind", "", "loss kind: logistic (with --d, --lambda) or quadratic (needs --header)")
	f.IntVar(&d, "d", 0, "dimension d (--kind logistic without --header)")
	f.Float64Var(&lambda, "lambda", 0.05, "ridge λ (--kind logistic without --header)")
	f.IntVar(&tau, "tau", olbfgs.DefaultMemory, "memory size τ (number of curvature pairs)")
	f.Float64Var(&eta, "eta", olbfgs.DefaultStepSize, "step size η")
	f.Float64Var(&gamma0, "gamma0", olbfgs.DefaultInitialScale, "initial inverse-Hessian scale γ0 (empty memory)")
	f.Float64Var(&curvatureTol, "curvature-tol", olbfgs.DefaultCurvatureTol, "relative curvature guard: store a pair only if sᵀy > tol·‖s‖‖y‖")
	f.IntVar(&every, "checkpoint-every", store.DefaultCheckpointEvery, "checkpoint interval K in events")
	return cmd
}

// openStore opens the store named by --store.
func openStore(dir string) (*store.Store, error) {
	if dir == "" {
		return nil, flagError("store", "required")
	}
	s, err := store.Open(dir)
	if errors.Is(err, store.ErrNotStore) {
		return nil, flagError("store", "%v", err)
	}
	return s, err
}
