package ledger

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"

	"github.com/stretchr/testify/require"

	"unlearn/certify"
	"unlearn/sign"
)

func TestCreateAppendLoad(t *testing.T) {
	key := newKey(t)
	l, path := build(t, key, 3)
	got, err := Load(path, key.Public())
	require.NoError(t, err)
	require.Equal(t, budget, got.Budget())
	require.Equal(t, key.KeyID(), got.KeyID())
	want := []Release{rel(1), rel(2), rel(3)}
	es := got.Entries()
	require.Len(t, es, 3)
	for i, e := range es {
		require.Equal(t, i+1, e.Seq)
		require.Equal(t, want[i].normalize(), e.Release)
		require.Equal(t, "cert-000", e.Release.Label[:8], "default label: the certificate's first 12 characters")
		require.Equal(t, freshTotals(t, budget, want[:i+1]), e.Totals, "totals after entry %d", i+1)
	}
	require.Equal(t, freshTotals(t, budget, want), got.Totals())
	require.Equal(t, l.Entries(), es)
	require.Equal(t, l.Head(), got.Head())
	require.Equal(t, 3, got.Head().Seq)
	require.Equal(t, l.Bytes(), got.Bytes())
	require.Equal(t, Format, decode(t, readLines(t, path)[0]).Genesis.Format)
}

func TestEmptyLedger(t *testing.T) {
	key := newKey(t)
	_, path := build(t, key, 0)
	l, err := Load(path, key.Public())
	require.NoError(t, err)
	require.Empty(t, l.Entries())
	require.Equal(t, freshTotals(t, budget, nil), l.Totals())
	require.Equal(t, 0, l.Head().Seq)
	require.Len(t, readLines(t, path), 2, "genesis and seal")
}

func TestSameKeySameFile(t *testing.T) {
	// Ed25519 is deterministic and the format holds no clock: the same key
	// and releases give the same bytes.
	key := newKey(t)
	a, _ := build(t, key, 4)
	b, _ := build(t, key, 4)
	require.Equal(t, a.Bytes(), b.Bytes())
}

func TestReleaseOf(t *testing.T) {
	c := &certify.Certificate{Digest: "abcdef0123456789", Beta: 1e-9, SigmaApplied: 3.5}
	c.Sensitivity.Alpha = 0.25
	require.Equal(t, Release{Certificate: "abcdef0123456789", Alpha: 0.25, Sigma: 3.5, Beta: 1e-9}, ReleaseOf(c))
	require.Equal(t, "abcdef012345", ReleaseOf(c).normalize().Label)
}

func TestCreateRefuses(t *testing.T) {
	key := newKey(t)
	_, path := build(t, key, 1)
	before, err := os.ReadFile(path)
	require.NoError(t, err)
	_, err = Create(path, budget, key)
	require.ErrorIs(t, err, ErrExists)
	after, err := os.ReadFile(path)
	require.NoError(t, err)
	require.Equal(t, before, after)

	for _, b := range []certify.Budget{{Epsilon: 0, Delta: 1e-5}, {Epsilon: 1, Delta: 0}, {Epsilon: 1, Delta: 1}} {
		p := filepath.Join(t.TempDir(), "l")
		_, err := Create(p, b, key)
		require.ErrorIs(t, err, ErrBudget, "%+v", b)
		var e *Error
		require.ErrorAs(t, err, &e)
		require.Equal(t, "genesis", e.Field)
		require.NoFileExists(t, p)
	}
}

func TestAppendBeyondBudgetChangesNothing(t *testing.T) {
	key := newKey(t)
	l, path := build(t, key, 2)
	before, err := os.ReadFile(path)
	require.NoError(t, err)
	entries, totals, head := l.Entries(), l.Totals(), l.Head()

	// α/σ = 1 costs ε > 2 at δ = 1e-5 under any sound composition (one
	// Gaussian release with μ = 1 alone needs ε ≈ 3.9: Balle & Wang 2018).
	big := Release{Certificate: "expensive", Alpha: 1, Sigma: 1}
	exceed, _, err := l.WouldExceed(big)
	require.NoError(t, err)
	require.True(t, exceed)
	_, err = l.Append(big)
	require.ErrorIs(t, err, ErrBudget)
	require.ErrorIs(t, err, certify.ErrBudget)
	var e *Error
	require.ErrorAs(t, err, &e)
	require.Equal(t, 3, e.Seq)
	require.Equal(t, 4, e.Line)
	require.Equal(t, "charge", e.Field)

	after, err := os.ReadFile(path)
	require.NoError(t, err)
	require.Equal(t, before, after, "the file is unchanged byte for byte")
	require.Equal(t, entries, l.Entries())
	require.Equal(t, totals, l.Totals())
	require.Equal(t, head, l.Head())

	// The ledger still appends what fits.
	_, err = l.Append(rel(3))
	require.NoError(t, err)
	_, err = Load(path, key.Public())
	require.NoError(t, err)
}

func TestAppendRefusals(t *testing.T) {
	key := newKey(t)
	l, path := build(t, key, 1)
	before, err := os.ReadFile(path)
	require.NoError(t, err)
	tests := []struct {
		name     string
		r        Release
		sentinel error
		field    string
	}{
		{"duplicate certificate", rel(1), ErrDuplicate, "charge.certificate"},
		{"no certificate", Release{Alpha: 1, Sigma: 20}, ErrCharge, "charge.certificate"},
		{"negative alpha", Release{Certificate: "x", Alpha: -1, Sigma: 20}, ErrCharge, "charge"},
		{"zero sigma", Release{Certificate: "x", Alpha: 1, Sigma: 0}, ErrCharge, "charge"},
		{"beta one", Release{Certificate: "x", Alpha: 1, Sigma: 20, Beta: 1}, ErrCharge, "charge"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := l.Append(tt.r)
			require.ErrorIs(t, err, tt.sentinel)
			var e *Error
			require.ErrorAs(t, err, &e)
			require.Equal(t, tt.field, e.Field)
			require.Equal(t, path, e.Path)
			after, err := os.ReadFile(path)
			require.NoError(t, err)
			require.Equal(t, before, after)
			require.Len(t, l.Entries(), 1)
		})
	}
}

func TestAppendReadOnly(t *testing.T) {
	key := newKey(t)
	_, path := build(t, key, 1)
	l, err := Load(path, key.Public())
	require.NoError(t, err)
	_, err = l.Append(rel(2))
	require.ErrorIs(t, err, ErrReadOnly)
}

func TestAppendRefusesAChangedFile(t *testing.T) {
	key := newKey(t)
	a, path := build(t, key, 1)
	b, err := Open(path, key)
	require.NoError(t, err)
	_, err = b.Append(rel(2)) // another writer
	require.NoError(t, err)
	written, err := os.ReadFile(path)
	require.NoError(t, err)
	_, err = a.Append(rel(3))
	require.ErrorIs(t, err, ErrChanged)
	after, err := os.ReadFile(path)
	require.NoError(t, err)
	require.Equal(t, written, after)
}

// TestAppendWriteFailureChangesNothing: when writing the file fails, Append
// returns the error and changes nothing — neither the file nor the Ledger's
// entries and totals (the accountant is rolled back) — so the same release
// appended again is charged once, as new. The failure is injected in the
// Ledger's writer, so the test runs for every user, root included.
func TestAppendWriteFailureChangesNothing(t *testing.T) {
	key := newKey(t)
	l, path := build(t, key, 1)
	entries, totals := l.Entries(), l.Totals()
	before, err := os.ReadFile(path)
	require.NoError(t, err)
	errDisk := errors.New("disk full")
	var wrote []byte
	l.write = func(_ string, data []byte) error {
		wrote = data
		return errDisk
	}
	_, err = l.Append(rel(2))
	require.ErrorIs(t, err, errDisk)
	require.NotEmpty(t, wrote, "the failure came from the write, after the charge was signed")
	require.Equal(t, entries, l.Entries())
	require.Equal(t, totals, l.Totals(), "the accountant was rolled back")
	after, err := os.ReadFile(path)
	require.NoError(t, err)
	require.Equal(t, before, after)

	l.write = nil
	_, err = l.Append(rel(2))
	require.NoError(t, err, "the same release is not a duplicate: it was never charged")
	require.Equal(t, freshTotals(t, budget, []Release{rel(1), rel(2)}), l.Totals())
	got, err := Load(path, key.Public())
	require.NoError(t, err)
	require.Equal(t, l.Totals(), got.Totals())
}

// TestAppendOSWriteFailureChangesNothing: the same with a failure of the
// operating system that no privilege overrides. The ledger's name is 250
// bytes long: the file and its lock (name + ".lock", 255 bytes) fit in
// NAME_MAX = 255, but the temporary file of the atomic write
// (".<name>.tmp-<random>") does not, so the write fails with
// ENAMETOOLONG, for root as well. Nothing is left behind: no temporary
// file, the file byte for byte, the Ledger's entries and totals; the file
// still accepts the release, renamed to a short name and opened afresh.
func TestAppendOSWriteFailureChangesNothing(t *testing.T) {
	key := newKey(t)
	_, short := build(t, key, 1)
	dir := filepath.Dir(short)
	long := filepath.Join(dir, strings.Repeat("l", 250))
	require.NoError(t, os.Rename(short, long))
	l, err := Open(long, key)
	require.NoError(t, err)
	entries, totals := l.Entries(), l.Totals()
	before, err := os.ReadFile(long)
	require.NoError(t, err)
	_, err = l.Append(rel(2))
	require.ErrorIs(t, err, syscall.ENAMETOOLONG, "the temporary file's name must exceed NAME_MAX on this file system")
	require.Equal(t, entries, l.Entries())
	require.Equal(t, totals, l.Totals(), "the accountant was rolled back")
	after, err := os.ReadFile(long)
	require.NoError(t, err)
	require.Equal(t, before, after)
	es, err := os.ReadDir(dir)
	require.NoError(t, err)
	for _, e := range es {
		require.NotContains(t, e.Name(), ".tmp-", "a temporary file was left behind")
	}

	require.NoError(t, os.Rename(long, short))
	l, err = Open(short, key)
	require.NoError(t, err)
	_, err = l.Append(rel(2))
	require.NoError(t, err, "the same release is not a duplicate: it was never charged")
	require.Equal(t, freshTotals(t, budget, []Release{rel(1), rel(2)}), l.Totals())
}

func TestConcurrentAppends(t *testing.T) {
	key := newKey(t)
	l, path := build(t, key, 0)
	const n = 8
	var wg sync.WaitGroup
	errs := make([]error, n)
	for i := range n {
		wg.Go(func() { _, errs[i] = l.Append(rel(i + 1)) })
	}
	wg.Wait()
	for _, err := range errs {
		require.NoError(t, err)
	}
	got, err := Load(path, key.Public())
	require.NoError(t, err)
	seen := map[string]bool{}
	for i, e := range got.Entries() {
		require.Equal(t, i+1, e.Seq)
		seen[e.Release.Certificate] = true
	}
	require.Len(t, seen, n)
	require.Equal(t, l.Totals(), got.Totals())
}

func TestAnchors(t *testing.T) {
	key := newKey(t)
	l, path := build(t, key, 2)
	old, err := os.ReadFile(path)
	require.NoError(t, err)
	oldHead := l.Head()
	require.NoError(t, l.Extends(oldHead))
	_, err = l.Append(rel(3))
	require.NoError(t, err)
	head := l.Head()
	require.Equal(t, 3, head.Seq)
	require.NoError(t, l.Extends(oldHead), "an append-only continuation extends the old anchor")
	require.NoError(t, l.Extends(Anchor{Seq: 1, Hash: l.Entries()[0].Hash}))

	// Rollback: the older complete copy is a valid ledger, and only the
	// anchor shows that it is older.
	require.NoError(t, os.WriteFile(path, old, 0o644))
	rolled, err := Load(path, key.Public())
	require.NoError(t, err)
	err = rolled.Extends(head)
	require.ErrorIs(t, err, ErrRollback)

	// A rewritten history (another ledger of the same length).
	other, err := Create(filepath.Join(t.TempDir(), "other"), budget, key)
	require.NoError(t, err)
	for i := 11; i <= 13; i++ {
		_, err := other.Append(rel(i))
		require.NoError(t, err)
	}
	require.Equal(t, head.Seq, other.Head().Seq)
	require.ErrorIs(t, other.Extends(head), ErrRollback)
	require.ErrorIs(t, l.Extends(Anchor{Seq: -1}), ErrRollback)

	a, err := ParseAnchor(head.String())
	require.NoError(t, err)
	require.Equal(t, head, a)
	for _, s := range []string{"", "3", "3:", ":" + head.Hash, "-1:" + head.Hash, "x:" + head.Hash, "3:" + head.Hash[:63], "3:" + head.Hash + "0", "3:" + strings.Repeat("A", 64)} {
		_, err := ParseAnchor(s)
		require.ErrorIs(t, err, ErrFormat, "%q", s)
	}
}

func TestParseRefusesEveryPrefix(t *testing.T) {
	// Truncation anywhere — mid-line, at a line boundary, before the seal,
	// just the final newline — is refused.
	key := newKey(t)
	l, _ := build(t, key, 2)
	data := l.Bytes()
	for n := range len(data) {
		_, err := Parse("budget.ledger", data[:n], key.Public())
		require.ErrorIs(t, err, ErrTruncated, "prefix of %d of %d bytes", n, len(data))
	}
	_, err := Parse("budget.ledger", data, key.Public())
	require.NoError(t, err)
}

func TestPanicsOnProgrammerErrors(t *testing.T) {
	require.PanicsWithValue(t, "ledger: Create: nil key", func() { _, _ = Create("x", budget, nil) })
	require.PanicsWithValue(t, "ledger: Open: nil key", func() { _, _ = Open("x", nil) })
	require.PanicsWithValue(t, "ledger: Parse: zero public key", func() { _, _ = Parse("x", nil, sign.Public{}) })
}
