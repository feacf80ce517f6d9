package ledger

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"strconv"
	"strings"
	"sync"

	"unlearn/certify"
	"unlearn/internal/atomicfile"
	"unlearn/sign"
)

// Release is what one certified release costs, as the ledger records it.
type Release struct {
	// Label names the release for a reader. Optional: it defaults to the
	// first 12 characters of Certificate.
	Label string
	// Certificate identifies the certificate the charge pays for (its
	// digest). Required, and unique within a ledger: a certificate is
	// charged once.
	Certificate string
	// Alpha is the release's L2 sensitivity α, Sigma the noise σ applied
	// and Beta the failure probability β of its bound; they are checked
	// by certify.ChargeFor.
	Alpha, Sigma, Beta float64
}

// ReleaseOf returns the release a certificate describes: α, the applied
// σ, β and the digest, with the default label.
func ReleaseOf(c *certify.Certificate) Release {
	return Release{Certificate: c.Digest, Alpha: c.Sensitivity.Alpha, Sigma: c.SigmaApplied, Beta: c.Beta}
}

// Totals are the running totals after an entry: the number of releases
// charged, the ε they spend together at the budget's δ (after the β's),
// and Σβ, as the accountant (certify.Accountant) computes them.
type Totals struct {
	Releases int
	Epsilon  float64
	Beta     float64
}

// Entry is one charge of a ledger.
type Entry struct {
	// Seq is its sequence number: 1, 2, … (0 is the genesis entry).
	Seq int
	// Release is the charge.
	Release Release
	// Totals are the running totals after it.
	Totals Totals
	// Hash is the hex SHA-256 of its line (what the next entry's prev
	// and an [Anchor] record).
	Hash string
}

// Anchor identifies a state of a ledger: the sequence number and hash of
// its last entry. A ledger that was only appended to since the anchor was
// taken still contains that entry ([Ledger.Extends]); one rolled back to
// an older copy, or rewritten, does not. Record an anchor outside the
// ledger (in a certificate, a published log, a second machine) to detect a
// rollback.
type Anchor struct {
	Seq  int    `json:"seq"`
	Hash string `json:"hash"`
}

// String returns "SEQ:HASH", the form [ParseAnchor] reads.
func (a Anchor) String() string { return strconv.Itoa(a.Seq) + ":" + a.Hash }

// ParseAnchor reads "SEQ:HASH" (SEQ ≥ 0, HASH 64 hex digits). Errors wrap
// ErrFormat.
func ParseAnchor(s string) (Anchor, error) {
	seqStr, hash, ok := strings.Cut(s, ":")
	seq, err := strconv.Atoi(seqStr)
	if !ok || err != nil || seq < 0 || len(hash) != 64 || strings.Trim(hash, "0123456789abcdef") != "" {
		return Anchor{}, fmt.Errorf("ledger: anchor %q: %w: want SEQ:HASH (a sequence number and 64 lower-case hex digits)", s, ErrFormat)
	}
	return Anchor{Seq: seq, Hash: hash}, nil
}

// Ledger is a verified ledger of privacy charges: a budget, the charges in
// order and their totals. Obtain one with [Create], [Open] (appendable),
// [Load] or [Parse] (read-only). Its methods are safe for concurrent use
// within a process. Across processes there must be ONE writer at a time:
// Append refuses (ErrChanged) when the file is no longer what this Ledger
// loaded or last wrote, but two processes appending at the same instant
// can still race between that check and the rename, and the later rename
// wins (its file stays valid; the other's charge is lost from it). Use an
// external lock if several processes write.
type Ledger struct {
	mu      sync.Mutex
	path    string
	key     *sign.Secret // nil: read-only
	pub     sign.Public
	budget  certify.Budget
	acct    *certify.Accountant
	genesis []byte   // the genesis line
	lines   [][]byte // every entry line, genesis first, without newlines
	entries []Entry  // the charges (entries[i].Seq == i+1)
	certs   map[string]int
	data    []byte // the file's content as loaded or last written
	// write replaces the file's content; nil means writeFile (atomic).
	// Tests put a failing writer here to check that a failed write
	// charges nothing, whatever the process's privileges.
	write func(path string, data []byte) error
}

// fileMode is the mode of a ledger file: it holds no secret.
const fileMode = 0o644

// Create writes a new ledger at path with the budget b, signed by key: the
// genesis entry (format, budget, key id) and its seal. It refuses a path
// that exists (ErrExists) and an invalid budget (ErrBudget wrapping the
// accountant's error). The file is written atomically. A nil key panics.
func Create(path string, b certify.Budget, key *sign.Secret) (*Ledger, error) {
	if key == nil {
		panic("ledger: Create: nil key")
	}
	errAt := func(field string, err error) error {
		return &Error{Path: path, Line: 1, Seq: 0, Field: field, Err: err}
	}
	acct, err := certify.NewAccountant(b)
	if err != nil {
		return nil, errAt("genesis", fmt.Errorf("%w: %w", ErrBudget, err))
	}
	if _, err := os.Lstat(path); err == nil {
		return nil, &Error{Path: path, Seq: -1, Err: ErrExists}
	} else if !errors.Is(err, fs.ErrNotExist) {
		return nil, &Error{Path: path, Seq: -1, Err: err}
	}
	g := &record{Type: typeGenesis, Genesis: &genesisJSON{Format: Format, Epsilon: b.Epsilon, Delta: b.Delta, KeyID: key.KeyID()}}
	line, err := signRecord(g, key)
	if err != nil {
		return nil, errAt("genesis", err)
	}
	l := &Ledger{path: path, key: key, pub: key.Public(), budget: b, acct: acct,
		genesis: line, lines: [][]byte{line}, certs: map[string]int{}}
	data, err := l.render(l.lines)
	if err != nil {
		return nil, errAt("", err)
	}
	if err := writeFile(path, data); err != nil {
		return nil, &Error{Path: path, Seq: -1, Err: err}
	}
	l.data = data
	return l, nil
}

// Open loads and verifies the ledger at path with key's public key (see
// [Load]) and returns it ready for [Ledger.Append]. A nil key panics.
func Open(path string, key *sign.Secret) (*Ledger, error) {
	if key == nil {
		panic("ledger: Open: nil key")
	}
	l, err := Load(path, key.Public())
	if err != nil {
		return nil, err
	}
	l.key = key
	return l, nil
}

// Load reads the ledger at path and verifies it with the public key pub
// (see [Parse]); the result is read-only (Append: ErrReadOnly). A file
// that cannot be read is an *Error wrapping the *fs.PathError.
func Load(path string, pub sign.Public) (*Ledger, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, &Error{Path: path, Seq: -1, Err: err}
	}
	l, err := Parse(path, data, pub)
	if err != nil {
		return nil, err
	}
	l.path = path
	return l, nil
}

// Parse verifies a ledger's content with the public key pub; name names
// it in errors. It checks, line by line, that each line is the canonical
// JSON of one record; that the first is a genesis entry of this format,
// created by pub's key, with a valid budget; that every entry's sequence
// number is its position and its prev the hash of the line before; every
// signature; that every charge is valid, names a certificate not charged
// before, stays within the budget when composed by a fresh
// certify.Accountant, and records the totals that accountant computes;
// and that the last line is a seal over (number of entries, hash of the
// last entry) followed by nothing. It refuses anything else with an
// *Error naming the line, entry and field. The result is read-only.
//
// What Parse cannot detect without an outside record: the whole file
// replaced by an older, complete copy (a rollback), which is a valid
// ledger. Check an [Anchor] taken earlier with [Ledger.Extends].
//
// A zero pub panics.
func Parse(name string, data []byte, pub sign.Public) (*Ledger, error) {
	if pub.IsZero() {
		panic("ledger: Parse: zero public key")
	}
	l := &Ledger{pub: pub, certs: map[string]int{}}
	errAt := func(line, seq int, field string, err error) error {
		return &Error{Path: name, Line: line, Seq: seq, Field: field, Err: err}
	}
	if len(data) == 0 {
		return nil, errAt(0, -1, "", fmt.Errorf("%w: empty file", ErrTruncated))
	}
	complete := data[len(data)-1] == '\n'
	lines := bytes.Split(data, []byte{'\n'})
	if complete {
		lines = lines[:len(lines)-1]
	}
	sealed := false
	for i, line := range lines {
		ln := i + 1
		if sealed {
			return nil, errAt(ln, -1, "", fmt.Errorf("%w: line %d follows the seal on line %d", ErrTrailing, ln, ln-1))
		}
		last := i == len(lines)-1
		rec, hash, err := decodeLine(line)
		if err != nil {
			if last && !complete {
				err = fmt.Errorf("%w: the last line is incomplete (no final newline): %w", ErrTruncated, err)
			}
			return nil, errAt(ln, -1, "", err)
		}
		if last && !complete {
			return nil, errAt(ln, -1, "", fmt.Errorf("%w: the last line has no final newline", ErrTruncated))
		}
		switch {
		case i == 0:
			err = l.checkGenesis(rec, line)
		case rec.Type == typeCharge:
			err = l.checkCharge(rec, line, hash)
		case rec.Type == typeSeal:
			err = l.checkSeal(rec)
			sealed = true
		default:
			err = &Error{Seq: rec.Seq, Field: "type", Err: fmt.Errorf("%w: %q, want %q or %q", ErrFormat, rec.Type, typeCharge, typeSeal)}
		}
		if err != nil {
			var e *Error
			if errors.As(err, &e) {
				e.Path, e.Line = name, ln
				return nil, e
			}
			return nil, errAt(ln, -1, "", err)
		}
	}
	if !sealed {
		return nil, errAt(len(lines), -1, "", fmt.Errorf("%w: no seal after the last entry (%d entries): the file was cut short", ErrTruncated, len(l.lines)))
	}
	l.data = bytes.Clone(data)
	return l, nil
}

func (l *Ledger) checkGenesis(r *record, line []byte) error {
	errAt := func(field string, err error) error { return &Error{Seq: 0, Field: field, Err: err} }
	switch {
	case r.Type != typeGenesis:
		return errAt("type", fmt.Errorf("%w: %q, the first line must be the genesis entry", ErrFormat, r.Type))
	case r.Seq != 0:
		return errAt("seq", fmt.Errorf("%w: %d, want 0", ErrSequence, r.Seq))
	case r.Prev != "":
		return errAt("prev", fmt.Errorf("%w: the genesis entry has no predecessor", ErrChain))
	case r.Genesis == nil || r.Charge != nil || r.Totals != nil:
		return errAt("genesis", fmt.Errorf("%w: a genesis entry holds a genesis object only", ErrFormat))
	case r.Genesis.Format != Format:
		return errAt("genesis.format", fmt.Errorf("%w: %q, want %q", ErrFormat, r.Genesis.Format, Format))
	case r.Genesis.KeyID != l.pub.KeyID():
		return errAt("genesis.key_id", fmt.Errorf("%w: created by key %s, verifying with key %s", ErrKey, r.Genesis.KeyID, l.pub.KeyID()))
	}
	if err := verifyRecord(r, l.pub); err != nil {
		return errAt("sig", err)
	}
	b := certify.Budget{Epsilon: r.Genesis.Epsilon, Delta: r.Genesis.Delta}
	acct, err := certify.NewAccountant(b)
	if err != nil {
		return errAt("genesis", fmt.Errorf("%w: %w", ErrBudget, err))
	}
	l.budget, l.acct, l.genesis, l.lines = b, acct, line, [][]byte{line}
	return nil
}

func (l *Ledger) checkCharge(r *record, line []byte, hash string) error {
	want := len(l.lines)
	errAt := func(field string, err error) error { return &Error{Seq: r.Seq, Field: field, Err: err} }
	switch {
	case r.Seq != want:
		return errAt("seq", fmt.Errorf("%w: %d on the line of entry %d (an entry was deleted, inserted or moved)", ErrSequence, r.Seq, want))
	case r.Prev != hashLine(l.lines[want-1]):
		return errAt("prev", fmt.Errorf("%w: not the hash of entry %d (it was edited, deleted or moved)", ErrChain, want-1))
	case r.Charge == nil || r.Totals == nil || r.Genesis != nil:
		return errAt("charge", fmt.Errorf("%w: a charge entry holds a charge and totals only", ErrFormat))
	}
	if err := verifyRecord(r, l.pub); err != nil {
		return errAt("sig", err)
	}
	rel := Release{Label: r.Charge.Label, Certificate: r.Charge.Certificate, Alpha: r.Charge.Alpha, Sigma: r.Charge.Sigma, Beta: r.Charge.Beta}
	field, s, err := l.spend(rel)
	if err != nil {
		return errAt(field, err)
	}
	got := Totals{Releases: r.Totals.Releases, Epsilon: r.Totals.Epsilon, Beta: r.Totals.Beta}
	for _, c := range []struct {
		field    string
		got, rec float64
	}{
		{"totals.releases", float64(s.Releases), float64(got.Releases)},
		{"totals.epsilon", s.Epsilon, got.Epsilon},
		{"totals.beta", s.Beta, got.Beta},
	} {
		if c.got != c.rec {
			return errAt(c.field, fmt.Errorf("%w: recorded %v, the charges give %v", ErrTotals, c.rec, c.got))
		}
	}
	l.commit(rel, s, line, hash)
	return nil
}

func (l *Ledger) checkSeal(r *record) error {
	n := len(l.lines)
	errAt := func(field string, err error) error { return &Error{Seq: -1, Field: field, Err: err} }
	switch {
	case r.Genesis != nil || r.Charge != nil || r.Totals != nil:
		return errAt("type", fmt.Errorf("%w: a seal holds seq and prev only", ErrFormat))
	case r.Seq > n:
		return errAt("seq", fmt.Errorf("%w: %w: the seal covers %d entries, the file has %d: entries after %d were removed",
			ErrTruncated, ErrSeal, r.Seq, n, n-1))
	case r.Seq < n:
		return errAt("seq", fmt.Errorf("%w: the seal covers %d entries, the file has %d", ErrSeal, r.Seq, n))
	case r.Prev != hashLine(l.lines[n-1]):
		return errAt("prev", fmt.Errorf("%w: not the hash of the last entry (%d)", ErrSeal, n-1))
	}
	if err := verifyRecord(r, l.pub); err != nil {
		return errAt("sig", err)
	}
	return nil
}

// normalize fills in the default label.
func (r Release) normalize() Release {
	if r.Label == "" {
		r.Label = r.Certificate[:min(12, len(r.Certificate))]
	}
	return r
}

// spend charges rel to the accountant (the caller holds the lock or owns
// l) and returns the new totals, or the field at fault and the error.
func (l *Ledger) spend(rel Release) (string, Totals, error) {
	if rel.Certificate == "" {
		return "charge.certificate", Totals{}, fmt.Errorf("%w: no certificate identifier", ErrCharge)
	}
	if seq, ok := l.certs[rel.Certificate]; ok {
		return "charge.certificate", Totals{}, fmt.Errorf("%w: %q is entry %d", ErrDuplicate, rel.Certificate, seq)
	}
	ch, err := certify.ChargeFor(rel.Label, rel.Alpha, rel.Sigma, rel.Beta)
	if err != nil {
		return "charge", Totals{}, fmt.Errorf("%w: %w", ErrCharge, err)
	}
	s, err := l.acct.Spend(ch)
	if err != nil {
		return "charge", Totals{}, fmt.Errorf("%w: %w", ErrBudget, err)
	}
	return "", Totals{Releases: s.Releases, Epsilon: s.Epsilon, Beta: s.Beta}, nil
}

// commit records an accepted entry.
func (l *Ledger) commit(rel Release, t Totals, line []byte, hash string) {
	seq := len(l.lines)
	l.lines = append(l.lines, line)
	l.entries = append(l.entries, Entry{Seq: seq, Release: rel, Totals: t, Hash: hash})
	l.certs[rel.Certificate] = seq
}

// render returns the file content for the entry lines: each line, then a
// seal over them, each followed by a newline.
func (l *Ledger) render(lines [][]byte) ([]byte, error) {
	n := len(lines)
	seal, err := signRecord(&record{Type: typeSeal, Seq: n, Prev: hashLine(lines[n-1])}, l.key)
	if err != nil {
		return nil, err
	}
	var buf bytes.Buffer
	for _, ln := range lines {
		buf.Write(ln)
		buf.WriteByte('\n')
	}
	buf.Write(seal)
	buf.WriteByte('\n')
	return buf.Bytes(), nil
}

func writeFile(path string, data []byte) error {
	return atomicfile.WriteFile(path, fileMode, func(w io.Writer) error {
		_, err := w.Write(data)
		return err
	})
}

// Append charges one release: it checks the release (a certificate
// identifier not charged before, a charge certify.ChargeFor accepts),
// that the budget allows it (certify.Accountant.Spend), and that the file
// is still what this Ledger loaded or last wrote; then it writes the file
// again, atomically, with the new entry (signed, chained to the last one,
// with the new totals) and a new seal. On any refusal or failure it
// returns an *Error (ErrDuplicate, ErrCharge, ErrBudget, ErrChanged,
// ErrReadOnly, or the write's error) and changes nothing: neither the
// file nor the Ledger.
//
// The whole file is rewritten on each append (its size grows by one line
// of ≈ 400 bytes per release), which keeps it valid at every instant.
func (l *Ledger) Append(r Release) (Entry, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	r = r.normalize()
	seq := len(l.lines)
	errAt := func(field string, err error) (Entry, error) {
		return Entry{}, &Error{Path: l.path, Line: seq + 1, Seq: seq, Field: field, Err: err}
	}
	if l.key == nil {
		return errAt("", ErrReadOnly)
	}
	unlock, err := lockFile(l.path)
	if err != nil {
		return errAt("", err)
	}
	defer unlock()
	if cur, err := os.ReadFile(l.path); err != nil {
		return errAt("", err)
	} else if !bytes.Equal(cur, l.data) {
		return errAt("", fmt.Errorf("%w: another writer? reopen it", ErrChanged))
	}
	field, t, err := l.spend(r)
	if err != nil {
		return errAt(field, err)
	}
	rec := &record{Type: typeCharge, Seq: seq, Prev: hashLine(l.lines[seq-1]),
		Charge: &chargeJSON{Label: r.Label, Certificate: r.Certificate, Alpha: r.Alpha, Sigma: r.Sigma, Beta: r.Beta},
		Totals: &totalsJSON{Releases: t.Releases, Epsilon: t.Epsilon, Beta: t.Beta}}
	line, err := signRecord(rec, l.key)
	var data []byte
	if err == nil {
		data, err = l.render(append(l.lines[:seq:seq], line))
	}
	if err == nil {
		write := l.write
		if write == nil {
			write = writeFile
		}
		err = write(l.path, data)
	}
	if err != nil {
		if rerr := l.replay(); rerr != nil {
			panic("ledger: replaying accepted charges failed: " + rerr.Error())
		}
		return errAt("", err)
	}
	l.commit(r, t, line, hashLine(line))
	l.data = data
	return l.entries[len(l.entries)-1], nil
}

// replay rebuilds the accountant from the accepted entries (after a
// failed write, to undo the Spend).
func (l *Ledger) replay() error {
	acct, err := certify.NewAccountant(l.budget)
	if err != nil {
		return err
	}
	for _, e := range l.entries {
		ch, err := certify.ChargeFor(e.Release.Label, e.Release.Alpha, e.Release.Sigma, e.Release.Beta)
		if err != nil {
			return err
		}
		if _, err := acct.Spend(ch); err != nil {
			return err
		}
	}
	l.acct = acct
	return nil
}

// WouldExceed reports whether charging r would exceed the budget, and the
// totals after it; the ledger is unchanged. Errors: a charge the
// accountant refuses, a certificate without identifier or already
// charged (*Error wrapping ErrCharge or ErrDuplicate).
func (l *Ledger) WouldExceed(r Release) (bool, Totals, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	r = r.normalize()
	seq := len(l.lines)
	errAt := func(field string, err error) (bool, Totals, error) {
		return false, Totals{}, &Error{Path: l.path, Line: seq + 1, Seq: seq, Field: field, Err: err}
	}
	if r.Certificate == "" {
		return errAt("charge.certificate", fmt.Errorf("%w: no certificate identifier", ErrCharge))
	}
	if s, ok := l.certs[r.Certificate]; ok {
		return errAt("charge.certificate", fmt.Errorf("%w: %q is entry %d", ErrDuplicate, r.Certificate, s))
	}
	ch, err := certify.ChargeFor(r.Label, r.Alpha, r.Sigma, r.Beta)
	if err != nil {
		return errAt("charge", fmt.Errorf("%w: %w", ErrCharge, err))
	}
	exceed, s, err := l.acct.WouldExceed(ch)
	if err != nil {
		return errAt("charge", fmt.Errorf("%w: %w", ErrCharge, err))
	}
	return exceed, Totals{Releases: s.Releases, Epsilon: s.Epsilon, Beta: s.Beta}, nil
}

// Budget returns the ledger's budget (from its genesis entry).
func (l *Ledger) Budget() certify.Budget {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.budget
}

// KeyID returns the id of the key that signs the ledger.
func (l *Ledger) KeyID() string { return l.pub.KeyID() }

// Path returns the ledger's file, "" for one from [Parse].
func (l *Ledger) Path() string { return l.path }

// Entries returns a copy of the charges, in order (Entries()[i].Seq is
// i+1).
func (l *Ledger) Entries() []Entry {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]Entry(nil), l.entries...)
}

// Totals returns the totals of all charges so far (zero releases: ε and
// Σβ of nothing, as the accountant reports them).
func (l *Ledger) Totals() Totals {
	l.mu.Lock()
	defer l.mu.Unlock()
	s := l.acct.Spent()
	return Totals{Releases: s.Releases, Epsilon: s.Epsilon, Beta: s.Beta}
}

// Head returns the anchor of the ledger's current state: its last entry's
// sequence number and hash (the genesis entry's for a ledger without
// charges).
func (l *Ledger) Head() Anchor {
	l.mu.Lock()
	defer l.mu.Unlock()
	n := len(l.lines)
	return Anchor{Seq: n - 1, Hash: hashLine(l.lines[n-1])}
}

// Extends checks that the ledger contains the entry a was taken at, i.e.
// that it is that state or an append-only continuation of it. It returns
// an *Error wrapping ErrRollback when the ledger is shorter (rolled back
// to an older copy) or holds another entry there (history rewritten).
func (l *Ledger) Extends(a Anchor) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	n := len(l.lines)
	if a.Seq < 0 || a.Seq >= n {
		return &Error{Path: l.path, Seq: a.Seq, Err: fmt.Errorf("%w: the anchor is at entry %d, the ledger ends at entry %d (rolled back?)", ErrRollback, a.Seq, n-1)}
	}
	if h := hashLine(l.lines[a.Seq]); h != a.Hash {
		return &Error{Path: l.path, Line: a.Seq + 1, Seq: a.Seq, Field: "hash", Err: fmt.Errorf("%w: entry %d has hash %s, the anchor %s (history rewritten)", ErrRollback, a.Seq, h, a.Hash)}
	}
	return nil
}

// Bytes returns a copy of the ledger file's content as loaded or last
// written.
func (l *Ledger) Bytes() []byte {
	l.mu.Lock()
	defer l.mu.Unlock()
	return bytes.Clone(l.data)
}
