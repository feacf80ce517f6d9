package store

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// OwnerFile is the lock file in a store's directory that a service (unlearn
// serve) holds exclusively for its whole life (an OS file lock, flock(2):
// released by the kernel when the process ends, kill -9 included). It holds
// the owner's process id and address, for the refusals of other writers.
const OwnerFile = "owner.lock"

// ErrOwned: a write was refused because a service owns the store (see
// Store.Own), or a service could not take the store because another
// process owns it or is writing to it. An *OwnedError says who.
var ErrOwned = errors.New("the store is owned by a running service")

// Owner describes the process that owns a store.
type Owner struct {
	PID   int    `json:"pid"`
	Addr  string `json:"addr,omitempty"`
	Since string `json:"since,omitempty"`
}

// OwnedError is the refusal of a write to a store a service owns, or of
// Own while another process owns the store or writes to it. It matches
// ErrOwned.
type OwnedError struct {
	Dir string
	// Owner is the service that owns the store; zero when the lock is held
	// by writers (commands that write) rather than by a service.
	Owner Owner
	// Writing: Own was refused because another process is writing.
	Writing bool
}

func (e *OwnedError) Error() string {
	if e.Writing {
		return fmt.Sprintf("store %s: another process is writing to it (a command such as unlearn ingest or forget, or a service starting): retry when it has finished", e.Dir)
	}
	who := "a running service"
	if e.Owner.PID > 0 {
		who = fmt.Sprintf("the service with process id %d", e.Owner.PID)
		if e.Owner.Addr != "" {
			who += " listening on " + e.Owner.Addr
		}
	}
	return fmt.Sprintf("store %s is owned by %s, which alone writes to it: send the request to the service (read-only commands such as status, releases and export still work)", e.Dir, who)
}

func (e *OwnedError) Unwrap() error { return ErrOwned }

// ownerLock is this handle's hold on OwnerFile: exclusive after Own, shared
// after the first write of a handle that does not own the store.
type ownerLock struct {
	f         *os.File
	exclusive bool
}

// Own makes this handle the store's only writer until Close: it takes an
// exclusive lock on DIR/owner.lock (held until Close or the process's end,
// kill -9 included) and writes o into it. Every write through another
// handle, in this process or another, is then refused with an *OwnedError
// naming o, except the tokens' (CreateToken, RevokeToken: a service reads
// them again on its own). Own fails with an *OwnedError while another
// handle owns the store or has written through it and is still open.
// Calling it again on the owning handle rewrites o.
func (s *Store) Own(o Owner) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.db == nil {
		return ErrClosed
	}
	if o.Since == "" {
		o.Since = time.Now().UTC().Format(time.RFC3339)
	}
	if s.owner != nil && !s.owner.exclusive {
		s.owner.f.Close() // a shared hold of this handle's own writes
		s.owner = nil
	}
	if s.owner == nil {
		f, err := openOwnerFile(s.dir)
		if err != nil {
			return err
		}
		if err := lockFile(f, true); err != nil {
			f.Close()
			if errors.Is(err, errLocked) {
				return s.ownedError(true)
			}
			return fmt.Errorf("store: lock %s: %w", OwnerFile, err)
		}
		s.owner = &ownerLock{f: f, exclusive: true}
	}
	b, _ := json.Marshal(o)
	f := s.owner.f
	if err := f.Truncate(0); err != nil {
		return fmt.Errorf("store: %s: %w", OwnerFile, err)
	}
	if _, err := f.WriteAt(append(b, '\n'), 0); err != nil {
		return fmt.Errorf("store: %s: %w", OwnerFile, err)
	}
	return f.Sync()
}

// Owned reports whether this handle owns the store (Own).
func (s *Store) Owned() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.owner != nil && s.owner.exclusive
}

// ClaimWriter checks, before a command starts a write that has effects
// outside the store (a budget charge), that the write will be allowed: it
// takes the shared lock of a writer that does not own the store (held until
// Close) and returns an *OwnedError while a service owns it. Writes call it
// themselves; a handle that owns the store always may.
func (s *Store) ClaimWriter() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.db == nil {
		return ErrClosed
	}
	return s.checkWriter()
}

// checkWriter is called by every write (s.mu held): a handle that owns the
// store writes; any other takes a shared lock on OwnerFile for its life,
// refused with an *OwnedError while a service owns the store.
func (s *Store) checkWriter() error {
	if s.owner != nil {
		return nil
	}
	f, err := openOwnerFile(s.dir)
	if err != nil {
		return err
	}
	if err := lockFile(f, false); err != nil {
		f.Close()
		if errors.Is(err, errLocked) {
			return s.ownedError(false)
		}
		return fmt.Errorf("store: lock %s: %w", OwnerFile, err)
	}
	s.owner = &ownerLock{f: f}
	return nil
}

// ownedError reads the owner file to name the owner. wantExclusive: Own
// was refused (the holder is a service or writers).
func (s *Store) ownedError(wantExclusive bool) error {
	e := &OwnedError{Dir: s.dir}
	if wantExclusive {
		// Held shared (writers) or exclusive (a service)? A shared lock
		// tells; the file may name a service killed since.
		if f, err := openOwnerFile(s.dir); err == nil {
			shared := lockFile(f, false) == nil
			f.Close()
			if shared {
				e.Writing = true
				return e
			}
		}
	}
	b, err := os.ReadFile(filepath.Join(s.dir, OwnerFile))
	if err == nil && strings.TrimSpace(string(b)) != "" {
		_ = json.Unmarshal(b, &e.Owner)
	}
	return e
}

func openOwnerFile(dir string) (*os.File, error) {
	p := filepath.Join(dir, OwnerFile)
	f, err := os.OpenFile(p, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("store: %w", err)
	}
	return f, nil
}

// releaseOwner drops this handle's lock (s.mu held).
func (s *Store) releaseOwner() {
	if s.owner == nil {
		return
	}
	if s.owner.exclusive {
		_ = s.owner.f.Truncate(0) // a stale owner is never named
	}
	s.owner.f.Close() // closing the descriptor releases the flock
	s.owner = nil
}
