package ledger

import (
	"errors"
	"fmt"
)

// Sentinel errors. Every refusal of a ledger file or of an append is an
// *[Error] naming the file, line, entry and field, wrapping one of these
// (and, where another package refused, that package's error too), for
// errors.Is and errors.As.
var (
	// ErrFormat: a line that is not one JSON object of this format
	// (unknown field, wrong type, an unknown format tag or record type,
	// an empty line).
	ErrFormat = errors.New("malformed ledger line")
	// ErrNotCanonical: a line that parses but is not byte for byte the
	// canonical encoding of what it holds (re-spaced, re-ordered or
	// re-formatted numbers): every line of a ledger is canonical.
	ErrNotCanonical = errors.New("line is not in canonical form")
	// ErrSequence: an entry whose sequence number is not its position: an
	// entry was deleted, inserted or moved.
	ErrSequence = errors.New("entry out of sequence")
	// ErrChain: an entry whose prev is not the hash of the entry before
	// it: an earlier entry was edited, deleted or moved.
	ErrChain = errors.New("hash chain broken")
	// ErrSignature: an entry or seal whose signature does not verify under
	// the ledger's key: it was edited, or signed by another key. It is
	// returned together with sign.ErrSignature.
	ErrSignature = errors.New("signature does not verify")
	// ErrKey: a ledger created by another key than the one given.
	ErrKey = errors.New("ledger belongs to another key")
	// ErrTruncated: a ledger that does not end with its seal: it was cut
	// short, or its last line is incomplete.
	ErrTruncated = errors.New("ledger truncated")
	// ErrSeal: a seal that does not cover the entries before it (count or
	// head hash differ): entries were removed or added after it was
	// written.
	ErrSeal = errors.New("seal does not match the entries")
	// ErrTrailing: anything after the seal.
	ErrTrailing = errors.New("data after the seal")
	// ErrTotals: recorded running totals that differ from those the
	// accountant computes from the charges.
	ErrTotals = errors.New("running totals do not follow from the charges")
	// ErrCharge: a charge the accountant refuses (bad α, σ or β), or a
	// release without a certificate identifier.
	ErrCharge = errors.New("invalid charge")
	// ErrDuplicate: a certificate that is already charged in the ledger.
	ErrDuplicate = errors.New("certificate already charged")
	// ErrBudget: a charge that would exceed the budget, or a genesis
	// entry with an invalid budget.
	ErrBudget = errors.New("privacy budget")
	// ErrRollback: a ledger that does not extend an anchor recorded
	// earlier: it was rolled back to an older copy or its history was
	// rewritten.
	ErrRollback = errors.New("ledger does not extend the anchor")
	// ErrExists: Create on a path that already exists.
	ErrExists = errors.New("ledger file already exists")
	// ErrChanged: the file changed on disk since it was loaded (another
	// writer): the append is refused.
	ErrChanged = errors.New("ledger file changed since it was loaded")
	// ErrReadOnly: Append on a ledger loaded with a public key only.
	ErrReadOnly = errors.New("ledger opened without its secret key")
)

// Error reports a refused ledger or append: where (file, line, entry,
// field) and why (Err, wrapping a sentinel).
type Error struct {
	// Path is the ledger file (or the name given to [Parse]).
	Path string
	// Line is the 1-based line of the file, 0 when not about one line.
	Line int
	// Seq is the entry's sequence number, -1 when unknown or not about
	// one entry (a seal has none).
	Seq int
	// Field is the record's JSON field at fault (e.g. "prev",
	// "charge.alpha", "totals.epsilon"), or "".
	Field string
	// Err is the cause.
	Err error
}

func (e *Error) Error() string {
	s := "ledger: " + e.Path
	if e.Line > 0 {
		s += fmt.Sprintf(":%d", e.Line)
	}
	if e.Seq >= 0 {
		s += fmt.Sprintf(": entry %d", e.Seq)
	}
	if e.Field != "" {
		s += fmt.Sprintf(": field %q", e.Field)
	}
	return s + ": " + e.Err.Error()
}

func (e *Error) Unwrap() error { return e.Err }
