package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"

	"unlearn/certify"
	"unlearn/internal/floatbits"
	"unlearn/noise"
	"unlearn/olbfgs"
)

// AuditOptions configure [PrepareAudit].
type AuditOptions struct {
	// Forget is world A's forget path, as Store.Forget takes it: the zero
	// value serves the request exactly by replay; MaxReplay > 0 with an
	// Intervention serves it approximately when the replay would exceed
	// the cap. SkipVacuum is set on the copy (erasure is not audited).
	Forget ForgetOptions
	// Spec is the release configuration, as Store.Release takes it: ε, δ,
	// the calibration and the memory policy (Reset or Rebuild). Alpha,
	// Deletion, Retained, Header, Established and Sampler must be unset:
	// the store derives the first five, the audit draws the noise.
	Spec certify.Spec
}

// AuditWorlds are the two worlds of an audit of a model store's forget
// and release (package audit), computed once: the un-noised states are
// deterministic, so an audit only draws fresh noise per trial.
type AuditWorlds struct {
	// Forget is world A's forget on the copy: its Path and Reason say which
	// path the request took and why.
	Forget ForgetReport
	// ReleasePath is how Store.Release obtained α on the copy after the
	// forget: "exact", "derived" or "diameter" (Released.Path).
	ReleasePath string
	// StateA is the store's state after the forget (world A, un-noised);
	// StateB is the replay from θ0 of the deletion-edited log (world B:
	// training without every forgotten insert, this request's included).
	StateA, StateB *olbfgs.Learner
	// Exact reports that the store's release is exact (ReleasePath
	// "exact"): each world publishes its un-noised state, memory included,
	// and A and B are nil.
	Exact bool
	// A and B release the worlds with the store's release configuration:
	// the same α and σ (the store's, derived from public inputs), the same
	// memory policy and retained data, through certify.Prepared — the code
	// of the store's own release. A's release with a seeded sampler was
	// checked equal, bit for bit, to Store.Release's with the same seed.
	A, B *certify.Prepared
	// Certificate is the certificate of that checked release of world A.
	Certificate *certify.Certificate
}

// PrepareAudit computes the worlds of an audit of a deletion request for
// ids against the model store in dir, without modifying it: the store's
// database is copied into a temporary directory (removed before returning)
// as one consistent snapshot (VACUUM INTO on a read-only connection, so an
// ingest or forget running in another process waits or is not seen at
// all) and only the copy is opened.
//
//   - World A: the copy serves the request with o.Forget (Store.Forget),
//     then is released as Store.Release would with o.Spec.
//   - World B: the copy's Store.Counterfactual, the replay from θ0 of the
//     log without every forgotten insert (the paper's oracle: Definition
//     "Deletion-edited counterfactual history"), released with the same
//     configuration: the same α, σ and memory policy.
//
// The copy holds every payload of the store, the audited ids' included, so
// its removal must not depend on the caller finishing: cancelling ctx (a
// command installs its SIGINT/SIGTERM context before calling) interrupts
// the copy, the forget and the replay at their next database access, and
// PrepareAudit removes the copy and returns an error wrapping ctx's
// (context.Canceled). A process killed outright (SIGKILL, a crash, power
// loss) cannot clean up: the copy then stays in a directory
// unlearn-audit-store-* under os.TempDir() ($TMPDIR, default /tmp) until
// removed by hand.
//
// Errors: those of Open, Forget (ErrUnknownID names an id the store never
// ingested, *OptionError a bad option) and Release, wrapped with the step;
// an error if o.Spec sets a field the store derives.
func PrepareAudit(ctx context.Context, dir string, ids []int64, o AuditOptions) (w *AuditWorlds, err error) {
	if o.Spec.Alpha != nil || o.Spec.Deletion != nil || o.Spec.Retained != nil || o.Spec.Header != nil || o.Spec.Established != nil || o.Spec.Sampler != nil {
		return nil, &OptionError{Option: "Spec", Value: "a derived field", Want: "leave Alpha, Deletion, Retained, Header, Established and Sampler unset: the store derives them and the audit draws the noise"}
	}
	if len(ids) == 0 {
		return nil, &OptionError{Option: "ids", Value: "[]", Want: "at least one id to forget"}
	}
	tmp, err := os.MkdirTemp("", "unlearn-audit-store-")
	if err != nil {
		return nil, fmt.Errorf("store: audit: %w", err)
	}
	defer func() {
		if rerr := os.RemoveAll(tmp); rerr != nil {
			err = errors.Join(err, fmt.Errorf("store: audit: removing the copy %s: %w", tmp, rerr))
		}
	}()
	defer func() {
		// An interrupted step may report a rolled-back transaction
		// (sql.ErrTxDone) rather than the cancellation: say why.
		if err != nil && ctx.Err() != nil && !errors.Is(err, ctx.Err()) {
			err = fmt.Errorf("store: audit: interrupted: %w (%w)", ctx.Err(), err)
		}
		if err != nil {
			w = nil
		}
	}()
	if err := snapshotStore(ctx, dir, tmp); err != nil {
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("store: audit: %w", err)
	}
	s, err := Open(tmp)
	if err != nil {
		return nil, fmt.Errorf("store: audit: opening the copy: %w", err)
	}
	defer func() {
		if cerr := s.Close(); cerr != nil && err == nil {
			err = fmt.Errorf("store: audit: %w", cerr)
		}
	}()
	const checkSeed = 1 // any seed: the check compares two releases drawn with it
	fo := o.Forget
	fo.SkipVacuum = true
	capture := &approxCapture{}
	if fo.MaxReplay > 0 {
		// The approximate path releases the intervention's output itself:
		// with the audit's release configuration and a seeded sampler, so
		// that the audit's world A can be checked against it.
		fo.Noise, fo.capture = o.Spec, capture
		fo.Noise.Sampler = noise.NewSeededSampler(checkSeed, noise.SamplerOptions{})
	}
	w = &AuditWorlds{}
	if w.Forget, err = s.forgetOne(ctx, Deletion{IDs: ids}, fo); err != nil {
		return nil, fmt.Errorf("store: audit: world A: forget: %w", err)
	}
	if w.Forget.Path == PathNone {
		return nil, &OptionError{Option: "ids", Value: fmt.Sprint(ids), Want: "ids the store has not forgotten yet (every one was already forgotten)"}
	}
	if w.StateB, err = s.counterfactual(ctx); err != nil {
		return nil, fmt.Errorf("store: audit: world B: %w", err)
	}
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("store: audit: %w", err)
	}
	var rel *Released
	if w.Forget.Path == PathApproximate {
		// World A is the intervention's output before the store's noise;
		// the store's release of it is the forget's own.
		w.StateA, rel = capture.unnoised, w.Forget.Released
	} else {
		if w.StateA, err = s.State(); err != nil {
			return nil, fmt.Errorf("store: audit: world A: %w", err)
		}
		spec := o.Spec
		spec.Sampler = noise.NewSeededSampler(checkSeed, noise.SamplerOptions{})
		if rel, err = s.Release(spec); err != nil {
			return nil, fmt.Errorf("store: audit: world A: release: %w", err)
		}
	}
	w.ReleasePath, w.Certificate = rel.Path, rel.Certificate
	if rel.Path == "exact" {
		w.Exact = true
		return w, nil
	}
	// The store's release configuration, α and σ as the store derived
	// them: world B gets the same, so σ is equal in both worlds.
	same := o.Spec
	h := s.Header()
	same.Header = &h
	same.Intervention, same.Deletions = rel.Certificate.Intervention, rel.Certificate.Deletions
	same.Alpha = &certify.Given{Alpha: rel.Certificate.Sensitivity.Alpha, Method: "the model store's release (" + rel.Path + "): " + rel.Certificate.Sensitivity.Source}
	if same.Memory == certify.Rebuild {
		same.Retained = capture.spec.Retained
		if w.Forget.Path != PathApproximate {
			if same.Retained, err = s.lastRetained(context.Background(), s.db, s.LearnerConfig().Memory); err != nil {
				return nil, err
			}
		}
	}
	if w.A, err = certify.Prepare(w.StateA, same); err != nil {
		return nil, fmt.Errorf("store: audit: world A: %w", err)
	}
	if w.B, err = certify.Prepare(w.StateB, same); err != nil {
		return nil, fmt.Errorf("store: audit: world B: %w", err)
	}
	check, err := w.A.Release(noise.NewSeededSampler(checkSeed, noise.SamplerOptions{}))
	if err != nil {
		return nil, fmt.Errorf("store: audit: world A: %w", err)
	}
	if !sameRelease(check, rel.Release) || w.A.Sigma() != rel.Certificate.Sigma {
		return nil, fmt.Errorf("store: audit: %w: the audit's release of world A differs from the store's release with the same seed", ErrInconsistent)
	}
	return w, nil
}

// sameRelease reports whether two releases publish the same numbers, bit
// for bit.
func sameRelease(a, b *certify.Release) bool {
	if !floatbits.Equal(a.W, b.W) || len(a.Memory) != len(b.Memory) {
		return false
	}
	for i := range a.Memory {
		if !floatbits.Equal(a.Memory[i].S, b.Memory[i].S) || !floatbits.Equal(a.Memory[i].Y, b.Memory[i].Y) {
			return false
		}
	}
	return true
}

// snapshotStore writes a consistent copy of the database of the store in
// src to dst/FileName with SQLite's VACUUM INTO
// (https://sqlite.org/lang_vacuum.html#vacuuminto), run on a read-only
// connection. VACUUM INTO reads the source inside one read transaction, so
// the copy is a snapshot of one committed state even while another process
// ingests or forgets (a writer waits for the shared lock, up to the store's
// busy timeout); it writes only the copy, and the copy holds no free pages,
// so nothing a past forget erased is carried over either.
//
// A hot rollback journal (an interrupted write that no process is
// finishing) needs a writer to roll it back; a read-only connection cannot,
// and the audit refuses rather than touch the user's files: opening the
// store once with any command (unlearn status) recovers it.
func snapshotStore(ctx context.Context, src, dst string) error {
	abs, err := filepath.Abs(filepath.Join(src, FileName))
	if err != nil {
		return fmt.Errorf("store: audit: %w", err)
	}
	if _, err := os.Stat(abs); err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return fmt.Errorf("store: audit: %s holds no store (%s): %w", src, FileName, err)
		}
		return fmt.Errorf("store: audit: %w", err)
	}
	u := url.URL{Scheme: "file", Path: filepath.ToSlash(abs)}
	q := url.Values{}
	q.Set("mode", "ro")
	q.Add("_pragma", "busy_timeout(10000)")
	db, err := sql.Open("sqlite", u.String()+"?"+q.Encode())
	if err != nil {
		return fmt.Errorf("store: audit: %w", err)
	}
	defer db.Close()
	db.SetMaxOpenConns(1)
	out := filepath.Join(dst, FileName)
	if _, err := db.ExecContext(ctx, `VACUUM INTO ?`, out); err != nil {
		if ctx.Err() != nil {
			return fmt.Errorf("store: audit: copying %s: %w", src, ctx.Err())
		}
		if _, jerr := os.Stat(abs + "-journal"); jerr == nil {
			return fmt.Errorf("store: audit: copying %s: %w (a rollback journal %s-journal is present: if no other process is writing to the store, it is left by an interrupted write; open the store once, e.g. unlearn status --store %s, to recover it, then audit)", src, err, FileName, src)
		}
		return fmt.Errorf("store: audit: copying %s: %w", src, err)
	}
	return nil
}
