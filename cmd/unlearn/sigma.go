package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strconv"

	"github.com/spf13/cobra"

	"unlearn/noise"
)

func newSigmaCmd() *cobra.Command {
	var (
		alpha, epsilon, delta float64
		calibration           string
		asJSON                bool
	)
	cmd := &cobra.Command{
		Use:   "sigma --alpha A --epsilon E --delta D [--calibration analytic|classic] [--json]",
		Short: "Print the Gaussian noise σ for L2 sensitivity α at (ε, δ)",
		Long: `sigma prints the standard deviation σ of the Gaussian noise N(0, σ²I) that
makes the release of a vector with L2 sensitivity α (ε, δ)-differentially private
(paper: Theorem "o-LBFGS Unlearning Certificate"; docs/theory.md §8).

  analytic  (default) the analytic Gaussian mechanism of Balle & Wang (2018),
            tight for every ε ≥ 2⁻⁵⁰, never below the exact value and at most
            0.1% above it (docs/theory.md §8.1);
  classic   σ = α·sqrt(2 ln(1.25/δ))/ε (Dwork & Roth, Theorem A.1), the paper's
            formula, valid only for ε < 1 and refused otherwise.

α = 0 (exact unlearning) gives σ = 0. σ is printed alone on one line to 5
significant digits, rounded up, so the printed value is never below the σ
computed; --json prints the inputs and σ at full precision (the shortest form
that reads back to the same float64) as one JSON object.`,
		Example: `  unlearn sigma --alpha 1 --epsilon 1 --delta 1e-5             # 3.7325 (exact 3.73063), Balle & Wang's example
  unlearn sigma --alpha 1 --epsilon 1 --delta 1e-5 --json
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
			out := cmd.OutOrStdout()
			if asJSON {
				b, err := json.Marshal(sigmaJSON{Alpha: alpha, Epsilon: epsilon, Delta: delta, Calibration: cal.String(), Sigma: s})
				if err != nil {
					return err
				}
				_, err = fmt.Fprintf(out, "%s\n", b)
				return err
			}
			_, err = fmt.Fprintln(out, formatUp(s, 5))
			return err
		},
	}
	f := cmd.Flags()
	f.Float64Var(&alpha, "alpha", 0, "L2 sensitivity α ≥ 0 (required)")
	f.Float64Var(&epsilon, "epsilon", 0, "privacy parameter ε > 0 (required; < 1 for classic)")
	f.Float64Var(&delta, "delta", 0, "privacy parameter δ ∈ (0, 1) (required)")
	f.StringVar(&calibration, "calibration", "analytic", "calibration: analytic or classic")
	f.BoolVar(&asJSON, "json", false, "print the inputs and σ at full precision as JSON")
	return cmd
}

// sigmaJSON is the output of sigma --json.
type sigmaJSON struct {
	Alpha       float64 `json:"alpha"`
	Epsilon     float64 `json:"epsilon"`
	Delta       float64 `json:"delta"`
	Calibration string  `json:"calibration"`
	Sigma       float64 `json:"sigma"`
}

// formatUp formats x ≥ 0 (finite) to digits significant digits, rounded up:
// the decimal printed is ≥ x, so a σ copied from the output is never less
// noise than the one computed. 0 prints as "0".
func formatUp(x float64, digits int) string {
	if x == 0 || math.IsInf(x, 0) || math.IsNaN(x) {
		return strconv.FormatFloat(x, 'g', -1, 64)
	}
	// Nearest decimal with the given digits, then one unit of its last
	// digit up if it is below x.
	e := strconv.FormatFloat(x, 'e', digits-1, 64) // d.dddde±XX
	if v, err := strconv.ParseFloat(e, 64); err == nil && v >= x {
		return strconv.FormatFloat(v, 'g', digits, 64)
	}
	mant, exp, _ := cutExp(e)
	m, _ := strconv.ParseInt(mant, 10, 64) // the digits without the point
	m++
	v, _ := strconv.ParseFloat(fmt.Sprintf("%de%d", m, exp-(digits-1)), 64)
	return strconv.FormatFloat(v, 'g', digits, 64)
}

// cutExp splits "d.dddde±XX" into the digits "ddddd" and the exponent.
func cutExp(s string) (string, int, error) {
	i := len(s) - 1
	for i >= 0 && s[i] != 'e' {
		i--
	}
	exp, err := strconv.Atoi(s[i+1:])
	mant := s[:i]
	digits := make([]byte, 0, len(mant))
	for j := 0; j < len(mant); j++ {
		if mant[j] != '.' {
			digits = append(digits, mant[j])
		}
	}
	return string(digits), exp, err
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
