package main

import (
	"encoding/json"
	"fmt"
	"io"
	"math"
	"os"
	"strconv"
	"strings"

	"github.com/spf13/cobra"
	"gonum.org/v1/gonum/floats"

	"unlearn/dataset"
	"unlearn/model"
	"unlearn/store"
	"unlearn/stream"
)

func init() { register(newEvaluateCmd) }

func newEvaluateCmd() *cobra.Command {
	var dir, data, in, stateFile string
	var operatorOnly bool
	var releaseFiles []string
	var df dataFlags
	var asJSON, force bool
	var trust releaseTrust
	cmd := &cobra.Command{
		Use:   "evaluate (--store DIR | --state FILE) [--release FILE (--certificate FILE --public-key NAME.pub | --unverified)] (--data FILE | --stream FILE)",
		Short: "Held-out loss, accuracy, log loss, AUC and confusion matrix of a store's state and its exact counterfactual, a snapshot, or a release",
		Long: `evaluate reports the mean loss on the inserts of a held-out stream file (read
one line at a time) and, for a classifier, the accuracy (logistic: the sign of
the score is y; multinomial: the class of the largest score is y).
The loss is the stream's per-sample loss ℓ_z(w) of docs/spec.md §1 (for logistic
and regression the ridge term (λ/2)‖w‖² included), averaged over the held-out inserts.
A classifier's table adds the log loss (the mean −log p of the row's class,
without the ridge term) and the ROC AUC (exact, ties counting one half), then
each model's confusion matrix (rows: the true class, columns: the predicted one)
with each class's recall, in the data's own class names (K classes for a
multinomial model); a regression's adds the RMSE. ‖w‖ is the norm of the
parameters each model predicts with: the average of the iterates for a learner
that averages (--average, the practitioner's profile), else the last iterate,
intercepts included. A second table gives, for every model, the observed
spread of its scores xᵀw over the held-out rows (standard deviation, 99th
percentile of |xᵀw|) and, for a noised release evaluated with its
certificate, the spread of the noise's effect xᵀn on a score that the
certificate's σ implies — per row N(0, σ²‖x‖²), summarized over the rows;
implied, not observed: the noise is available to no one. --json writes the
same as one JSON document (unlearn-evaluation/v1, docs/schemas). The accuracy is that of 'unlearn predict's labels.

Warnings, on standard error and in each model's "warnings" of the JSON, for
every profile and kind of model: a classifier that predicts one class for
every held-out row (the class, and the recall of the others: its accuracy is
the share of that class), and a noised release whose noise dominates its
scores (sd(xᵀn) above the model's own spread, estimated as
√(sd(xᵀ(w+n))² − sd(xᵀn)²)).

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
certify'): what its noise costs beside the other models. A release is
used only once it verifies as 'unlearn verify' checks it: give its
--certificate (one per --release, in order) and the certifier's --public-key;
--unverified uses it unchecked and says so on standard error. The data's header must
have the model's kind and d; hold out the tail of the same stream (a generated
stream with another seed has another true model).

--data FILE is a held-out data set (CSV, LIBSVM or IDX) read as "unlearn
convert" reads it, with the same flags (--label, --id, --classes, …), one row
at a time; --kind and a LIBSVM file's d are the model's unless given, and so
is every reading option the model's data contract records (the CSV's label, id
and excluded columns, the classes, the IDX scale). Data that does not fit the
contract (CSV feature columns swapped, renamed, missing or extra, another
format, other classes or their order, another image scale) is refused, naming
the field; --force-features takes the features by position. A file
given to --data that starts like a stream file (a JSON header line) is read as
a stream, as --stream FILE reads it, unless --format is given: invocations
from before --data read data sets keep working.`,
		Example: `  unlearn evaluate --store model --data heldout.jsonl
  unlearn evaluate --store model --data heldout.csv --json
  unlearn evaluate --store model --release release.json --certificate cert.json --public-key certifier.pub --data heldout.jsonl`,
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
			if err := trust.check(cmd.Flags(), releaseFiles); err != nil {
				return err
			}
			var models []namedModel
			// A release (unlearn release, unlearn certify) is evaluated beside
			// whatever else is given: what the noise costs in loss and accuracy.
			for i, rf := range releaseFiles {
				m, err := releaseModel(rf, &trust, i, cmd.ErrOrStderr())
				if err != nil {
					return err
				}
				models = append(models, m)
			}
			switch {
			case dir != "" && stateFile != "":
				return flagError("state", "give --store or --state, not both")
			case stateFile != "":
				m, err := snapshotModel(stateFile)
				if err != nil {
					return err
				}
				models = append(models, m)
			case dir != "":
				ms, err := storeModels(dir, true, func(s *store.Store) (string, error) { return currentLabel(cmd, s, operatorOnly) })
				if err != nil {
					return err
				}
				models = append(models, ms...)
			case len(releaseFiles) == 0:
				return flagError("store", "give --store, --state or --release")
			}
			// The output is written whole once every model is evaluated, so a
			// data error is not preceded by a header.
			rep := model.Report{Format: model.ReportFormat, Data: src.path}
			for _, m := range models {
				ev, err := src.evaluate(cmd, m, force)
				if err != nil {
					return err
				}
				mr := model.ModelReport{Model: m.name, NormW: floats.Norm(m.l.Deployed(), 2), Evaluation: *ev}
				if m.sigma > 0 {
					noise := ev.NoiseOnScores(m.sigma)
					mr.Sigma, mr.NoiseOnScores = m.sigma, &noise
				}
				mr.Warnings = evaluationWarnings(m.name, &mr)
				for _, w := range mr.Warnings {
					if !m.same { // the previous model's, bit for bit: said once
						fmt.Fprintf(cmd.ErrOrStderr(), "warning: %s\n", w)
					}
				}
				rep.Models = append(rep.Models, mr)
			}
			if asJSON {
				b, err := json.MarshalIndent(rep, "", "  ")
				if err != nil {
					return err
				}
				_, err = cmd.OutOrStdout().Write(append(b, '\n'))
				return err
			}
			_, err := fmt.Fprint(cmd.OutOrStdout(), evaluationTable(models, rep))
			return err
		},
	}
	f := cmd.Flags()
	f.StringVar(&dir, "store", "", "store directory")
	f.StringVar(&stateFile, "state", "", "state snapshot to evaluate instead of a store")
	f.StringArrayVar(&releaseFiles, "release", nil, "a release file (unlearn release, unlearn certify) to evaluate too; repeatable")
	trust.register(f)
	f.StringVar(&data, "data", "", "held-out data set (CSV, LIBSVM or IDX; the data flags say how to read it) or stream file (this or --stream is required)")
	f.StringVar(&in, "stream", "", "held-out stream file (JSON Lines, spec §1.1)")
	f.BoolVar(&asJSON, "json", false, "write the evaluation as JSON (format unlearn-evaluation/v1) instead of a table")
	f.BoolVar(&force, "force-features", false, forceFeaturesHelp)
	f.BoolVar(&operatorOnly, "operator-only", false, "with --store: print the figures of a state that holds deleted samples' influence un-noised (an approximate request from before schema 6 is pending), for the operator alone")
	df.keys = "string ids are mapped to row numbers; no mapping is written"
	df.lossFrom = "the model's"
	df.add(f, 0)
	return cmd
}

// evaluationWarnings says, in words, what the evaluation mr of the model
// name shows is wrong with it: it predicts one class for every held-out
// row (naming the class and the recall of the others), or the noise of a
// release dominates its scores.
func evaluationWarnings(name string, mr *model.ModelReport) []string {
	var ws []string
	if k, ok := mr.SingleClass(); ok {
		var others []string
		for j, c := range mr.Classes {
			if j != k && c.Recall != nil {
				others = append(others, fmt.Sprintf("%q %.4f", c.Label, *c.Recall))
			}
		}
		ws = append(ws, fmt.Sprintf("%s predicts the class %q for every one of the %d held-out rows (recall of the other classes: %s): it answers a constant, and its accuracy is the share of that class; check the learner's step size and the features' scaling (or use --profile practitioner)",
			name, mr.Classes[k].Label, mr.N, strings.Join(others, ", ")))
	}
	if mr.NoiseOnScores != nil && model.NoiseDominates(mr.Scores, *mr.NoiseOnScores) {
		ws = append(ws, fmt.Sprintf("%s: the noise dominates the scores: the spread of its effect on a score, sd(xᵀn) = %.3g, exceeds the model's own spread sd(xᵀw) ≈ %.3g; its predictions are mostly noise (a larger ε, more data, or a smaller sensitivity α lower it)",
			name, mr.NoiseOnScores.SD, math.Sqrt(max(0, mr.Scores.SD*mr.Scores.SD-mr.NoiseOnScores.SD*mr.NoiseOnScores.SD))))
	}
	return ws
}

// heldOut is evaluate's held-out file: a stream file (df nil) or a data
// set read with the data flags df.
type heldOut struct {
	path, flag string
	df         *dataFlags
	// said holds the notes written already: the file is read once per
	// model, and a note about it is said once.
	said map[string]bool
}

// notes returns the writer of notes about the file: standard error, each
// note once.
func (h *heldOut) notes(cmd *cobra.Command) io.Writer {
	if h.said == nil {
		h.said = map[string]bool{}
	}
	return onceWriter{w: cmd.ErrOrStderr(), said: h.said}
}

// onceWriter writes each distinct message once.
type onceWriter struct {
	w    io.Writer
	said map[string]bool
}

func (o onceWriter) Write(p []byte) (int, error) {
	if o.said[string(p)] {
		return len(p), nil
	}
	o.said[string(p)] = true
	return o.w.Write(p)
}

// evaluate evaluates the model on the held-out file, read once per model.
func (h *heldOut) evaluate(cmd *cobra.Command, m namedModel, force bool) (*model.Evaluation, error) {
	fl := cmd.Flags()
	l := m.l
	in := m.into(force)
	if h.df == nil {
		return evaluateFile(h.notes(cmd), m, in, h.flag, h.path)
	}
	opts, err := h.df.options(fl)
	if err != nil {
		return nil, err
	}
	// The model fixes the loss kind and d, and its contract how the data
	// is read; flags given explicitly are checked against them below. λ
	// does not enter a held-out evaluation (the model's loss is used), so
	// the data's is the model's too.
	lambda := dataset.DefaultLambda
	if mh, err := stream.HeaderOf(l.Loss()); err == nil {
		lambda = mh.Lambda
	}
	lossFromModel(fl, &opts, h.path, l.Loss().Kind(), l.Config().Dim, lambda)
	in.contractDefaults(fl, &opts, h.path)
	hdr, r, err := in.openData(h.path, opts)
	if err != nil {
		return nil, err
	}
	defer r.Close()
	if hdr.Kind != l.Loss().Kind() {
		if !fl.Changed("kind") {
			return nil, flagError("data", "%s: a data file gives a logistic or regression loss, but the model's loss is %s: evaluate it on a stream file (--stream)", h.path, l.Loss().Kind())
		}
		return nil, flagError("kind", "%s, but the model's loss is %s", hdr.Kind, l.Loss().Kind())
	}
	// The contract before d: a CSV with a column missing or extra has
	// another d, and the contract says which column.
	if err := in.checkContract(h.notes(cmd), "data", h.path, hdr, r); err != nil {
		return nil, err
	}
	if fl.Changed("lambda") && hdr.Lambda != lambda {
		return nil, flagError("lambda", "%v, but the model's λ is %v", hdr.Lambda, lambda)
	}
	if hdr.D != l.Config().Dim && fl.Changed("d") {
		return nil, flagError("d", "%d, but the model's d is %d", hdr.D, l.Config().Dim)
	}
	if hdr.D != l.Config().Dim {
		return nil, fmt.Errorf("--data %s: d = %d (the file's features), but the model's d is %d", h.path, hdr.D, l.Config().Dim)
	}
	if hdr.K != l.Config().Outputs {
		return nil, flagError("classes", "%d classes in %s, but the model has %d", hdr.K, h.path, l.Config().Outputs)
	}
	ev, err := evaluateModel(m, r)
	if err != nil {
		return nil, dataError(err)
	}
	return ev, nil
}

// evaluateModel evaluates the model on src: every metric of
// model.Evaluate for a logistic, multinomial or regression model, the held-out loss
// alone (store.Evaluate) for a loss without rows to predict (the synthetic
// quadratic).
func evaluateModel(m namedModel, src model.Rows) (*model.Evaluation, error) {
	switch m.l.Loss().Kind() {
	case stream.KindLogistic, stream.KindRegression, stream.KindMultinomial:
		mm, err := m.apply()
		if err != nil {
			return nil, err
		}
		return model.Evaluate(mm, src)
	}
	ev, err := store.Evaluate(m.l, src)
	if err != nil {
		return nil, err
	}
	return &model.Evaluation{N: ev.N, Loss: ev.Loss}, nil
}

// evaluateFile evaluates the model on the stream file name.
// flag names the flag that gave it (--data or --stream).
func evaluateFile(note io.Writer, m namedModel, in intoModel, flag, name string) (*model.Evaluation, error) {
	l := m.l
	f, err := os.Open(name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	rd, err := stream.NewReader(f)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	// The contract first: it names the field (classes, features) that
	// makes the loss differ.
	if err := in.checkContract(note, flag, name, rd.Header(), nil); err != nil {
		return nil, err
	}
	if h := rd.Header(); h.Kind != l.Loss().Kind() || h.D != l.Config().Dim || h.K != l.Config().Outputs {
		return nil, flagError(flag, "%s has %s, the model %s", name, lossShape(h.Kind, h.D, h.K), lossShape(l.Loss().Kind(), l.Config().Dim, l.Config().Outputs))
	}
	ev, err := evaluateModel(m, rd)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	return ev, nil
}

// evaluationTable renders evaluate's table: a row per model (the paper's
// columns model, n, loss, accuracy and ‖w‖, with a classifier's log loss
// and AUC or a regression's RMSE before ‖w‖), then each classifier's
// per-class counts, recall and confusion matrix (once for a state equal to
// the one before it).
func evaluationTable(models []namedModel, rep model.Report) string {
	var b strings.Builder
	// The columns follow the metrics (a classifier's, a regression's, the
	// loss alone), not a list of kinds.
	const (
		lossOnly = iota
		classifier
		regression
	)
	kind := lossOnly
	switch first := rep.Models[0].Evaluation; {
	case first.Accuracy != nil:
		kind = classifier
	case first.RMSE != nil:
		kind = regression
	}
	switch kind {
	case classifier:
		fmt.Fprintf(&b, "%-34s %8s %12s %10s %10s %10s %10s\n", "model", "n", "loss", "accuracy", "log loss", "AUC", "‖w‖")
	case regression:
		fmt.Fprintf(&b, "%-34s %8s %12s %10s %12s %10s\n", "model", "n", "loss", "accuracy", "RMSE", "‖w‖")
	default:
		fmt.Fprintf(&b, "%-34s %8s %12s %10s %10s\n", "model", "n", "loss", "accuracy", "‖w‖")
	}
	opt := func(v *float64, format string) string {
		if v == nil {
			return "-"
		}
		return fmt.Sprintf(format, *v)
	}
	for _, r := range rep.Models {
		ev := r.Evaluation
		fmt.Fprintf(&b, "%-34s %8d %12.6g %10s", r.Model, ev.N, ev.Loss, opt(ev.Accuracy, "%.4f"))
		switch kind {
		case classifier:
			fmt.Fprintf(&b, " %10s %10s", opt(ev.LogLoss, "%.6g"), opt(ev.AUC, "%.4f"))
		case regression:
			fmt.Fprintf(&b, " %12s", opt(ev.RMSE, "%.6g"))
		}
		fmt.Fprintf(&b, " %10.4g\n", r.NormW)
	}
	var averaged []string
	for i, m := range models {
		if m.l.Averaged() > 0 {
			averaged = append(averaged, rep.Models[i].Model)
		}
	}
	switch {
	case len(averaged) == len(models):
		b.WriteString("‖w‖: of the average of the iterates, which the model predicts with\n")
	case len(averaged) > 0:
		fmt.Fprintf(&b, "‖w‖ of %s: of the average of the iterates, which the model predicts with\n", strings.Join(averaged, ", "))
	}
	if kind != lossOnly {
		b.WriteString(spreadTable(rep))
	}
	for i, r := range rep.Models {
		if len(r.Classes) == 0 || models[i].same {
			continue
		}
		b.WriteString("\n")
		b.WriteString(confusionTable(r.Model, r.Evaluation))
	}
	return b.String()
}

// spreadTable renders, for every model, the observed spread of its scores
// xᵀw over the held-out rows and, for a noised release, the spread of the
// noise's effect xᵀn on a score that its certificate's σ implies (per row
// N(0, σ²‖x‖²): a distribution, never observed — the noise is not
// available to anyone), so the two can be compared: noise well inside the
// scores' spread moves few predictions.
func spreadTable(rep model.Report) string {
	var b strings.Builder
	fmt.Fprintf(&b, "\nscores over the held-out rows: xᵀw observed; xᵀn the noise's effect implied by the certificate's σ (per row N(0, σ²‖x‖²); not observed)\n")
	fmt.Fprintf(&b, "%-34s %10s %12s %10s %10s %12s\n", "model", "sd(xᵀw)", "p99 |xᵀw|", "σ", "sd(xᵀn)", "p99 |xᵀn|")
	for _, r := range rep.Models {
		fmt.Fprintf(&b, "%-34s %10.4g %12.4g", r.Model, r.Scores.SD, r.Scores.P99)
		if r.NoiseOnScores != nil {
			fmt.Fprintf(&b, " %10.4g %10.4g %12.4g\n", r.Sigma, r.NoiseOnScores.SD, r.NoiseOnScores.P99)
		} else {
			fmt.Fprintf(&b, " %10s %10s %12s\n", "-", "-", "-")
		}
	}
	return b.String()
}

// confusionTable renders a classifier's confusion matrix (rows: the true
// class, columns: the predicted one) with each class's recall.
func confusionTable(name string, ev model.Evaluation) string {
	w := len("true \\ predicted")
	cw := 8
	for _, c := range ev.Classes {
		w = max(w, len(c.Label))
		cw = max(cw, len(c.Label)+1, len(strconv.Itoa(c.Support))+1)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%s: confusion matrix and recall per class\n", name)
	fmt.Fprintf(&b, "  %-*s", w, "true \\ predicted")
	for _, c := range ev.Classes {
		fmt.Fprintf(&b, "%*s", cw, c.Label)
	}
	fmt.Fprintf(&b, "%10s\n", "recall")
	for i, c := range ev.Classes {
		fmt.Fprintf(&b, "  %-*s", w, c.Label)
		for _, n := range ev.Confusion[i] {
			fmt.Fprintf(&b, "%*d", cw, n)
		}
		recall := "-"
		if c.Recall != nil {
			recall = fmt.Sprintf("%.4f", *c.Recall)
		}
		fmt.Fprintf(&b, "%10s\n", recall)
	}
	return b.String()
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
