package ledger

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"unlearn/certify"
	"unlearn/internal/testutil"
	"unlearn/sign"
)

// TestMain runs the property tests with 100 rapid cases — 50 under the
// race detector, which slows the signature checks ten-fold (each append
// also waits for two fsyncs) — and a fixed seed, unless the rapid flags or
// variables say otherwise (`go test -race ./ledger -rapid.checks=100` runs
// the full count); see testutil.RunWithRapidDefaults.
func TestMain(m *testing.M) {
	checks := 100
	if testutil.RaceEnabled {
		checks = 50
	}
	testutil.RunWithRapidDefaults(m, checks, 1)
}

// budget is loose enough for a few releases at σ = 20α under any sound
// composition rule (zCDP: ρ = 1/800 per release, ε ≈ 0.17 for one at
// δ = 1e-5).
var budget = certify.Budget{Epsilon: 2, Delta: 1e-5}

func newKey(t testing.TB) *sign.Secret {
	t.Helper()
	k, err := sign.Generate()
	require.NoError(t, err)
	return k
}

// rel returns a cheap release with certificate id "cert-<i>".
func rel(i int) Release {
	return Release{Certificate: fmt.Sprintf("cert-%04d", i), Alpha: 1, Sigma: 20, Beta: 1e-8}
}

// build creates a ledger with n cheap releases in a temporary directory.
func build(t *testing.T, key *sign.Secret, n int) (*Ledger, string) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "budget.ledger")
	l, err := Create(path, budget, key)
	require.NoError(t, err)
	for i := 1; i <= n; i++ {
		_, err := l.Append(rel(i))
		require.NoError(t, err)
	}
	return l, path
}

func readLines(t *testing.T, path string) [][]byte {
	t.Helper()
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	require.True(t, bytes.HasSuffix(data, []byte("\n")))
	return bytes.Split(data[:len(data)-1], []byte("\n"))
}

func writeLines(t *testing.T, path string, lines [][]byte) {
	t.Helper()
	require.NoError(t, os.WriteFile(path, append(bytes.Join(lines, []byte("\n")), '\n'), 0o644))
}

// decode parses a line into a record (the test's own copy).
func decode(t *testing.T, line []byte) *record {
	t.Helper()
	var r record
	require.NoError(t, json.Unmarshal(line, &r))
	return &r
}

// encode returns r's canonical line, re-signed with key when key != nil
// (a forger with that key), with its old signature otherwise.
func encode(t *testing.T, r *record, key *sign.Secret) []byte {
	t.Helper()
	if key != nil {
		b, err := signRecord(r, key)
		require.NoError(t, err)
		return b
	}
	b, err := canonical(r)
	require.NoError(t, err)
	return b
}

// wantRefused loads path with pub and checks the refusal: the sentinel,
// the line, the entry and the field.
func wantRefused(t *testing.T, path string, pub sign.Public, sentinel error, line, seq int, field string) *Error {
	t.Helper()
	l, err := Load(path, pub)
	require.Nil(t, l)
	require.ErrorIs(t, err, sentinel)
	var e *Error
	require.True(t, errors.As(err, &e), "%T %v", err, err)
	require.Equal(t, path, e.Path)
	require.Equal(t, line, e.Line, "line: %v", err)
	require.Equal(t, seq, e.Seq, "entry: %v", err)
	require.Equal(t, field, e.Field, "field: %v", err)
	return e
}

// freshTotals returns the totals a fresh accountant gives for rs.
func freshTotals(t *testing.T, b certify.Budget, rs []Release) Totals {
	t.Helper()
	a, err := certify.NewAccountant(b)
	require.NoError(t, err)
	var s certify.Spent = a.Spent()
	for _, r := range rs {
		ch, err := certify.ChargeFor(r.normalize().Label, r.Alpha, r.Sigma, r.Beta)
		require.NoError(t, err)
		s, err = a.Spend(ch)
		require.NoError(t, err)
	}
	return Totals{Releases: s.Releases, Epsilon: s.Epsilon, Beta: s.Beta}
}

func writeRaw(path string, data []byte) error { return os.WriteFile(path, data, 0o644) }
