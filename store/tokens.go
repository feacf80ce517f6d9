package store

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"database/sql"
	"encoding/base64"
	"errors"
	"fmt"
	"strings"
	"time"
)

// ErrUnknownToken: RevokeToken was given a token number the store does not
// hold.
var ErrUnknownToken = errors.New("token not in the store")

// TokenPrefix starts every bearer token, so that a leaked one is
// recognizable (secret scanners) and never mistaken for another string.
const TokenPrefix = "unl_"

// Token is a bearer token of the service as the store keeps it: its number,
// name, scopes and dates, and the SHA-256 of the token — never the token
// itself, which CreateToken returns once.
type Token struct {
	ID      int64
	Name    string
	Scopes  []string
	Created time.Time
	// Revoked is when the token was revoked; zero while it is active.
	Revoked time.Time
	// Hash is the SHA-256 of the token's text.
	Hash [sha256.Size]byte
}

// HashToken returns the SHA-256 of a token's text, the form the store
// keeps. A token carries 256 random bits, so a fast hash suffices: no
// guess can be tested against the hash faster than against the service.
func HashToken(token string) [sha256.Size]byte { return sha256.Sum256([]byte(token)) }

// CreateToken creates a bearer token with the given name and scopes and
// returns its text — TokenPrefix then 43 characters of base64url (32 bytes
// from crypto/rand) — and its record. Only the record, with the token's
// SHA-256, is stored: the text is not recoverable afterwards. A scope must
// be a non-empty word of lower-case letters; which scopes exist is the
// service's (package serve); an empty name is allowed.
func (s *Store) CreateToken(name string, scopes []string) (string, Token, error) {
	if len(scopes) == 0 {
		return "", Token{}, &OptionError{Option: "Scopes", Value: "[]", Want: "at least one scope"}
	}
	for _, sc := range scopes {
		if sc == "" || strings.Trim(sc, "abcdefghijklmnopqrstuvwxyz") != "" {
			return "", Token{}, &OptionError{Option: "Scopes", Value: fmt.Sprintf("%q", sc), Want: "lower-case letters only"}
		}
	}
	var raw [32]byte
	if _, err := rand.Read(raw[:]); err != nil {
		return "", Token{}, fmt.Errorf("store: token: %w", err)
	}
	text := TokenPrefix + base64.RawURLEncoding.EncodeToString(raw[:])
	t := Token{Name: name, Scopes: scopes, Created: time.Now().UTC(), Hash: HashToken(text)}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.db == nil {
		return "", Token{}, ErrClosed
	}
	err := s.inTx(context.Background(), func(tx *sql.Tx) error {
		res, err := tx.Exec(`INSERT INTO tokens (name, hash, scopes, created) VALUES (?, ?, ?, ?)`,
			t.Name, t.Hash[:], strings.Join(t.Scopes, ","), t.Created.Format(time.RFC3339Nano))
		if err != nil {
			return err
		}
		t.ID, err = res.LastInsertId()
		return err
	})
	if err != nil {
		return "", Token{}, fmt.Errorf("store: token: %w", err)
	}
	return text, t, nil
}

// Tokens returns every token record, active and revoked, by number.
func (s *Store) Tokens() ([]Token, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.db == nil {
		return nil, ErrClosed
	}
	return tokenRows(context.Background(), s.db)
}

// RevokeToken revokes token id (from then on the service refuses it) and
// returns its record. Revoking a revoked token keeps its first revocation
// time. An unknown number is an error wrapping ErrUnknownToken.
func (s *Store) RevokeToken(id int64) (Token, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.db == nil {
		return Token{}, ErrClosed
	}
	var out Token
	err := s.inTx(context.Background(), func(tx *sql.Tx) error {
		if _, err := tx.Exec(`UPDATE tokens SET revoked = ? WHERE token = ? AND revoked IS NULL`, now(), id); err != nil {
			return err
		}
		all, err := tokenRows(context.Background(), tx)
		if err != nil {
			return err
		}
		for _, t := range all {
			if t.ID == id {
				out = t
				return nil
			}
		}
		return fmt.Errorf("%w: token %d", ErrUnknownToken, id)
	})
	if err != nil {
		return Token{}, fmt.Errorf("store: revoke: %w", err)
	}
	return out, nil
}

func tokenRows(ctx context.Context, q querier) ([]Token, error) {
	rows, err := q.QueryContext(ctx, `SELECT token, name, hash, scopes, created, revoked FROM tokens ORDER BY token`)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []Token
	for rows.Next() {
		var t Token
		var hash []byte
		var scopes, created string
		var revoked sql.NullString
		if err := rows.Scan(&t.ID, &t.Name, &hash, &scopes, &created, &revoked); err != nil {
			return nil, err
		}
		if len(hash) != sha256.Size {
			return nil, fmt.Errorf("%w: token %d: hash of %d bytes", ErrInconsistent, t.ID, len(hash))
		}
		copy(t.Hash[:], hash)
		t.Scopes = strings.Split(scopes, ",")
		if t.Created, err = time.Parse(time.RFC3339Nano, created); err != nil {
			return nil, fmt.Errorf("%w: token %d: created: %w", ErrInconsistent, t.ID, err)
		}
		if revoked.Valid {
			if t.Revoked, err = time.Parse(time.RFC3339Nano, revoked.String); err != nil {
				return nil, fmt.Errorf("%w: token %d: revoked: %w", ErrInconsistent, t.ID, err)
			}
		}
		out = append(out, t)
	}
	return out, rows.Err()
}
