package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strconv"
	"time"
)

// ResolvePolicy says when the store resolves its pending approximate
// requests on its own, by the exact replay of Resolve: a pending request
// keeps the log's erased rows and a noised state (what remains is listed
// in docs/deployment.md), and resolution removes even those. The zero
// value resolves nothing on its own.
//
// IngestEvents applies it after the last batch of each call
// (IngestResult.Resolved) unless IngestOptions.SkipResolve; a service asks
// ResolutionDue and calls ResolveIfDue on its own schedule (a deadline
// passes without ingest), as package serve does.
type ResolvePolicy struct {
	// AfterEvents, if positive, makes resolution due once AfterEvents
	// events have been ingested since the oldest pending request was
	// served.
	AfterEvents int64
	// Within, if positive, makes resolution due once the oldest pending
	// request is Within old.
	Within time.Duration
}

// IsZero reports whether the policy resolves nothing on its own.
func (p ResolvePolicy) IsZero() bool { return p.AfterEvents == 0 && p.Within == 0 }

func (p ResolvePolicy) validate() error {
	if p.AfterEvents < 0 {
		return &OptionError{Option: "ResolvePolicy.AfterEvents", Value: p.AfterEvents, Want: "must be non-negative (0: no event count)"}
	}
	if p.Within < 0 {
		return &OptionError{Option: "ResolvePolicy.Within", Value: p.Within, Want: "must be non-negative (0: no deadline)"}
	}
	return nil
}

// meta adds the policy's rows to meta (none for a zero field).
func (p ResolvePolicy) meta(m map[string]string) {
	delete(m, "resolve_after_events")
	delete(m, "resolve_within")
	if p.AfterEvents > 0 {
		m["resolve_after_events"] = strconv.FormatInt(p.AfterEvents, 10)
	}
	if p.Within > 0 {
		m["resolve_within"] = p.Within.String()
	}
}

func policyFromMeta(m map[string]string) (ResolvePolicy, error) {
	var p ResolvePolicy
	var err error
	if v, ok := m["resolve_after_events"]; ok {
		if p.AfterEvents, err = strconv.ParseInt(v, 10, 64); err != nil || p.AfterEvents < 1 {
			return p, fmt.Errorf("%w: meta \"resolve_after_events\" = %q", ErrSchema, v)
		}
	}
	if v, ok := m["resolve_within"]; ok {
		if p.Within, err = time.ParseDuration(v); err != nil || p.Within <= 0 {
			return p, fmt.Errorf("%w: meta \"resolve_within\" = %q", ErrSchema, v)
		}
	}
	return p, nil
}

// ResolvePolicy returns the store's resolution policy.
func (s *Store) ResolvePolicy() ResolvePolicy { return s.policy }

// SetResolvePolicy changes the store's resolution policy, in one
// transaction (the configuration's sum with it). Errors: *OptionError.
func (s *Store) SetResolvePolicy(p ResolvePolicy) error {
	if err := p.validate(); err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.db == nil {
		return ErrClosed
	}
	ctx := context.Background()
	return s.inTx(ctx, func(tx *sql.Tx) error {
		meta, err := readMeta(ctx, tx)
		if err != nil {
			return err
		}
		if err := checkConfigSum(meta); err != nil {
			return err
		}
		p.meta(meta)
		meta["config_sha256"] = fmt.Sprintf("%x", sumConfig(meta))
		if _, err := tx.Exec(`DELETE FROM meta WHERE key IN ('resolve_after_events', 'resolve_within')`); err != nil {
			return err
		}
		for _, k := range []string{"resolve_after_events", "resolve_within", "config_sha256"} {
			if v, ok := meta[k]; ok {
				if _, err := tx.Exec(`INSERT OR REPLACE INTO meta (key, value) VALUES (?, ?)`, k, v); err != nil {
					return err
				}
			}
		}
		s.policy = p
		return nil
	})
}

// Due says whether the resolution policy asks for a resolution now.
type Due struct {
	// Due is true when Resolve should run: a request is pending and the
	// policy's event count or deadline is reached.
	Due bool
	// Reason says why (or why not), in words.
	Reason string
	// Oldest is the oldest pending request (0: none), served at Since;
	// EventsSince events were ingested after it.
	Oldest      int64
	Since       time.Time
	EventsSince int64
}

// ResolutionDue evaluates the resolution policy at now.
func (s *Store) ResolutionDue(now time.Time) (Due, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.db == nil {
		return Due{}, ErrClosed
	}
	var d Due
	err := s.readTx(context.Background(), func(ctx context.Context, tx *sql.Tx) error {
		var err error
		d, err = s.due(ctx, tx, now)
		return err
	})
	return d, err
}

// due is ResolutionDue in the caller's transaction.
func (s *Store) due(ctx context.Context, q querier, now time.Time) (Due, error) {
	var d Due
	var r requestRow
	err := r.scan(q.QueryRowContext(ctx, `SELECT `+requestCols+`, sha256 FROM forget_requests
		WHERE needs_noise = 1 AND resolved_by IS NULL ORDER BY request LIMIT 1`))
	if errors.Is(err, sql.ErrNoRows) {
		d.Reason = "no approximate request is pending"
		return d, nil
	}
	if err != nil {
		return d, err
	}
	d.Oldest = r.request
	if !sameSum(r.sum, sumRequest(&r)) {
		// When it was served is unknown: resolving is always allowed
		// (an exact replay), and the resolution's check reports the
		// damage instead of letting the policy's deadline pass silently.
		d.Due, d.Reason = true, fmt.Sprintf("the record of request %d does not match its checksum ('unlearn status --check' says more)", r.request)
		return d, nil
	}
	at := r.head.Int64
	if !r.head.Valid {
		// Before schema 6: the newest erased insert of the request.
		if err := q.QueryRowContext(ctx, `SELECT COALESCE(max(e.seq), 0) FROM events e JOIN forgotten f ON f.id = e.id WHERE f.request = ?`, r.request).Scan(&at); err != nil {
			return d, err
		}
	}
	d.Since, _ = time.Parse(time.RFC3339Nano, r.time)
	d.EventsSince = max(0, s.head-at)
	p := s.policy
	switch {
	case p.IsZero():
		d.Reason = "the store has no resolution policy"
	case p.AfterEvents > 0 && d.EventsSince >= p.AfterEvents:
		d.Due, d.Reason = true, fmt.Sprintf("%d events were ingested since request %d (policy: resolve after %d)", d.EventsSince, d.Oldest, p.AfterEvents)
	case p.Within > 0 && !now.Before(d.Since.Add(p.Within)):
		d.Due, d.Reason = true, fmt.Sprintf("request %d is older than %s (policy: resolve within %s)", d.Oldest, now.Sub(d.Since).Round(time.Second), p.Within)
	default:
		d.Reason = fmt.Sprintf("request %d is pending: %s", d.Oldest, p.describeRemaining(d, now))
	}
	return d, nil
}

// describeRemaining says when the policy will make resolution due.
func (p ResolvePolicy) describeRemaining(d Due, now time.Time) string {
	var parts []string
	if p.AfterEvents > 0 {
		parts = append(parts, fmt.Sprintf("resolved after %d more events", p.AfterEvents-d.EventsSince))
	}
	if p.Within > 0 {
		parts = append(parts, fmt.Sprintf("by %s", d.Since.Add(p.Within).UTC().Format(time.RFC3339)))
	}
	if len(parts) == 2 {
		return parts[0] + " or " + parts[1]
	}
	return parts[0]
}

// ResolveIfDue resolves the pending approximate requests (Resolve with o)
// when the policy says it is due at now. It returns the report and true
// when it resolved, the zero report and false otherwise.
func (s *Store) ResolveIfDue(now time.Time, o ForgetOptions) (ForgetReport, bool, error) {
	return s.ResolveIfDueContext(context.Background(), now, o)
}

// ResolveIfDueContext is ResolveIfDue under ctx: cancelling it rolls the
// resolution's transaction back (nothing changes; the requests stay
// pending), as a service does when it shuts down.
func (s *Store) ResolveIfDueContext(ctx context.Context, now time.Time, o ForgetOptions) (ForgetReport, bool, error) {
	d, err := s.ResolutionDue(now)
	if err != nil || !d.Due {
		return ForgetReport{}, false, err
	}
	o.resolve = true
	rep, err := s.forgetOne(ctx, Deletion{}, o)
	return rep, err == nil || rep.Request != 0, err
}
