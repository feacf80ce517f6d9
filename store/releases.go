package store

import (
	"cmp"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"slices"
	"time"
)

// StoredRelease is a release kept in the store (Keep): the release file
// (unlearn-release/v1) and its certificate (unlearn-certificate/v2) as
// published, byte for byte, and the log position of the released state.
type StoredRelease struct {
	ID   int64     `json:"id"`
	Time time.Time `json:"time"`
	// Head is the log position of the released state: the state depended on
	// every insert with seq ≤ Head. A forget of such an insert erases the
	// stored release.
	Head int64 `json:"head"`
	// Path is Released.Path: exact, derived or diameter.
	Path    string  `json:"path"`
	Exact   bool    `json:"exact"`
	Epsilon float64 `json:"epsilon"`
	Delta   float64 `json:"delta"`
	// File and Certificate are the bytes of the release and certificate
	// files; nil in the listing of Releases.
	File        []byte `json:"file,omitempty"`
	Certificate []byte `json:"certificate,omitempty"`
	// Damaged is set in the listing (Releases) for a release whose bytes
	// fail their checksum; GetRelease refuses it.
	Damaged bool `json:"damaged,omitempty"`
}

// Keep records r in the store, in one transaction: the release file
// (r.Release.Marshal) and the certificate (r.Certificate.MarshalIndent; sign
// it first) with r.Head, the log position of the released state. It
// returns the stored release, whose File and Certificate are the bytes to
// publish.
//
// A release kept here is erased by the first forget that deletes an insert
// with seq ≤ Head (Forget, ForgetReport.ReleasesErased): made from a state
// that included the sample without a certificate covering its deletion, it
// would carry the sample's influence. Copies published elsewhere are not
// the store's to recall.
//
// Keep refuses, with ErrStaleRelease, a release computed before a forget
// request that has committed since (its state may hold a sample that is now
// forgotten): compute a new one. With a ledger, charge it before Keep: a
// kill -9 between the two over-charges and keeps nothing, never the reverse.
func (s *Store) Keep(r *Released) (StoredRelease, error) {
	if r == nil || r.Release == nil || r.Certificate == nil {
		return StoredRelease{}, errors.New("store: keep: a Released from Store.Release is required")
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.db == nil {
		return StoredRelease{}, ErrClosed
	}
	var out StoredRelease
	err := s.inTx(context.Background(), func(tx *sql.Tx) error {
		var last int64
		if err := tx.QueryRow(`SELECT COALESCE(MAX(request), 0) FROM forget_requests`).Scan(&last); err != nil {
			return err
		}
		if last != r.lastRequest {
			return fmt.Errorf("%w: forget request %d committed after the release was computed (the newest then was %d)", ErrStaleRelease, last, r.lastRequest)
		}
		if r.Head > s.head {
			return fmt.Errorf("%w: release at log position %d, the log ends at %d", ErrInconsistent, r.Head, s.head)
		}
		var err error
		out, err = insertRelease(tx, r)
		return err
	})
	if err != nil {
		return StoredRelease{}, fmt.Errorf("store: keep: %w", err)
	}
	return out, nil
}

// insertRelease stores r, with its sum, in tx.
func insertRelease(tx *sql.Tx, r *Released) (StoredRelease, error) {
	file, err := r.Release.Marshal()
	if err != nil {
		return StoredRelease{}, err
	}
	cert, err := r.Certificate.MarshalIndent()
	if err != nil {
		return StoredRelease{}, err
	}
	out := StoredRelease{Time: time.Now().UTC(), Head: r.Head, Path: r.Path, Exact: r.Certificate.Exact,
		Epsilon: r.Certificate.Epsilon, Delta: r.Certificate.Delta, File: file, Certificate: cert}
	tm := out.Time.Format(time.RFC3339Nano)
	res, err := tx.Exec(`INSERT INTO releases (time, head, path, exact, epsilon, delta, file, certificate) VALUES (?, ?, ?, ?, ?, ?, ?, ?)`,
		tm, out.Head, out.Path, b2i(out.Exact), out.Epsilon, out.Delta, file, cert)
	if err != nil {
		return out, err
	}
	if out.ID, err = res.LastInsertId(); err != nil {
		return out, err
	}
	_, err = tx.Exec(`UPDATE releases SET sha256 = ? WHERE release = ?`,
		sumRelease(out.ID, tm, out.Head, out.Path, out.Exact, out.Epsilon, out.Delta, file, cert), out.ID)
	return out, err
}

// Releases lists the releases kept in the store, oldest first, without
// their bytes (GetRelease fetches them).
func (s *Store) Releases() ([]StoredRelease, error) {
	rs, err := s.queryReleases(false, `SELECT release, time, head, path, exact, epsilon, delta, file, certificate, sha256 FROM releases ORDER BY release`)
	for i := range rs {
		rs[i].File, rs[i].Certificate = nil, nil
	}
	return rs, err
}

// GetRelease returns the stored release id with its file and certificate.
// An id not in the store (never kept, or erased by a forget) is an error
// wrapping ErrUnknownRelease; a release whose bytes fail their sum is a
// *CorruptError (nothing is returned).
func (s *Store) GetRelease(id int64) (StoredRelease, error) {
	rs, err := s.queryReleases(true, `SELECT release, time, head, path, exact, epsilon, delta, file, certificate, sha256 FROM releases WHERE release = ?`, id)
	if err != nil {
		return StoredRelease{}, err
	}
	if len(rs) == 0 {
		return StoredRelease{}, fmt.Errorf("%w: release %d (never kept, or erased by a forget)", ErrUnknownRelease, id)
	}
	return rs[0], nil
}

// queryReleases reads releases and verifies their sums: a damaged one is
// an error if strict, else listed with Damaged set.
func (s *Store) queryReleases(strict bool, q string, args ...any) ([]StoredRelease, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.db == nil {
		return nil, ErrClosed
	}
	rows, err := s.db.Query(q, args...)
	if err != nil {
		return nil, fmt.Errorf("store: releases: %w", err)
	}
	defer rows.Close()
	var out []StoredRelease
	for rows.Next() {
		var r StoredRelease
		var t string
		var exact int
		var sum []byte
		if err := rows.Scan(&r.ID, &t, &r.Head, &r.Path, &exact, &r.Epsilon, &r.Delta, &r.File, &r.Certificate, &sum); err != nil {
			return nil, fmt.Errorf("store: releases: %w", err)
		}
		if !sameSum(sum, sumRelease(r.ID, t, r.Head, r.Path, exact == 1, r.Epsilon, r.Delta, r.File, r.Certificate)) {
			if strict {
				return nil, fmt.Errorf("store: releases: %w", corrupt(fmt.Sprintf("kept release %d", r.ID), "its checksum does not match its content: it is not handed out"))
			}
			r.Damaged = true
		}
		if r.Time, err = time.Parse(time.RFC3339Nano, t); err != nil {
			return nil, fmt.Errorf("%w: release %d: time %q: %w", ErrInconsistent, r.ID, t, err)
		}
		r.Exact = exact == 1
		out = append(out, r)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("store: releases: %w", err)
	}
	return out, nil
}

// ErasedRelease is a kept release that a forget erased, and why: its
// state (log position Head) included the insert at log position Seq of the
// forgotten id ID, the oldest insert the request deleted (Seq ≤ Head).
type ErasedRelease struct {
	Release int64 `json:"release"`
	Head    int64 `json:"head"`
	Seq     int64 `json:"seq"`
	ID      int64 `json:"id"`
}

// eraseReleases deletes, inside a forget's transaction, every kept release
// whose state depended on an insert with seq ≥ minSeq (the oldest insert
// the request deletes, of id minID), and returns them, oldest first.
func eraseReleases(tx *sql.Tx, minSeq, minID int64) ([]ErasedRelease, error) {
	rows, err := tx.Query(`DELETE FROM releases WHERE head >= ? RETURNING release, head`, minSeq)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []ErasedRelease
	for rows.Next() {
		e := ErasedRelease{Seq: minSeq, ID: minID}
		if err := rows.Scan(&e.Release, &e.Head); err != nil {
			return nil, err
		}
		out = append(out, e)
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	slices.SortFunc(out, func(a, b ErasedRelease) int { return cmp.Compare(a.Release, b.Release) })
	return out, nil
}
