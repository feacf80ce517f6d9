package main

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"unlearn/certify"
	"unlearn/olbfgs"
	"unlearn/store"
	"unlearn/stream"
)

func init() { register(newStatusCmd) }

func newStatusCmd() *cobra.Command {
	var (
		dir                         string
		asJSON, check, showRequests bool
	)
	cmd := &cobra.Command{
		Use:   "status --store DIR [--check] [--requests] [--json]",
		Short: "Summarize a store: log, checkpoints, deletion requests, whether an approximate request is pending",
		Long: `status prints the store's configuration, the size of its log and checkpoints,
the deletion requests served, and whether the state carries forgotten samples'
influence (after an approximate forget not yet resolved by an exact one), in
which case 'unlearn release' refuses and the release each approximate forget
published is the one to serve; the pending approximate requests are listed
with what remains of them.

--requests lists every request served, oldest first: its path, the ids it
forgot, the intervention and whether a later exact request resolved it, the
events replayed, and each stored release it erased with the reason (the
forgotten sample's log position at or before the release's).

With progressive statistics (init --progress, on in the practitioner profile)
it prints the loss and accuracy of predicting each insert before training on
it, overall and over the last 1000, and warns when the model does worse than the
zero model or predicts a single class. An approximate forget resets them (they
had scored the deleted rows): while it is pending they cover the inserts since;
an exact replay recomputes them over the retained rows.

It also shows the certifiable-learner settings (init --radius, --sample-bound,
the pair guard) or says that the store is not certifiable (a noised release
needs --radius and --sample-bound).

A store that is damaged — its state or configuration fails its checksum
or does not decode — still opens: status says what is wrong (never a
value of the state), every other command refuses it, and 'unlearn forget
--resolve' rebuilds a damaged state from the checkpoints and the log.

With a resolution policy (init --resolve-after-events, --resolve-within)
status says when the pending requests will be resolved.

--check also verifies the store: SQLite's integrity_check (every page, and
every index against its table), the SHA-256 of every stored row (payload,
checkpoint, state, kept release, key, configuration), the invariants that
tie the head, the log, the tombstones and the requests together, and, bit
for bit, every exact checkpoint and the state against the replay of the
stored log from θ0 (one pass of training). The noised state of a pending
approximate request cannot be reproduced by any replay; when nothing after
θ0 could be verified against a replay, the check says so instead of OK.
A failed check exits non-zero naming the damaged row or table.`,
		Example: `  unlearn status --store model --check`,
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			s, err := openStore(dir)
			if err != nil {
				return err
			}
			defer s.Close()
			st, err := s.Status()
			if err != nil {
				return err
			}
			var history []store.Request
			if showRequests {
				if history, err = s.Requests(); err != nil {
					return err
				}
			}
			out := cmd.OutOrStdout()
			if asJSON {
				sj := newStatusJSON(st)
				if showRequests {
					sj.History = []requestJSON{}
					for _, r := range history {
						sj.History = append(sj.History, newRequestJSON(r))
					}
				}
				b, err := json.MarshalIndent(sj, "", "  ")
				if err != nil {
					return err
				}
				fmt.Fprintf(out, "%s\n", b)
			} else {
				c := st.Learner
				fmt.Fprintf(out, "store %s (schema %d, %.4g MB: log %.4g MB, checkpoints %.4g MB, state %.4g MB, releases %.4g MB)\n", st.Dir, st.SchemaVersion,
					float64(st.Bytes)/1e6, float64(st.LogBytes)/1e6, float64(st.CheckpointBytes)/1e6, float64(st.StateBytes)/1e6, float64(st.ReleaseBytes)/1e6)
				if st.Damage != "" {
					fmt.Fprintf(out, "DAMAGED: %s\n  every command but status refuses this store; 'unlearn forget --store %s --resolve' rebuilds a damaged state from the checkpoints and the log\n", st.Damage, dir)
				}
				fmt.Fprintf(out, "learner: %s loss, %s, τ = %d, η = %.4g, γ0 = %.4g; checkpoint every %d events\n",
					st.Kind, modelSize(c.Dim, c.ParamDim()), c.Memory, c.StepSize, c.InitialScale, st.CheckpointEvery)
				if c.HasOptions() {
					fmt.Fprintln(out, optionsSummary(c))
				}
				fmt.Fprintln(out, certifiableSummary(c))
				if st.ClipToBound {
					fmt.Fprintln(out, clipWords(c))
				}
				if st.Damage != "" {
					fmt.Fprintf(out, "log: %d events, head seq %d; the state is damaged\n", st.Events, st.Head)
				} else {
					fmt.Fprintf(out, "log: %d events, head seq %d; state has applied %d events\n", st.Events, st.Head, st.T)
				}
				if st.HasProgress {
					printProgressOf(out, cmd.ErrOrStderr(), st.Progress, s.Header())
					if st.NeedsNoise {
						fmt.Fprintf(out, "     (over the %s since the latest approximate forget: it reset the statistics, which had scored the deleted rows; an exact replay recomputes them over the retained rows)\n",
							plural(st.Progress.N, "insert", "inserts"))
					}
				}
				if st.Erased > 0 {
					fmt.Fprintf(out, "     %s kept without payload (erased by approximate forgets; the rows count the state's steps until an exact replay drops them)\n",
						plural(st.Erased, "event", "events"))
				}
				fmt.Fprintf(out, "checkpoints: %d (%d inexact: from a pending approximate request's noised state on)\n", st.Checkpoints, st.InexactCheckpoints)
				fmt.Fprintf(out, "deletion requests: %d; forgotten ids: %d; releases kept: %d (unlearn releases)\n", st.Requests, st.Forgotten, st.Releases)
				if st.NeedsNoise {
					printPending(out, dir, st)
				} else {
					fmt.Fprintln(out, "release: the state is exact (the replay of the deletion-edited log)")
				}
				if p := st.Policy; !p.IsZero() {
					fmt.Fprintf(out, "resolution policy: %s; %s\n", policyWords(p), st.Due.Reason)
				}
				if showRequests {
					printRequests(out, history)
				}
			}
			if check {
				rep, err := s.Check()
				if err != nil {
					return err
				}
				printCheck(cmd.ErrOrStderr(), rep)
			}
			return nil
		},
	}
	f := cmd.Flags()
	f.StringVar(&dir, "store", "", "store directory (required)")
	f.BoolVar(&check, "check", false, "verify every exact checkpoint and the state by replay of the log")
	f.BoolVar(&asJSON, "json", false, "print the status as JSON (snake_case names, durations in seconds)")
	f.BoolVar(&showRequests, "requests", false, "also list every deletion request served, with its path and the stored releases it erased")
	return cmd
}

// printPending lists the pending approximate requests and what remains
// of them in the store.
func printPending(w io.Writer, dir string, st store.Status) {
	fmt.Fprintf(w, "release: REFUSED while %s pending (serve the release each published: 'unlearn releases --store %s --get N'):\n", plural(len(st.Pending), "approximate request is", "approximate requests are"), dir)
	legacy := false
	for _, r := range st.Pending {
		if r.Damaged {
			fmt.Fprintf(w, damagedLine, r.Request)
			continue
		}
		if r.Noised {
			rel := fmt.Sprintf("release %d", r.Release)
			if r.Release == 0 {
				rel = "its release (erased by a later forget)"
			}
			fmt.Fprintf(w, "  request %d: %s, |U| = %d, ages %v; kept noised: %s, α %.4g (%s), σ = %.4g at ε = %v, certificate ages %v\n",
				r.Request, r.Intervention, r.USize, r.Ages, rel, r.Alpha, r.AlphaSource, r.Sigma, r.Epsilon, r.DisclosedAges)
		} else {
			legacy = true
			fmt.Fprintf(w, "  request %d: %s, |U| = %d, ages %v; served before schema 6: the state and its checkpoints keep the deleted samples' influence UN-NOISED\n",
				r.Request, r.Intervention, r.USize, r.Ages)
		}
	}
	fmt.Fprintln(w, "  what remains of them: the erased rows' seq and id (no payload), their tombstones and request records, the noised state and its checkpoint, the kept releases")
	if legacy {
		fmt.Fprintf(w, "  resolve the un-noised requests: 'unlearn forget --store %s --resolve' replays the log exactly\n", dir)
	}
}

// policyWords says a resolution policy in words.
func policyWords(p store.ResolvePolicy) string {
	var parts []string
	if p.AfterEvents > 0 {
		parts = append(parts, fmt.Sprintf("once %d events were ingested after the oldest", p.AfterEvents))
	}
	if p.Within > 0 {
		parts = append(parts, "within "+p.Within.String())
	}
	return "resolve pending approximate requests " + strings.Join(parts, " or ")
}

// printCheck prints status --check's result. A check that could compare
// nothing after θ0 with a replay of the log (every later checkpoint and
// the state carry an approximate forget's influence) is not reported as OK.
func printCheck(w io.Writer, rep store.CheckReport) {
	if rep.CheckpointsVerified == 0 && !rep.StateFromScratch {
		what := "the state carries"
		if rep.InexactSkipped > 0 {
			what = "the " + plural(rep.InexactSkipped, "checkpoint", "checkpoints") + " after θ0 and the state carry"
		}
		fmt.Fprintf(w, "check: integrity OK (SQLite integrity_check, every checksum, the invariants), but nothing could be verified against a replay: %s forgotten samples' influence "+
			"(an approximate forget is pending, kept noised), which no replay of the log reproduces; checked θ0, the keys, and the state against "+
			"its newest checkpoint and the log after it. An exact forget or --resolve makes the store verifiable again.\n", what)
		return
	}
	fmt.Fprintf(w, "check: OK (SQLite integrity_check, every checksum and invariant; %d events replayed, %s verified, %d inexact skipped, state from θ0: %v)\n",
		rep.EventsReplayed, plural(rep.CheckpointsVerified, "checkpoint", "checkpoints"), rep.InexactSkipped, rep.StateFromScratch)
	if !rep.StateFromScratch {
		fmt.Fprintln(w, "check: the state is the noised state of a pending approximate request: it was checked against its newest checkpoint and the log after it, not against a replay from θ0")
	}
}

// statusJSON is status --json: store.Status with snake_case names (as
// forget --json and releases --json), the learner's configuration under the
// names of a release file's config (certify.ReleaseConfig), and durations in seconds.
type statusJSON struct {
	Dir                string                `json:"dir"`
	SchemaVersion      int                   `json:"schema_version"`
	Kind               stream.Kind           `json:"kind"`
	Learner            certify.ReleaseConfig `json:"learner"` // the names of a release's config
	CheckpointEvery    int                   `json:"checkpoint_every"`
	Events             int                   `json:"events"`
	Erased             int                   `json:"erased"`
	Head               int64                 `json:"head"`
	T                  int                   `json:"t"`
	Checkpoints        int                   `json:"checkpoints"`
	InexactCheckpoints int                   `json:"inexact_checkpoints"`
	Forgotten          int                   `json:"forgotten"`
	Requests           int                   `json:"requests"`
	Releases           int                   `json:"releases"`
	NeedsNoise         bool                  `json:"needs_noise"`
	Pending            []requestJSON         `json:"pending"`
	Bytes              int64                 `json:"bytes"`
	LogBytes           int64                 `json:"log_bytes"`
	CheckpointBytes    int64                 `json:"checkpoint_bytes"`
	StateBytes         int64                 `json:"state_bytes"`
	ReleaseBytes       int64                 `json:"release_bytes"`
	// Certifiable: the learner enforces the bounds a noised release rests
	// on (radius and sample bound set at init).
	Certifiable bool `json:"certifiable"`
	// Damage says what is wrong with a damaged store ("" if nothing).
	Damage string `json:"damage"`
	// ResolveAfterEvents and ResolveWithinSeconds are the resolution
	// policy (0: none), ResolutionDue what it says now and why.
	ResolveAfterEvents   int64   `json:"resolve_after_events"`
	ResolveWithinSeconds float64 `json:"resolve_within_seconds"`
	ResolutionDue        bool    `json:"resolution_due"`
	ResolutionReason     string  `json:"resolution_reason"`
	// History is every request served, oldest first (--requests only).
	History []requestJSON `json:"requests_history,omitempty"`
	// Progress is the state's progressive statistics, when the learner
	// keeps them (olbfgs.Config.Progress).
	Progress *progressJSON `json:"progress,omitempty"`
}

// progressJSON is olbfgs.Progress with snake_case names, its means and
// its diagnosis.
type progressJSON struct {
	N               int       `json:"n"`
	MeanLoss        float64   `json:"mean_loss"`
	Accuracy        *float64  `json:"accuracy"` // null for a regression
	RecentLoss      float64   `json:"recent_loss"`
	RecentZeroLoss  float64   `json:"recent_zero_loss"`
	RecentAccuracy  *float64  `json:"recent_accuracy"`
	RecentPredicted []float64 `json:"recent_predicted"`
	RecentLabels    []float64 `json:"recent_labels"`
	Diverged        bool      `json:"diverged"`
	SingleClass     *int      `json:"single_class"` // the class index, or null
}

func newProgressJSON(p olbfgs.Progress) *progressJSON {
	out := &progressJSON{N: p.N, RecentLoss: p.RecentLoss, RecentZeroLoss: p.RecentZeroLoss,
		RecentPredicted: p.RecentPredicted, RecentLabels: p.RecentLabels}
	if p.N > 0 {
		out.MeanLoss = p.MeanLoss()
	}
	if acc, ok := p.Accuracy(); ok {
		out.Accuracy, out.RecentAccuracy = &acc, &p.RecentAccuracy
	}
	if out.RecentPredicted == nil {
		out.RecentPredicted, out.RecentLabels = []float64{}, []float64{}
	}
	d := p.Diagnose()
	out.Diverged = d.Diverged
	if d.SingleClass {
		out.SingleClass = &d.Class
	}
	return out
}

// requestJSON is a store.Request with snake_case names.
type requestJSON struct {
	Request        int64                 `json:"request"`
	Time           time.Time             `json:"time"`
	IDs            []int64               `json:"ids"`
	Path           store.Path            `json:"path"`
	Reason         string                `json:"reason"`
	FromSeq        int64                 `json:"from_seq"`
	EventsReplayed int                   `json:"events_replayed"`
	WallSeconds    float64               `json:"wall_seconds"`
	Intervention   string                `json:"intervention,omitempty"`
	Ages           []int                 `json:"ages,omitempty"`
	USize          int                   `json:"u_size"`
	NeedsNoise     bool                  `json:"needs_noise"`
	ResolvedBy     *int64                `json:"resolved_by"` // null: not resolved (or not approximate)
	ReleasesErased int                   `json:"releases_erased"`
	ErasedReleases []store.ErasedRelease `json:"erased_releases"`
	// Noised: an approximate request of schema 6 or later, whose state was
	// kept only noised, as release Release (0: erased since) with α, σ and
	// the ages its certificate discloses.
	Noised        bool    `json:"noised"`
	Release       int64   `json:"release,omitempty"`
	AlphaSource   string  `json:"alpha_source,omitempty"`
	Alpha         float64 `json:"alpha,omitempty"`
	Sigma         float64 `json:"sigma,omitempty"`
	Epsilon       float64 `json:"epsilon,omitempty"`
	Delta         float64 `json:"delta,omitempty"`
	DisclosedAges []int   `json:"disclosed_ages,omitempty"`
	// Damaged: the record does not match its checksum; none of its other
	// fields is reported.
	Damaged bool `json:"damaged,omitempty"`
}

func newStatusJSON(st store.Status) statusJSON {
	c := st.Learner
	out := statusJSON{
		Dir: st.Dir, SchemaVersion: st.SchemaVersion, Kind: st.Kind,
		Learner:         certify.ReleaseConfig(c),
		CheckpointEvery: st.CheckpointEvery, Events: st.Events, Erased: st.Erased, Head: st.Head, T: st.T,
		Checkpoints: st.Checkpoints, InexactCheckpoints: st.InexactCheckpoints,
		Forgotten: st.Forgotten, Requests: st.Requests, Releases: st.Releases,
		NeedsNoise: st.NeedsNoise, Pending: []requestJSON{}, Bytes: st.Bytes, Certifiable: c.Certifiable(),
		LogBytes: st.LogBytes, CheckpointBytes: st.CheckpointBytes, StateBytes: st.StateBytes, ReleaseBytes: st.ReleaseBytes,
		Damage: st.Damage, ResolveAfterEvents: st.Policy.AfterEvents, ResolveWithinSeconds: st.Policy.Within.Seconds(),
		ResolutionDue: st.Due.Due, ResolutionReason: st.Due.Reason,
	}
	for _, r := range st.Pending {
		out.Pending = append(out.Pending, newRequestJSON(r))
	}
	if st.HasProgress {
		out.Progress = newProgressJSON(st.Progress)
	}
	return out
}

func newRequestJSON(r store.Request) requestJSON {
	return requestJSON{
		Request: r.Request, Time: r.Time, IDs: r.IDs, Path: r.Path, Reason: r.Reason, FromSeq: r.FromSeq,
		EventsReplayed: r.EventsReplayed, WallSeconds: r.Wall.Seconds(), Intervention: r.Intervention,
		Ages: r.Ages, USize: r.USize, NeedsNoise: r.NeedsNoise, ResolvedBy: nonZero(r.ResolvedBy),
		ReleasesErased: r.ReleasesErased, ErasedReleases: r.ErasedReleases,
		Noised: r.Noised, Release: r.Release, AlphaSource: r.AlphaSource, Alpha: r.Alpha, Sigma: r.Sigma,
		Epsilon: r.Epsilon, Delta: r.Delta, DisclosedAges: r.DisclosedAges, Damaged: r.Damaged,
	}
}

// damagedLine says that request r's record is damaged, and nothing of it.
const damagedLine = "  request %d: DAMAGED — its record does not match its checksum (nothing of it is shown; 'unlearn status --check' says more, every forget, resolution and release refuses the store)\n"

// printRequests lists the store's deletion requests for status --requests.
func printRequests(w io.Writer, rs []store.Request) {
	if len(rs) == 0 {
		fmt.Fprintln(w, "requests: none served")
		return
	}
	fmt.Fprintf(w, "requests (%d):\n", len(rs))
	for _, r := range rs {
		if r.Damaged {
			fmt.Fprintf(w, damagedLine, r.Request)
			continue
		}
		what := fmt.Sprintf("%s %v", plural(len(r.IDs), "id", "ids"), r.IDs)
		if len(r.IDs) == 0 {
			what = "no new id (resolution)"
		}
		fmt.Fprintf(w, "  request %d, %s: %s, %s", r.Request, r.Time.Format(time.RFC3339), r.Path, what)
		if r.Path == store.PathApproximate {
			fmt.Fprintf(w, ", intervention %s, ages %v", r.Intervention, r.Ages)
			if r.Noised {
				fmt.Fprintf(w, ", kept noised (α %.4g, %s, σ = %.4g)", r.Alpha, r.AlphaSource, r.Sigma)
			} else {
				fmt.Fprint(w, ", kept un-noised (before schema 6)")
			}
			if r.ResolvedBy > 0 {
				fmt.Fprintf(w, ", resolved by request %d", r.ResolvedBy)
			} else {
				fmt.Fprint(w, ", PENDING (serve its release; 'unlearn release' refuses)")
			}
		}
		fmt.Fprintf(w, "; replayed %d events in %.4g s\n", r.EventsReplayed, r.Wall.Seconds())
		switch {
		case len(r.ErasedReleases) > 0:
			for _, e := range r.ErasedReleases {
				fmt.Fprintf(w, "    %s\n", erasedReleaseLine(e))
			}
		case r.ReleasesErased > 0: // before schema version 4: the count only
			fmt.Fprintf(w, "    erased %s (not recorded by id)\n", plural(r.ReleasesErased, "stored release", "stored releases"))
		}
	}
}

// nonZero is nil for 0 (JSON null), else a pointer to v.
func nonZero(v int64) *int64 {
	if v == 0 {
		return nil
	}
	return &v
}
