// Package ledger keeps a privacy budget's spending as a tamper-evident
// file: an append-only, hash-chained, signed log of the charges of
// certified releases, composed by the accountant of package certify. A
// budget is useful only if spending cannot be undone by editing a file;
// with the ledger, every edit, deletion, reordering or truncation of the
// history is refused when the file is loaded, and only the holder of the
// certifier's key can append.
//
// # The file
//
// A ledger is JSON Lines (one record per line, each in canonical form:
// encoding/json's Marshal of the record, so its bytes are unique):
//
//   - line 1, the genesis entry (seq 0): the format tag [Format], the
//     budget (ε, δ) and the key id of the certifier (package sign);
//   - one charge entry per certified release (seq 1, 2, …): the release's
//     label, the identifier (digest) of its certificate, α, the applied σ
//     and β, and the running totals after it (releases, ε at the budget's
//     δ, Σβ);
//   - the seal, always the last line: seq = the number of entries and prev
//     = the hash of the last one.
//
// Every entry records prev, the hash of the line before it (hex SHA-256
// of that line's canonical bytes, signature included), and every record is
// signed with Ed25519 (sign.Secret.Sign) over its canonical bytes with the
// signature field empty. The record type and sequence number are signed
// too, so a seal cannot pass for an entry, nor an entry move.
//
// # What loading checks
//
// [Load] (and [Parse], [Open]) verifies the chain and every signature
// with the certifier's public key, replays the charges through a fresh
// certify.Accountant (certify.NewAccountant and certify.ChargeFor only),
// and refuses, as an *[Error] naming the line, entry and field:
//
//   - truncation: a missing seal, a seal over more entries than the file
//     holds, an incomplete last line (ErrTruncated; the seal is signed, so
//     only the key holder can write a shorter one);
//   - a deleted, inserted or moved entry (ErrSequence, ErrChain);
//   - an edited charge, budget, total or seal (ErrSignature), and an entry
//     signed by another key (ErrSignature) or a ledger created by one
//     (ErrKey);
//   - anything after the seal (ErrTrailing), a non-canonical line
//     (ErrNotCanonical), a malformed one (ErrFormat);
//   - a certificate charged twice (ErrDuplicate), a charge the accountant
//     refuses (ErrCharge) or that exceeds the budget (ErrBudget), and
//     running totals that do not follow from the charges (ErrTotals) —
//     these the key holder could sign, and are refused all the same.
//
// The recorded totals must equal, bit for bit, those the accountant of
// this build computes: a ledger written by a build with another
// composition rule is refused with ErrTotals rather than silently
// re-interpreted.
//
// # Rollback and anchors
//
// No file can prove it is the newest version of itself: replacing the
// ledger with an older, complete copy (a rollback, which refunds the
// releases charged since) yields a valid ledger and is undetectable from
// the file alone. Detecting it needs an outside record of a later state:
// an [Anchor] ([Ledger.Head]: the last entry's sequence number and hash),
// kept in a certificate, a published log or on another machine, and
// checked with [Ledger.Extends], which refuses (ErrRollback) a ledger that
// is shorter than the anchor or differs from it there.
//
// # Appending
//
// [Ledger.Append] checks the release, asks the accountant
// (certify.Accountant.Spend, which refuses a charge over the budget and
// changes nothing), and rewrites the file atomically (a temporary file
// renamed into place, package internal/atomicfile) with the new entry and
// a new seal; on any refusal neither the file nor the Ledger changes. A
// Ledger is safe for concurrent use within a process (a mutex). Across
// processes there must be one writer at a time: Append refuses when the
// file changed since it was loaded (ErrChanged), which catches a second
// writer except in a race of a few microseconds.
//
// # What a ledger does not prove
//
// A ledger attests that the holder of a key charged these releases, in
// this order, against this budget, and that the totals follow. It cannot
// attest that the noise was drawn or that every release was charged: a
// certifier that publishes a release without appending it is not caught
// by the ledger (see docs/trust.md).
//
// # Errors
//
// Refusals are *[Error] values (Path, Line, Seq, Field, Err) wrapping the
// sentinels above and, where certify or sign refused, their errors too.
// A nil key or a zero public key panics ("ledger: "). The package never
// logs.
package ledger
