package main

import (
	"fmt"
	"os"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	"gonum.org/v1/gonum/floats"

	"unlearn/certify"
	"unlearn/dataset"
	"unlearn/olbfgs"
	"unlearn/store"
	"unlearn/stream"
)

func init() { register(newEvaluateCmd) }

func newEvaluateCmd() *cobra.Command {
	var dir, data, in, stateFile string
	var operatorOnly bool
	var releaseFiles []string
	var df dataFlags
	cmd := &cobra.Command{
		Use:   "evaluate (--store DIR | --state FILE) [--release FILE] (--data FILE | --stream FILE)",
		Short: "Held-out loss (and accuracy for logistic) of a store's state and its exact counterfactual, a snapshot, or a release",
		Long: `evaluate reports the mean loss on the inserts of a held-out stream file (read
one line at a time) and, for a logistic loss, the accuracy (sign(wᵀx) = y).
The loss is the stream's per-sample loss ℓ_z(w) of docs/spec.md §1 (for logistic
and regression the ridge term (λ/2)‖w‖² included), averaged over the held-out inserts.

With --store it evaluates the current state and the exact counterfactual (the
replay of the log without every forgotten sample): they are the same state
unless an approximate forget is pending. The state of a pending approximate
request is its noised, certified release continued on retained data, so its
figures depend on the deleted samples only through that release; the line
says so. A store with an approximate request from before schema 6 keeps
the deleted samples' influence un-noised: its loss and ‖w‖ depend on
deleted data, and evaluate refuses unless --operator-only (output for the
operator, never to publish; 'unlearn forget --resolve' removes the
influence). Like every output of the store's state, the table is for the
operator: publish only certified releases. With
--state it evaluates a snapshot (from 'unlearn train' or 'unlearn export').
--release FILE (repeatable) adds a release (from 'unlearn release' or 'unlearn
certify'): what its noise costs beside the other models. The data's header must
have the model's kind and d; hold out the tail of the same stream (a generated
stream with another seed has another true model).

--data FILE is a held-out data set (CSV, LIBSVM or IDX) read as "unlearn
convert" reads it, with the same flags (--label, --id, --classes, …), one row
at a time; --kind and a LIBSVM file's d are the model's unless given. A file
given to --data that starts like a stream file (a JSON header line) is read as
a stream, as --stream FILE reads it, unless --format is given: invocations
from before --data read data sets keep working.`,
		Example: `  unlearn evaluate --store model --data heldout.jsonl
  unlearn evaluate --store model --data heldout.csv --label clicked --id user
  unlearn evaluate --store model --release release.json --data heldout.jsonl`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			switch {
			case data == "" && in == "":
				return flagError("data", "required (a data set, or a stream file; or --stream FILE)")
			case data != "" && in != "":
				return flagError("data", "give either --data or --stream, not both")
			}
			src := heldOut{path: in, flag: "stream"}
			if data != "" {
				src = heldOut{path: data, flag: "data"}
				isStream, err := looksLikeStream(data)
				if err != nil {
					return flagError("data", "%v", err)
				}
				if cmd.Flags().Changed("format") || !isStream {
					src.df = &df
				}
			}
			if src.df == nil {
				if err := onlyWithData(cmd.Flags()); err != nil {
					return err
				}
				if err := notADataFile("--"+src.flag, src.path); err != nil {
					return err
				}
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
				label, err := currentLabel(cmd, s, operatorOnly)
				if err != nil {
					return err
				}
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
				models = append(models, model{label, cur})
				if !cf.Equal(cur) {
					models = append(models, model{"exact counterfactual", cf})
				} else {
					models = append(models, model{"exact counterfactual (= current)", cur})
				}
			case len(releaseFiles) == 0:
				return flagError("store", "give --store, --state or --release")
			}
			// The table is printed whole once every model is evaluated, so a
			// data error is not preceded by a header.
			var out strings.Builder
			fmt.Fprintf(&out, "%-34s %8s %12s %10s %10s\n", "model", "n", "loss", "accuracy", "‖w‖")
			for _, m := range models {
				ev, err := src.evaluate(cmd.Flags(), m.l)
				if err != nil {
					return err
				}
				acc := "-"
				if ev.HasAccuracy {
					acc = fmt.Sprintf("%.4f", ev.Accuracy)
				}
				fmt.Fprintf(&out, "%-34s %8d %12.6g %10s %10.4g\n", m.name, ev.N, ev.Loss, acc, floats.Norm(m.l.W(), 2))
			}
			_, err := fmt.Fprint(cmd.OutOrStdout(), out.String())
			return err
		},
	}
	f := cmd.Flags()
	f.StringVar(&dir, "store", "", "store directory")
	f.StringVar(&stateFile, "state", "", "state snapshot to evaluate instead of a store")
	f.StringArrayVar(&releaseFiles, "release", nil, "a release file (unlearn release, unlearn certify) to evaluate too; repeatable")
	f.StringVar(&data, "data", "", "held-out data set (CSV, LIBSVM or IDX; the data flags say how to read it) or stream file (this or --stream is required)")
	f.StringVar(&in, "stream", "", "held-out stream file (JSON Lines, spec §1.1)")
	f.BoolVar(&operatorOnly, "operator-only", false, "with --store: print the figures of a state that holds deleted samples' influence un-noised (an approximate request from before schema 6 is pending), for the operator alone")
	df.keys = "string ids are mapped to row numbers; no mapping is written"
	df.lossFrom = "the model's"
	df.add(f, 0)
	return cmd
}

// heldOut is evaluate's held-out file: a stream file (df nil) or a data
// set read with the data flags df.
type heldOut struct {
	path, flag string
	df         *dataFlags
}

// evaluate evaluates l on the held-out file, read once per model.
func (h heldOut) evaluate(fl *pflag.FlagSet, l *olbfgs.Learner) (store.Evaluation, error) {
	if h.df == nil {
		return evaluateFile(l, h.flag, h.path)
	}
	opts, err := h.df.options(fl)
	if err != nil {
		return store.Evaluation{}, err
	}
	// The model fixes the loss kind and d; flags given explicitly are
	// checked against it below. λ does not enter a held-out evaluation
	// (the model's loss is used), so the data's is the model's too.
	lambda := dataset.DefaultLambda
	if mh, err := stream.HeaderOf(l.Loss()); err == nil {
		lambda = mh.Lambda
	}
	lossFromModel(fl, &opts, h.path, l.Loss().Kind(), l.Config().Dim, lambda)
	hdr, r, err := openData(h.path, opts)
	if err != nil {
		return store.Evaluation{}, err
	}
	defer r.Close()
	if hdr.Kind != l.Loss().Kind() {
		if !fl.Changed("kind") {
			return store.Evaluation{}, flagError("data", "%s: a data file gives a logistic or regression loss, but the model's loss is %s: evaluate it on a stream file (--stream)", h.path, l.Loss().Kind())
		}
		return store.Evaluation{}, flagError("kind", "%s, but the model's loss is %s", hdr.Kind, l.Loss().Kind())
	}
	if fl.Changed("lambda") && hdr.Lambda != lambda {
		return store.Evaluation{}, flagError("lambda", "%v, but the model's λ is %v", hdr.Lambda, lambda)
	}
	if hdr.D != l.Config().Dim {
		return store.Evaluation{}, fmt.Errorf("--data %s: d = %d (the file's features), but the model's d is %d", h.path, hdr.D, l.Config().Dim)
	}
	ev, err := store.Evaluate(l, r)
	if err != nil {
		return ev, dataError(err)
	}
	return ev, nil
}

// evaluateFile evaluates l on the stream file name.
// flag names the flag that gave it (--data or --stream).
func evaluateFile(l *olbfgs.Learner, flag, name string) (store.Evaluation, error) {
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
		return store.Evaluation{}, flagError(flag, "%s has a %s loss with d = %d, the model a %s loss with d = %d", name, h.Kind, h.D, l.Loss().Kind(), l.Config().Dim)
	}
	ev, err := store.Evaluate(l, rd)
	if err != nil {
		return ev, fmt.Errorf("%s: %w", name, err)
	}
	return ev, nil
}

// currentLabel is the name of the store's current state in evaluate's
// table. A state that holds deleted samples' influence un-noised (an
// approximate request from before schema 6) is refused unless
// operatorOnly, and then labelled and announced as operator-only output.
func currentLabel(cmd *cobra.Command, s *store.Store, operatorOnly bool) (string, error) {
	st, err := s.Status()
	if err != nil {
		return "", err
	}
	label := "current state"
	for _, r := range st.Pending {
		if !r.Noised {
			if !operatorOnly {
				return "", flagError("store", "approximate request %d (served before schema 6) is pending: the state holds the deleted samples' influence un-noised, so its loss and ‖w‖ depend on deleted data; resolve it ('unlearn forget --store %s --resolve') or pass --operator-only to print them for the operator alone", r.Request, s.Dir())
			}
			fmt.Fprintf(cmd.ErrOrStderr(), "OPERATOR ONLY: the current state holds deleted samples' influence un-noised (request %d); its loss, accuracy and ‖w‖ depend on deleted data: never publish them\n", r.Request)
			return "current state (OPERATOR ONLY)", nil
		}
		label = "current state (noised)"
	}
	if label != "current state" {
		fmt.Fprintln(cmd.ErrOrStderr(), "the current state is the noised release of a pending approximate request continued on retained data: its figures depend on the deleted samples only through that certified release")
	}
	return label, nil
}
