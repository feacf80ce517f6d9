// Package experiment runs the paper's two experiments (spec §6) and turns
// their results into records and tables. It orchestrates; the science lives
// elsewhere: the learner in olbfgs, the operators in unlearn, the metrics in
// align, the streams and deletion modes in stream.
//
// # Runs
//
// A [Config] is one run. The conventions are spec §8's: events are
// e_1..e_T, the prefix is e_1..e_{t_del}, post-deletion state k follows
// e_{t_del+k} (k = 0 is the state right after the intervention), and
// t_del + H ≤ T. [RunHistory] (or [Run] for a generated stream):
//
//  1. trains the actual learner θ on the prefix from θ0, keeping
//     checkpoints with window 5τ from θ0 (for window replay, spec §5);
//  2. chooses U from the prefix by the deletion mode (spec §4) at θ_{t_del},
//     or takes it id by id; delete events inside the prefix join U;
//  3. replays the deletion-edited prefix from θ0: the reference θ⁻;
//  4. applies every operator (unlearn.Operator) to (θ, prefix, U);
//  5. steps the reference and every intervened state on the same future
//     events e_{t_del+1}..e_{t_del+H} (a delete after t_del changes no
//     state), and measures E_w, E_Z, E_Θ = E_w + λ_Z E_Z, D_upd and
//     M_direct of every state against the reference at every k = 0..H
//     (spec §3) with one align.Engine, whose reference probe block is
//     computed once per step and shared by every method.
//
// Step 5 measures and steps each distinct state once. A state bitwise
// identical to the reference has every error 0 and follows the reference's
// step (olbfgs.Learner.Follow); a state bitwise equal to an earlier
// operator's state (a twin: w, memory pairs and sources, configuration and
// loss — the no-op and pair-drop when no pair holds a deleted sample) takes
// a copy of that state's point and follows its step. Twins are found again
// at every step, so states that part are measured apart from then on and
// states that meet are caught; records are bit for bit those of measuring
// every state.
//
// Experiment 1 (finite-memory decay) is a run with the no-op operator
// alone: the actual trajectory against the counterfactual, with the
// clearance time and the decay fits ρ̂ per phase P1 = [0, τ), P2 = [τ, 2τ),
// P3 = [2τ, H]. Experiment 2 (the state-aware benchmark) runs every
// operator of unlearn.Paper(τ), or a caller's list.
//
// # Grids, workers and shards
//
// A [Grid] is an ordered list of configurations; [DefaultGrid] is the
// paper's 108 configurations (stream × τ × mode × κ × seed, seed
// innermost). [RunGrid] runs a grid on a pool of workers (errgroup;
// GOMAXPROCS by default). Each configuration is a pure function of its
// Config, so records are bit-identical whatever the number of workers. A
// [Shard] k/n (k from 0) selects the configurations i ≡ k (mod n), for batch
// schedulers; [Merge] joins the shards' [Results] back into exactly the
// results, and tables, of a single run, refusing overlapping or foreign
// shards.
//
// # Records
//
// A [Record] is data first: the resolved configuration, the stream's
// provenance (generator parameters, or the file and its SHA-256), U, the
// probes (by generator, seed and m_q — [ProbeSpec], drawn again by
// [Record.ProbeVectors] — or as given vectors), each method's costs,
// summaries and (optionally) per-step series — everything another
// implementation of the spec needs to reproduce the series from the same stream.
// [WriteRecordFiles] puts the series in a CSV file beside the JSON
// (Record.SeriesFile) and [ReadRecordFile] reads both; [ReadRecord] also
// reads records of the first format, [RecordFormatV1]. Wall-clock times live apart, in
// Record.Timing, the one non-deterministic field ([Record.ZeroTiming]).
// NaN (an undefined D_upd or ρ̂) is JSON null. Series are kept for every
// configuration with Options.KeepSeries, or for chosen grid indices with
// Options.KeepSeriesOf (a representative subset for figures). A
// [Provenance] — the command line and version that made the results — is
// set by the front end on the Manifest of a results folder or on a
// standalone Record; the runners leave it nil. Figures and reports of
// records are package report's.
//
// # Tables
//
// [BuildTables] computes the five summary tables of the paper's results
// section from per-configuration records (spec §6, §8): global comparison,
// ratios vs. no-op, memory horizon (by τ), deletion mode, stream kind.
// Ratios are taken per configuration and then aggregated, with x/0 = ∞ for
// x > 0 and 0/0 = 1; medians everywhere except means, shares and rates;
// "better than no-op" is a ratio < 1 strictly; "best non-oracle" has one
// winner per configuration, ties to the earlier method. Tables print as
// Markdown and export as CSV.
//
// # Output folders
//
// [WriteResults] writes a results folder atomically: into a temporary
// folder beside the target, renamed at the end, each file itself written
// through a temporary file and a rename. An interrupted run leaves the
// previous folder or the new one, never a half-written folder that looks
// complete (a finished folder is one with a manifest.json).
//
// # Errors
//
// Configuration problems are *[ConfigError] values (matching ErrConfig)
// naming the field; runs that fail wrap ErrRun; unreadable records and
// folders wrap ErrRecord; Merge refuses with ErrIncompatible, ErrOverlap or
// ErrIncomplete. The package never logs or prints.
package experiment
