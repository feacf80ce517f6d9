package store

import (
	"context"
	"database/sql"
	"fmt"
	"os"
	"path/filepath"
	"sync"
)

// Reader reads what a service consults on every request — its tokens, the
// deletion queue — through a connection of its own. A Store serializes its
// methods on one connection, so a read through it waits for a running
// ingest or forget; a Reader's read waits only while a writer commits (or
// vacuums, or spills more than its cache: see the cache_spill pragma),
// since SQLite's rollback journal lets readers share the database with a
// writer until its commit (https://sqlite.org/lockingv3.html). Its reads
// see the last committed state. Open the Store first (it migrates the
// schema); a Reader is safe for concurrent use.
type Reader struct {
	mu sync.Mutex
	db *sql.DB
}

// OpenReader opens a Reader on the store in dir. It returns an error
// wrapping ErrNotStore if dir holds none and ErrSchema if the store's
// schema is not this package's (open it with Open first, which migrates an
// older one).
func OpenReader(dir string) (*Reader, error) {
	if _, err := os.Stat(filepath.Join(dir, FileName)); err != nil {
		return nil, fmt.Errorf("store: %s: %w: %w", dir, ErrNotStore, err)
	}
	db, err := openDB(dir)
	if err != nil {
		return nil, err
	}
	v, err := schemaVersion(context.Background(), db)
	if err != nil {
		db.Close()
		return nil, fmt.Errorf("store: %s: %w: %w", dir, ErrNotStore, err)
	}
	if v != SchemaVersion {
		db.Close()
		return nil, fmt.Errorf("store: %s: %w: schema version %d, this build reads %d (open the store with Open first)", dir, ErrSchema, v, SchemaVersion)
	}
	return &Reader{db: db}, nil
}

// Tokens is Store.Tokens.
func (r *Reader) Tokens() ([]Token, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.db == nil {
		return nil, ErrClosed
	}
	return tokenRows(context.Background(), r.db)
}

// ForgetRequest is Store.ForgetRequest.
func (r *Reader) ForgetRequest(request string) (QueuedForget, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.db == nil {
		return QueuedForget{}, ErrClosed
	}
	q, err := queueRow(context.Background(), r.db, request)
	if err != nil {
		return QueuedForget{}, err
	}
	err = resolution(context.Background(), r.db, &q.QueuedForget)
	return q.QueuedForget, err
}

// Close closes the Reader's connection.
func (r *Reader) Close() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.db == nil {
		return nil
	}
	err := r.db.Close()
	r.db = nil
	return err
}
