package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"
	"gonum.org/v1/gonum/floats"

	"unlearn/audit"
	"unlearn/certify"
	"unlearn/store"
)

// auditStoreRecord is the JSON report of `unlearn audit --store`: the audit
// beside the store, the request and the forget and release paths it took.
type auditStoreRecord struct {
	Format  string `json:"format"`
	Toolkit string `json:"toolkit"`
	Store   string `json:"store"`
	// IDs is the deletion request.
	IDs []int64 `json:"ids"`
	// MaxReplay and Intervention are the forget options of world A.
	MaxReplay    int    `json:"max_replay"`
	Intervention string `json:"intervention,omitempty"`
	// ForgetPath and ForgetReason say which path world A's forget took and
	// why (store.ForgetReport).
	ForgetPath   store.Path `json:"forget_path"`
	ForgetReason string     `json:"forget_reason"`
	// ReleasePath is how the store's release obtained α: exact, derived or
	// diameter.
	ReleasePath string        `json:"release_path"`
	Release     auditRelease  `json:"release"`
	Audit       *audit.Report `json:"audit"`
}

// runStoreAudit is `unlearn audit --store`: world A is the store's forget
// of ids (on a copy) and its release; world B the deletion-edited log's
// replay, released with the same configuration.
func runStoreAudit(cmd *cobra.Command, dir string, ids []int64, maxReplay int, intervention, memory string, eps, delta float64, out string, acfg audit.Config) error {
	fl := cmd.Flags()
	for _, name := range []string{"stream", "mode", "count", "t-del", "tau", "eta", "alpha", "radius", "sample-bound", "pair-angle", "pair-min", "pair-max"} {
		if fl.Changed(name) {
			return flagError(name, "not with --store: the store's log, learner and release derive it")
		}
	}
	for _, name := range []string{"epsilon", "delta"} {
		if !fl.Changed(name) {
			return flagError(name, "required")
		}
	}
	if len(ids) == 0 {
		return flagError("ids", "required with --store: the ids to forget, e.g. --ids 17,42")
	}
	if maxReplay < 0 {
		return flagError("max-replay", "%d: must be non-negative (0: no cap)", maxReplay)
	}
	if maxReplay > 0 && intervention == "" {
		return flagError("intervention", "required with --max-replay: one of %s", strings.Join(store.Interventions(), ", "))
	}
	if err := checkTrials(acfg.Trials, acfg.Gamma, acfg.SelectionFraction); err != nil {
		return err
	}
	pol, err := certify.ParseMemoryPolicy(memory)
	if err != nil || pol == certify.Exact {
		return flagError("memory", "%q: want reset or rebuild", memory)
	}
	spec := certify.Spec{Epsilon: eps, Delta: delta, Memory: pol}
	// The signal context is installed before PrepareAudit: its temporary
	// copy of the store holds the audited ids' payloads, and SIGINT/SIGTERM
	// must let it remove the copy instead of killing the process (ADV2-01).
	ctx, cancel := signalContext(cmd.Context())
	defer cancel()
	w, err := store.PrepareAudit(ctx, dir, ids, store.AuditOptions{
		Forget: store.ForgetOptions{MaxReplay: maxReplay, Intervention: intervention}, Spec: spec})
	if err != nil {
		var oe *store.OptionError
		switch {
		case errors.As(err, &oe) && oe.Option == "Intervention":
			return flagError("intervention", "%v", err)
		case errors.As(err, &oe) && oe.Option == "ids", errors.Is(err, store.ErrUnknownID):
			return flagError("ids", "%v", err)
		case errors.Is(err, fs.ErrNotExist):
			return flagError("store", "%v", err)
		case errors.Is(err, certify.ErrNotCertifiable):
			return flagError("store", "%v (a noised release needs a learner with a radius: create the store with --radius)", err)
		}
		var se *certify.SpecError
		if errors.As(err, &se) {
			return certifyFlagError(err)
		}
		return interrupted(err)
	}
	a, b, wd := audit.FromStore(w)
	rel := auditRelease{Distance: floats.Distance(w.StateA.W(), w.StateB.W(), 2)}
	if w.Exact {
		rel.Mechanism = "the store's exact release: the un-noised state, memory included (certify.CertifyExact)"
	} else {
		c := w.Certificate
		rel.Mechanism = fmt.Sprintf("the store's release (Store.Release through certify.Prepared): w projected onto the learner's ball + N(0, σ²I), memory %s; α %s (%s)", c.Memory, c.Sensitivity.Source, c.Provenance)
		rel.Alpha, rel.Sigma = c.Sensitivity.Alpha, c.Sigma
	}

	limitAuditMemory()
	bar := newProgress(cmd.ErrOrStderr(), 2*acfg.Trials, "audit")
	acfg.A, acfg.B, acfg.WDim, acfg.Epsilon, acfg.Delta, acfg.Progress = a, b, wd, eps, delta, bar.update
	rep, err := audit.Run(ctx, acfg)
	bar.finish()
	if err != nil {
		return interrupted(auditFlagError(err))
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		abs = dir
	}
	rec := auditStoreRecord{
		Format: "unlearn-audit-store/v1", Toolkit: "unlearn " + version, Store: abs,
		IDs: w.Forget.IDs, MaxReplay: maxReplay, Intervention: intervention,
		ForgetPath: w.Forget.Path, ForgetReason: w.Forget.Reason, ReleasePath: w.ReleasePath,
		Release: rel, Audit: rep,
	}
	if out != "" {
		if err := writeAtomic(out, func(wr io.Writer) error {
			enc := json.NewEncoder(wr)
			enc.SetIndent("", "  ")
			return enc.Encode(rec)
		}); err != nil {
			return err
		}
		fmt.Fprintf(cmd.ErrOrStderr(), "wrote %s\n", out)
	}
	var sb strings.Builder
	fmt.Fprintf(&sb, "store %s, U=%v (the store is not modified: the audit ran on a copy)\n", rec.Store, rec.IDs)
	fmt.Fprintf(&sb, "world A: forget path %s — %s; release %s\n", rec.ForgetPath, rec.ForgetReason, rec.ReleasePath)
	fmt.Fprintf(&sb, "world B: replay from θ0 of the deletion-edited log, released with the same configuration\n")
	if w.Exact {
		fmt.Fprintf(&sb, "release: exact, no noise (memory included); true ‖w_A − w_B‖ = %.4g\n", rel.Distance)
	} else {
		fmt.Fprintf(&sb, "release: w + N(0, σ²I), σ = %.4g for α = %.4g (%s) at (ε, δ) = (%g, %g); memory %s; true ‖w_A − w_B‖ = %.4g\n",
			rel.Sigma, rel.Alpha, w.Certificate.Sensitivity.Source, eps, delta, w.Certificate.Memory, rel.Distance)
	}
	writeAuditTable(&sb, rep)
	if _, err := io.WriteString(cmd.OutOrStdout(), sb.String()); err != nil {
		return err
	}
	if rep.Verdict == audit.Violation {
		exitViolation()
	}
	return nil
}
