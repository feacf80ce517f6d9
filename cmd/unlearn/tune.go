package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"unlearn/olbfgs"
	"unlearn/stream"
)

func init() { register(newTuneCmd) }

// Defaults of tune.
const (
	tuneDefaultLimit   = 10000
	tuneDefaultHoldout = 0.2
	tuneDefaultSeed    = 1
)

func newTuneCmd() *cobra.Command {
	var (
		data    string
		etas    []float64
		lambdas []float64
		holdout float64
		asJSON  bool
		lf      learnerFlags
		df      dataFlags
	)
	cmd := &cobra.Command{
		Use:   "tune --data FILE [data flags] [--profile practitioner] [--etas η,…] [--lambdas λ,…]",
		Short: "Pick the step size η and the ridge λ on your own data, by the loss on a held-out split",
		Long: `tune reads a data set (CSV, LIBSVM or IDX, with the data flags of convert and
train), in a seeded random order (--shuffle-seed, default 1), at most --limit rows
(default 10000), and splits it: the last --holdout share of the rows (default
0.2) is held out. For every pair (η, λ) of the grid it trains the learner the
flags describe (--profile and the option flags, as train takes them) on the
first part — one pass, predict then train, so the progressive loss comes for
free — and then scores the held-out rows with the deployed parameters without
training on them. It prints one row per pair (progressive loss, held-out loss
and accuracy) and picks the pair with the lowest held-out loss: the values to
give init or train (--eta, --lambda). When the pick is the smallest or the
largest value of --etas or --lambdas, it warns on standard error: the best may
lie beyond the grid, which should be extended that way.

The loss is the data term of the model's loss (log loss for logistic and
multinomial, half the squared error for regression), without the ridge, so
that pairs with different λ compare. A pair whose learner diverges (a
non-finite step) is marked and never picked. The work is one training pass
per pair over at most --limit rows: at d = 784 and 10000 rows, about a second
per pair on one core.`,
		Example: `  unlearn tune --data train-images-idx3-ubyte.gz --classes 0,6 --profile practitioner
  unlearn tune --data patients.csv --label outcome --id name --profile practitioner --lambdas 1e-4,1e-3,1e-2`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			fl := cmd.Flags()
			if data == "" {
				return flagError("data", "required: the data set to tune on")
			}
			if len(etas) > 0 {
				lf.eta = etas[0] // every η is checked with the grid below
			}
			if err := lf.check(); err != nil {
				return err
			}
			if !(holdout > 0 && holdout < 1) {
				return flagError("holdout", "%v: want a share in (0, 1)", holdout)
			}
			for _, g := range []struct {
				name string
				v    []float64
			}{{"etas", etas}, {"lambdas", lambdas}} {
				if len(g.v) == 0 {
					return flagError(g.name, "empty: give at least one value")
				}
				for _, x := range g.v {
					if !(x >= 0) || math.IsInf(x, 0) || (g.name == "etas" && x == 0) {
						return flagError(g.name, "%v: want finite values, positive for η and non-negative for λ", x)
					}
				}
			}
			if !fl.Changed("limit") {
				df.limit = tuneDefaultLimit
			}
			if !fl.Changed("shuffle-seed") {
				df.shuffle = tuneDefaultSeed
				if err := fl.Set("shuffle-seed", fmt.Sprint(tuneDefaultSeed)); err != nil {
					return err
				}
			}
			opts, err := df.options(fl)
			if err != nil {
				return err
			}
			hdr, r, err := openData(data, opts)
			if err != nil {
				return err
			}
			var events []stream.Event
			for {
				e, err := r.Next()
				if err == io.EOF {
					break
				}
				if err != nil {
					r.Close()
					return dataError(err)
				}
				events = append(events, e)
			}
			r.Close()
			if err := requireEveryClassIn(data, opts, hdr, events); err != nil {
				return err
			}
			nHeld := int(math.Round(holdout * float64(len(events))))
			if nHeld < 1 || nHeld >= len(events) {
				return flagError("holdout", "%v of %d rows leaves no row to train on or to hold out", holdout, len(events))
			}
			train, held := events[:len(events)-nHeld], events[len(events)-nHeld:]
			var rows []tuneRow
			var lastErr error // what stopped the last learner that could not train
			for _, lambda := range lambdas {
				h := hdr
				h.Lambda = lambda
				loss, err := h.Loss()
				if err != nil {
					return flagError("lambdas", "%v", err)
				}
				for _, eta := range etas {
					lf.eta = eta
					cfg, err := lf.config(fl, h)
					if err != nil {
						return configFlagError(err)
					}
					cfg.Progress = true // the progressive loss is reported, whatever the profile
					row, err := tuneOne(cfg, loss, eta, lambda, train, held)
					if err != nil {
						lastErr = err
					}
					rows = append(rows, row)
				}
			}
			best := -1
			for i, row := range rows {
				if !row.Diverged && (best < 0 || row.HeldLoss < rows[best].HeldLoss) {
					best = i
				}
			}
			out := cmd.OutOrStdout()
			if asJSON {
				res := tuneJSON{Rows: rows, Train: len(train), HeldOut: len(held)}
				if best >= 0 {
					res.Best = &rows[best]
				}
				b, err := json.MarshalIndent(res, "", "  ")
				if err != nil {
					return err
				}
				fmt.Fprintf(out, "%s\n", b)
			} else {
				printTune(out, rows, best, len(train), len(held))
			}
			if best < 0 {
				if lastErr != nil && !errors.Is(lastErr, olbfgs.ErrDiverged) {
					return fmt.Errorf("tune: no (η, λ) of the grid could train: %w", lastErr)
				}
				return fmt.Errorf("tune: every (η, λ) of the grid diverged: try smaller --etas: %w", olbfgs.ErrDiverged)
			}
			for _, w := range gridEdgeWarnings(etas, lambdas, rows[best]) {
				fmt.Fprintf(cmd.ErrOrStderr(), "warning: %s\n", w)
			}
			return nil
		},
	}
	f := cmd.Flags()
	f.StringVar(&data, "data", "", "the data set to tune on (CSV, LIBSVM or IDX; the data flags say how to read it) (required)")
	f.Float64SliceVar(&etas, "etas", []float64{0.03, 0.1, 0.3}, "the step sizes η to try")
	f.Float64SliceVar(&lambdas, "lambdas", []float64{1e-4, 1e-3, 3e-3, 1e-2}, "the ridge weights λ to try")
	f.Float64Var(&holdout, "holdout", tuneDefaultHoldout, "the share of the rows held out (the last ones of the seeded order)")
	f.BoolVar(&asJSON, "json", false, "print the grid and the pick as JSON")
	lf.etaGrid = true // --etas gives the step sizes
	lf.register(f)
	df.keys = "string ids are mapped to row numbers; no mapping is written"
	df.add(f, withShuffle|withLimit)
	f.Lookup("limit").Usage = "use only the first N rows of the seeded order (default 10000; 0: all)"
	f.Lookup("shuffle-seed").Usage = "the seed of the random order the split is taken from (default 1)"
	return cmd
}

// tuneRow is one (η, λ) of tune's grid.
type tuneRow struct {
	Eta             float64  `json:"eta"`
	Lambda          float64  `json:"lambda"`
	Diverged        bool     `json:"diverged"`
	ProgressiveLoss float64  `json:"progressive_loss"`
	HeldLoss        float64  `json:"held_out_loss"`
	HeldAccuracy    *float64 `json:"held_out_accuracy"` // null for a regression
}

// tuneJSON is tune --json.
type tuneJSON struct {
	Train   int       `json:"train_rows"`
	HeldOut int       `json:"held_out_rows"`
	Rows    []tuneRow `json:"grid"`
	Best    *tuneRow  `json:"best"`
}

// tuneOne trains a learner of cfg on train and scores held; a learner
// that cannot train is marked diverged, with the error that stopped it.
func tuneOne(cfg olbfgs.Config, loss stream.Loss, eta, lambda float64, train, held []stream.Event) (tuneRow, error) {
	row := tuneRow{Eta: eta, Lambda: lambda}
	l, err := olbfgs.New(cfg, loss)
	if err != nil {
		row.Diverged = true
		return row, err
	}
	for _, e := range train {
		if err := l.Step(e); err != nil {
			row.Diverged = true
			return row, err
		}
	}
	p, _ := l.Progress()
	row.ProgressiveLoss = p.MeanLoss()
	lin := loss.(stream.Linear)
	u, c := make([]float64, l.Outputs()), make([]float64, l.Outputs())
	var sum float64
	correct := 0
	for _, e := range held {
		l.Scores(u, e.Sample)
		sum += lin.Link(c, u, e.Sample.S)
		if pred, ok := lin.Predict(u); ok && pred == e.Sample.S {
			correct++
		}
	}
	row.HeldLoss = sum / float64(len(held))
	if _, classes := lin.Class(0); classes > 0 {
		acc := float64(correct) / float64(len(held))
		row.HeldAccuracy = &acc
	}
	if math.IsNaN(row.HeldLoss) || math.IsInf(row.HeldLoss, 0) {
		row.Diverged = true
	}
	return row, nil
}

// printTune prints tune's table and its pick.
func printTune(w io.Writer, rows []tuneRow, best, train, held int) {
	fmt.Fprintf(w, "trained on %d rows, held out %d\n", train, held)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "η\tλ\tprogressive loss\theld-out loss\theld-out accuracy\t\t")
	for i, r := range rows {
		acc, mark := "-", ""
		if r.HeldAccuracy != nil {
			acc = fmt.Sprintf("%.4f", *r.HeldAccuracy)
		}
		switch {
		case r.Diverged:
			mark = "diverged"
		case i == best:
			mark = "← best"
		}
		fmt.Fprintf(tw, "%g\t%g\t%.4g\t%.4g\t%s\t%s\t\n", r.Eta, r.Lambda, r.ProgressiveLoss, r.HeldLoss, acc, mark)
	}
	tw.Flush()
	if best >= 0 {
		fmt.Fprintf(w, "best: --eta %g --lambda %g\n", rows[best].Eta, rows[best].Lambda)
	}
}
