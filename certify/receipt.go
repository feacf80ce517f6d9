package certify

import (
	"bytes"
	"cmp"
	"crypto/ed25519"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"time"

	"unlearn/internal/strictjson"
)

// ReceiptFormat is the format tag of a deletion receipt (the envelope and
// the receipt it carries).
const ReceiptFormat = "unlearn-receipt/v1"

// CommitmentFormat starts the message of a request's commitment (see
// [ForgetCommitment]).
const CommitmentFormat = "unlearn-forget-request/v1"

// NonceSize is the size in bytes of a requester's nonce (see
// [ForgetCommitment]).
const NonceSize = 32

// ReceiptTimeLayout is the layout of a receipt's times: UTC, to the
// microsecond, always with six fractional digits (RFC 3339; Python's
// datetime.fromisoformat reads it). A receipt's time is exactly this
// layout's form (two-digit hours included).
const ReceiptTimeLayout = "2006-01-02T15:04:05.000000Z"

// ErrReceipt is wrapped by the errors of [VerifyReceipt]: a receipt that is
// malformed, signed by another key, or edited after signing.
var ErrReceipt = errors.New("invalid deletion receipt")

// Receipt is what the service tells a data subject once their deletion
// request is served: which request, when it was received, its deadline and
// when it was served, how (exact replay, an approximate intervention, or
// nothing left to do), how many records it named, which kept releases the
// serving erased, and the store's log position afterwards. It holds no
// id, key or payload of the deleted records: Commitment binds them under
// a nonce only the requester holds (see [ForgetCommitment]), so the receipt,
// and the store that keeps it, cannot be linked to them.
type Receipt struct {
	// Format is [ReceiptFormat].
	Format string `json:"format"`
	// Toolkit is the toolkit version that served the request.
	Toolkit string `json:"toolkit"`
	// Request is the request id the service acknowledged.
	Request string `json:"request"`
	// Received, Deadline and Served are times in [ReceiptTimeLayout]: when
	// the request was durably queued (acknowledged), the latest time the
	// service promised to serve it by, and when the transaction that served
	// it committed its erasure.
	Received string `json:"received"`
	Deadline string `json:"deadline"`
	Served   string `json:"served"`
	// Path is "exact" (the state was rebuilt by replay without the records:
	// bit for bit the model trained without them), "approximate" (an
	// unlearning intervention; the records' payloads are erased but the
	// state still carries their influence: see Pending) or "none" (every
	// record had been forgotten by an earlier request).
	Path string `json:"path"`
	// Records is the number of distinct records (ids, with the keys
	// resolved) the request named; AlreadyForgotten how many of them an
	// earlier request had forgotten.
	Records          int `json:"records"`
	AlreadyForgotten int `json:"already_forgotten"`
	// Commitment is ForgetCommitment(nonce, ids, keys) of the request as it
	// was made (hex).
	Commitment string `json:"commitment"`
	// Batch describes the store request that served this request together
	// with the others queued with it (one replay).
	Batch ReceiptBatch `json:"batch"`
	// ErasedReleases are the releases kept in the store that the serving
	// erased (made from a state that included a deleted record), by id,
	// ascending. Copies published elsewhere are not the store's to recall.
	ErasedReleases []int64 `json:"erased_releases"`
	// Head is the store's log position after serving: the released states
	// from then on include every insert up to it that was not forgotten.
	Head int64 `json:"head"`
	// NeedsNoise reports whether the store's state still carries forgotten
	// records' influence (this request's or an earlier approximate one's):
	// only noised, certified releases are then published.
	NeedsNoise bool `json:"needs_noise"`
	// Pending says what is still pending for this request, or is empty.
	Pending string `json:"pending"`
}

// ReceiptBatch is the store request that served a batch of requests.
type ReceiptBatch struct {
	// StoreRequest is the store's forget request number (0 when nothing was
	// left to forget).
	StoreRequest int64 `json:"store_request"`
	// Requests is the number of requests served by it; Records the distinct
	// records they named together.
	Requests int `json:"requests"`
	Records  int `json:"records"`
}

// receiptEnvelope is the signed file: the receipt's JSON as a string
// (its exact bytes are what is signed), the key id and the signature.
type receiptEnvelope struct {
	Format    string `json:"format"`
	KeyID     string `json:"key_id"`
	Payload   string `json:"payload"`
	Signature string `json:"signature"`
}

// receiptMessage returns the bytes a receipt's signature covers: the format
// tag, a newline, then the payload. No certificate or ledger line (JSON
// objects) starts with the tag, so no signature of one verifies as another.
func receiptMessage(payload []byte) []byte {
	return append([]byte(ReceiptFormat+"\n"), payload...)
}

// SignReceipt returns the signed receipt file: indented JSON with a final
// newline, {"format", "key_id", "payload", "signature"}, where payload is
// the receipt's compact JSON as a string and signature the hex Ed25519
// signature of "unlearn-receipt/v1\n" ‖ payload by key. r.Format is set.
func SignReceipt(r *Receipt, key Signer) ([]byte, error) {
	r.Format = ReceiptFormat
	if err := r.check(); err != nil {
		return nil, err
	}
	payload, err := json.Marshal(r)
	if err != nil {
		return nil, fmt.Errorf("certify: receipt: %w", err)
	}
	env := receiptEnvelope{Format: ReceiptFormat, KeyID: key.KeyID(), Payload: string(payload),
		Signature: hex.EncodeToString(key.Sign(receiptMessage(payload)))}
	b, err := json.MarshalIndent(env, "", "  ")
	if err != nil {
		return nil, fmt.Errorf("certify: receipt: %w", err)
	}
	return append(b, '\n'), nil
}

// VerifyReceipt checks a signed receipt file with the certifier's public
// key and returns the receipt it carries. It refuses, with an error wrapping
// ErrReceipt that names the field: anything but one JSON object of exactly
// the envelope's four members (read by internal/strictjson: a member named
// twice or in another case, a null, a byte-order mark are refused); a format
// other than [ReceiptFormat]; a key id other than pub's; a signature other
// than 128 lower-case hex digits or that does not verify over the payload's
// exact bytes; a payload that is not exactly one receipt object with every
// member (by the same rules) or whose fields are out of their domain. The
// Python client's unlearn.verify_receipt refuses exactly the same files:
// both run the corpus of testdata/receipts.json (TestReceiptCorpus).
func VerifyReceipt(data []byte, pub PublicKey) (*Receipt, error) {
	if pub == nil {
		return nil, fmt.Errorf("%w: public key: missing", ErrReceipt)
	}
	fail := func(field, format string, args ...any) error {
		return fmt.Errorf("%w: %s: %s", ErrReceipt, field, fmt.Sprintf(format, args...))
	}
	var env receiptEnvelope
	if err := strictjson.Decode(bytes.NewReader(data), &env); err != nil {
		return nil, fail("file", "%v", err)
	}
	if err := allMembers(data, reflect.TypeFor[receiptEnvelope](), ""); err != nil {
		return nil, fail("file", "%v", err)
	}
	if env.Format != ReceiptFormat {
		return nil, fail("format", "%q, want %q", env.Format, ReceiptFormat)
	}
	if env.KeyID != pub.KeyID() {
		return nil, fail("key_id", "signed by key %q, not by the given key %s", env.KeyID, pub.KeyID())
	}
	if !lowerHex(env.Signature, 2*ed25519.SignatureSize) {
		return nil, fail("signature", "want %d lower-case hex digits", 2*ed25519.SignatureSize)
	}
	sig, _ := hex.DecodeString(env.Signature)
	payload := []byte(env.Payload)
	if err := pub.Verify(receiptMessage(payload), sig); err != nil {
		return nil, fail("signature", "does not verify (the receipt was edited after signing, or signed by another key): %v", err)
	}
	var r Receipt
	if err := strictjson.Decode(bytes.NewReader(payload), &r); err != nil {
		return nil, fail("payload", "%v", err)
	}
	if err := allMembers(payload, reflect.TypeFor[Receipt](), ""); err != nil {
		return nil, fail("payload", "%v", err)
	}
	if err := r.check(); err != nil {
		return nil, err
	}
	return &r, nil
}

// lowerHex reports whether s is exactly n lower-case hex digits, the only
// spelling the toolkit writes (hex.DecodeString would also take upper case).
func lowerHex(s string, n int) bool {
	if len(s) != n {
		return false
	}
	for _, c := range []byte(s) {
		if (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return false
		}
	}
	return true
}

// allMembers reports the first member of t's JSON fields (and of its
// struct fields' objects, recursively) missing from the object data, already
// decoded strictly: a receipt has exactly its members, none defaulted.
func allMembers(data []byte, t reflect.Type, prefix string) error {
	var m map[string]json.RawMessage
	if err := strictjson.Unmarshal(data, &m); err != nil {
		return err
	}
	for i := range t.NumField() {
		f := t.Field(i)
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		v, ok := m[name]
		if !ok {
			return fmt.Errorf("missing member %q", prefix+name)
		}
		if f.Type.Kind() == reflect.Struct {
			if err := allMembers(v, f.Type, prefix+name+"."); err != nil {
				return err
			}
		}
	}
	return nil
}

// check reports a receipt whose fields are out of their domain.
func (r *Receipt) check() error {
	fail := func(field, format string, args ...any) error {
		return fmt.Errorf("%w: %s: %s", ErrReceipt, field, fmt.Sprintf(format, args...))
	}
	switch {
	case r.Format != ReceiptFormat:
		return fail("format", "%q, want %q", r.Format, ReceiptFormat)
	case r.Request == "":
		return fail("request", "empty")
	case r.Path != "exact" && r.Path != "approximate" && r.Path != "none":
		return fail("path", "%q, want exact, approximate or none", r.Path)
	case r.Records < 1:
		return fail("records", "%d, want at least 1", r.Records)
	case r.AlreadyForgotten < 0 || r.AlreadyForgotten > r.Records:
		return fail("already_forgotten", "%d of %d records", r.AlreadyForgotten, r.Records)
	case r.Batch.Requests < 1 || r.Batch.Records < 1:
		return fail("batch", "%d requests, %d records: want at least 1 each", r.Batch.Requests, r.Batch.Records)
	case r.Head < 0:
		return fail("head", "%d", r.Head)
	case r.ErasedReleases == nil:
		return fail("erased_releases", "missing (an empty list when none)")
	case !slices.IsSorted(r.ErasedReleases):
		return fail("erased_releases", "not ascending")
	case r.Path == "approximate" && (!r.NeedsNoise || r.Pending == ""):
		return fail("pending", "an approximate path leaves the records' influence in the state: needs_noise and pending must say so")
	}
	if !lowerHex(r.Commitment, 2*sha256.Size) {
		return fail("commitment", "%q: want %d lower-case hex digits", r.Commitment, 2*sha256.Size)
	}
	var times [3]time.Time
	for i, f := range []struct{ name, v string }{{"received", r.Received}, {"deadline", r.Deadline}, {"served", r.Served}} {
		t, err := time.Parse(ReceiptTimeLayout, f.v)
		if err != nil || ReceiptTime(t) != f.v { // exactly the layout: no one-digit hour
			return fail(f.name, "%q: want %s", f.v, ReceiptTimeLayout)
		}
		times[i] = t
	}
	if times[2].Before(times[0]) {
		return fail("served", "%s is before received %s", r.Served, r.Received)
	}
	return nil
}

// ReceiptTime formats t as a receipt time (UTC, microseconds).
func ReceiptTime(t time.Time) string { return t.UTC().Format(ReceiptTimeLayout) }

// ForgetCommitment returns the commitment to a deletion request's content:
// the hex HMAC-SHA256 (RFC 2104), keyed by the requester's nonce of
// NonceSize random bytes, of
//
//	"unlearn-forget-request/v1" ‖ u64(n) ‖ id₁ … idₙ ‖ u64(m) ‖ (u64(len kⱼ) ‖ kⱼ)ⱼ₌₁..ₘ
//
// where the ids are the request's distinct ids in ascending order, each a
// big-endian two's-complement int64, the kⱼ its distinct keys as UTF-8 in
// ascending byte order, and u64 a big-endian uint64. Only someone who holds
// the nonce — the requester, to whom the service returned it once — can
// tell which ids and keys a receipt's commitment covers; without it the
// commitment reveals nothing about them (HMAC is a pseudorandom function of
// its message under a uniformly random key). The service keeps the
// commitment, never the nonce.
func ForgetCommitment(nonce []byte, ids []int64, keys []string) string {
	ids = slices.Compact(slices.Sorted(slices.Values(ids)))
	keys = slices.Compact(slices.SortedFunc(slices.Values(keys), func(a, b string) int { return cmp.Compare(a, b) }))
	m := hmac.New(sha256.New, nonce)
	m.Write([]byte(CommitmentFormat))
	var w [8]byte
	put := func(v uint64) {
		binary.BigEndian.PutUint64(w[:], v)
		m.Write(w[:])
	}
	put(uint64(len(ids)))
	for _, id := range ids {
		put(uint64(id))
	}
	put(uint64(len(keys)))
	for _, k := range keys {
		put(uint64(len(k)))
		m.Write([]byte(k))
	}
	return hex.EncodeToString(m.Sum(nil))
}

// Summary returns the receipt as text, one line per field, for a reader.
func (r *Receipt) Summary() string {
	var b strings.Builder
	fmt.Fprintf(&b, "deletion receipt %s (%s)\n", r.Request, r.Format)
	fmt.Fprintf(&b, "  received     %s\n  deadline     %s\n  served       %s\n", r.Received, r.Deadline, r.Served)
	fmt.Fprintf(&b, "  path         %s\n", r.Path)
	fmt.Fprintf(&b, "  records      %d (%d forgotten by an earlier request)\n", r.Records, r.AlreadyForgotten)
	fmt.Fprintf(&b, "  batch        store request %d: %d requests, %d records, one replay\n", r.Batch.StoreRequest, r.Batch.Requests, r.Batch.Records)
	erased := "none"
	if len(r.ErasedReleases) > 0 {
		s := make([]string, len(r.ErasedReleases))
		for i, id := range r.ErasedReleases {
			s[i] = fmt.Sprint(id)
		}
		erased = strings.Join(s, ", ")
	}
	fmt.Fprintf(&b, "  erased       kept releases: %s\n", erased)
	fmt.Fprintf(&b, "  head after   %d\n", r.Head)
	fmt.Fprintf(&b, "  needs noise  %v\n", r.NeedsNoise)
	if r.Pending != "" {
		fmt.Fprintf(&b, "  pending      %s\n", r.Pending)
	}
	fmt.Fprintf(&b, "  commitment   %s\n", r.Commitment)
	return b.String()
}
