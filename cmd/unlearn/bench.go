package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"runtime/pprof"
	"slices"
	"syscall"
	"time"

	"github.com/schollz/progressbar/v3"
	"github.com/spf13/cobra"
	"golang.org/x/term"

	"unlearn/experiment"
	"unlearn/report"
	"unlearn/stream"
)

func newBenchCmd() *cobra.Command {
	var (
		out, shard, cpuProfile string
		quick, series, zero    bool
		unstable, noReport     bool
		workers                int
		data                   string
		df                     dataFlags
		events, tdel, mq       int
		taus                   []int
		modes                  []string
		seeds                  []uint
	)
	cmd := &cobra.Command{
		Use:   "bench [--out DIR] [--quick] [--workers N] [--shard K/N]",
		Short: "Run the state-aware benchmark grid (Experiment 2) and print the five summary tables",
		Long: `bench runs Experiment 2 of the paper (spec §6) over its default grid: stream
{quadratic, logistic} × τ {5, 10, 20} × deletion mode {recent, random,
high-gradient} × κ {10, 100} × seed {1, 2, 3}, drift on — 108 configurations at
the paper's sizes (d = 25, T = 5000, t_del = 500, H = 4500, |U| = 5, m_q = 32).
Every operator of the paper is propagated beside the reference counterfactual
on the same future events, every metric is recorded at every step, and the five
summary tables of the paper's results section are printed as Markdown.

The results folder (--out) is written atomically (a temporary folder beside it
is renamed at the end): manifest.json (with the grid, the command line and the
version), records/ (one JSON run record per configuration), summaries.csv,
tables.md and tables/*.csv, and series/ (per-step series as CSV). The records
keep the per-step series of one representative configuration (the paper's
default: quadratic, τ = 10, recent deletions, κ = 10, the smallest seed; about
5 MB with its CSV) for the report's trajectory figure, or of every one with
--series. At the end, bench writes the report of the results into DIR/report
(see "unlearn report"; --no-report skips it).

A run of the whole grid (no --shard) also measures the tightness of the
certified α: it reruns each configuration up to the release with a
certifiable variant of the learner (radius, sample bound and pair guard from
the generators' public parameters; experiment.CertifiableConfig), and for every
intervention writes the α a certified release would be calibrated to beside the
actual deviation ‖w̃ − w⁻‖₂ from the counterfactual, into tightness.json and
tables/tightness-*.csv; the report shows them as tables and a figure. The
paper's grid adds the isotropic quadratic streams (κ = 1), where the toolkit's
recursion, not the diameter, gives α. The summary tables are unchanged: they use
the paper's learner.

Sharding: --shard K/N runs the configurations whose index i satisfies
i mod N = K, with K numbered from 0 (0 ≤ K < N), as Kubernetes indexed Jobs
($JOB_COMPLETION_INDEX) and Slurm arrays declared --array=0-(N-1)
($SLURM_ARRAY_TASK_ID) number their tasks; with GNU parallel use {%} minus 1.
Give each shard its own --out and join them with "unlearn merge".

Results do not depend on --workers or --shard: records are bit-identical apart
from their wall-clock timing (drop it with --zero-timing).

Real data: --data FILE runs the same benchmark on a data set (CSV, LIBSVM or
IDX, read as by "unlearn convert", with the same flags) instead of the
synthetic streams, over τ (--taus) × deletion mode (--modes) × seed (--seeds).
Each seed streams the first --events selected rows of the file in its own
seeded random order (the convert --shuffle-seed order) and seeds the deletions
and probes; t_del is --t-del and H the rest of the stream. The file is checked
in full and hashed first; the records name it with its SHA-256. See
docs/data.md and docs/results-real.md.`,
		Example: `  unlearn bench                                  # full grid into ./results
  unlearn bench --quick --out /tmp/quick         # 8 small configurations
  unlearn bench --shard 0/4 --out results-0      # one of 4 shards
  unlearn merge results-0 results-1 results-2 results-3 --out results
  unlearn bench --data /usr/share/datasets/fashion-mnist/train-images-idx3-ubyte.gz \
      --classes 0,6 --events 5000 --out results-fashion`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			sh, err := experiment.ParseShard(shard)
			if err != nil {
				return flagError("shard", "%v", err)
			}
			if workers < 0 {
				return flagError("workers", "%d must be non-negative (0: one per CPU)", workers)
			}
			if out == "" {
				return flagError("out", "must not be empty")
			}
			if quick && unstable {
				return flagError("unstable-logistic", "not available with --quick")
			}
			if err := new(paths).dataFile("--data", data, &df).outDir("--out", out).out("--cpuprofile", cpuProfile).check(); err != nil {
				return err
			}
			grid := experiment.DefaultGrid()
			ref := report.Reference{}
			switch {
			case data != "":
				if quick || unstable {
					return flagError("data", "not available with --quick or --unstable-logistic")
				}
				g, kind, err := dataGrid(cmd, data, &df, events, tdel, mq, taus, modes, seeds)
				if err != nil {
					return err
				}
				grid, ref.Kind = g, kind
			case quick:
				grid = experiment.QuickGrid()
			case unstable:
				grid = experiment.UnstableGrid()
			}
			if data == "" {
				if err := onlyWithData(cmd.Flags()); err != nil {
					return err
				}
				for _, name := range benchDataFlags {
					if cmd.Flags().Changed(name) {
						return flagError(name, "only with --data")
					}
				}
			}
			if cpuProfile != "" {
				stop, err := startCPUProfile(cpuProfile)
				if err != nil {
					return flagError("cpuprofile", "%v", err)
				}
				defer stop()
			}
			n := len(sh.Indices(len(grid.Configs)))
			ctx, cancel := signalContext(cmd.Context())
			defer cancel()
			bar := newProgress(cmd.ErrOrStderr(), n, "bench "+grid.Name)
			start := time.Now()
			res, err := experiment.RunGrid(ctx, grid, experiment.Options{
				Workers: workers, Shard: sh, KeepSeries: series, ZeroTiming: zero, Progress: bar.update,
				KeepSeriesOf: report.SeriesConfigs(grid, ref),
			})
			bar.finish()
			if err != nil {
				return interrupted(err)
			}
			wall := time.Since(start)
			res.Manifest.Provenance = provenance(cmd, nil)
			if err := experiment.WriteResults(out, res, experiment.TableOptions{}); err != nil {
				return err
			}
			fmt.Fprintf(cmd.ErrOrStderr(), "%d configurations (grid %s, shard %s) in %v; wrote %s\n",
				n, grid.Name, sh, wall.Round(time.Millisecond), out)
			if n == len(grid.Configs) {
				if err := writeTightness(ctx, cmd.ErrOrStderr(), out, grid, !quick, workers); err != nil {
					return interrupted(err)
				}
			}
			if err := writeResultsReport(cmd.ErrOrStderr(), res, out, noReport); err != nil {
				return err
			}
			return printTables(cmd.OutOrStdout(), res)
		},
	}
	f := cmd.Flags()
	f.StringVarP(&out, "out", "o", "results", "results folder (replaced atomically if it is a results folder or empty)")
	f.BoolVar(&quick, "quick", false, "run the small smoke-test grid (8 configurations, d = 8, T = 300) instead of the paper's")
	f.BoolVar(&unstable, "unstable-logistic", false, "logistic streams with feature covariance eigenvalues in [1, κ] (the chaotic regime of spec §1.2) instead of [1/κ, 1]")
	f.IntVar(&workers, "workers", 0, "configurations run in parallel (0: GOMAXPROCS)")
	f.StringVar(&shard, "shard", "", "run only shard K/N: configurations i with i mod N = K, K from 0")
	f.BoolVar(&series, "series", false, "keep every configuration's per-step series in the records and series/*.csv (about 400 MB for the full grid; by default only one representative configuration's)")
	f.BoolVar(&zero, "zero-timing", false, "omit wall-clock times, so that outputs are bit-identical across runs")
	f.BoolVar(&noReport, "no-report", false, "do not write the report (DIR/report) at the end")
	f.StringVar(&cpuProfile, "cpuprofile", "", "write a CPU profile of the run to this file")
	f.StringVar(&data, "data", "", "run on this data set (CSV, LIBSVM or IDX) instead of the synthetic streams")
	df.add(f, 0)
	f.IntVar(&events, "events", experiment.Exp2T, "with --data: events T per stream, the first T rows of each seed's order (at most the rows selected)")
	f.IntVar(&tdel, "t-del", experiment.Exp2TDel, "with --data: deletion time t_del (H = T − t_del)")
	f.IntVar(&mq, "mq", experiment.DefaultProbes, "with --data: number of probe vectors m_q")
	f.IntSliceVar(&taus, "taus", []int{5, 10, 20}, "with --data: memory sizes τ")
	f.StringSliceVar(&modes, "modes", []string{experiment.ModeRecent, experiment.ModeRandom, experiment.ModeHighGradient}, "with --data: deletion modes")
	f.UintSliceVar(&seeds, "seeds", []uint{1, 2, 3}, "with --data: seeds (stream order, deletions, probes)")
	return cmd
}

// benchDataFlags are bench's own flags (beside the data flags) that apply
// to --data runs only.
var benchDataFlags = []string{"events", "t-del", "mq", "taus", "modes", "seeds"}

// dataGrid builds the benchmark grid of bench --data: the file is read in
// full once (checked, counted, hashed), then τ × mode × seed.
func dataGrid(cmd *cobra.Command, path string, df *dataFlags, events, tdel, mq int,
	taus []int, modes []string, seeds []uint) (experiment.Grid, stream.Kind, error) {
	opts, err := df.options(cmd.Flags())
	if err != nil {
		return experiment.Grid{}, "", err
	}
	switch {
	case events < 1:
		return experiment.Grid{}, "", flagError("events", "%d must be positive", events)
	case tdel < 1 || tdel >= events:
		return experiment.Grid{}, "", flagError("t-del", "%d must be in [1, --events)", tdel)
	case mq < 1:
		return experiment.Grid{}, "", flagError("mq", "%d must be positive", mq)
	case len(taus) == 0 || slices.ContainsFunc(taus, func(t int) bool { return t < 1 }):
		return experiment.Grid{}, "", flagError("taus", "%v: want positive memory sizes", taus)
	case len(seeds) == 0:
		return experiment.Grid{}, "", flagError("seeds", "want at least one seed")
	case len(modes) == 0:
		return experiment.Grid{}, "", flagError("modes", "want at least one deletion mode")
	}
	for _, m := range modes {
		if !slices.Contains(experiment.Modes, m) {
			return experiment.Grid{}, "", flagError("modes", "%q: want recent, old, random or high-gradient", m)
		}
	}
	src, hdr, err := experiment.DataFile(path, opts)
	if err != nil {
		return experiment.Grid{}, "", dataOptionError(err)
	}
	if src.Rows <= tdel {
		return experiment.Grid{}, "", flagError("t-del", "%d leaves no future events: %s selects %d rows", tdel, path, src.Rows)
	}
	base := experiment.Experiment2()
	base.Stream.T, base.TDel, base.Horizon, base.Probes = min(events, src.Rows), tdel, 0, mq
	axes := experiment.GridAxes{Taus: taus, Modes: modes}
	for _, s := range seeds {
		axes.Seeds = append(axes.Seeds, uint64(s))
	}
	fmt.Fprintf(cmd.ErrOrStderr(), "data %s: %d rows selected, %s stream, d = %d; T = %d events per seed\n",
		path, src.Rows, hdr.Kind, hdr.D, base.Stream.T)
	return experiment.DataGrid("data", axes, base, src, hdr.D), hdr.Kind, nil
}

// printTables prints the results' tables as Markdown.
func printTables(w io.Writer, res *experiment.Results) error {
	tables, err := res.Tables(experiment.TableOptions{})
	if err != nil {
		return err
	}
	if !res.Complete() {
		fmt.Fprintf(w, "_Partial results: %d of %d configurations (shards %v)._\n\n",
			len(res.Records), len(res.Manifest.Grid.Configs), res.Manifest.Shards)
	}
	return experiment.WriteTablesMarkdown(w, tables)
}

// signalContext returns a context cancelled by SIGINT or SIGTERM, so that
// an interrupted run stops between steps and writes nothing.
func signalContext(parent context.Context) (context.Context, context.CancelFunc) {
	if parent == nil {
		parent = context.Background()
	}
	return signal.NotifyContext(parent, os.Interrupt, syscall.SIGTERM)
}

// interrupted rewords a cancellation.
func interrupted(err error) error {
	if errors.Is(err, context.Canceled) {
		return fmt.Errorf("interrupted; no results were written: %w", err)
	}
	return err
}

// startCPUProfile starts a CPU profile into path and returns its stop
// function.
func startCPUProfile(path string) (func(), error) {
	f, err := os.Create(path)
	if err != nil {
		return nil, err
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		f.Close()
		return nil, err
	}
	return func() {
		pprof.StopCPUProfile()
		f.Close()
	}, nil
}

// progress reports the progress of a long command on stderr: a bar with
// ETA when stderr is a terminal, and otherwise (a log file, a CI job, a
// pipe) a plain line every logInterval, such as
//
//	bench paper: 12/108 (11%), 1m0s elapsed, about 7m20s left
//
// so that a batch log shows a long run is alive. Nothing is printed for
// runs shorter than logInterval.
type progress struct {
	bar *progressbar.ProgressBar

	// The plain-line reporter (bar == nil).
	w           io.Writer
	desc        string
	total       int
	start, last time.Time
	now         func() time.Time
}

// logInterval is the time between two progress lines when stderr is not a
// terminal.
const logInterval = 5 * time.Second

// newProgress returns a progress reporter for total items on w.
func newProgress(w io.Writer, total int, desc string) *progress {
	f, ok := w.(*os.File)
	if !ok || !term.IsTerminal(int(f.Fd())) {
		t := time.Now()
		return &progress{w: w, desc: desc, total: total, start: t, last: t, now: time.Now}
	}
	return &progress{bar: progressbar.NewOptions(total,
		progressbar.OptionSetWriter(f),
		progressbar.OptionSetDescription(desc),
		progressbar.OptionShowCount(),
		progressbar.OptionSetPredictTime(true),
		progressbar.OptionSetElapsedTime(true),
		progressbar.OptionThrottle(100*time.Millisecond),
		progressbar.OptionClearOnFinish(),
	)}
}

// update is an experiment.Options.Progress callback.
func (p *progress) update(done, total int) {
	if total > p.total {
		// The work grew (an audit that draws its selection split again).
		p.total = total
		if p.bar != nil {
			p.bar.ChangeMax(total)
		}
	}
	if p.bar != nil {
		_ = p.bar.Set(done) // drawing errors are not worth failing a run for
		return
	}
	if p.w == nil {
		return
	}
	t := p.now()
	if t.Sub(p.last) < logInterval {
		return
	}
	p.last = t
	elapsed := t.Sub(p.start)
	line := fmt.Sprintf("%s: %d/%d", p.desc, done, p.total)
	if p.total > 0 {
		line += fmt.Sprintf(" (%d%%)", 100*done/p.total)
	}
	line += fmt.Sprintf(", %v elapsed", elapsed.Round(time.Second))
	if done > 0 && done < p.total {
		left := time.Duration(float64(elapsed) * float64(p.total-done) / float64(done))
		line += fmt.Sprintf(", about %v left", left.Round(time.Second))
	}
	fmt.Fprintln(p.w, line)
}

func (p *progress) finish() {
	if p.bar != nil {
		_ = p.bar.Finish()
	}
}
