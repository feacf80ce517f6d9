package store

import (
	"bytes"
	"crypto/sha256"
	"database/sql"
	"encoding/binary"
	"math"
)

// Every row the store trusts when it restores, replays, releases or
// resolves — each event's payload, each checkpoint, the state, each kept
// release, each string key, and the configuration in meta — carries the
// SHA-256 of its content (schema version 6), and so does every row of the
// service's deletion queue and tokens (version 7), and every deletion
// request the store served (forget_requests, version 8: reqrow.go). The sum is computed by
// the writer in the row's own transaction and verified by every reader
// before the row is used (a mismatch is a *CorruptError). The hashed
// content is a domain label followed by the row's fields, each
// length-prefixed, so that no two different rows of any table hash the
// same bytes, and a row's key (seq, id, release number, request id, token
// number) is inside its sum: a row copied over another one is caught too.
//
// What the sums catch: storage faults, a torn or reordered write, a byte
// flipped on disk or in a backup, a row edited by hand or by a tool that
// does not know the sums. What they do not: a writer with access to the
// database file can recompute any sum (there is no key; docs/trust.md,
// "The model store's integrity"). Deleted rows are caught by the
// invariants of verify (integrity.go), not by sums.
//
// An erased payload (an approximate forget) is re-summed over an erasure
// marker in the same transaction: a sum of the deleted payload would let
// anyone test a candidate payload against it.

// Domain labels of the row sums (never change one: stored sums use them).
const (
	sumEventDomain      = "unlearn-store/v6/event"
	sumCheckpointDomain = "unlearn-store/v6/checkpoint"
	sumStateDomain      = "unlearn-store/v6/state"
	sumReleaseDomain    = "unlearn-store/v6/release"
	sumKeyDomain        = "unlearn-store/v6/key"
	sumConfigDomain     = "unlearn-store/v6/config"
)

// summer hashes length-prefixed fields under a domain label.
type summer struct{ b []byte }

func newSummer(domain string) *summer {
	s := &summer{b: make([]byte, 0, 256)}
	return s.str(domain)
}

func (s *summer) bytes(v []byte) *summer {
	s.b = binary.LittleEndian.AppendUint64(s.b, uint64(len(v)))
	s.b = append(s.b, v...)
	return s
}

func (s *summer) str(v string) *summer {
	s.b = binary.LittleEndian.AppendUint64(s.b, uint64(len(v)))
	s.b = append(s.b, v...)
	return s
}

func (s *summer) int(v int64) *summer {
	s.b = binary.LittleEndian.AppendUint64(s.b, uint64(v))
	return s
}

func (s *summer) float(v float64) *summer {
	s.b = binary.LittleEndian.AppendUint64(s.b, math.Float64bits(v))
	return s
}

// null marks an absent field (a NULL): a length no field can have.
func (s *summer) null() *summer {
	s.b = binary.LittleEndian.AppendUint64(s.b, math.MaxUint64)
	return s
}

func (s *summer) sum() []byte {
	h := sha256.Sum256(s.b)
	return h[:]
}

// sumEvent is the sum of an events row; payload nil means erased (NULL).
// An empty payload is summed as an empty field, not as NULL: it is a
// damaged payload, never an erased one.
func sumEvent(seq, id int64, payload []byte, erased bool) []byte {
	s := newSummer(sumEventDomain).int(seq).int(id)
	if erased {
		return s.null().sum()
	}
	if payload == nil {
		payload = []byte{}
	}
	return s.bytes(payload).sum()
}

// sumEventInto is sumEvent for the log reader's hot loop: it writes the sum
// into dst and reuses buf (returned, grown as needed) for the hashed bytes.
func sumEventInto(dst *[sha256.Size]byte, buf []byte, seq, id int64, payload []byte) []byte {
	buf = buf[:0]
	buf = binary.LittleEndian.AppendUint64(buf, uint64(len(sumEventDomain)))
	buf = append(buf, sumEventDomain...)
	buf = binary.LittleEndian.AppendUint64(buf, uint64(seq))
	buf = binary.LittleEndian.AppendUint64(buf, uint64(id))
	buf = binary.LittleEndian.AppendUint64(buf, uint64(len(payload)))
	buf = append(buf, payload...)
	*dst = sha256.Sum256(buf)
	return buf
}

func sumCheckpoint(seq int64, exact bool, t int, origin string, snap []byte) []byte {
	return newSummer(sumCheckpointDomain).int(seq).int(int64(b2i(exact))).int(int64(t)).str(origin).bytes(snap).sum()
}

// sumState binds the state to the log head it is the state after.
func sumState(exact bool, head int64, snap []byte) []byte {
	return newSummer(sumStateDomain).int(int64(b2i(exact))).int(head).bytes(snap).sum()
}

func sumRelease(id int64, time string, head int64, path string, exact bool, eps, delta float64, file, cert []byte) []byte {
	return newSummer(sumReleaseDomain).int(id).str(time).int(head).str(path).int(int64(b2i(exact))).
		float(eps).float(delta).bytes(file).bytes(cert).sum()
}

func sumKey(key string, id int64) []byte {
	return newSummer(sumKeyDomain).str(key).int(id).sum()
}

// configKeys are the meta rows that define the store (sumConfig covers
// them, in this order); a missing optional row is summed as NULL.
// presentConfigKeys, added later, are summed (after them) only when
// present, so that the sums of stores created before they existed hold.
var (
	configKeys        = []string{"header", "learner", "checkpoint_every", "resolve_after_events", "resolve_within"}
	presentConfigKeys = []string{"clip_to_bound"}
)

// sumConfig is the sum of the store's defining meta rows.
func sumConfig(meta map[string]string) []byte {
	s := newSummer(sumConfigDomain)
	for _, k := range configKeys {
		if v, ok := meta[k]; ok {
			s.str(k).str(v)
		} else {
			s.str(k).null()
		}
	}
	for _, k := range presentConfigKeys {
		if v, ok := meta[k]; ok {
			s.str(k).str(v)
		}
	}
	return s.sum()
}

func sameSum(a, b []byte) bool { return len(a) == sha256.Size && bytes.Equal(a, b) }

// Domain labels of the service's rows (schema version 7).
const (
	sumQueuedDomain = "unlearn-store/v7/forget-queue"
	sumTokenDomain  = "unlearn-store/v7/token"
)

// nullStr and nullInt sum a nullable column: NULL as null, a value as
// itself.
func (s *summer) nullStr(v sql.NullString) *summer {
	if !v.Valid {
		return s.null()
	}
	return s.str(v.String)
}

func (s *summer) nullInt(v sql.NullInt64) *summer {
	if !v.Valid {
		return s.null()
	}
	return s.int(v.Int64)
}

// sumQueued is the sum of a forget_queue row: every column but seq (the
// request id is the row's key) and the sum, as stored.
func sumQueued(r *queueRecord) []byte {
	s := newSummer(sumQueuedDomain).str(r.request).str(r.received).str(r.deadline).nullStr(r.ids).
		int(int64(r.records)).str(r.commitment).str(r.state).nullStr(r.served).nullInt(r.batch)
	if r.receipt == nil {
		s.null()
	} else {
		s.bytes(r.receipt)
	}
	return s.nullStr(r.reason).sum()
}

// sumToken is the sum of a tokens row, its number included.
func sumToken(r *tokenRecord) []byte {
	return newSummer(sumTokenDomain).int(r.id).str(r.name).bytes(r.hash).str(r.scopes).str(r.created).nullStr(r.revoked).sum()
}
