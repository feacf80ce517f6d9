package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"unlearn/store"
)

func init() { register(newForgetCmd) }

func newForgetCmd() *cobra.Command {
	var (
		dir, intervention string
		ids               []int64
		keys              []string
		maxReplay         int
		asJSON, noVacuum  bool
		resolve           bool
	)
	cmd := &cobra.Command{
		Use:   "forget --store DIR (--ids ID,... | --keys KEY,... | --resolve) [--max-replay N --intervention NAME]",
		Short: "Serve a deletion request: exact forget by replay, or an intervention beyond a replay cap",
		Long: `forget removes the samples with the given ids from the store and from the model.

By default the request is served exactly: the newest checkpoint before the
oldest deleted sample is restored, the log after it is replayed without the
deleted samples, and every later checkpoint is regenerated. The state is then
bit-identical to 'unlearn train' on the deletion-edited stream.

With --max-replay N, a request whose exact replay would apply more than N events
is served by the named intervention instead (` + strings.Join(store.Interventions(), ", ") + `):
the state keeps the deleted samples' influence, so only a noised, certified
release of it may be published; the store records the intervention, |U| and the
deleted samples' ages for that release. A later exact forget removes the
influence again, and so does --resolve, which deletes nothing new: it
replays the log exactly from before the oldest approximate request and
resolves every pending one (for a store that is not certifiable, which can
publish no release while a request is pending, or whenever the full replay
has become affordable). The interventions (docs/spec.md §5):
` + interventionHelp() + `

Either way the deleted payloads are erased from every file of the store
(SQLite secure_delete, then VACUUM unless --no-vacuum), and the ids are kept as tombstones (the id
only) so that they are never ingested again. The releases kept in the store
that were made from a state including a deleted sample are erased with them
(each is named with the log position of its state and the forgotten
sample that erased it, and recorded in the request); copies published elsewhere cannot be recalled. Ids already forgotten are reported
and skipped; an id never ingested is an error and nothing changes. A forget whose ids were all
forgotten already still runs the VACUUM (unless --no-vacuum): after a crash or an error in a
forget's VACUUM, run the same forget again (by --ids: a request by --keys erased
its keys, and the ids it resolved are printed). An exact forget after an
approximate one names the pending requests it resolves (the state is exact
again).

--json prints the report with snake_case names and durations in seconds
(wall_seconds, replay_seconds, vacuum_seconds); erased_releases lists
{release, head, seq, id} for each kept release erased.

--keys names the request by the string ids of CSV rows ingested with
'ingest --data' (for example e-mail addresses; a key holding a comma is
quoted, as in CSV). The store resolves them in the forget's transaction and
erases each key with its data; a key not in the store (never ingested, or
already forgotten, since the key was erased then) is an error naming it, and
nothing changes. --ids and --keys may be given together. A mapping file
written by 'ingest --mapping' is outside the store and is not edited.`,
		Example: `  unlearn forget --store model --ids 17,42
  unlearn forget --store model --keys bob@example.com
  unlearn forget --store model --ids 7 --max-replay 100000 --intervention pair-drop
  unlearn forget --store model --resolve`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			for i, k := range keys {
				// As the CSV reader reads an id cell: "a, b" names "b".
				if keys[i] = strings.TrimSpace(k); keys[i] == "" {
					return flagError("keys", "key %d of %d is empty", i+1, len(keys))
				}
			}
			if resolve && (len(ids) > 0 || len(keys) > 0) {
				return flagError("resolve", "deletes nothing new: give it without --ids and --keys")
			}
			if resolve && (maxReplay != 0 || intervention != "") {
				return flagError("resolve", "is an exact replay: give it without --max-replay and --intervention")
			}
			if len(ids) == 0 && len(keys) == 0 && !resolve {
				return flagError("ids", "required (or --keys, or --resolve): the ids to forget, e.g. --ids 17,42")
			}
			if maxReplay < 0 {
				return flagError("max-replay", "%d: must be non-negative (0: no cap)", maxReplay)
			}
			if maxReplay > 0 && intervention == "" {
				return flagError("intervention", "required with --max-replay: one of %s ('unlearn forget --help' says what each does)", strings.Join(store.Interventions(), ", "))
			}
			s, err := openStore(dir)
			if err != nil {
				return err
			}
			defer s.Close()
			fo := store.ForgetOptions{MaxReplay: maxReplay, Intervention: intervention, SkipVacuum: noVacuum}
			var rep store.ForgetReport
			switch {
			case resolve:
				rep, err = s.Resolve(fo)
			case len(keys) > 0:
				rep, err = s.ForgetKeys(keys, ids, fo)
			default:
				rep, err = s.Forget(ids, fo)
			}
			if errors.Is(err, store.ErrUnknownKey) {
				return flagError("keys", "%v", err)
			}
			var oe *store.OptionError
			if errors.As(err, &oe) && oe.Option == "Intervention" {
				return flagError("intervention", "%v", err)
			}
			if errors.Is(err, store.ErrUnknownID) {
				return flagError("ids", "%v", err)
			}
			if rep.Request == 0 && err != nil {
				return err
			}
			out := cmd.OutOrStdout()
			if asJSON {
				b, jerr := json.MarshalIndent(newForgetJSON(rep), "", "  ")
				if jerr != nil {
					return jerr
				}
				fmt.Fprintf(out, "%s\n", b)
				return err
			}
			if len(rep.AlreadyForgotten) > 0 {
				fmt.Fprintf(out, "already forgotten: %v\n", rep.AlreadyForgotten)
			}
			if rep.Path == store.PathNone {
				what := "every id was already forgotten"
				if resolve {
					what = "no approximate request is pending (the state is exact)"
				}
				if noVacuum {
					fmt.Fprintf(out, "nothing to do: %s\n", what)
				} else {
					fmt.Fprintf(out, "nothing to do: %s; vacuumed the store (%.4g s)\n", what, rep.Vacuum.Seconds())
				}
				if rep.NeedsNoise {
					fmt.Fprintf(out, "NOTE: approximate requests are pending (the state carries forgotten samples' influence); 'unlearn forget --store %s --resolve' serves them exactly\n", dir)
				}
				return err
			}
			if resolve {
				fmt.Fprintf(out, "request %d: forgot no new id\npath: %s — %s\n", rep.Request, rep.Path, rep.Reason)
			} else {
				fmt.Fprintf(out, "request %d: forgot %s %v\npath: %s — %s\n", rep.Request, plural(len(rep.IDs), "id", "ids"), rep.IDs, rep.Path, rep.Reason)
			}
			if rep.Path == store.PathExact {
				fmt.Fprintf(out, "replayed %d events from the checkpoint at seq %d, rewrote %d checkpoints; %.4g s (replay %.4g s), vacuum %.4g s\n",
					rep.EventsReplayed, rep.FromSeq, rep.CheckpointsRewritten, rep.Wall.Seconds(), rep.Replay.Seconds(), rep.Vacuum.Seconds())
			} else {
				fmt.Fprintf(out, "intervention %s (replayed %d events), |U| = %d, ages %v; %.4g s, vacuum %.4g s\n",
					rep.Intervention, rep.EventsReplayed, len(rep.IDs), rep.Ages, rep.Wall.Seconds(), rep.Vacuum.Seconds())
			}
			if rep.KeysErased > 0 {
				fmt.Fprintf(out, "erased %d string keys of the forgotten ids from the store\n", rep.KeysErased)
			}
			if len(rep.Resolved) > 0 {
				word := "request"
				if len(rep.Resolved) > 1 {
					word = "requests"
				}
				fmt.Fprintf(out, "resolves pending approximate %s %s (the state is exact again)\n", word, joinInts(rep.Resolved))
			}
			if rep.ReleasesErased == 0 {
				fmt.Fprintln(out, "erased no stored release (none was made from a state that included a deleted sample)")
			} else {
				fmt.Fprintf(out, "erased %s made from a state that included a deleted sample; copies published elsewhere cannot be recalled:\n",
					plural(rep.ReleasesErased, "stored release", "stored releases"))
				for _, e := range rep.ErasedReleases {
					fmt.Fprintf(out, "  %s\n", erasedReleaseLine(e))
				}
			}
			if rep.NeedsNoise {
				if s.LearnerConfig().Certifiable() {
					fmt.Fprintln(out, "NOTE: the state carries forgotten samples' influence: publish only a noised, certified release")
				} else {
					fmt.Fprintf(out, "NOTE: the state carries forgotten samples' influence, and this store is not certifiable (no --radius and --sample-bound at init): no release can be published until 'unlearn forget --store %s --resolve' (or an exact forget) replays the log exactly\n", dir)
				}
			}
			return err
		},
	}
	f := cmd.Flags()
	f.StringVar(&dir, "store", "", "store directory (required)")
	f.Int64SliceVar(&ids, "ids", nil, "ids to forget, comma-separated (this or --keys required)")
	f.StringSliceVar(&keys, "keys", nil, "string ids (keys) of ingested CSV rows to forget, comma-separated as CSV")
	f.IntVar(&maxReplay, "max-replay", 0, "largest exact replay, in events, before the intervention is used instead (0: no cap, always exact)")
	f.StringVar(&intervention, "intervention", "", "intervention beyond the cap: "+strings.Join(store.Interventions(), ", "))
	f.BoolVar(&noVacuum, "no-vacuum", false, "skip the VACUUM after the commit (erasure then rests on secure_delete alone; the file keeps its size)")
	f.BoolVar(&asJSON, "json", false, "print the report as JSON")
	f.BoolVar(&resolve, "resolve", false, "serve every pending approximate request exactly (replay from before the oldest), deleting nothing new")
	return cmd
}

// interventionHelp lists the approximate path's interventions, one line
// each, with what they do to the state (docs/spec.md §5).
func interventionHelp() string {
	desc := map[string]string{
		"noop":         "keep the state unchanged (the noise must cover the deleted samples' whole influence)",
		"param-only":   "one quasi-Newton step w + η·Σ_U H_Z ∇ℓ_u(w) that gives back the deleted samples' pull; the memory unchanged",
		"pair-drop":    "remove the curvature pairs built from a deleted sample; w unchanged",
		"memory-reset": "empty the curvature memory; w unchanged",
		"drop-refill":  "reset to θ0 = (0, ∅); later events refill it",
	}
	var b strings.Builder
	for _, n := range store.Interventions() {
		fmt.Fprintf(&b, "  %-13s %s\n", n, desc[n])
	}
	return strings.TrimRight(b.String(), "\n")
}

// erasedReleaseLine says which stored release a forget erased and why (forget
// and status --requests).
func erasedReleaseLine(e store.ErasedRelease) string {
	return fmt.Sprintf("erased release %d (log position %d ≥ seq %d of forgotten id %d)", e.Release, e.Head, e.Seq, e.ID)
}

// plural is "1 id" or "n ids".
func plural(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return fmt.Sprintf("%d %s", n, many)
}

// joinInts is "3", "3 and 5" or "3, 5 and 8".
func joinInts(v []int64) string {
	s := make([]string, len(v))
	for i, x := range v {
		s[i] = fmt.Sprint(x)
	}
	if len(s) <= 1 {
		return strings.Join(s, "")
	}
	return strings.Join(s[:len(s)-1], ", ") + " and " + s[len(s)-1]
}

// forgetJSON is forget --json: the store.ForgetReport with snake_case
// names and durations in seconds.
type forgetJSON struct {
	Request              int64                 `json:"request"`
	IDs                  []int64               `json:"ids"`
	AlreadyForgotten     []int64               `json:"already_forgotten"`
	Path                 store.Path            `json:"path"`
	Reason               string                `json:"reason"`
	FromSeq              int64                 `json:"from_seq"`
	ExactReplay          int                   `json:"exact_replay"`
	EventsReplayed       int                   `json:"events_replayed"`
	CheckpointsRewritten int                   `json:"checkpoints_rewritten"`
	Intervention         string                `json:"intervention,omitempty"`
	Ages                 []int                 `json:"ages,omitempty"`
	NeedsNoise           bool                  `json:"needs_noise"`
	Resolved             []int64               `json:"resolved_requests"`
	WallSeconds          float64               `json:"wall_seconds"`
	ReplaySeconds        float64               `json:"replay_seconds"`
	VacuumSeconds        float64               `json:"vacuum_seconds"`
	ReleasesErased       int                   `json:"releases_erased"`
	ErasedReleases       []store.ErasedRelease `json:"erased_releases"`
	KeysErased           int                   `json:"keys_erased"`
}

func newForgetJSON(r store.ForgetReport) forgetJSON {
	nonNil := func(v []int64) []int64 {
		if v == nil {
			return []int64{}
		}
		return v
	}
	er := r.ErasedReleases
	if er == nil {
		er = []store.ErasedRelease{}
	}
	return forgetJSON{
		Request: r.Request, IDs: nonNil(r.IDs), AlreadyForgotten: nonNil(r.AlreadyForgotten), Path: r.Path, Reason: r.Reason,
		FromSeq: r.FromSeq, ExactReplay: r.ExactReplay, EventsReplayed: r.EventsReplayed, CheckpointsRewritten: r.CheckpointsRewritten,
		Intervention: r.Intervention, Ages: r.Ages, NeedsNoise: r.NeedsNoise, Resolved: nonNil(r.Resolved),
		WallSeconds: r.Wall.Seconds(), ReplaySeconds: r.Replay.Seconds(), VacuumSeconds: r.Vacuum.Seconds(),
		ReleasesErased: r.ReleasesErased, ErasedReleases: er, KeysErased: r.KeysErased,
	}
}
