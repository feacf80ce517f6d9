package main

import (
	"fmt"
	"os"

	"github.com/spf13/cobra"
	"gonum.org/v1/gonum/floats"

	"unlearn/certify"
	"unlearn/olbfgs"
	"unlearn/store"
	"unlearn/stream"
)

func init() { register(newEvaluateCmd) }

func newEvaluateCmd() *cobra.Command {
	var dir, data, stateFile string
	var releaseFiles []string
	cmd := &cobra.Command{
		Use:   "evaluate (--store DIR | --state FILE) [--release FILE] --data FILE",
		Short: "Held-out loss (and accuracy for logistic) of a store's state and its exact counterfactual, a snapshot, or a release",
		Long: `evaluate reports the mean loss on the inserts of a held-out stream file (read
one line at a time) and, for a logistic loss, the accuracy (sign(wᵀx) = y).

With --store it evaluates the current state and the exact counterfactual (the
replay of the log without every forgotten sample): they are the same state
unless an approximate forget left forgotten samples' influence in it. With
--state it evaluates a snapshot (from 'unlearn train' or 'unlearn export').
--release FILE (repeatable) adds a release (from 'unlearn release' or 'unlearn
certify'): what its noise costs beside the other models. The data's header must
have the model's kind and d; hold out the tail of the same stream (a generated
stream with another seed has another true model).`,
		Example: `  unlearn evaluate --store model --data heldout.jsonl
  unlearn evaluate --store model --release release.json --data heldout.jsonl`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if data == "" {
				return flagError("data", "required")
			}
			type model struct {
				name string
				l    *olbfgs.Learner
			}
			var models []model
			// A release (unlearn release, unlearn certify) is evaluated beside
			// whatever else is given: what the noise costs in loss and accuracy.
			for _, rf := range releaseFiles {
				b, err := os.ReadFile(rf)
				if err != nil {
					return err
				}
				r, err := certify.ParseRelease(b)
				if err != nil {
					return flagError("release", "%s: %v", rf, err)
				}
				l, err := r.Learner()
				if err != nil {
					return flagError("release", "%s: %v", rf, err)
				}
				models = append(models, model{"release " + rf, l})
			}
			switch {
			case dir != "" && stateFile != "":
				return flagError("state", "give --store or --state, not both")
			case stateFile != "":
				l, _, err := readSnapshot(stateFile)
				if err != nil {
					return err
				}
				models = append(models, model{stateFile, l})
			case dir != "":
				s, err := openStore(dir)
				if err != nil {
					return err
				}
				defer s.Close()
				cur, err := s.State()
				if err != nil {
					return err
				}
				// Each read is one snapshot of the store; the label "= current"
				// comes from comparing the two states, not from a third read
				// (a forget by another process in between would make it wrong).
				cf, err := s.Counterfactual()
				if err != nil {
					return err
				}
				models = append(models, model{"current state", cur})
				if !cf.Equal(cur) {
					models = append(models, model{"exact counterfactual", cf})
				} else {
					models = append(models, model{"exact counterfactual (= current)", cur})
				}
			case len(releaseFiles) == 0:
				return flagError("store", "give --store, --state or --release")
			}
			out := cmd.OutOrStdout()
			fmt.Fprintf(out, "%-34s %8s %12s %10s %10s\n", "model", "n", "loss", "accuracy", "‖w‖")
			for _, m := range models {
				ev, err := evaluateFile(m.l, data)
				if err != nil {
					return err
				}
				acc := "-"
				if ev.HasAccuracy {
					acc = fmt.Sprintf("%.4f", ev.Accuracy)
				}
				fmt.Fprintf(out, "%-34s %8d %12.6g %10s %10.4g\n", m.name, ev.N, ev.Loss, acc, floats.Norm(m.l.W(), 2))
			}
			return nil
		},
	}
	f := cmd.Flags()
	f.StringVar(&dir, "store", "", "store directory")
	f.StringVar(&stateFile, "state", "", "state snapshot to evaluate instead of a store")
	f.StringArrayVar(&releaseFiles, "release", nil, "a release file (unlearn release, unlearn certify) to evaluate too; repeatable")
	f.StringVar(&data, "data", "", "held-out stream file (required)")
	return cmd
}

// evaluateFile evaluates l on the stream file name.
func evaluateFile(l *olbfgs.Learner, name string) (store.Evaluation, error) {
	f, err := os.Open(name)
	if err != nil {
		return store.Evaluation{}, err
	}
	defer f.Close()
	rd, err := stream.NewReader(f)
	if err != nil {
		return store.Evaluation{}, fmt.Errorf("%s: %w", name, err)
	}
	if h := rd.Header(); h.Kind != l.Loss().Kind() || h.D != l.Config().Dim {
		return store.Evaluation{}, flagError("data", "%s has a %s loss with d = %d, the model a %s loss with d = %d", name, h.Kind, h.D, l.Loss().Kind(), l.Config().Dim)
	}
	ev, err := store.Evaluate(l, rd)
	if err != nil {
		return ev, fmt.Errorf("%s: %w", name, err)
	}
	return ev, nil
}
