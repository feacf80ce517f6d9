package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"unlearn/store"
)

func init() { register(newForgetCmd) }

func newForgetCmd() *cobra.Command {
	var (
		dir, intervention, idsFrom, keysFrom, ages string
		ids, keys                                  []string
		maxReplay                                  int
		asJSON, noVacuum                           bool
		resolve                                    bool
		nf                                         noiseFlags
	)
	cmd := &cobra.Command{
		Use:   "forget --store DIR (--ids ID,... | --keys KEY,... | --ids-from FILE | --keys-from FILE | --resolve) [--max-replay N --intervention NAME --epsilon E --delta D]",
		Short: "Serve a deletion request: exact forget by replay, or a noised intervention beyond a replay cap",
		Long: `forget removes the samples with the given ids (or keys) from the store and from
the model.

By default the request is served exactly: the newest checkpoint before the
oldest deleted sample is restored, the log after it is replayed without the
deleted samples, and every later checkpoint is regenerated. The state is then
bit-identical to 'unlearn train' on the deletion-edited stream.

With --max-replay N, a request whose exact replay would apply more than N events
is served by the named intervention instead (` + strings.Join(store.Interventions(), ", ") + `),
and the store keeps its output ONLY NOISED: the intervention's output plus
Gaussian noise calibrated to the α the store derives from public quantities —
a certified release, signed (--key) and charged to the ledger (--ledger, or
the store's own budget.ledger; --no-ledger for experiments) with --epsilon
and --delta, kept in the store ('unlearn releases --get'), from which the
store continues. Every checkpoint from the oldest erased sample on is
deleted (an exact replay restarts before it), so no stored byte keeps the
deleted samples' influence un-noised. The approximate path needs a
certifiable store (init --radius --sample-bound); on another it is refused
and nothing changes. Its certificate discloses the deleted samples' ages
rounded down to powers of two (--ages pow2, the default) or only their
number (--ages none); docs/trust.md says why.

While such a request is pending, what remains of it in the store is: the
log rows of the erased samples (seq and id, no payload), their tombstones
and the request record (time, ids, intervention, exact ages, α, σ), the
noised state and its checkpoint, the kept release, and the ledger line;
'unlearn release' refuses and names the kept release, the one to serve. An
exact forget, --resolve, or the store's resolution policy (init
--resolve-after-events, --resolve-within; applied by ingest) replays the log
exactly from before the oldest pending request and resolves it. The
interventions (docs/spec.md §5):
` + interventionHelp() + `

Either way the deleted payloads are erased from every file of the store
(SQLite secure_delete, then VACUUM unless --no-vacuum), and the ids are kept
as tombstones (the id only) so that they are never ingested again. The
releases kept in the store that were made from a state including a deleted
sample are erased with them (each is named with the log position of its
state and the forgotten sample that erased it, and recorded in the
request); copies published elsewhere cannot be recalled. Ids already
forgotten are reported and skipped. A forget whose ids were all forgotten
already still runs the VACUUM (unless --no-vacuum): after a crash or an
error in a forget's VACUUM, run the same forget again (by --ids: a request
by --keys erased its keys, and the ids it resolved are printed). An exact
forget after an approximate one names the pending requests it resolves (the
state is exact again).

Before anything, the store checks itself (SQLite's quick_check, the
checksums of its state, checkpoints, releases and keys, and the invariants
that tie the log, the tombstones, the requests and the head together): a
damaged store is refused and nothing changes ('unlearn status --check'
says what is wrong). --resolve also rebuilds a damaged state from the
checkpoints and the log.

` + idsHelp + `
A mapping file written by 'ingest --mapping' is outside the store and is not
edited.

--json prints the report with snake_case names and durations in seconds
(wall_seconds, replay_seconds, vacuum_seconds); erased_releases lists
{release, head, seq, id} for each kept release erased.`,
		Example: `  unlearn forget --store model --ids 17,42
  unlearn forget --store model --keys bob@example.com
  unlearn forget --store model --keys-from erasure-requests.txt
  unlearn forget --store model --ids 7 --max-replay 100000 --intervention pair-drop \
      --epsilon 1 --delta 1e-5 --key certifier.key
  unlearn forget --store model --resolve`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			fl := cmd.Flags()
			in, err := readDeletion(ids, keys, idsFrom, keysFrom, cmd.InOrStdin())
			if err != nil {
				return err
			}
			named := len(in.ids) > 0 || len(in.keys) > 0
			switch {
			case resolve && named:
				return flagError("resolve", "deletes nothing new: give it without --ids and --keys")
			case resolve && (maxReplay != 0 || intervention != ""):
				return flagError("resolve", "is an exact replay: give it without --max-replay and --intervention")
			case !named && !resolve:
				return flagError("ids", "required (or --keys, --ids-from, --keys-from, or --resolve): the ids to forget, e.g. --ids 17,42")
			case maxReplay < 0:
				return flagError("max-replay", "%d: must be non-negative (0: no cap)", maxReplay)
			case maxReplay > 0 && intervention == "":
				return flagError("intervention", "required with --max-replay: one of %s ('unlearn forget --help' says what each does)", strings.Join(store.Interventions(), ", "))
			case intervention != "" && !slices.Contains(store.Interventions(), intervention):
				return flagError("intervention", "%q: want one of %s ('unlearn forget --help' says what each does)", intervention, strings.Join(store.Interventions(), ", "))
			case ages != "pow2" && ages != "none":
				return flagError("ages", "%q: want pow2 or none", ages)
			}
			if maxReplay == 0 {
				for _, name := range noiseFlagNames {
					if fl.Changed(name) {
						return flagError(name, "only with --max-replay (the approximate path's release)")
					}
				}
			}
			if dir == "" {
				return flagError("store", "required")
			}
			fo := store.ForgetOptions{MaxReplay: maxReplay, Intervention: intervention, SkipVacuum: noVacuum}
			if ages == "none" {
				fo.Ages = store.AgesNone
			}
			if maxReplay > 0 {
				if fo.Noise, err = nf.spec(fl, dir); err != nil {
					return err
				}
				fo.OnRelease = nf.onRelease(cmd.ErrOrStderr())
			}
			s, err := openStore(dir)
			if err != nil {
				return err
			}
			defer s.Close()
			// A service that owns the store is its only writer (store.Own).
			if err := s.ClaimWriter(); err != nil {
				return err
			}
			var rep store.ForgetReport
			switch {
			case resolve:
				rep, err = s.Resolve(fo)
			case len(in.keys) > 0:
				rep, err = s.ForgetKeys(in.keys, in.ids, fo)
			default:
				rep, err = s.Forget(in.ids, fo)
			}
			if err := forgetFlagError(err, fo); err != nil && rep.Request == 0 {
				return err
			}
			if err == nil {
				err = checkComplete(in.ids, rep.IDs, rep.AlreadyForgotten)
			}
			return printForget(cmd, dir, rep, resolve, noVacuum, asJSON, err)
		},
	}
	f := cmd.Flags()
	f.StringVar(&dir, "store", "", "store directory (required)")
	f.StringArrayVar(&ids, "ids", nil, "ids to forget: integers separated by commas, blanks or line breaks (repeatable)")
	f.StringArrayVar(&keys, "keys", nil, "string ids (keys) of ingested CSV rows to forget, as CSV: a key with a comma is quoted (repeatable)")
	f.StringVar(&idsFrom, "ids-from", "", "file of ids to forget, one per line ('-': standard input)")
	f.StringVar(&keysFrom, "keys-from", "", "file of keys to forget, one per line, taken literally ('-': standard input)")
	f.IntVar(&maxReplay, "max-replay", 0, "largest exact replay, in events, before the intervention is used instead (0: no cap, always exact)")
	f.StringVar(&intervention, "intervention", "", "intervention beyond the cap: "+strings.Join(store.Interventions(), ", "))
	f.StringVar(&ages, "ages", "pow2", "approximate path: what the certificate discloses of the deleted samples' ages: pow2 (rounded down to powers of two) or none (only their number)")
	f.BoolVar(&noVacuum, "no-vacuum", false, "skip the VACUUM after the commit (erasure then rests on secure_delete alone; the file keeps its size)")
	f.BoolVar(&asJSON, "json", false, "print the report as JSON")
	f.BoolVar(&resolve, "resolve", false, "serve every pending approximate request exactly (replay from before the oldest), deleting nothing new; rebuilds a damaged state")
	nf.register(f)
	return cmd
}

// forgetFlagError names the flag at fault in a forget's error, if any.
func forgetFlagError(err error, fo store.ForgetOptions) error {
	var oe *store.OptionError
	switch {
	case err == nil:
		return nil
	case errors.Is(err, store.ErrUnknownKey):
		return flagError("keys", "%v", err)
	case errors.As(err, &oe) && oe.Option == "Intervention":
		return flagError("intervention", "%v", err)
	case errors.Is(err, store.ErrUnknownID):
		return flagError("ids", "%v", err)
	case errors.Is(err, store.ErrNotCertifiable):
		return flagError("max-replay", "%v", err)
	}
	return err
}

// printForget prints a forget's report (text or --json) and returns err.
func printForget(cmd *cobra.Command, dir string, rep store.ForgetReport, resolve, noVacuum, asJSON bool, err error) error {
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
			fmt.Fprintf(out, "NOTE: approximate requests are pending (the store keeps their noised state); 'unlearn forget --store %s --resolve' serves them exactly\n", dir)
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
		printApproximate(out, dir, rep)
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
	if rep.NeedsNoise && rep.Path != store.PathApproximate {
		fmt.Fprintln(out, "NOTE: approximate requests are pending: 'unlearn release' refuses until they are resolved; serve the release each published ('unlearn releases --get N')")
	}
	return err
}

// printApproximate prints what the approximate path did and what remains.
func printApproximate(out io.Writer, dir string, rep store.ForgetReport) {
	fmt.Fprintf(out, "intervention %s (replayed %d events), |U| = %d, ages %v (exact, for the operator); %.4g s, vacuum %.4g s\n",
		rep.Intervention, rep.EventsReplayed, len(rep.IDs), rep.Ages, rep.Wall.Seconds(), rep.Vacuum.Seconds())
	if r := rep.Released; r != nil {
		c := r.Certificate
		disclosed := "none"
		if d := c.Sensitivity.Deletion; d != nil {
			disclosed = fmt.Sprint(d.Ages)
		}
		how := r.Path
		if b := c.Sensitivity.Binding; b != "" && b != "recursion" && r.Path == "derived" {
			how += ", the " + b + " bound binds"
		}
		fmt.Fprintf(out, "kept only noised: release %d (α %.4g, %s; σ = %.4g at (ε, δ) = (%v, %v); the certificate discloses ages %s); fetch it with 'unlearn releases --store %s --get %d --out FILE --certificate FILE'\n",
			rep.ReleaseID, c.Sensitivity.Alpha, how, c.Sigma, c.Epsilon, c.Delta, disclosed, dir, rep.ReleaseID)
		printUtility(out, c, r.Release)
	}
	fmt.Fprintf(out, "deleted %s from the oldest erased sample on (no replay uses them)\n", plural(rep.CheckpointsDropped, "checkpoint", "checkpoints"))
	fmt.Fprintf(out, "while pending, the store keeps of it: the erased rows' seq and id (no payload), the tombstones, the request record, the noised state and its checkpoint, the kept release; 'unlearn forget --store %s --resolve' (or the store's resolution policy) serves it exactly\n", dir)
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
	// The approximate path's release of the noised state, kept in the
	// store (release 0 otherwise), and the checkpoints it deleted.
	Release            int64   `json:"release,omitempty"`
	AlphaPath          string  `json:"alpha_path,omitempty"`
	Alpha              float64 `json:"alpha,omitempty"`
	Sigma              float64 `json:"sigma,omitempty"`
	DisclosedAges      []int   `json:"disclosed_ages,omitempty"`
	CheckpointsDropped int     `json:"checkpoints_dropped"`
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
	out := forgetJSON{
		Request: r.Request, IDs: nonNil(r.IDs), AlreadyForgotten: nonNil(r.AlreadyForgotten), Path: r.Path, Reason: r.Reason,
		FromSeq: r.FromSeq, ExactReplay: r.ExactReplay, EventsReplayed: r.EventsReplayed, CheckpointsRewritten: r.CheckpointsRewritten,
		Intervention: r.Intervention, Ages: r.Ages, NeedsNoise: r.NeedsNoise, Resolved: nonNil(r.Resolved),
		WallSeconds: r.Wall.Seconds(), ReplaySeconds: r.Replay.Seconds(), VacuumSeconds: r.Vacuum.Seconds(),
		ReleasesErased: r.ReleasesErased, ErasedReleases: er, KeysErased: r.KeysErased,
		CheckpointsDropped: r.CheckpointsDropped,
	}
	if rel := r.Released; rel != nil {
		c := rel.Certificate
		out.Release, out.AlphaPath, out.Alpha, out.Sigma = r.ReleaseID, rel.Path, c.Sensitivity.Alpha, c.Sigma
		if d := c.Sensitivity.Deletion; d != nil {
			out.DisclosedAges = d.Ages
		}
	}
	return out
}
