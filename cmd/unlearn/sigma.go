package main

import (
	"errors"
	"fmt"
	"strconv"

	"github.com/spf13/cobra"

	"unlearn/noise"
)

func newSigmaCmd() *cobra.Command {
	var (
		alpha, epsilon, delta float64
		calibration           string
	)
	cmd := &cobra.Command{
		Use:   "sigma --alpha A --epsilon E --delta D [--calibration analytic|classic]",
		Short: "Print the Gaussian noise σ for L2 sensitivity α at (ε, δ)",
		Long: `sigma prints the standard deviation σ of the Gaussian noise N(0, σ²I) that
makes the release of a vector with L2 sensitivity α (ε, δ)-differentially private
(paper: Theorem "o-LBFGS Unlearning Certificate"; docs/theory.md §8).

  analytic  (default) the analytic Gaussian mechanism of Balle & Wang (2018),
            tight for every ε > 0, computed by the Google DP library and rounded
            up (at most 0.1% above the exact value);
  classic   σ = α·sqrt(2 ln(1.25/δ))/ε (Dwork & Roth, Theorem A.1), the paper's
            formula, valid only for ε < 1 and refused otherwise.

α = 0 (exact unlearning) gives σ = 0. σ is printed alone on one line, in the
shortest form that reads back to the same float64.`,
		Example: `  unlearn sigma --alpha 1 --epsilon 1 --delta 1e-5             # 3.73…, Balle & Wang's example
  unlearn sigma --alpha 0.2 --epsilon 0.5 --delta 1e-6 --calibration classic`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			for _, name := range []string{"alpha", "epsilon", "delta"} {
				if !cmd.Flags().Changed(name) {
					return flagError(name, "required")
				}
			}
			cal, err := noise.ParseCalibration(calibration)
			if err != nil {
				return flagError("calibration", "%q: want analytic or classic", calibration)
			}
			s, err := noise.Sigma(cal, alpha, epsilon, delta)
			if err != nil {
				return noiseFlagError(err)
			}
			fmt.Fprintln(cmd.OutOrStdout(), strconv.FormatFloat(s, 'g', -1, 64))
			return nil
		},
	}
	f := cmd.Flags()
	f.Float64Var(&alpha, "alpha", 0, "L2 sensitivity α ≥ 0 (required)")
	f.Float64Var(&epsilon, "epsilon", 0, "privacy parameter ε > 0 (required; < 1 for classic)")
	f.Float64Var(&delta, "delta", 0, "privacy parameter δ ∈ (0, 1) (required)")
	f.StringVar(&calibration, "calibration", "analytic", "calibration: analytic or classic")
	return cmd
}

// noiseFlagError turns a noise argument error into a usage error naming the
// flag of the argument.
func noiseFlagError(err error) error {
	var ae *noise.ArgError
	if !errors.As(err, &ae) {
		return err
	}
	flag, ok := map[string]string{"alpha": "alpha", "epsilon": "epsilon", "delta": "delta", "calibration": "calibration"}[ae.Arg]
	if !ok {
		return err
	}
	return flagError(flag, "%v: %v", strconv.FormatFloat(ae.Value, 'g', -1, 64), ae.Err)
}
