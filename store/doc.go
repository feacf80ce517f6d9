// Package store keeps a live o-LBFGS learner on disk — its event log,
// periodic checkpoints, the current state and the record of deletion
// requests — in one SQLite database, and serves deletion requests by exact
// replay from a checkpoint, or by a named unlearning intervention when the
// replay would exceed a budget, erasing the deleted data from every file.
//
// # Lifecycle
//
// [Create] makes a store for a loss (a stream header) and a learner
// configuration, with θ0 as its first checkpoint; [Open] opens it again.
// [Store.Ingest] appends the events of a stream file (read one line at a
// time) and trains on them, one o-LBFGS step each (spec §2), storing a
// checkpoint — the full state with pair provenance, olbfgs.MarshalSnapshot —
// after every event whose sequence number is a multiple of K. A sparse
// payload (stream.Sample.Idx) is stepped in its dense form
// (stream.Sample.Dense), whose step is the sparse one's bit for bit; the log
// holds every insert's S and d-vector in the shorter of a dense and a
// sparse encoding (payload.go), so a sparse data set makes a small log.
// [Store.Forget] serves a deletion request; [Store.Status],
// [Store.Requests], [Store.Export], [Store.Counterfactual] and [Evaluate]
// inspect the result; [Store.Check] verifies the store bit for bit.
//
// # Exact forget
//
// Let U be the deletion set and s_U the sequence number of its oldest
// insert. Forget restores the newest exact checkpoint θ_c with c < s_U,
// replays the log after c without U's events and regenerates every later
// checkpoint. Replay is deterministic (olbfgs.Replay), so the state equals
// olbfgs.Replay of stream.Counterfactual(log, U) bit for bit: the paper's
// oracle replay (Definition "Deletion-edited counterfactual history";
// Section "Experiments": exact recovery happens when the intervention
// reconstructs the joint state (w, Z) by replay). Window replay from a
// checkpoint is the same operation, exact because the window covers every
// deleted insert. Its cost is the events after c, at the learner's step
// rate: at most K−1 before s_U plus everything after it.
//
// # Approximate forget
//
// With ForgetOptions.MaxReplay = N, a request whose exact replay would
// apply more than N events is served by an intervention of package unlearn
// ([Interventions]) applied to the current state. Its output still carries
// U's influence, and un-noised it is an invertible encoding of U's payload
// (a least-squares solver rebuilds it: TestAttackAfterApproximateForget),
// so the store keeps it only noised: the approximate forget is itself a
// certified release (certify.Certify with ForgetOptions.Noise) at the α the
// store derives from public quantities — the intervention, |U|, the ages of
// U's inserts as the certificate discloses them (AgeDisclosure), horizon 0
// — or the diameter 2W', signed and charged by ForgetOptions.OnRelease and
// kept ([Store.Keep]'s table); the state continues from its w projected onto
// the learner's ball, with an empty memory. The payloads of U are erased,
// and every checkpoint at or after the oldest erased insert is deleted:
// exact replay restarts before it. A later exact forget, [Store.Resolve] or
// the store's [ResolvePolicy] replays from an exact checkpoint before every
// pending request and resolves them. A learner without a radius refuses
// the approximate path (ErrNotCertifiable).
//
// # Integrity
//
// Every row the store trusts carries the SHA-256 of its content (schema 6,
// checksum.go), and invariants tie the log, the tombstones, the requests,
// the head and the checkpoints together (integrity.go). Before every
// forget, resolution and release the store runs SQLite's quick_check, the
// sums and the invariants in the operation's transaction, and refuses a
// damaged store (*CorruptError) before anything is restored, replayed over
// or released; payloads are verified where they are read. [Store.Check]
// runs integrity_check and replays the log. A damaged state does not
// brick the store: [Open] succeeds, [Store.Status] says what is wrong, and
// [Store.Resolve] rebuilds it. The sums are unkeyed: they catch corruption
// and crashes, not a writer with access to the file (docs/trust.md).
//
// # Erasure
//
// Every forget is one transaction that deletes (exact) or nulls
// (approximate) U's payloads, with SQLite's secure_delete on (deleted
// content and freed pages are overwritten with zeros), followed by VACUUM
// (the file is rebuilt without free pages) unless ForgetOptions.SkipVacuum. The rollback journal (journal_mode=DELETE,
// not WAL) holds the old pages only until the forget commits and is then
// unlinked. Afterwards no file of the store directory holds any byte of a
// deleted payload (TestErasure searches for them). The string keys of the
// forgotten ids (KeySource: a CSV file's string ids, kept in the keys table
// by the ingest transaction that introduced them) are deleted in the same
// transaction (TestKeyErasure); ForgetKeys names a request by them. What is
// NOT erased: the
// ids (tombstones, so that a forgotten id is refused if ingested again), the
// request records, and — after an approximate forget, until it is resolved —
// the noised state (a certified release of the deleted data's influence).
// Copies outside the directory (backups, the file system's free blocks,
// exported snapshots) are the operator's.
//
// # Durability
//
// Every ingest batch and every forget is one SQLite transaction with
// synchronous=FULL: a process killed at any point reopens to a consistent
// store that has lost nothing it acknowledged (TestCrash kills a child
// process with SIGKILL at random points). The invariants [Store.Check]
// verifies: every exact checkpoint is the replay of the log up to it from
// θ0; the state is the newest checkpoint followed by the log after it; and,
// unless an approximate forget is pending, the replay of the whole log. An
// interrupted ingest is resumed by running it again with
// IngestOptions.SkipIdentical (identical events already in the log are
// skipped); OnCommit reports each committed batch.
//
// # Consistent reads
//
// Two processes may use one store. A method that reads several things that
// must agree — [Store.Release] (the state, its log position, the newest
// request, the pending requests, the retained inserts), [Store.Status],
// [Store.State], [Store.Export], [Store.Check], [Store.Counterfactual] —
// reads them in one read transaction: one committed state, never an ingest
// or forget half seen. Writers (ingest, forget, Keep) are one immediate
// write transaction each.
//
// # The service's queue and tokens
//
// A service (package serve) acknowledges a deletion request by committing
// it to the deletion queue ([Store.EnqueueForget]: its keys resolved to
// ids, its ids checked) and serves queued requests in batches
// ([Store.ServeForgets]): one Forget of the union of their ids, whose
// transaction also stores each request's signed receipt and sets its ids
// to NULL, so that the queue holds ids only while a request is queued and
// never its keys. Bearer tokens ([Store.CreateToken]) are stored as the
// SHA-256 of their text. A [Reader] reads tokens and requests on a
// connection of its own, without waiting for the Store's running write.
//
// # Errors
//
// Bad input — a stream line, a header of another loss, a duplicate or
// forgotten id, a key already held, an unknown id or key, an option out of
// range — is an error that names it (*EventError, *stream.LineError,
// *OptionError), wrapping the package's sentinels (ErrEvent, ErrHeader,
// ErrUnknownID, ErrUnknownKey, ErrOptions, …). Nothing panics on input.
//
// # Releases
//
// [Store.Release] makes a certified release of the state (package certify)
// and [Store.Keep] keeps it — the release file and its certificate, byte for
// byte — with the log position h of the released state: it depended on every
// insert with seq ≤ h. A forget whose oldest deleted insert has seq s
// deletes, in its own transaction, every kept release with h ≥ s (made from
// a state that included a deleted insert, with no certificate covering that
// deletion); releases with h < s never saw it, and releases made after an
// approximate forget of an id carry noise calibrated for that deletion (the
// id is then never deleted again). The privacy ledger is a separate file
// (package ledger) charged by the caller before Keep.
package store
