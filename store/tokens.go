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
		r := tokenRecord{name: t.Name, hash: t.Hash[:], scopes: strings.Join(t.Scopes, ","), created: t.Created.Format(time.RFC3339Nano)}
		// The sum covers the token's number, known once the row is in.
		res, err := tx.Exec(`INSERT INTO tokens (name, hash, scopes, created, sha256) VALUES (?, ?, ?, ?, zeroblob(32))`,
			r.name, r.hash, r.scopes, r.created)
		if err != nil {
			return err
		}
		if r.id, err = res.LastInsertId(); err != nil {
			return err
		}
		t.ID = r.id
		_, err = tx.Exec(`UPDATE tokens SET sha256 = ? WHERE token = ?`, sumToken(&r), r.id)
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
		recs, err := tokenRecords(context.Background(), tx, `WHERE token = ?`, id)
		if err != nil {
			return err
		}
		if len(recs) == 0 {
			return fmt.Errorf("%w: token %d", ErrUnknownToken, id)
		}
		r := recs[0]
		if _, err := r.token(); err != nil { // a damaged row is not re-summed
			return err
		}
		if !r.revoked.Valid {
			r.revoked = sql.NullString{String: now(), Valid: true}
			r.sum = sumToken(&r)
			if _, err := tx.Exec(`UPDATE tokens SET revoked = ?, sha256 = ? WHERE token = ?`, r.revoked, r.sum, id); err != nil {
				return err
			}
		}
		out, err = r.token()
		return err
	})
	if err != nil {
		return Token{}, fmt.Errorf("store: revoke: %w", err)
	}
	return out, nil
}

// tokenRecord is a tokens row as stored (the columns its sum covers).
type tokenRecord struct {
	id              int64
	name            string
	hash            []byte
	scopes, created string
	revoked         sql.NullString
	sum             []byte
}

// tokenRows reads every token, each verified against its sum: a damaged
// row is a *CorruptError, and no token is read (a changed scope or a
// cleared revocation must not grant access).
func tokenRows(ctx context.Context, q querier) ([]Token, error) {
	recs, err := tokenRecords(ctx, q, "")
	if err != nil {
		return nil, err
	}
	out := make([]Token, len(recs))
	for i := range recs {
		if out[i], err = recs[i].token(); err != nil {
			return nil, err
		}
	}
	return out, nil
}

func tokenRecords(ctx context.Context, q querier, where string, args ...any) ([]tokenRecord, error) {
	rows, err := q.QueryContext(ctx, `SELECT token, name, hash, scopes, created, revoked, sha256 FROM tokens `+where+` ORDER BY token`, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []tokenRecord
	for rows.Next() {
		var r tokenRecord
		if err := rows.Scan(&r.id, &r.name, &r.hash, &r.scopes, &r.created, &r.revoked, &r.sum); err != nil {
			return nil, err
		}
		out = append(out, r)
	}
	return out, rows.Err()
}

// token checks r's sum and fields and returns the token.
func (r *tokenRecord) token() (Token, error) {
	where := fmt.Sprintf("token %d", r.id)
	if !sameSum(r.sum, sumToken(r)) {
		return Token{}, corrupt(where, "its checksum does not match its content")
	}
	t := Token{ID: r.id, Name: r.name, Scopes: strings.Split(r.scopes, ",")}
	if len(r.hash) != sha256.Size {
		return Token{}, corrupt(where, "a hash of %d bytes", len(r.hash))
	}
	copy(t.Hash[:], r.hash)
	for _, sc := range t.Scopes {
		if sc == "" || strings.Trim(sc, "abcdefghijklmnopqrstuvwxyz") != "" {
			return Token{}, corrupt(where, "a scope that is not a word of lower-case letters")
		}
	}
	var err error
	if t.Created, err = time.Parse(time.RFC3339Nano, r.created); err != nil {
		return Token{}, corrupt(where, "created: %v", err)
	}
	if r.revoked.Valid {
		if t.Revoked, err = time.Parse(time.RFC3339Nano, r.revoked.String); err != nil {
			return Token{}, corrupt(where, "revoked: %v", err)
		}
	}
	return t, nil
}
