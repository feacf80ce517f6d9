package serve

import (
	"crypto/subtle"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"time"

	"unlearn/store"
)

// Scope is what a bearer token allows. Every route but /healthz needs one
// (see Routes).
type Scope string

// The scopes.
const (
	// ScopeIngest: POST /v1/events.
	ScopeIngest Scope = "ingest"
	// ScopePredict: POST /v1/predict.
	ScopePredict Scope = "predict"
	// ScopeForget: POST /v1/forget and GET /v1/forget/{id}.
	ScopeForget Scope = "forget"
	// ScopeRelease: POST /v1/releases (publishes, and charges the budget).
	ScopeRelease Scope = "release"
	// ScopeRead: GET /v1/status, /v1/releases, /metrics.
	ScopeRead Scope = "read"
)

// Scopes returns every scope, in the order of the documentation.
func Scopes() []Scope {
	return []Scope{ScopeIngest, ScopePredict, ScopeForget, ScopeRelease, ScopeRead}
}

// ParseScopes parses a comma-separated list of scopes ("ingest,read");
// "all" stands for every scope. Unknown, empty or repeated scopes are
// errors naming them.
func ParseScopes(s string) ([]string, error) {
	if strings.TrimSpace(s) == "all" {
		var out []string
		for _, sc := range Scopes() {
			out = append(out, string(sc))
		}
		return out, nil
	}
	var out []string
	for _, f := range strings.Split(s, ",") {
		f = strings.TrimSpace(f)
		switch {
		case f == "":
			return nil, fmt.Errorf("empty scope in %q", s)
		case !slices.Contains(Scopes(), Scope(f)):
			return nil, fmt.Errorf("unknown scope %q (the scopes: ingest, predict, forget, release, read, or all)", f)
		case slices.Contains(out, f):
			return nil, fmt.Errorf("scope %q given twice", f)
		}
		out = append(out, f)
	}
	return out, nil
}

// caller is who made a request: the token's number and name.
type caller struct {
	id   int64
	name string
}

// tokenTable holds the active tokens' hashes and scopes.
type tokenTable struct {
	tokens []store.Token // active only
}

func newTokenTable(all []store.Token) *tokenTable {
	t := &tokenTable{}
	for _, tk := range all {
		if tk.Revoked.IsZero() {
			t.tokens = append(t.tokens, tk)
		}
	}
	return t
}

// lookup returns the active token whose hash is the presented token's. It
// compares the hash with every active token's in constant time
// (crypto/subtle) and without stopping at a match, so the time taken says
// nothing about which stored hash, or how much of one, matched.
func (t *tokenTable) lookup(presented string) (store.Token, bool) {
	h := store.HashToken(presented)
	found := -1
	for i := range t.tokens {
		if subtle.ConstantTimeCompare(h[:], t.tokens[i].Hash[:]) == 1 {
			found = i
		}
	}
	if found < 0 {
		return store.Token{}, false
	}
	return t.tokens[found], true
}

// minTokenReload is the least time between two reloads of the token table
// prompted by an unknown token, so that a flood of bad tokens makes the
// service read the store at most this often.
const minTokenReload = 100 * time.Millisecond

// reloadTokensForUnknown reads the tokens again after an unknown token was
// presented, at most once every minTokenReload across all requests (the
// others wait for that reload, then look again). It reports whether the
// table was read again, or is fresher than minTokenReload.
func (s *Server) reloadTokensForUnknown() bool {
	s.tokenReloadMu.Lock()
	defer s.tokenReloadMu.Unlock()
	if time.Since(s.tokenReloaded) < minTokenReload {
		return !s.tokenReloaded.IsZero()
	}
	s.tokenReloaded = time.Now()
	s.tokenReloads++
	if err := s.refreshTokens(); err != nil {
		s.log.Warn("tokens not refreshed; the previous table stays in force", "err", err)
		return false
	}
	return true
}

// authenticate checks the request's bearer token for scope and returns the
// caller, or a problem: 401 without a token or with one that is unknown or
// revoked, 403 with a token that lacks the scope.
func (s *Server) authenticate(r *http.Request, scope Scope) (caller, *Problem) {
	h := r.Header.Get("Authorization")
	if h == "" {
		return caller{}, problem("unauthorized", "no Authorization header: send Authorization: Bearer TOKEN (unlearn token create)").at("Authorization")
	}
	scheme, tok, ok := strings.Cut(h, " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") || strings.TrimSpace(tok) == "" {
		return caller{}, problem("unauthorized", "the Authorization header is not \"Bearer TOKEN\"").at("Authorization")
	}
	t, found := s.tokens.Load().lookup(strings.TrimSpace(tok))
	if !found && s.reloadTokensForUnknown() {
		// A token created since the last refresh is accepted at once.
		t, found = s.tokens.Load().lookup(strings.TrimSpace(tok))
	}
	if !found {
		return caller{}, problem("unauthorized", "the token is unknown or revoked").at("Authorization")
	}
	c := caller{id: t.ID, name: t.Name}
	if !slices.Contains(t.Scopes, string(scope)) {
		p := problem("forbidden", "token %d (scopes %s) lacks the scope %q this route needs", t.ID, strings.Join(t.Scopes, ","), scope)
		p.Scope = string(scope)
		return c, p
	}
	return c, nil
}
