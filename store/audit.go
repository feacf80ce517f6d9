package store

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

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
// files are copied into a temporary directory (removed before returning)
// and only the copy is opened. The store must not be written to while it
// is copied (an ingest or forget in progress in another process).
//
//   - World A: the copy serves the request with o.Forget (Store.Forget),
//     then is released as Store.Release would with o.Spec.
//   - World B: the copy's Store.Counterfactual, the replay from θ0 of the
//     log without every forgotten insert (the paper's oracle: Definition
//     "Deletion-edited counterfactual history"), released with the same
//     configuration: the same α, σ and memory policy.
//
// Errors: those of Open, Forget (ErrUnknownID names an id the store never
// ingested, *OptionError a bad option) and Release, wrapped with the step;
// an error if o.Spec sets a field the store derives.
func PrepareAudit(dir string, ids []int64, o AuditOptions) (w *AuditWorlds, err error) {
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
		if rerr := os.RemoveAll(tmp); rerr != nil && err == nil {
			err = fmt.Errorf("store: audit: %w", rerr)
		}
	}()
	if err := copyStoreFiles(dir, tmp); err != nil {
		return nil, err
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
	fo := o.Forget
	fo.SkipVacuum = true
	w = &AuditWorlds{}
	if w.Forget, err = s.Forget(ids, fo); err != nil {
		return nil, fmt.Errorf("store: audit: world A: forget: %w", err)
	}
	if w.Forget.Path == PathNone {
		return nil, &OptionError{Option: "ids", Value: fmt.Sprint(ids), Want: "ids the store has not forgotten yet (every one was already forgotten)"}
	}
	if w.StateA, err = s.State(); err != nil {
		return nil, fmt.Errorf("store: audit: world A: %w", err)
	}
	if w.StateB, err = s.Counterfactual(); err != nil {
		return nil, fmt.Errorf("store: audit: world B: %w", err)
	}
	const checkSeed = 1 // any seed: the check compares two releases drawn with it
	spec := o.Spec
	spec.Sampler = noise.NewSeededSampler(checkSeed, noise.SamplerOptions{})
	rel, err := s.Release(spec)
	if err != nil {
		return nil, fmt.Errorf("store: audit: world A: release: %w", err)
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
		if same.Retained, err = s.lastRetained(context.Background(), s.LearnerConfig().Memory); err != nil {
			return nil, err
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

// copyStoreFiles copies the database of a store directory and, after a
// crash, its rollback journal (the files named FileName…) into dst.
func copyStoreFiles(src, dst string) error {
	if _, err := os.Stat(filepath.Join(src, FileName)); err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return fmt.Errorf("store: audit: %s holds no store (%s): %w", src, FileName, err)
		}
		return fmt.Errorf("store: audit: %w", err)
	}
	entries, err := os.ReadDir(src)
	if err != nil {
		return fmt.Errorf("store: audit: %w", err)
	}
	for _, e := range entries {
		if !e.Type().IsRegular() || !strings.HasPrefix(e.Name(), FileName) {
			continue // the database and its journal only (not a ledger, keys, …)
		}
		if err := copyFile(filepath.Join(src, e.Name()), filepath.Join(dst, e.Name())); err != nil {
			return fmt.Errorf("store: audit: copying the store: %w", err)
		}
	}
	return nil
}

func copyFile(src, dst string) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}
