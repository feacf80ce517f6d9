package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
)

// KeySource is an EventSource whose events may stand for string keys — a
// CSV file's string id column, such as an e-mail address, that the data
// reader numbered (dataset.Reader is one). Key returns the key of the event
// Next returned last, or "" if it has none.
//
// IngestEvents stores the key beside the id in the transaction of the batch
// that ingests the event (all or nothing under a crash), and Forget erases it
// in the transaction of the request that forgets the id, so that a deletion
// request can name the key (ForgetKeys) and a forgotten key is nowhere in the
// store directory afterwards.
type KeySource interface {
	EventSource
	Key() string
}

// LookupKeys returns the ids of keys, in the order of keys. A key not in the
// store — never ingested, or forgotten (a forget erases the key with the
// data) — is an error wrapping ErrUnknownKey that names every such key, and
// no id is returned.
func (s *Store) LookupKeys(keys []string) ([]int64, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.db == nil {
		return nil, ErrClosed
	}
	tx, err := s.db.BeginTx(context.Background(), &sql.TxOptions{ReadOnly: true})
	if err != nil {
		return nil, fmt.Errorf("store: begin: %w", err)
	}
	defer tx.Rollback()
	return resolveKeys(tx, keys)
}

// ForgetKeys serves a deletion request named by string keys: it is Forget of
// the keys' ids, resolved in the forget's own transaction. An unknown key
// (never ingested, or already forgotten: its key was erased then) is an error
// wrapping ErrUnknownKey that names it, and nothing changes. The report's
// KeysErased counts the keys deleted, which include the keys of ids.
func (s *Store) ForgetKeys(keys []string, ids []int64, o ForgetOptions) (ForgetReport, error) {
	if len(keys) == 0 {
		return ForgetReport{}, &OptionError{Option: "Keys", Value: "[]", Want: "at least one key"}
	}
	return s.forgetOne(context.Background(), Deletion{IDs: ids, Keys: keys}, o)
}

// resolveKeys maps keys to their ids in tx.
func resolveKeys(tx *sql.Tx, keys []string) ([]int64, error) {
	ids := make([]int64, 0, len(keys))
	var unknown []string
	for _, k := range keys {
		var id int64
		var sum []byte
		err := tx.QueryRow(`SELECT id, sha256 FROM keys WHERE key = ?`, k).Scan(&id, &sum)
		switch {
		case err == nil:
			if !sameSum(sum, sumKey(k, id)) {
				return nil, corrupt(fmt.Sprintf("the key of id %d", id), "its checksum does not match its content (the key may name another id)")
			}
			ids = append(ids, id)
		case errors.Is(err, sql.ErrNoRows):
			unknown = append(unknown, fmt.Sprintf("%q", k))
		default:
			return nil, err
		}
	}
	if len(unknown) > 0 {
		return nil, fmt.Errorf("%w: %s (never ingested, or already forgotten: a forget erases the key)", ErrUnknownKey, strings.Join(unknown, ", "))
	}
	return ids, nil
}

// keyOf returns the key of the event src returned last, or "".
func keyOf(src EventSource) func() string {
	if ks, ok := src.(KeySource); ok {
		return ks.Key
	}
	return func() string { return "" }
}

// insertKey maps key to id in tx, refusing a key already mapped (to the
// same person's earlier row, or to anyone's: the store cannot tell) with
// ErrEvent.
func insertKey(tx *sql.Tx, ins *sql.Stmt, key string, id int64) error {
	r, err := ins.Exec(key, id, sumKey(key, id))
	if err != nil {
		return err
	}
	if k, err := r.RowsAffected(); err != nil {
		return err
	} else if k == 1 {
		return nil
	}
	var old int64
	if err := tx.QueryRow(`SELECT id FROM keys WHERE key = ?`, key).Scan(&old); err != nil {
		return err
	}
	return fmt.Errorf("%w: key %q is already in the store as id %d (a key stands for one id; forget it first, or give this row another key)", ErrEvent, key, old)
}

// eraseKeys deletes the keys of ids in tx and returns how many there were.
func eraseKeys(tx *sql.Tx, ids []int64) (int, error) {
	n := 0
	for _, id := range ids {
		r, err := tx.Exec(`DELETE FROM keys WHERE id = ?`, id)
		if err != nil {
			return 0, err
		}
		k, err := r.RowsAffected()
		if err != nil {
			return 0, err
		}
		n += int(k)
	}
	return n, nil
}
