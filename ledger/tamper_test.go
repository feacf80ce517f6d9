package ledger

import (
	"bytes"
	"testing"

	"github.com/stretchr/testify/require"

	"unlearn/sign"
)

// The ledger used by the tamper tests: 3 charges, so lines are
// 1 genesis, 2–4 entries 1–3, 5 seal.
func tamperSetup(t *testing.T) (*sign.Secret, string, [][]byte) {
	t.Helper()
	key := newKey(t)
	_, path := build(t, key, 3)
	lines := readLines(t, path)
	require.Len(t, lines, 5)
	return key, path, lines
}

// rechain rebuilds a ledger from entry lines as the holder of key would:
// every entry from the second line on gets the right prev and is re-signed,
// and a new seal is added. It models a forger who holds the key (the
// semantic checks must still refuse) or who has another key (the
// signatures must refuse).
func rechain(t *testing.T, entries [][]byte, key *sign.Secret) [][]byte {
	t.Helper()
	out := [][]byte{entries[0]}
	for _, ln := range entries[1:] {
		r := decode(t, ln)
		r.Prev = hashLine(out[len(out)-1])
		out = append(out, encode(t, r, key))
	}
	seal := &record{Type: typeSeal, Seq: len(out), Prev: hashLine(out[len(out)-1])}
	return append(out, encode(t, seal, key))
}

func clone(lines [][]byte) [][]byte {
	out := make([][]byte, len(lines))
	for i, l := range lines {
		out[i] = bytes.Clone(l)
	}
	return out
}

func TestRefusesMissingSeal(t *testing.T) {
	key, path, lines := tamperSetup(t)
	writeLines(t, path, lines[:4])
	wantRefused(t, path, key.Public(), ErrTruncated, 4, -1, "")
}

func TestRefusesTruncatedLastEntry(t *testing.T) {
	// The last entry cut out, the (genuine) seal kept: it covers 4 entries.
	key, path, lines := tamperSetup(t)
	writeLines(t, path, [][]byte{lines[0], lines[1], lines[2], lines[4]})
	e := wantRefused(t, path, key.Public(), ErrTruncated, 4, -1, "seq")
	require.ErrorIs(t, e, ErrSeal)
}

func TestRefusesTruncationWithAForgedSeal(t *testing.T) {
	// Cut after entry 2 and seal it again with another key.
	key, path, lines := tamperSetup(t)
	forged := rechain(t, lines[:3], nil)
	forged[3] = encode(t, &record{Type: typeSeal, Seq: 3, Prev: hashLine(lines[2])}, newKey(t))
	writeLines(t, path, forged)
	e := wantRefused(t, path, key.Public(), ErrSignature, 4, -1, "sig")
	require.ErrorIs(t, e, sign.ErrSignature)
}

func TestRefusesReordering(t *testing.T) {
	key, path, lines := tamperSetup(t)
	l := clone(lines)
	l[2], l[3] = l[3], l[2]
	writeLines(t, path, l)
	wantRefused(t, path, key.Public(), ErrSequence, 3, 3, "seq")
}

func TestRefusesReorderingRenumbered(t *testing.T) {
	// Swapped and renumbered (without the key): the chain breaks.
	key, path, lines := tamperSetup(t)
	l := clone(lines)
	a, b := decode(t, l[2]), decode(t, l[3])
	a.Seq, b.Seq = 3, 2
	l[2], l[3] = encode(t, b, nil), encode(t, a, nil)
	writeLines(t, path, l)
	wantRefused(t, path, key.Public(), ErrChain, 3, 2, "prev")
}

func TestRefusesEditedCharge(t *testing.T) {
	for _, tt := range []struct {
		name string
		edit func(*record)
	}{
		{"alpha", func(r *record) { r.Charge.Alpha = 1e-6 }},
		{"sigma", func(r *record) { r.Charge.Sigma = 1e6 }},
		{"beta", func(r *record) { r.Charge.Beta = 0 }},
		{"certificate", func(r *record) { r.Charge.Certificate = "other" }},
		{"label", func(r *record) { r.Charge.Label = "nothing to see" }},
	} {
		t.Run(tt.name, func(t *testing.T) {
			key, path, lines := tamperSetup(t)
			l := clone(lines)
			r := decode(t, l[2])
			tt.edit(r)
			l[2] = encode(t, r, nil)
			writeLines(t, path, l)
			wantRefused(t, path, key.Public(), ErrSignature, 3, 2, "sig")
		})
	}
}

func TestRefusesEditedBudget(t *testing.T) {
	key, path, lines := tamperSetup(t)
	l := clone(lines)
	r := decode(t, l[0])
	r.Genesis.Epsilon = 1000
	l[0] = encode(t, r, nil)
	writeLines(t, path, l)
	wantRefused(t, path, key.Public(), ErrSignature, 1, 0, "sig")
}

func TestRefusesEditedBudgetRechained(t *testing.T) {
	// A forger without the key who rebuilds the whole chain after raising
	// the budget: every signature is theirs.
	key, path, lines := tamperSetup(t)
	forger := newKey(t)
	r := decode(t, lines[0])
	r.Genesis.Epsilon = 1000
	l := clone(lines[:4])
	l[0] = encode(t, r, forger)
	writeLines(t, path, rechain(t, l, forger))
	wantRefused(t, path, key.Public(), ErrSignature, 1, 0, "sig")
}

func TestRefusesDeletedEntry(t *testing.T) {
	key, path, lines := tamperSetup(t)
	writeLines(t, path, [][]byte{lines[0], lines[2], lines[3], lines[4]})
	wantRefused(t, path, key.Public(), ErrSequence, 2, 2, "seq")
}

func TestRefusesDeletedEntryRenumbered(t *testing.T) {
	key, path, lines := tamperSetup(t)
	l := [][]byte{lines[0]}
	for i, ln := range lines[2:4] {
		r := decode(t, ln)
		r.Seq = i + 1
		l = append(l, encode(t, r, nil))
	}
	writeLines(t, path, append(l, lines[4]))
	wantRefused(t, path, key.Public(), ErrChain, 2, 1, "prev")
}

func TestRefusesEntrySignedByAnotherKey(t *testing.T) {
	key, path, lines := tamperSetup(t)
	l := clone(lines)
	l[2] = encode(t, decode(t, l[2]), newKey(t))
	writeLines(t, path, l)
	e := wantRefused(t, path, key.Public(), ErrSignature, 3, 2, "sig")
	require.ErrorIs(t, e, sign.ErrSignature)
}

func TestRefusesLedgerOfAnotherKey(t *testing.T) {
	key, path, _ := tamperSetup(t)
	other := newKey(t)
	e := wantRefused(t, path, other.Public(), ErrKey, 1, 0, "genesis.key_id")
	require.Contains(t, e.Error(), key.KeyID())
	require.Contains(t, e.Error(), other.KeyID())
}

func TestRefusesGenesisClaimingTheKey(t *testing.T) {
	// Another key signs a genesis that names the certifier's key id.
	key, path, lines := tamperSetup(t)
	forger := newKey(t)
	l := clone(lines[:4])
	l[0] = encode(t, decode(t, l[0]), forger)
	writeLines(t, path, rechain(t, l, forger))
	wantRefused(t, path, key.Public(), ErrSignature, 1, 0, "sig")
}

func TestRefusesTrailingGarbage(t *testing.T) {
	for _, tt := range []struct {
		name, tail string
	}{
		{"text", "garbage\n"},
		{"no newline", "x"},
		{"an empty line", "\n"},
		{"json", "{}\n"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			key, path, lines := tamperSetup(t)
			data := append(bytes.Join(lines, []byte("\n")), '\n')
			require.NoError(t, writeRaw(path, append(data, tt.tail...)))
			wantRefused(t, path, key.Public(), ErrTrailing, 6, -1, "")
		})
	}
	t.Run("a second seal", func(t *testing.T) {
		key, path, lines := tamperSetup(t)
		writeLines(t, path, append(clone(lines), lines[4]))
		wantRefused(t, path, key.Public(), ErrTrailing, 6, -1, "")
	})
}

func TestRefusesNonCanonicalLine(t *testing.T) {
	key, path, lines := tamperSetup(t)
	l := clone(lines)
	l[2] = bytes.Replace(l[2], []byte(`"seq":2`), []byte(`"seq": 2`), 1)
	writeLines(t, path, l)
	wantRefused(t, path, key.Public(), ErrNotCanonical, 3, -1, "")
}

func TestRefusesMalformedLines(t *testing.T) {
	for _, tt := range []struct {
		name    string
		edit    func(t *testing.T, l [][]byte) [][]byte
		line    int
		seq     int
		field   string
		wantErr error
	}{
		{"not JSON", func(t *testing.T, l [][]byte) [][]byte { l[1] = []byte("charge 1"); return l }, 2, -1, "", ErrFormat},
		{"unknown field", func(t *testing.T, l [][]byte) [][]byte {
			l[1] = append(bytes.TrimSuffix(l[1], []byte("}")), `,"note":"x"}`...)
			return l
		}, 2, -1, "", ErrFormat},
		{"empty line", func(t *testing.T, l [][]byte) [][]byte { l[1] = nil; return l }, 2, -1, "", ErrFormat},
		{"charge first", func(t *testing.T, l [][]byte) [][]byte { return l[1:] }, 1, 0, "type", ErrFormat},
		{"a second genesis", func(t *testing.T, l [][]byte) [][]byte { l[1] = l[0]; return l }, 2, 0, "type", ErrFormat},
		{"other format", func(t *testing.T, l [][]byte) [][]byte {
			r := decode(t, l[0])
			r.Genesis.Format = "unlearn-ledger/v0"
			l[0] = encode(t, r, nil)
			return l
		}, 1, 0, "genesis.format", ErrFormat},
	} {
		t.Run(tt.name, func(t *testing.T) {
			key, path, lines := tamperSetup(t)
			writeLines(t, path, tt.edit(t, clone(lines)))
			wantRefused(t, path, key.Public(), tt.wantErr, tt.line, tt.seq, tt.field)
		})
	}
}

// The key holder can sign anything; loading still refuses what does not
// add up.
func TestRefusesWhatTheKeyHolderSigns(t *testing.T) {
	for _, tt := range []struct {
		name    string
		edit    func(r *record)
		field   string
		wantErr error
	}{
		{"understated totals", func(r *record) { r.Totals.Epsilon /= 2 }, "totals.epsilon", ErrTotals},
		{"miscounted releases", func(r *record) { r.Totals.Releases = 1 }, "totals.releases", ErrTotals},
		{"understated beta", func(r *record) { r.Totals.Beta = 0 }, "totals.beta", ErrTotals},
		{"a certificate charged twice", func(r *record) { r.Charge.Certificate = "cert-0001" }, "charge.certificate", ErrDuplicate},
		{"a charge over the budget", func(r *record) { r.Charge.Sigma = 0.5 }, "charge", ErrBudget},
		{"an invalid charge", func(r *record) { r.Charge.Beta = 2 }, "charge", ErrCharge},
	} {
		t.Run(tt.name, func(t *testing.T) {
			key, path, lines := tamperSetup(t)
			l := clone(lines[:4])
			r := decode(t, l[2])
			tt.edit(r)
			l[2] = encode(t, r, key)
			writeLines(t, path, rechain(t, l, key))
			wantRefused(t, path, key.Public(), tt.wantErr, 3, 2, tt.field)
		})
	}
	t.Run("a raised budget", func(t *testing.T) {
		// Re-signed by the key holder, a raised budget is a valid ledger:
		// the key is the trust root. Only an anchor of the genesis entry
		// (Extends) shows the history was rewritten.
		key, path, lines := tamperSetup(t)
		orig, err := Load(path, key.Public())
		require.NoError(t, err)
		l := clone(lines[:4])
		r := decode(t, l[0])
		r.Genesis.Epsilon = 1000
		l[0] = encode(t, r, key)
		writeLines(t, path, rechain(t, l, key))
		got, err := Load(path, key.Public())
		require.NoError(t, err)
		require.ErrorIs(t, got.Extends(orig.Head()), ErrRollback)
	})
}
