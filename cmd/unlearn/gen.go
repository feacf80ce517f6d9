package main

import (
	"fmt"
	"math"
	"os"

	"github.com/spf13/cobra"

	"unlearn/stream"
)

func newGenCmd() *cobra.Command {
	var (
		kind         string
		out          string
		d, events    int
		seed         uint64
		kappa, scale float64
		noDrift      bool
	)
	cmd := &cobra.Command{
		Use:   "gen --out FILE",
		Short: "Write a synthetic event stream (drifting quadratic or ridge logistic)",
		Long: `gen writes one of the paper's synthetic streams (spec §1.2) as a JSON Lines
stream file (spec §1.1). The generator and all its parameters, seed included,
are recorded in the header, so the file documents how it was made.`,
		Example: `  unlearn gen --kind quadratic --events 5000 --seed 1 --out q.jsonl
  unlearn gen --kind logistic --kappa 100 --seed 2 --out l.jsonl`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if out == "" {
				return flagError("out", "required (a file path, or - for standard output)")
			}
			if err := checkGenFlags(cmd.Flags().Changed, kind, d, events, kappa, scale); err != nil {
				return err
			}
			if err := new(paths).out("--out", out).check(); err != nil {
				return err
			}
			var (
				h   *stream.History
				err error
			)
			switch kind {
			case string(stream.KindQuadratic):
				o := stream.DefaultQuadraticOptions()
				o.D, o.T, o.Seed, o.Kappa, o.NoDrift = d, events, seed, kappa, noDrift
				h, err = stream.GenerateQuadratic(o)
			case string(stream.KindLogistic):
				o := stream.DefaultLogisticOptions()
				o.D, o.T, o.Seed, o.Kappa, o.NoDrift, o.FeatureScale = d, events, seed, kappa, noDrift, scale
				h, err = stream.GenerateLogistic(o)
			default:
				return flagError("kind", "%q: want quadratic or logistic", kind)
			}
			if err != nil {
				return fmt.Errorf("generate: %w", err)
			}
			if out == "-" {
				return stream.Write(os.Stdout, h)
			}
			if err := stream.WriteFile(out, h); err != nil {
				return err
			}
			fmt.Fprintf(cmd.ErrOrStderr(), "wrote %d events (%s, d=%d, seed %d) to %s\n", len(h.Events), kind, h.Header.D, seed, out)
			return nil
		},
	}
	f := cmd.Flags()
	f.StringVar(&kind, "kind", "quadratic", "stream kind: quadratic or logistic")
	f.StringVarP(&out, "out", "o", "", "output stream file, or - for standard output (required)")
	f.IntVar(&d, "d", 25, "dimension d")
	f.IntVar(&events, "events", 5000, "number of events T (all inserts, ids 1..T)")
	f.Uint64Var(&seed, "seed", 1, "generator seed")
	f.Float64Var(&kappa, "kappa", 10, "condition number κ of the curvature (quadratic) or feature covariance (logistic)")
	f.Float64Var(&scale, "feature-scale", 1, "logistic only: largest eigenvalue of the feature covariance (at κ the default learner is chaotic)")
	f.BoolVar(&noDrift, "no-drift", false, "turn curvature/covariance drift off")
	return cmd
}

// checkGenFlags checks the generator flags against the generators' ranges
// (stream.QuadraticOptions, stream.LogisticOptions), naming the flag: the
// generators read 0 as "default", which a command line must not do
// silently, and their errors name Go struct fields. Flags that do not apply
// to the chosen kind are refused rather than ignored.
func checkGenFlags(changed func(string) bool, kind string, d, events int, kappa, scale float64) error {
	minD := 2 // the quadratic stream's A_t needs d ≥ 2
	switch kind {
	case string(stream.KindQuadratic):
		if changed("feature-scale") {
			return flagError("feature-scale", "applies to --kind logistic only (the quadratic stream has no features)")
		}
	case string(stream.KindLogistic):
		minD = 1
	default:
		return flagError("kind", "%q: want quadratic or logistic", kind)
	}
	switch {
	case d < minD || d > stream.MaxGeneratedDim:
		return flagError("d", "%d must be in [%d, %d] for a %s stream (the generators build dense d×d matrices)", d, minD, stream.MaxGeneratedDim, kind)
	case events < 1:
		return flagError("events", "%d must be at least 1", events)
	case events > stream.MaxGeneratedValues/(d+6):
		return flagError("events", "%d must be at most %d at d = %d (T·(d+6) words ≤ 2^28)", events, stream.MaxGeneratedValues/(d+6), d)
	case !(kappa >= 1) || math.IsInf(kappa, 0):
		return flagError("kappa", "%v must be finite and at least 1", kappa)
	case !(scale > 0) || math.IsInf(scale, 0):
		return flagError("feature-scale", "%v must be positive and finite", scale)
	}
	return nil
}
