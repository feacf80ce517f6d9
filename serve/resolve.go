package serve

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"unlearn/certify"
	"unlearn/ledger"
	"unlearn/store"
)

// resolver applies the store's resolution policy (store.ResolvePolicy) on
// its own: a deletion served on the approximate path leaves its records'
// positions and a noised state pending until an exact replay resolves it,
// and the policy says when that replay must run (after N more events, or
// within a duration). The resolver evaluates the policy after every ingest
// and approximate deletion batch (poke), at the oldest pending request's
// deadline, and at least every Options.ResolveCheck; when it is due, it
// takes the write lock and resolves (store.ResolveIfDueContext), so that an
// ingest is never answered with a resolution's replay or its failure
// (ingest runs with IngestOptions.SkipResolve).
type resolver struct {
	s    *Server
	wake chan struct{}

	runMu sync.Mutex // held while a resolution runs (idle waits for it)
	idled bool       // guarded by runMu

	mu       sync.Mutex
	last     time.Time // when the last resolution committed
	lastReq  int64     // its store request
	resolved int       // approximate requests resolved since start
	lastErr  string
}

func newResolver(s *Server) *resolver {
	return &resolver{s: s, wake: make(chan struct{}, 1)}
}

// poke asks the resolver to evaluate the policy now.
func (r *resolver) poke() {
	select {
	case r.wake <- struct{}{}:
	default:
	}
}

// run evaluates the policy until ctx is cancelled: at once, after every
// poke, at the oldest pending request's deadline and at least every
// ResolveCheck; after Close it starts no resolution.
func (r *resolver) run(ctx context.Context) {
	var wait time.Duration // evaluate at start: a resolution may be due already
	for {
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return
		case <-r.wake:
		case <-t.C:
		}
		t.Stop()
		wait = r.s.opt.ResolveCheck
		select {
		case <-r.s.closing:
			continue
		default:
		}
		if next := r.check(ctx); next > 0 {
			wait = min(wait, next)
		}
	}
}

// idle waits for a running resolution to end; none starts afterwards.
func (r *resolver) idle() {
	r.runMu.Lock()
	defer r.runMu.Unlock()
	r.idled = true
}

// check resolves if the policy says it is due, and returns how long until
// its deadline when a request is pending and the policy has one (0 when
// nothing is pending, or it resolved, or the policy counts events only).
func (r *resolver) check(ctx context.Context) time.Duration {
	p := r.s.st.ResolvePolicy()
	if p.IsZero() {
		return 0
	}
	due, err := r.s.st.ResolutionDue(time.Now())
	if err != nil {
		r.failed(err)
		return 0
	}
	if due.Oldest == 0 {
		return 0
	}
	if !due.Due {
		if p.Within > 0 {
			return max(time.Until(due.Since.Add(p.Within)), time.Millisecond)
		}
		return 0
	}
	r.resolve(ctx)
	return 0
}

// resolve takes the write lock and resolves if still due.
func (r *resolver) resolve(ctx context.Context) {
	r.runMu.Lock()
	defer r.runMu.Unlock()
	if r.idled {
		return
	}
	select {
	case r.s.write <- struct{}{}:
	case <-ctx.Done():
		return
	case <-r.s.closing:
		return
	}
	start := time.Now()
	// A resolution deletes no payload (the approximate path erased them)
	// and secure_delete zeroes what it frees: no VACUUM, as ingest does.
	rep, did, err := r.s.st.ResolveIfDueContext(ctx, time.Now(), store.ForgetOptions{SkipVacuum: true})
	if did {
		if perr := r.s.publish(publishAll); perr != nil {
			r.s.log.Error("publishing after a resolution", "err", perr)
		}
	}
	<-r.s.write
	if err != nil && !did {
		if ctx.Err() == nil {
			r.failed(err)
		}
		return
	}
	if !did {
		return
	}
	r.s.metrics.resolutions.Inc()
	r.s.log.Info("approximate deletions resolved by exact replay (resolution policy)", "store_request", rep.Request,
		"resolved", len(rep.Resolved), "events_replayed", rep.EventsReplayed, "ms", time.Since(start).Milliseconds())
	r.mu.Lock()
	r.last, r.lastReq, r.lastErr = time.Now().UTC(), rep.Request, ""
	r.resolved += len(rep.Resolved)
	r.mu.Unlock()
}

func (r *resolver) failed(err error) {
	msg := redactNumbers(err)
	r.s.log.Error("resolution policy: the exact replay failed; the approximate requests stay pending", "err", msg)
	r.s.metrics.resolutionFailures.Inc()
	r.mu.Lock()
	r.lastErr = msg
	r.mu.Unlock()
}

// resolutionStats is the resolver's part of the status.
type resolutionStats struct {
	// Policy is the store's resolution policy in words ("" when none).
	Policy       string `json:"policy,omitempty"`
	Resolved     int    `json:"resolved_since_start"`
	LastResolved string `json:"last_resolved,omitempty"`
	LastError    string `json:"last_error,omitempty"`
}

func (r *resolver) stats() resolutionStats {
	r.mu.Lock()
	defer r.mu.Unlock()
	st := resolutionStats{Policy: policyWords(r.s.st.ResolvePolicy()), Resolved: r.resolved, LastError: r.lastErr}
	if !r.last.IsZero() {
		st.LastResolved = r.last.Format(time.RFC3339Nano)
	}
	return st
}

func policyWords(p store.ResolvePolicy) string {
	switch {
	case p.IsZero():
		return ""
	case p.AfterEvents > 0 && p.Within > 0:
		return fmt.Sprintf("after %d events or within %s", p.AfterEvents, p.Within)
	case p.AfterEvents > 0:
		return fmt.Sprintf("after %d events", p.AfterEvents)
	}
	return "within " + p.Within.String()
}

// chargeRelease is the approximate path's OnRelease: it signs the noised
// state's certificate with the certifier's key and charges it to the
// store's budget ledger, inside the deletion batch's transaction (a
// failure rolls the batch back; a commit that fails after the charge
// over-charges, never the reverse). The batch holds the write lock, as
// POST /v1/releases does when it charges.
func (s *Server) chargeRelease(rel *store.Released) error {
	if err := certify.Sign(rel.Certificate, s.opt.Key); err != nil {
		return err
	}
	if _, err := s.ledger.Append(ledger.ReleaseOf(rel.Certificate)); err != nil {
		return fmt.Errorf("the approximate path's release: %w", err)
	}
	s.metrics.released(false)
	return nil
}

// budgetRefused reports whether err is the ledger refusing a charge for
// lack of budget.
func budgetRefused(err error) bool { return errors.Is(err, ledger.ErrBudget) }
