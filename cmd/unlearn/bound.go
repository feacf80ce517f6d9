package main

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"unlearn/bound"
	"unlearn/olbfgs"
)

// boundFlags are the inputs of a bound.Scenario, shared by `bound` and
// `certify`.
type boundFlags struct {
	g, hMin, hMax, eta    float64
	tau                   int
	source                string
	rho                   float64
	rhoSource             string
	mu, l                 float64
	commuting             bool
	memory                string
	lambdaZ               float64
	ages                  []int
	horizon               int
	delta0                float64
	delta0Source          string
	agesHelp, horizonHelp string
	stateHelp             string
}

func (b *boundFlags) register(f *pflag.FlagSet) {
	f.Float64Var(&b.g, "G", 0, "gradient bound G ≥ 0 (Assumption \"Bounded stochastic gradients\")")
	f.Float64Var(&b.hMin, "hmin", 0, "lower spectral bound hMin ≥ 0 of every inverse-Hessian approximation H_Z (the paper's m)")
	f.Float64Var(&b.hMax, "hmax", 0, "upper spectral bound hMax ≥ hMin of every H_Z (the paper's M)")
	f.Float64Var(&b.eta, "eta", olbfgs.DefaultStepSize, "step size η > 0"+b.stateHelp)
	f.IntVar(&b.tau, "tau", olbfgs.DefaultMemory, "memory size τ ≥ 1"+b.stateHelp)
	f.StringVar(&b.source, "constants-source", "", "how G, hMin, hMax were obtained: estimated or assumed (required with the bound's inputs)")
	f.Float64Var(&b.rho, "rho", 0, "contraction factor ρ ∈ [0, 1) (or give --mu and --L for the analytic ρ)")
	f.StringVar(&b.rhoSource, "rho-source", "assumed", "provenance of --rho: estimated or assumed")
	f.Float64Var(&b.mu, "mu", 0, "strong-convexity constant μ > 0: with --L, prove ρ analytically from μ, L, η, hMin, hMax")
	f.Float64Var(&b.l, "L", 0, "smoothness constant L ≥ μ (with --mu)")
	f.BoolVar(&b.commuting, "commuting", false, "with --mu/--L: every H_Z commutes with every Hessian (d = 1, isotropic losses): ρ without the factor sqrt(hMax/hMin)")
	f.StringVar(&b.memory, "memory-model", "worst-case", "perturbation model: worst-case (proved), direct or coupled (assumed)")
	f.Float64Var(&b.lambdaZ, "lambda-z", 1, "memory weight λ_Z ≥ 0 of the coupled state metric")
	f.IntSliceVar(&b.ages, "ages", nil, "ages of the deleted inserts: update steps processed after each, up to the release (e.g. 0,7,120)"+b.agesHelp)
	f.IntVar(&b.horizon, "horizon", 0, "steps after t0 the bound covers"+b.horizonHelp)
	f.Float64Var(&b.delta0, "delta0", 0, "a known Δ_{t0} ≥ 0 after an intervention (e.g. 0 for an exact replay); default: the untouched learner's bound")
	f.StringVar(&b.delta0Source, "delta0-source", "", "provenance of --delta0: proved, estimated or assumed (required with --delta0)")
}

// boundFlagNames returns the names of the flags register adds, in the order
// it adds them.
// typedProvenance parses the provenance of a number typed on the command
// line: estimated or assumed. "proved" is refused: the toolkit cannot check
// a number a user types; proved constants come from an enforced learner
// configuration ('unlearn plan', 'unlearn certify --stream').
func typedProvenance(flag, v string) (bound.Provenance, error) {
	p, err := bound.ParseProvenance(v)
	switch {
	case err != nil:
		return 0, flagError(flag, "%q: want estimated or assumed", v)
	case p == bound.Proved:
		return 0, flagError(flag, "\"proved\" is refused for a number typed on the command line: the toolkit cannot check it; say estimated or assumed (proved constants are derived from a certifiable learner: see 'unlearn plan')")
	}
	return p, nil
}

// scenario builds the scenario from the flags; flags maps the set flags.
func (b *boundFlags) scenario(changed func(string) bool) (bound.Scenario, error) {
	if !changed("G") {
		return bound.Scenario{}, flagError("G", "required (the gradient bound)")
	}
	src, err := typedProvenance("constants-source", b.source)
	if err != nil {
		return bound.Scenario{}, err
	}
	c := bound.Constants{G: b.g, HMin: b.hMin, HMax: b.hMax, Eta: b.eta, Tau: b.tau, Provenance: src}
	var k bound.Contraction
	switch {
	case changed("mu") || changed("L"):
		if changed("rho") {
			return bound.Scenario{}, flagError("rho", "give --rho or --mu and --L, not both")
		}
		for _, f := range []string{"mu", "L", "hmin", "hmax"} {
			if !changed(f) {
				return bound.Scenario{}, flagError(f, "required with --mu and --L (ρ is proved from μ, L, η, hMin and hMax)")
			}
		}
		cs := bound.General
		if b.commuting {
			cs = bound.Commuting
		}
		if k, err = bound.AnalyticContraction(bound.AnalyticParams{Mu: b.mu, L: b.l, Eta: b.eta, HMin: b.hMin, HMax: b.hMax, Case: cs}); err != nil {
			var ae *bound.ArgError
			if errors.Is(err, bound.ErrNoContraction) && errors.As(err, &ae) {
				// ρ is computed, not written by the user: name the flags it
				// comes from.
				return bound.Scenario{}, usageError{fmt.Errorf("--mu %s --L %s (with --eta %s, --hmin %s, --hmax %s%s): %w: they give ρ = %.6g; "+
					"a smaller --eta or a narrower [--hmin, --hmax] may contract, or give --rho instead",
					fmtFlag(b.mu), fmtFlag(b.l), fmtFlag(b.eta), fmtFlag(b.hMin), fmtFlag(b.hMax),
					map[bool]string{true: ", --commuting"}[b.commuting], bound.ErrNoContraction, ae.Value)}
			}
			return bound.Scenario{}, boundFlagError(err)
		}
		// The formula is a theorem, but its inputs were typed: ρ is only as
		// good as them, and commutation was asserted, not checked.
		k.Provenance = src
		if b.commuting {
			k.Provenance = bound.Assumed
			k.Method += " (commutation asserted with --commuting, not checked)"
		}
	case changed("rho"):
		p, err := typedProvenance("rho-source", b.rhoSource)
		if err != nil {
			return bound.Scenario{}, err
		}
		k = bound.Contraction{Rho: b.rho, Provenance: p, Method: "given on the command line"}
	default:
		return bound.Scenario{}, flagError("rho", "required: give --rho (with --rho-source) or --mu and --L")
	}
	mem, err := bound.ParseMemoryModel(b.memory)
	if err != nil {
		return bound.Scenario{}, flagError("memory-model", "%q: want worst-case, direct or coupled", b.memory)
	}
	s := bound.Scenario{Constants: c, Contraction: k, Memory: mem, LambdaZ: new(b.lambdaZ), Ages: b.ages, Horizon: b.horizon}
	if s.Ages == nil {
		s.Ages = []int{}
	}
	if changed("delta0") {
		p, err := typedProvenance("delta0-source", b.delta0Source)
		if err != nil {
			return bound.Scenario{}, err
		}
		s.Start, s.Delta0, s.Delta0Provenance = bound.StartGiven, b.delta0, p
	}
	return s, nil
}

// fmtFlag formats a flag value as the user would write it.
func fmtFlag(v float64) string { return strconv.FormatFloat(v, 'g', -1, 64) }

// boundFlag maps a bound argument (or a certify field) to its flag.
var boundFlag = map[string]string{
	"G": "G", "HMin": "hmin", "HMax": "hmax", "Eta": "eta", "Tau": "tau",
	"rho": "rho", "Rho": "rho", "Provenance": "rho-source", "Mu": "mu", "L": "L",
	"LambdaZ": "lambda-z", "Ages": "ages", "Horizon": "horizon", "Delta0": "delta0", "Delta0Provenance": "delta0-source",
	"Memory": "memory-model", "Constants.G": "G",
}

// boundFlagError turns a bound argument error into a usage error naming
// the flag of the argument.
func boundFlagError(err error) error {
	var ae *bound.ArgError
	if !errors.As(err, &ae) {
		return err
	}
	arg := ae.Arg
	if i := strings.IndexByte(arg, '['); i >= 0 {
		arg = arg[:i]
	}
	if ae.Func == "Constants.Validate" && arg == "Provenance" {
		arg = "constants-source" // Contraction.Validate's Provenance is --rho-source
		return flagError(arg, "%v: %v", strconv.FormatFloat(ae.Value, 'g', -1, 64), ae.Err)
	}
	flag, ok := boundFlag[arg]
	if !ok {
		return err
	}
	return flagError(flag, "%v: %v", strconv.FormatFloat(ae.Value, 'g', -1, 64), ae.Err)
}

func newBoundCmd() *cobra.Command {
	b := boundFlags{}
	var series bool
	cmd := &cobra.Command{
		Use:   "bound --G G --hmin M --hmax M --constants-source P (--rho R | --mu μ --L L) [--ages LIST] [--horizon H] [--series]",
		Short: "Compute the state-deviation bound α_t from constants, a contraction and deletion ages",
		Long: `bound evaluates the recursive bound of Theorem "Bounded counterfactual state
deviation" (paper; docs/theory.md §3–§5):

  α_t = ρ^{t−t0}·Δ_{t0} + Σ_{s=t0}^{t−1} ρ^{t−1−s}·η_s·ε_s,

with the per-step perturbation η_s·ε_s built from the problem constants
(η·hMax·G at a deleted insert's step, η·(hMax−hMin)·G at the steps the memory
model charges), for deleted inserts at the given ages, over --horizon steps.
α bounds ‖w̃ − w⁻‖₂ (worst-case and direct models) or the coupled state metric,
and is the sensitivity that 'unlearn sigma' and 'unlearn certify' calibrate noise
to. Every input carries a provenance (proved, estimated or assumed); the result
gets the weakest, and the terms it rests on are listed.

The contraction ρ is either given (--rho, labelled by --rho-source) or proved
from μ, L, η, hMin and hMax (--mu, --L; add --commuting when every H_Z commutes
with every Hessian, e.g. isotropic losses or d = 1 — an assertion the command
cannot check, so ρ is then labelled assumed).`,
		Example: `  # isotropic quadratics with curvatures in [1, 4]: hMin = 1/4, hMax = 1, proved ρ
  unlearn bound --G 2 --hmin 0.25 --hmax 1 --eta 0.2 --constants-source estimated \
      --mu 1 --L 4 --commuting --ages 3,10 --horizon 50 --series
  # the paper's assumed contraction
  unlearn bound --G 1 --hmin 0.1 --hmax 2 --constants-source assumed --rho 0.9 --ages 0`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			s, err := b.scenario(cmd.Flags().Changed)
			if err != nil {
				return err
			}
			res, err := s.Bound()
			if err != nil {
				return boundFlagError(err)
			}
			return printBound(cmd.OutOrStdout(), res, series)
		},
	}
	b.register(cmd.Flags())
	cmd.Flags().BoolVar(&series, "series", false, "print α_k and the perturbation for every k = 0…horizon")
	return cmd
}

// printBound prints the final α (or the series) and the terms. The series
// streams through a buffer in fixed-width columns (α in 'g' format with 10
// digits takes at most 17 characters), so that a long horizon is not held
// in memory as text.
func printBound(w io.Writer, res bound.Result, series bool) error {
	if series {
		bw := bufio.NewWriter(w)
		kw := len(strconv.Itoa(len(res.Alpha) - 1))
		fmt.Fprintf(bw, "%-*s  %-17s  %s\n", kw, "k", "alpha", "perturbation into k")
		for k, a := range res.Alpha {
			p := "-"
			if k > 0 {
				p = strconv.FormatFloat(res.Perturbations[k-1], 'g', 8, 64)
			}
			fmt.Fprintf(bw, "%-*d  %-17s  %s\n", kw, k, strconv.FormatFloat(a, 'g', 10, 64), p)
		}
		fmt.Fprintln(bw)
		if err := bw.Flush(); err != nil {
			return err
		}
	}
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	h := len(res.Alpha) - 1
	fmt.Fprintf(tw, "alpha\t%s\tat t0+%d, %d deletion(s)\n", strconv.FormatFloat(res.Alpha[h], 'g', -1, 64), h, res.Deletions)
	fmt.Fprintf(tw, "provenance\t%s\t\n", res.Provenance)
	fmt.Fprintf(tw, "metric\t%s\t\n", res.Metric)
	fmt.Fprintln(tw, "\nterm\tvalue\tprovenance")
	for _, t := range res.Terms {
		fmt.Fprintf(tw, "%s\t%s\t%s\n", t.Name, strconv.FormatFloat(t.Value, 'g', 8, 64), t.Provenance)
	}
	return tw.Flush()
}
