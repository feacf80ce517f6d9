package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"runtime/debug"
	"strings"

	"github.com/spf13/cobra"
	"gonum.org/v1/gonum/floats"

	"unlearn/audit"
	"unlearn/certify"
	"unlearn/experiment"
	"unlearn/noise"
	"unlearn/olbfgs"
	"unlearn/stream"
	"unlearn/unlearn"
)

func init() { register(newAuditCmd) }

// exitViolation ends the process with status 3 after an audit found a
// violation; tests replace it.
var exitViolation = func() { os.Exit(3) }

// auditRecord is the JSON report of `unlearn audit`: the audit beside what
// was audited.
type auditRecord struct {
	Format       string        `json:"format"`
	Toolkit      string        `json:"toolkit"`
	Stream       auditStream   `json:"stream"`
	TDel         int           `json:"t_del"`
	Tau          int           `json:"tau"`
	Eta          float64       `json:"eta"`
	U            []int64       `json:"u"`
	Intervention string        `json:"intervention"`
	Release      auditRelease  `json:"release"`
	Audit        *audit.Report `json:"audit"`
}

type auditStream struct {
	File   string `json:"file"`
	SHA256 string `json:"sha256"`
	Kind   string `json:"kind"`
	D      int    `json:"d"`
	T      int    `json:"t"`
}

// auditRelease describes the release the audit tested.
type auditRelease struct {
	// Mechanism says what each world publishes.
	Mechanism string `json:"mechanism"`
	// Alpha is the sensitivity σ was calibrated to (derived, or --alpha);
	// Sigma the σ.
	Alpha float64 `json:"alpha"`
	Sigma float64 `json:"sigma"`
	// Distance is the true ‖w_A − w_B‖₂ of the un-noised worlds: a release
	// calibrated to an α below it is unsound.
	Distance float64 `json:"distance"`
}

// auditWorlds wires the release under audit: the toolkit's certified
// release (certify.Certify) of each world's un-noised state with ONE spec,
// whose α is derived from the request's public description exactly as
// certify.Wrap derives it (or the user's assumed α, or the diameter bound
// for an operator the toolkit does not know), so σ is the same in both
// worlds by construction. When the toolkit establishes the intervention is
// exact, both worlds publish their un-noised states, memory included (they
// are equal bit for bit, and the audit finds ε_lb = 0).
func auditWorlds(a, b *olbfgs.Learner, req unlearn.Request, op unlearn.Operator, spec certify.Spec) (ma, mb audit.Mechanism, rel auditRelease, err error) {
	rel.Distance = floats.Distance(a.W(), b.W(), 2)
	del, exact := certify.Describe(op, req)
	if exact != "" && spec.Alpha == nil {
		rel.Mechanism = "exact (" + exact + "): the un-noised state, memory included"
		return audit.Gaussian(a.W(), audit.Flatten(a.Memory()), 0), audit.Gaussian(b.W(), audit.Flatten(b.Memory()), 0), rel, nil
	}
	if spec.Alpha == nil {
		spec.Deletion = del
	}
	probe := spec
	probe.Sampler = noise.NewSeededSampler(0, noise.SamplerOptions{})
	_, cert, err := certify.Certify(a, probe)
	if err != nil {
		var se *certify.SpecError
		if errors.As(err, &se) && se.Field == "Config.Radius" {
			return nil, nil, rel, flagError("radius", "the learner has no radius, so the toolkit derives no α: give --radius (and --sample-bound and the pair guard for the recursion), or --alpha to test an assumed α")
		}
		return nil, nil, rel, certifyFlagError(err)
	}
	alphaHow := cert.Sensitivity.Source
	if cert.Provenance.String() != alphaHow {
		alphaHow += " (" + cert.Provenance.String() + ")"
	}
	rel.Mechanism = fmt.Sprintf("certify.Certify: w projected onto the learner's ball + N(0, σ²I), memory %s; α %s", cert.Memory, alphaHow)
	rel.Alpha, rel.Sigma = cert.Sensitivity.Alpha, cert.Sigma
	return audit.Certified(a, spec), audit.Certified(b, spec), rel, nil
}

func newAuditCmd() *cobra.Command {
	var (
		in, out, mode, intervention string
		memory                      string
		certifiable                 certifiableFlags
		tdel, tau, count, trials    int
		eta, eps, delta, alpha      float64
		gamma, selection            float64
		seed, noiseSeed             uint64
		ids                         []int64
		storeDir                    string
		maxReplay                   int
	)
	def := experiment.Experiment2()
	cmd := &cobra.Command{
		Use:   "audit (--stream FILE --intervention NAME [--radius W …] [--alpha A] [--ids IDS | --mode MODE --count N] | --store DIR --ids IDS [--max-replay N --intervention NAME]) --epsilon E --delta D",
		Short: "Measure what a release leaks: a lower confidence bound on ε from trials of unlearned vs retrained releases",
		Long: `audit tests a certified release empirically (docs/audit.md). It trains the
o-LBFGS learner on the prefix e_1..e_{t_del} of the stream and builds two worlds:

  A  unlearned: the intervention (--intervention, one of unlearn's operators)
     applied to the trained learner with deletion set U, then released;
  B  retrained: the learner replayed on the deletion-edited prefix (oracle
     replay), released the same way.

Both worlds are released by the toolkit's certified release (certify.Certify)
with one spec: α derived from the request's public description as certify.Wrap
derives it (the learner needs --radius, and for the recursion --sample-bound and
the pair guard; see 'unlearn train'), or --alpha to test an assumed α; the memory
reset or rebuilt (--memory). σ therefore depends on public quantities only and
is the same in both worlds. An intervention the toolkit establishes as exact
releases the un-noised state in both worlds. The un-noised states are computed
once (they are deterministic given the data); each of the --trials trials per
world draws fresh noise, from the secure sampler, or with --seeded-noise SEED
from a seeded one (seeded: for speed, not deployment).

The first --selection share of each world's trials chooses two tests: the
likelihood-ratio test along the mean difference (optimal for Gaussian releases)
and the best black-box statistic of the whole artifact. The rest bounds each
test's false-positive and false-negative rates with one-sided Clopper–Pearson
bounds at confidence 1 − γ/4 each (Bonferroni), and

  ε_lb = max over the tests of max(0, ln((1 − δ − FNR)/FPR), ln((1 − δ − FPR)/FNR))

(Jagielski, Ullman & Oprea 2020; Nasr et al. 2021) is a lower confidence bound on
the release's ε at level 1 − γ. On a sound release the audit reports a violation
with probability at most γ (--gamma, default 1e-5).

With --store DIR the audit tests a model store instead of a stream: world A is
the store's own forget of --ids (exact by replay, or with --max-replay N the
store's --intervention when the replay would exceed N events, as 'unlearn
forget' serves it) followed by the store's release (as 'unlearn release'
publishes it: exact, α derived from the pending request, or the diameter);
world B is the replay of the deletion-edited log from θ0, released with the same
α, σ and memory policy. The store is never modified: the audit copies its
database to a temporary directory and works on the copy. The report says which
forget path world A took and why. The stream's flags (--t-del, --tau, --eta,
--alpha, --mode, --count, the learner's) do not apply.

U is --ids, or chosen by --mode (recent, old, random, high-gradient) with --count
ids (random mode seeded by --seed); delete events inside the prefix join U.

The last line printed states ε_lb, the certified ε and the verdict. Exit status:
0 consistent (ε_lb ≤ ε), 3 VIOLATION (ε_lb > ε), 2 bad command line, 1 other
errors. --out writes the JSON report (unlearn-audit/v1).`,
		Example: `  unlearn gen --kind quadratic --seed 1 --out q.jsonl
  # α at the true ‖w_A − w_B‖ (0.1496 here, printed by the audit): consistent
  unlearn audit --stream q.jsonl --intervention memory-reset --alpha 0.15 --epsilon 1 --delta 1e-5
  # α a tenth of it, so σ is ten times too small: VIOLATION, exit status 3
  unlearn audit --stream q.jsonl --intervention noop --alpha 0.015 --epsilon 1 --delta 1e-5 \
      --seeded-noise 7 --out audit.json
  # a model store: its approximate forget path and its derived-α release
  unlearn audit --store model --ids 17,42 --max-replay 100 --intervention memory-reset \
      --epsilon 1 --delta 1e-5`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			fl := cmd.Flags()
			if err := new(paths).in("--stream", in).store("--store", storeDir).out("--out", out).check(); err != nil {
				return err
			}
			if storeDir != "" {
				return runStoreAudit(cmd, storeDir, ids, maxReplay, intervention, memory, eps, delta, out,
					audit.Config{Trials: trials, SelectionFraction: selection, Gamma: gamma, Seeded: fl.Changed("seeded-noise"), Seed: noiseSeed})
			}
			if in == "" {
				return flagError("stream", "required (or --store)")
			}
			if intervention == "" {
				return flagError("intervention", "required (%s)", strings.Join(operatorNames(1), ", "))
			}
			for _, name := range []string{"epsilon", "delta"} {
				if !fl.Changed(name) {
					return flagError(name, "required")
				}
			}
			if fl.Changed("ids") && (fl.Changed("mode") || fl.Changed("count")) {
				return flagError("ids", "give either --ids or --mode/--count, not both")
			}
			if err := positiveFlags(map[string]float64{"t-del": float64(tdel), "eta": eta, "count": float64(count)}); err != nil {
				return err
			}
			if tau < 0 {
				return flagError("tau", "%d must be non-negative", tau)
			}
			if err := checkTrials(trials, gamma, selection); err != nil {
				return err
			}
			if fl.Changed("alpha") {
				if _, err := noise.SigmaAnalytic(alpha, eps, delta); err != nil {
					return noiseFlagError(err) // before any training
				}
			}
			pol, err := certify.ParseMemoryPolicy(memory)
			if err != nil || pol == certify.Exact {
				return flagError("memory", "%q: want reset or rebuild", memory)
			}
			if _, err := stream.ParseMode(mode); err != nil && len(ids) == 0 {
				return flagError("mode", "%q: want recent, old, random or high-gradient", mode)
			}
			var op unlearn.Operator
			for _, o := range unlearn.Paper(tau) {
				if o.Name() == intervention {
					op = o
				}
			}
			if op == nil {
				return flagError("intervention", "%q: want one of %s", intervention, strings.Join(operatorNames(tau), ", "))
			}

			h, src, err := experiment.StreamFile(in)
			if err != nil {
				return err
			}
			if tdel > len(h.Events) {
				return flagError("t-del", "%d exceeds the stream's %d events", tdel, len(h.Events))
			}
			cfg := olbfgs.DefaultConfig(h.Header.D)
			cfg.Memory, cfg.StepSize = tau, eta
			certifiable.apply(&cfg)
			if err := cfg.Validate(); err != nil {
				return configFlagError(err)
			}
			prefix := h.Prefix(tdel)
			u, err := auditDeletionSet(cfg, h.Loss, prefix, ids, mode, count, seed)
			if err != nil {
				return err
			}
			a, b, err := audit.Worlds(cfg, h.Loss, prefix, u, op)
			if err != nil {
				return err
			}
			spec := certify.Spec{Epsilon: eps, Delta: delta, Memory: pol, Header: &h.Header}
			if fl.Changed("alpha") {
				spec.Alpha = &certify.Given{Alpha: alpha, Method: "--alpha"}
			}
			if pol == certify.Rebuild {
				spec.Retained = stream.Counterfactual(stream.LastInserts(prefix, tau), u)
			}
			actual, err := olbfgs.New(cfg, h.Loss)
			if err != nil {
				return err
			}
			if err := actual.Run(prefix); err != nil {
				return err
			}
			req := unlearn.Request{Actual: actual, Prefix: prefix, U: u}
			ma, mb, rel, err := auditWorlds(a, b, req, op, spec)
			if err != nil {
				return err
			}

			ctx, cancel := signalContext(cmd.Context())
			defer cancel()
			limitAuditMemory()
			bar := newProgress(cmd.ErrOrStderr(), 2*trials, "audit")
			acfg := audit.Config{
				A: ma, B: mb, Epsilon: eps, Delta: delta,
				Trials: trials, SelectionFraction: selection, Gamma: gamma,
				Seeded: fl.Changed("seeded-noise"), Seed: noiseSeed,
				Progress: bar.update,
			}
			rep, err := audit.Run(ctx, acfg)
			bar.finish()
			if err != nil {
				return interrupted(auditFlagError(err))
			}
			rec := auditRecord{
				Format: "unlearn-audit/v1", Toolkit: "unlearn " + version,
				Stream: auditStream{File: src.File, SHA256: src.SHA256, Kind: src.Kind, D: src.D, T: src.T},
				TDel:   tdel, Tau: tau, Eta: eta, U: u.Sorted(), Intervention: op.Name(),
				Release: rel, Audit: rep,
			}
			if out != "" {
				if err := writeAtomic(out, func(w io.Writer) error {
					enc := json.NewEncoder(w)
					enc.SetIndent("", "  ")
					return enc.Encode(rec)
				}); err != nil {
					return err
				}
				fmt.Fprintf(cmd.ErrOrStderr(), "wrote %s\n", out)
			}
			if err := writeAuditSummary(cmd.OutOrStdout(), &rec); err != nil {
				return err
			}
			if rep.Verdict == audit.Violation {
				exitViolation()
			}
			return nil
		},
	}
	f := cmd.Flags()
	f.StringVar(&in, "stream", "", "stream file (JSON Lines, spec §1.1) (required unless --store)")
	f.StringVar(&storeDir, "store", "", "audit this model store's forget of --ids and its release instead of a stream (the store is not modified)")
	f.IntVar(&maxReplay, "max-replay", 0, "with --store: the forget's replay cap; above it the store's --intervention serves the request (0: exact)")
	f.StringVar(&intervention, "intervention", "", "the unlearning operator of world A: "+strings.Join(operatorNames(def.Tau), ", ")+" (required)")
	f.Float64Var(&alpha, "alpha", 0, "test an assumed α instead of the one the toolkit derives")
	f.StringVar(&memory, "memory", "reset", "memory released: reset or rebuild")
	certifiable.register(f)
	f.Float64Var(&eps, "epsilon", 0, "certified ε > 0 (required)")
	f.Float64Var(&delta, "delta", 0, "certified δ ∈ (0, 1) (required)")
	f.IntVar(&tdel, "t-del", def.TDel, "deletion time t_del: the prefix is e_1..e_{t_del}")
	f.IntVar(&tau, "tau", def.Tau, "memory size τ")
	f.Float64Var(&eta, "eta", def.Eta, "step size η")
	f.Int64SliceVar(&ids, "ids", nil, "deletion set U, as ids of inserts of the prefix (ID,ID,…)")
	f.StringVar(&mode, "mode", def.Mode, "deletion mode: recent, old, random or high-gradient")
	f.IntVar(&count, "count", def.Count, "deletion size |U| for --mode")
	f.Uint64Var(&seed, "seed", 1, "seed of the random deletion mode")
	f.IntVar(&trials, "trials", audit.DefaultTrials, "trials n per world (the default d = 25 audit takes ≈ 3.5 s CPU with the secure sampler; docs/audit.md)")
	f.Float64Var(&selection, "selection", audit.DefaultSelectionFraction, "share of each world's trials that chooses the tests")
	f.Float64Var(&gamma, "gamma", audit.DefaultGamma, "γ: ε_lb holds at confidence 1 − γ; the false-alarm probability on a sound release")
	f.Uint64Var(&noiseSeed, "seeded-noise", 0, "draw noise from a seeded sampler with this seed (seeded: for speed, not deployment); default: secure")
	f.StringVarP(&out, "out", "o", "", "write the JSON report to this file")
	return cmd
}

// auditMemoryLimit is the Go runtime's soft memory limit during an audit
// (unless GOMEMLIMIT sets one): the selection split's budget
// (audit.DefaultMemoryBudget) plus 72 MiB for the worlds' states, the
// mechanisms and the runtime. Every trial's release is garbage a moment
// later; without the limit the collector lets the heap grow to twice what
// is live, and the d = 784 store audit with 10⁴ trials peaked at 322 MB of
// resident memory instead of 230 MB (docs/audit.md).
const auditMemoryLimit = audit.DefaultMemoryBudget + 72<<20

// limitAuditMemory sets auditMemoryLimit unless GOMEMLIMIT is set.
func limitAuditMemory() {
	if _, ok := os.LookupEnv("GOMEMLIMIT"); !ok {
		debug.SetMemoryLimit(auditMemoryLimit)
	}
}

// checkTrials checks --trials, --gamma and --selection before anything is
// computed: --trials at least 2 and at most what the audit's memory budget
// holds (audit.MaxTrials: the selection split keeps a few numbers per
// trial).
func checkTrials(trials int, gamma, selection float64) error {
	switch {
	case !(gamma > 0 && gamma < 1):
		return flagError("gamma", "%v must be in (0, 1)", gamma)
	case gamma/4 == 0:
		return flagError("gamma", "%v must be at least %v: the audit's four Clopper–Pearson bounds are each at level γ/4, which must be a positive float64", gamma, 4*0x1p-1074)
	case !(selection > 0 && selection < 1):
		return flagError("selection", "%v must be in (0, 1)", selection)
	case trials < 2:
		return flagError("trials", "%d must be at least 2", trials)
	case trials > audit.MaxTrials(selection, 0):
		return flagError("trials", "%d must be at most %d at --selection %v (the selection split keeps %d bytes per trial within the audit's memory budget of %d MiB)",
			trials, audit.MaxTrials(selection, 0), selection, audit.BytesPerSelectionTrial, audit.DefaultMemoryBudget>>20)
	}
	return nil
}

// operatorNames lists the names of unlearn.Paper's operators.
func operatorNames(tau int) []string {
	var names []string
	for _, o := range unlearn.Paper(tau) {
		names = append(names, o.Name())
	}
	return names
}

// auditDeletionSet returns U: ids (each an insert of the prefix) or count
// ids chosen by mode at the trained parameters, with the ids of the
// prefix's delete events (spec §8).
func auditDeletionSet(cfg olbfgs.Config, loss stream.Loss, prefix []stream.Event, ids []int64, mode string, count int, seed uint64) (stream.IDSet, error) {
	u := stream.DeletedIDs(prefix)
	if len(ids) > 0 {
		inserted := stream.NewIDSet(stream.InsertIDs(prefix)...)
		for _, id := range ids {
			if !inserted.Has(id) {
				return nil, flagError("ids", "%d is not an insert of the prefix e_1..e_%d", id, len(prefix))
			}
			u.Add(id)
		}
		return u, nil
	}
	m, err := stream.ParseMode(mode)
	if err != nil {
		return nil, flagError("mode", "%q: want recent, old, random or high-gradient", mode)
	}
	o := stream.ChooseOptions{Seed: seed}
	if m == stream.HighGradient {
		l, err := olbfgs.Replay(cfg, loss, prefix)
		if err != nil {
			return nil, err
		}
		o.Loss, o.W = loss, l.W()
	}
	chosen, err := stream.ChooseDeletions(prefix, m, count, o)
	if err != nil {
		return nil, flagError("count", "%d: %v", count, err)
	}
	for _, id := range chosen {
		u.Add(id)
	}
	return u, nil
}

// auditFlagError names the flag of an audit configuration error.
func auditFlagError(err error) error {
	var ce *audit.ConfigError
	if !errors.As(err, &ce) {
		return err
	}
	flag, ok := map[string]string{"Epsilon": "epsilon", "Delta": "delta", "Gamma": "gamma",
		"SelectionFraction": "selection", "Trials": "trials"}[ce.Field]
	if !ok {
		return err
	}
	return flagError(flag, "%s: %s", ce.Value, ce.Want)
}

// writeAuditSummary prints the audit for people; its last line states
// ε_lb, the certified ε and the verdict.
func writeAuditSummary(w io.Writer, rec *auditRecord) error {
	rep := rec.Audit
	var b strings.Builder
	fmt.Fprintf(&b, "stream %s (%s, d=%d), t_del=%d, τ=%d, η=%g, U=%v, intervention %s\n",
		rec.Stream.File, rec.Stream.Kind, rec.Stream.D, rec.TDel, rec.Tau, rec.Eta, rec.U, rec.Intervention)
	fmt.Fprintf(&b, "release: %s\nσ = %.4g for α = %.4g at (ε, δ) = (%g, %g); true ‖w_A − w_B‖ = %.4g (a diagnostic that depends on the deleted data: never publish it)\n",
		rec.Release.Mechanism, rec.Release.Sigma, rec.Release.Alpha, rep.Epsilon, rep.Delta, rec.Release.Distance)
	writeAuditTable(&b, rep)
	_, err := io.WriteString(w, b.String())
	return err
}

// writeAuditTable writes the audit's trials, confidence, the tests' table
// and, as the last line, ε_lb, the certified ε and the verdict.
func writeAuditTable(b *strings.Builder, rep *audit.Report) {
	sampler := rep.Sampler
	if rep.Seed != nil {
		sampler = fmt.Sprintf("seeded with %d (seeded: for speed, not deployment)", *rep.Seed)
	}
	fmt.Fprintf(b, "trials: %d per world (%d selection, %d evaluation); noise %s\n",
		rep.Trials, rep.Selection, rep.Evaluation, sampler)
	fmt.Fprintf(b, "confidence 1 − γ = 1 − %g (false-alarm probability ≤ %g); largest ε_lb these trials can show: %.4g\n\n",
		rep.Gamma, rep.FalseAlarm, rep.Ceiling)
	b.WriteString("| test | statistic | guess A when | FP | FN | FPR ≤ | FNR ≤ | ε_lb |\n| --- | --- | --- | --- | --- | --- | --- | --- |\n")
	for _, t := range rep.Tests {
		side := "≤"
		if t.GuessAAbove {
			side = ">"
		}
		fmt.Fprintf(b, "| %s | %s | %s %.4g | %d/%d | %d/%d | %.4g | %.4g | %.4g |\n", t.Name, t.Statistic, side, t.Threshold,
			t.FalsePositives, t.NegativesB, t.FalseNegatives, t.PositivesA, t.FPRUpper, t.FNRUpper, t.EpsilonLB)
	}
	separated := false
	for _, t := range rep.Tests {
		separated = separated || t.EpsilonLB > 0
	}
	if !separated {
		b.WriteString("\nno test separated the two worlds: every test's ε_lb is 0 at this confidence (a threshold that guesses A for almost every trial of both worlds is what the selection picks when nothing separates them)\n")
	}
	rel := "≤"
	if rep.Verdict == audit.Violation {
		rel = ">"
	}
	fmt.Fprintf(b, "\nε_lb = %.4g %s certified ε = %g: %s\n", rep.EpsilonLB, rel, rep.Epsilon, rep.Verdict)
}
