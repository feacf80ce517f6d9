package store

import (
	"context"
	"database/sql"
	"fmt"
	"slices"
	"strings"
	"time"

	"unlearn/certify"
)

// Path is the way a deletion request was served.
type Path string

const (
	// PathExact: the state was rebuilt by replay from a checkpoint and is
	// bit-identical to training from θ0 on the deletion-edited log.
	PathExact Path = "exact"
	// PathApproximate: an unlearning intervention was applied to the state
	// and the result kept only noised, as a certified release; Release
	// refuses (ErrPending) until the request is resolved.
	PathApproximate Path = "approximate"
	// PathNone: every id of the request was already forgotten.
	PathNone Path = "none"
)

// Interventions returns the names of the unlearn operators the approximate
// path accepts, in the order of the paper's tables: those that act on the
// current state and the deletion set alone ("noop", "param-only",
// "pair-drop", "memory-reset", "drop-refill"). Oracle and window replay are
// what the exact path already does; retain fine-tuning re-applies retained
// events, which the log could not then account for.
func Interventions() []string {
	return []string{"noop", "param-only", "pair-drop", "memory-reset", "drop-refill"}
}

// AgeDisclosure says what the certificate of an approximate forget
// discloses of the deleted inserts' ages (their insertion times, which the
// (ε, δ) guarantee does not cover; docs/trust.md). The zero value is
// AgesPow2.
type AgeDisclosure int

const (
	// AgesPow2 discloses each age rounded down to a power of two (0 and 1
	// as they are): how many deleted inserts are 0, 1, 2–3, 4–7, … steps
	// old. The certificate lists, for a bucket [2^k, 2^(k+1)) holding c of
	// them, the ages 2^k, …, 2^k + c − 1, each at most a true age.
	AgesPow2 AgeDisclosure = iota
	// AgesNone discloses nothing but their number m: the certificate
	// lists the ages 0, …, m − 1, the most recent possible.
	AgesNone
)

// String returns "pow2" or "none".
func (a AgeDisclosure) String() string {
	if a == AgesNone {
		return "none"
	}
	return "pow2"
}

// ForgetOptions are the options of Forget. The zero value serves every
// request exactly.
type ForgetOptions struct {
	// MaxReplay caps the events an exact forget may replay. If 0, there is
	// no cap: every request is served exactly. If the exact replay would
	// apply more than MaxReplay events, the request is served by
	// Intervention instead, and the state kept is noised (Noise).
	MaxReplay int
	// Intervention names the unlearn operator of the approximate path (one
	// of Interventions). Required when MaxReplay > 0.
	Intervention string
	// Noise is the certified release the approximate path makes of the
	// intervention's output, which is the only state the store keeps:
	// Epsilon and Delta (required when MaxReplay > 0), Calibration, Sampler
	// (the secure one by default), Memory (of the release: reset or
	// rebuild; the kept state's memory is always reset) and Toolkit. The
	// store sets Deletion, Header, Established, Intervention and Deletions;
	// leave Alpha, Deletion, Retained, Header and Established unset.
	Noise certify.Spec
	// Ages is what the approximate path's certificate discloses of the
	// deleted inserts' ages. Defaults to AgesPow2.
	Ages AgeDisclosure
	// OnRelease, if not nil, is called on the approximate path with the
	// certified release of the noised state, inside the forget's
	// transaction and before it is kept (Keep) and committed: sign the
	// certificate and charge the ledger here. An error rolls the request
	// back: nothing changes. A failed commit after it has charged
	// over-charges, never the reverse. With nil, the release is kept
	// uncharged.
	OnRelease func(*Released) error
	// SkipVacuum skips the VACUUM after the commit. Erasure then rests on
	// secure_delete alone (deleted cells and freed pages are overwritten
	// with zeros; TestErasure passes with it alone), and the file keeps its
	// size; a service that batches requests can call Vacuum once after
	// several. VACUUM rewrites the whole file: it is the largest cost of a
	// forget in a large store (docs/performance.md).
	SkipVacuum bool

	resolve bool // Resolve: no ids; replay exactly from before every pending approximate request

	// record, if not nil, is called at the end of the forget's
	// transaction, after every request of the batch is recorded (on every
	// path, PathNone included), with their reports: what it writes commits
	// with the forget or not at all (ServeForgets records the receipts of
	// a batch this way).
	record func(tx *sql.Tx, reps []ForgetReport) error

	// capture (PrepareAudit) receives the approximate path's un-noised
	// intervention output and the spec its release was certified with.
	capture *approxCapture
}

// Validate checks the options as Forget does (a *OptionError), so that a
// caller that serves requests later — a service — refuses bad options when
// it starts rather than at its first request.
func (o ForgetOptions) Validate() error { return o.validate() }

func (o ForgetOptions) validate() error {
	switch {
	case o.resolve && (o.MaxReplay != 0 || o.Intervention != ""):
		return &OptionError{Option: "MaxReplay", Value: o.MaxReplay, Want: "0 and no Intervention for Resolve (a resolution is an exact replay)"}
	case o.MaxReplay < 0:
		return &OptionError{Option: "MaxReplay", Value: o.MaxReplay, Want: "must be non-negative (0: no cap, always exact)"}
	case o.MaxReplay > 0 && o.Intervention == "":
		return &OptionError{Option: "Intervention", Value: `""`, Want: "required with MaxReplay > 0: one of " + strings.Join(Interventions(), ", ")}
	case o.Intervention != "" && !slices.Contains(Interventions(), o.Intervention):
		return &OptionError{Option: "Intervention", Value: o.Intervention, Want: "one of " + strings.Join(Interventions(), ", ")}
	case o.MaxReplay > 0 && (o.Noise.Epsilon == 0 || o.Noise.Delta == 0):
		return &OptionError{Option: "Noise", Value: "ε or δ unset", Want: "Epsilon and Delta required with MaxReplay > 0: the approximate path keeps only a noised, certified state"}
	case o.Noise.Alpha != nil || o.Noise.Deletion != nil || o.Noise.Retained != nil || o.Noise.Header != nil || o.Noise.Established != nil:
		return &OptionError{Option: "Noise", Value: "a derived field", Want: "leave Alpha, Deletion, Retained, Header and Established unset: the store derives them"}
	case o.Ages != AgesPow2 && o.Ages != AgesNone:
		return &OptionError{Option: "Ages", Value: int(o.Ages), Want: "AgesPow2 or AgesNone"}
	}
	return nil
}

// ForgetReport says how a deletion request was served and what it cost.
type ForgetReport struct {
	// Request is the request's number in the store (0 for PathNone).
	Request int64
	// IDs are the ids forgotten by this request, ascending.
	IDs []int64
	// AlreadyForgotten are requested ids that an earlier request forgot.
	AlreadyForgotten []int64
	// Path is the way the request was served, and Reason says why.
	Path   Path
	Reason string
	// FromSeq is the sequence number of the checkpoint the exact path
	// replayed from (0 is θ0).
	FromSeq int64
	// ExactReplay is the number of events exact replay needs (or needed).
	ExactReplay int
	// EventsReplayed is the number of events applied again: ExactReplay on
	// the exact path, the intervention's own replay on the approximate one.
	EventsReplayed int
	// CheckpointsRewritten counts the checkpoints regenerated (exact path).
	CheckpointsRewritten int
	// Intervention is the operator's name (approximate path).
	Intervention string
	// Ages are, for the approximate path, the exact ages in update steps
	// of the deleted inserts when the request was served (certify.AgesOf),
	// in stream order: for the operator. The certificate discloses only
	// Released.Certificate's (AgeDisclosure).
	Ages []int
	// Released is, on the approximate path, the certified release of the
	// noised state the store now holds (the intervention's output plus
	// Gaussian noise): kept in the store as release ReleaseID, signed and
	// charged by OnRelease. Nil otherwise.
	Released  *Released
	ReleaseID int64
	// CheckpointsDropped counts the checkpoints the approximate path
	// deleted: every one at or after the oldest erased insert (no replay
	// uses them, and they held the deleted data's influence un-noised).
	CheckpointsDropped int
	// NeedsNoise reports whether the store's state carries the
	// influence of forgotten data (this request's or an earlier
	// approximate one's), so that only a noised release may be published.
	NeedsNoise bool
	// Wall is the wall time of the forget's transaction (commit included;
	// the stored request record has it up to the commit),
	// Replay the part of it spent replaying the log and writing
	// checkpoints (exact path), and Vacuum the time of the VACUUM that
	// follows the commit.
	Wall, Replay, Vacuum time.Duration
	// ReleasesErased is the number of releases kept in the store (Keep)
	// that this request erased: those made from a state that included one of
	// the deleted inserts (Released.Head ≥ its seq). Copies published
	// elsewhere cannot be recalled.
	ReleasesErased int
	// Resolved are the pending approximate requests (Request.ResolvedBy)
	// whose influence this exact request removed from the state: after it,
	// the state is exact again (exact path only), ascending.
	Resolved []int64
	// ErasedReleases are those releases, by id, oldest first, each with the
	// deleted insert that made its state uncertified (ReleasesErased =
	// len(ErasedReleases)).
	ErasedReleases []ErasedRelease
	// KeysErased is the number of string keys (KeySource) of the forgotten
	// ids that this request erased from the store.
	KeysErased int
}

// Deletion is one deletion request of a batch (ForgetBatch): ids, string
// keys (KeySource), or both.
type Deletion struct {
	IDs  []int64
	Keys []string
}

// Forget serves a deletion request for ids: afterwards the ids' events are
// gone from the log and every checkpoint and state derived from them is
// rebuilt (exact path) or replaced by a noised, certified state (approximate
// path), the ids are recorded as forgotten (a tombstone: the id, never the
// payload) so that they are never ingested again, and the database is
// vacuumed so that no byte of the deleted payloads remains in the store
// directory. Every release kept in the store (Keep) that was made from a
// state including one of the deleted inserts is deleted in the same
// transaction (ReleasesErased) and vacuumed with them; releases made before
// the oldest deleted insert stay. The string keys of the ids (KeySource)
// are deleted in the same transaction (KeysErased); ForgetKeys names a
// request by its keys.
//
// Before anything, the store checks itself (the cheap check of verify:
// SQLite's quick_check, the sums of the state, checkpoints, kept releases
// and keys, and the invariants that tie the log, the tombstones, the
// requests and the head together); a damaged store is refused with a
// *CorruptError and nothing changes.
//
// Exact path (the default): restore the newest exact checkpoint θ_c with c
// before the oldest deleted insert, replay the log after c without the
// deleted events, and regenerate every later checkpoint. The state is then
// bit-identical to olbfgs.Replay on the deletion-edited log
// (stream.Counterfactual: the paper's oracle replay; Definition
// "Deletion-edited counterfactual history"). Replaying from a checkpoint is
// window replay over a window that covers every deleted insert, which is
// exactly oracle replay.
//
// Approximate path: when o.MaxReplay > 0 and exact replay would apply more
// than o.MaxReplay events, o.Intervention is applied to the current state
// (unlearn.Run), and its output is kept only noised: Gaussian noise
// calibrated (certify.Certify with o.Noise) to the α the store derives from
// public quantities — a certified release, signed and charged by
// o.OnRelease, kept in the store, from which the store continues. The
// payloads are erased, and every checkpoint at or after the oldest erased
// insert is deleted (exact replay restarts before it): no stored byte then
// holds the deleted data's influence un-noised. NeedsNoise is set until a
// later exact forget or Resolve. A store whose learner is not certifiable
// refuses the approximate path (ErrNotCertifiable).
//
// Ids never ingested are an error wrapping ErrUnknownID and nothing
// changes; ids already forgotten are reported in AlreadyForgotten (a retried
// request is harmless). The request is one transaction: it commits whole or
// not at all. If the VACUUM after the commit fails, the report is returned
// with the error. A request whose ids were all forgotten already (PathNone)
// commits nothing but still vacuums unless o.SkipVacuum: retrying a request
// whose VACUUM crashed or failed completes its erasure.
func (s *Store) Forget(ids []int64, o ForgetOptions) (ForgetReport, error) {
	if len(ids) == 0 {
		return ForgetReport{}, &OptionError{Option: "IDs", Value: "[]", Want: "at least one id"}
	}
	return s.forgetOne(context.Background(), Deletion{IDs: ids}, o)
}

// ForgetBatch serves several deletion requests in one transaction, with one
// replay (or one intervention and one noised release) for all of them:
// each is recorded as its own request, with its own ids, keys and
// tombstones, and gets its own report; the path, the replay and its cost
// are shared (a service's deletion queue batches its requests this way).
// An id named by two requests is forgotten by the first. The batch is all
// or nothing: one unknown id or key refuses every request.
func (s *Store) ForgetBatch(batch []Deletion, o ForgetOptions) ([]ForgetReport, error) {
	if len(batch) == 0 {
		return nil, &OptionError{Option: "batch", Value: "[]", Want: "at least one request"}
	}
	for i, d := range batch {
		if len(d.IDs) == 0 && len(d.Keys) == 0 {
			return nil, &OptionError{Option: fmt.Sprintf("batch[%d]", i), Value: "{}", Want: "at least one id or key"}
		}
	}
	return s.forget(context.Background(), batch, o)
}

// Resolve serves every pending approximate request exactly, without a new
// deletion: it restores the newest exact checkpoint before the oldest insert
// an approximate request erased, replays the log after it (the erased
// inserts dropped, as stream.Counterfactual does) and regenerates every
// later checkpoint, as an exact Forget would. Afterwards the state is
// bit-identical to training on the deletion-edited log, the pending
// requests are resolved (Request.ResolvedBy, ForgetReport.Resolved) and an
// exact release may be published again. It is recorded as a request with no
// ids (path exact). With nothing pending it returns PathNone and only
// vacuums (unless o.SkipVacuum). o.MaxReplay and o.Intervention must be
// zero.
//
// Resolve also rebuilds a state that is damaged (Status.Damage: it fails
// its sum or does not decode, for example a state a pre-version-6
// parameter-only forget left outside the learner's radius) when the
// checkpoints and the log are sound: the replay does not read the state.
func (s *Store) Resolve(o ForgetOptions) (ForgetReport, error) {
	o.resolve = true
	return s.forgetOne(context.Background(), Deletion{}, o)
}

func (s *Store) forgetOne(ctx context.Context, d Deletion, o ForgetOptions) (ForgetReport, error) {
	reps, err := s.forget(ctx, []Deletion{d}, o)
	if len(reps) == 0 {
		return ForgetReport{}, err
	}
	return reps[0], err
}

// forget serves a batch of requests (one for Forget, ForgetKeys and
// Resolve) under ctx: cancelling it rolls the transaction back
// (PrepareAudit's copy is interrupted this way). It is the three steps of
// forget_plan.go (the facts, read in the transaction; the pure decision)
// and of forget_serve.go (serving the decision and recording it).
func (s *Store) forget(ctx context.Context, batch []Deletion, o ForgetOptions) ([]ForgetReport, error) {
	if err := o.validate(); err != nil {
		return nil, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.db == nil {
		return nil, ErrClosed
	}
	start := time.Now()
	var reps []ForgetReport
	err := s.inTx(ctx, func(tx *sql.Tx) error {
		if err := s.verify(ctx, tx, checkCheap, o.resolve); err != nil {
			return err
		}
		f, err := s.forgetFacts(ctx, tx, batch, o.resolve)
		if err != nil {
			return err
		}
		plan, err := decideForget(f, o)
		if err != nil {
			return err
		}
		if reps, err = s.serve(ctx, tx, f, plan, o, start); err != nil {
			return err
		}
		if o.record != nil {
			return o.record(tx, reps)
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("store: forget: %w", err)
	}
	for i := range reps {
		reps[i].Wall = time.Since(start)
	}
	// A repeated request (PathNone) vacuums too: after a crash or a
	// failure in the VACUUM of the first, running the forget again is how
	// the deleted pages' bytes are removed (ADV2-06).
	if o.SkipVacuum || s.nothingToVacuum(ctx, reps) {
		return reps, nil
	}
	vstart := time.Now()
	if _, err := s.db.ExecContext(ctx, `VACUUM`); err != nil {
		if reps[0].Path == PathNone {
			return reps, fmt.Errorf("store: forget: every id was already forgotten, but VACUUM failed (run the forget again, or Vacuum): %w", err)
		}
		return reps, fmt.Errorf("store: forget request %d committed, but VACUUM failed (run it again with Vacuum): %w", reps[0].Request, err)
	}
	for i := range reps {
		reps[i].Vacuum = time.Since(vstart)
	}
	return reps, nil
}

// nothingToVacuum reports whether a batch erased nothing (every request's
// path none) and the file has no free page left by an earlier forget
// whose VACUUM failed: a VACUUM would then only rewrite the file, holding
// the write lock, for nothing (a repeated request must not buy that).
func (s *Store) nothingToVacuum(ctx context.Context, reps []ForgetReport) bool {
	for _, r := range reps {
		if r.Path != PathNone {
			return false
		}
	}
	var free int64
	if err := s.db.QueryRowContext(ctx, `PRAGMA freelist_count`).Scan(&free); err != nil {
		return false
	}
	return free == 0
}

// Vacuum rebuilds the database file, leaving no free page. Forget does it
// after every request; call it again if that VACUUM failed.
func (s *Store) Vacuum() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.db == nil {
		return ErrClosed
	}
	if err := s.checkWriter(); err != nil {
		return err
	}
	_, err := s.db.Exec(`VACUUM`)
	return err
}
