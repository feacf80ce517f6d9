// Package report turns run records into the figures of the paper's results
// section (Stewart 2026, "Form and Function", figures referenced by their
// \label) and into self-contained reports. It computes nothing but
// aggregates of records (medians over seeds or configurations) and never
// reads numbers from anywhere else.
//
// # Figures
//
// [Figures] computes, from records of package experiment, every figure the
// records support:
//
//	ID                          paper \label                                          records
//	decay-rates-KIND            fig:experiment-1-KIND-exponential-decay-rate          Experiment 1 summaries (ρ̂ per phase)
//	decay-memory-KIND           fig:experiment-1-quadratic-memory-size-variant        Experiment 1 series (E_Θ by τ, τ and 2τ lines)
//	decay-decomposition-KIND    fig:experiment-1-quadratic-state-error-decomposition  Experiment 1 series (E_w and E_Z by τ)
//	decay-heatmap-KIND          fig:experiment-1-quadratic-residual-error-heatmap     Experiment 1 summaries (E_Θ(H) over κ × τ)
//	decay-modes-KIND            fig:experiment-1-quadratic-sampling-intervention      Experiment 1 series (E_Θ by deletion mode)
//	decay-mode-summary          fig:experiment-1-deletion-mode-comparison             Experiment 1 summaries (E_Θ(0), AUC by mode)
//	decay-mass-KIND             (none: M_direct and ĥ_direct of Experiment 1)         Experiment 1 series (M_direct, clearance)
//	bench-trajectories          fig:experiment-1-quadratic-state-error-decomposition  one Experiment 2 record's series (E_w, E_Z per method)
//	bench-efficiency-KIND       fig:experiment-2-KIND-efficiency-plot                 Experiment 2 summaries and costs
//	bench-modes                 fig:state-aware-grid-errors                           Experiment 2 summaries (AUC, ratio by mode)
//	bench-tightness             (none: certified α against the actual deviation)      experiment.Tightness ([Report.AddTightness])
//
// KIND is each stream kind present (quadratic, logistic). The paper gives
// the label fig:experiment-1-quadratic-state-error-decomposition to two
// figures: the memory-size decomposition of Experiment 1 and the
// 4500-step trajectories of every intervention of Experiment 2.
//
// Figures that vary one axis hold the others at a [Reference]
// configuration (the paper's defaults τ = 10, recent deletions, κ = 10,
// or the nearest value the records have) and take medians over seeds. The
// bench command keeps per-step series only for the reference configuration
// ([SeriesConfigs], experiment.Options.KeepSeriesOf); decay keeps them all.
//
// # Data and drawing
//
// A [Figure] is plain data — panels of series, reference marks and heat
// maps, axis labels with units, captions — that encodes as JSON and is
// what the golden tests compare. [Figure.WritePNG] and [Figure.WriteSVG]
// draw it with gonum.org/v1/plot; the same figure gives the same bytes
// (gonum/plot writes no timestamps or random identifiers). Conventions:
//
//   - Axes whose data span decades are logarithmic; values a log axis
//     cannot show are dropped from lines (gaps) or drawn on a dotted floor
//     line one decade below the smallest positive value, where the axis
//     reads "0" (no power of ten is labelled between it and the next
//     decade), and the caption
//     says which and how many. Event and gradient-evaluation counts on log
//     axes are shifted by +1.
//   - Legends name methods by their operator's Label(), as the tables do;
//     a method keeps its colour, dash and marker in every figure.
//   - Long series are thinned to Options.MaxPoints (600) points per line:
//     finer than the pixels of a panel.
//   - Axis labels may carry "_{…}" and "^{…}", drawn as sub- and
//     superscripts.
//
// # Reports
//
// [FromResults] (a results folder: a bench grid, merged shards, a decay
// folder) and [FromRecord] (a single run record) build a [Report]: the
// command, version and seeds that made the results (their
// experiment.Provenance), the configuration, the summary tables and the
// figures. [Report.Write] writes report.html (one self-contained page,
// figures embedded as base64 PNG), report.md with figures/ID.png and
// figures/ID.svg beside it, and figures.json (the figure data), into a
// folder replaced atomically. [Report.AddTightness] adds the tightness
// tables and figure of experiment.RunTightness ([TightnessFigure]).
//
// # Errors
//
// Records that cannot be drawn give errors wrapping [ErrRecords];
// malformed figures (built by hand) errors wrapping [ErrFigure]. The
// package never prints and does not panic on data: gonum/plot's panics on
// degenerate input are recovered into ErrFigure.
package report
