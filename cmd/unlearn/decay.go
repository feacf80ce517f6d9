package main

import (
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"unlearn/experiment"
	"unlearn/stream"
)

func newDecayCmd() *cobra.Command {
	var (
		out               string
		kinds, modes      []string
		taus              []int
		kappas            []float64
		seeds             []uint
		events, tdel, hor int
		count, mq, d      int
		eta, lambdaZ      float64
		workers           int
		noSeries, zero    bool
		noReport          bool
	)
	def := experiment.Experiment1()
	axes := experiment.DecayAxes()
	cmd := &cobra.Command{
		Use:   "decay [--out DIR] [variant flags]",
		Short: "Run Experiment 1, finite-memory decay, and print clearance times and decay rates",
		Long: `decay runs Experiment 1 of the paper (spec §6): for each variant, the actual
learner (trained on the prefix with the deleted samples) and the deletion-edited
counterfactual are propagated on the same future events with no intervention,
and E_w, E_Z, E_Θ, D_upd and M_direct are recorded at every step. It prints,
per variant, the direct-clearance time, the decay-rate fits ρ̂ for the phases
P1 = [0, τ), P2 = [τ, 2τ), P3 = [2τ, H], and the initial and final state error.

Defaults (paper, Table "Default experimental configuration"): d = 25, T = 700,
t_del = 300, H = 250, |U| = 5, m_q = 32, λ_Z = 1, η = 0.1. The variants cross
stream kind × τ × deletion mode × κ × seed (flags below; give one value each
for a single run). The results folder (--out) holds one record per variant,
with its per-step series (series/*.csv), and is written atomically. At the end,
decay writes the report with Experiment 1's figures into DIR/report (see
"unlearn report"; --no-report skips it).`,
		Example: `  unlearn decay                                              # all variants
  unlearn decay --kind quadratic --tau 10 --kappa 10 --mode recent  # the default run
  unlearn decay --tau 5,10,20,50 --mode recent --kind logistic`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			a := experiment.GridAxes{Taus: taus, Modes: modes, Kappas: kappas}
			for _, s := range seeds {
				a.Seeds = append(a.Seeds, uint64(s))
			}
			for _, k := range kinds {
				if k != string(stream.KindQuadratic) && k != string(stream.KindLogistic) {
					return flagError("kind", "%q: want quadratic or logistic", k)
				}
				a.Kinds = append(a.Kinds, stream.Kind(k))
			}
			for _, m := range modes {
				if _, err := stream.ParseMode(m); err != nil {
					return flagError("mode", "%q: want recent, old, random or high-gradient", m)
				}
			}
			if workers < 0 {
				return flagError("workers", "%d must be non-negative (0: one per CPU)", workers)
			}
			if err := new(paths).outDir("--out", out).check(); err != nil {
				return err
			}
			if err := positiveFlags(map[string]float64{"t-del": float64(tdel), "horizon": float64(hor), "eta": eta,
				"count": float64(count), "mq": float64(mq), "d": float64(d), "events": float64(events)}); err != nil {
				return err
			}
			for _, t := range taus {
				if t < 1 {
					return flagError("tau", "%d must be at least 1", t)
				}
			}
			for _, k := range kappas {
				if !(k >= 1) {
					return flagError("kappa", "%v must be at least 1", k)
				}
			}
			base := experiment.Experiment1()
			base.Stream.D, base.Stream.T = d, events
			base.TDel, base.Horizon, base.Count, base.Probes = tdel, hor, count, mq
			base.Eta, base.LambdaZ = eta, new(lambdaZ)
			if err := base.Validate(); err != nil {
				return configFlag(err)
			}
			for _, k := range kappas {
				c := base
				c.Stream.Kappa = k
				if err := c.Validate(); err != nil {
					return configFlag(err)
				}
			}
			for _, t := range taus {
				c := base
				c.Tau = t
				if err := c.Validate(); err != nil {
					return configFlag(err)
				}
			}
			grid := a.Grid("decay", experiment.ExperimentDecay, base)
			if len(grid.Configs) == 0 {
				return flagError("tau", "no variants: every list flag needs at least one value")
			}
			ctx, cancel := signalContext(cmd.Context())
			defer cancel()
			bar := newProgress(cmd.ErrOrStderr(), len(grid.Configs), "decay")
			start := time.Now()
			res, err := experiment.RunGrid(ctx, grid, experiment.Options{
				Workers: workers, KeepSeries: !noSeries, ZeroTiming: zero, Progress: bar.update,
			})
			bar.finish()
			if err != nil {
				return interrupted(configFlag(err))
			}
			res.Manifest.Provenance = provenance(cmd, nil)
			if err := experiment.WriteResults(out, res, experiment.TableOptions{}); err != nil {
				return err
			}
			fmt.Fprintf(cmd.ErrOrStderr(), "%d variant(s) in %v; wrote %s\n", len(grid.Configs), time.Since(start).Round(time.Millisecond), out)
			if err := writeResultsReport(cmd.ErrOrStderr(), res, out, noReport); err != nil {
				return err
			}
			return printTables(cmd.OutOrStdout(), res)
		},
	}
	f := cmd.Flags()
	f.StringVarP(&out, "out", "o", "results-decay", "results folder (replaced atomically if it is a results folder or empty)")
	f.StringSliceVar(&kinds, "kind", kindNames(axes.Kinds), "stream kinds (quadratic, logistic)")
	f.IntSliceVar(&taus, "tau", axes.Taus, "memory sizes τ")
	f.StringSliceVar(&modes, "mode", axes.Modes, "deletion modes (recent, old, random, high-gradient)")
	f.Float64SliceVar(&kappas, "kappa", axes.Kappas, "condition numbers κ")
	f.UintSliceVar(&seeds, "seed", toUints(axes.Seeds), "seeds (stream, random deletions and probes)")
	f.IntVar(&d, "d", def.Stream.D, "dimension d")
	f.IntVar(&events, "events", def.Stream.T, "stream length T")
	f.IntVar(&tdel, "t-del", def.TDel, "deletion time t_del")
	f.IntVar(&hor, "horizon", def.Horizon, "post-deletion horizon H (t_del + H ≤ T)")
	f.IntVar(&count, "count", def.Count, "deletion size |U|")
	f.IntVar(&mq, "mq", def.Probes, "number of probe vectors m_q")
	f.Float64Var(&eta, "eta", def.Eta, "step size η")
	f.Float64Var(&lambdaZ, "lambda-z", *def.LambdaZ, "memory weight λ_Z of E_Θ = E_w + λ_Z E_Z")
	f.IntVar(&workers, "workers", 0, "variants run in parallel (0: GOMAXPROCS)")
	f.BoolVar(&noSeries, "no-series", false, "do not keep the per-step series (the report then omits the figures drawn from them)")
	f.BoolVar(&noReport, "no-report", false, "do not write the report (DIR/report) at the end")
	f.BoolVar(&zero, "zero-timing", false, "omit wall-clock times, so that outputs are bit-identical across runs")
	return cmd
}

func kindNames(ks []stream.Kind) []string {
	out := make([]string, len(ks))
	for i, k := range ks {
		out[i] = string(k)
	}
	return out
}

func toUints(xs []uint64) []uint {
	out := make([]uint, len(xs))
	for i, x := range xs {
		out[i] = uint(x)
	}
	return out
}
