package certify_test

import (
	"bytes"
	"crypto/ed25519"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"flag"
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"unlearn/certify"
	"unlearn/sign"
)

var updateCorpus = flag.Bool("update-corpus", false, "rewrite the shared receipt corpus (python/tests/data/receipt-corpus.json)")

// corpusPath is the corpus of receipt files that certify.VerifyReceipt and
// the Python client's unlearn.verify_receipt must both accept (genuine) or
// both refuse (broken); python/tests/test_receipt_corpus.py runs it there.
const corpusPath = "../python/tests/data/receipt-corpus.json"

// corpusCase is one file of the corpus: its exact bytes (base64, so that a
// byte-order mark or invalid UTF-8 survives), and for a broken one the
// field both verifiers must name.
type corpusCase struct {
	Name  string `json:"name"`
	File  string `json:"file_b64"`
	Field string `json:"field,omitempty"`
}

type receiptCorpus struct {
	Comment   string       `json:"comment"`
	PublicKey string       `json:"public_key"`
	Genuine   []corpusCase `json:"genuine"`
	Broken    []corpusCase `json:"broken"`
}

// seededSigner is a fixed Ed25519 key, so that the corpus is the same on
// every run (Ed25519 signatures are deterministic). Test-only: its seed is
// public.
type seededSigner struct{ key ed25519.PrivateKey }

func newSeededSigner() seededSigner {
	seed := sha256.Sum256([]byte("unlearn receipt corpus: a public test key"))
	return seededSigner{ed25519.NewKeyFromSeed(seed[:])}
}

func (s seededSigner) Sign(msg []byte) []byte { return ed25519.Sign(s.key, msg) }
func (s seededSigner) KeyID() string          { return s.public().KeyID() }
func (s seededSigner) public() sign.Public {
	p, err := sign.NewPublic(s.key.Public().(ed25519.PublicKey))
	if err != nil {
		panic(err)
	}
	return p
}

// buildCorpus makes the corpus: genuine receipts and their harmless
// re-encodings, and the files an attacker would try on two verifiers of
// different leniency.
func buildCorpus(t *testing.T) receiptCorpus {
	key := newSeededSigner()
	exact, err := certify.SignReceipt(testReceipt(), key)
	require.NoError(t, err)
	ar := testReceipt()
	ar.Path, ar.NeedsNoise, ar.Pending = "approximate", true, "the records' influence stays in the state until the next exact replay"
	approx, err := certify.SignReceipt(ar, key)
	require.NoError(t, err)

	var env map[string]string
	require.NoError(t, json.Unmarshal(exact, &env))
	payload := env["payload"]
	sig := env["signature"]
	// envelope writes the members in the given order, each value raw JSON.
	envelope := func(members ...string) []byte {
		return []byte("{" + strings.Join(members, ",") + "}")
	}
	q := func(s string) string { b, _ := json.Marshal(s); return string(b) }
	member := func(name, value string) string { return q(name) + ":" + value }
	std := func(p, s string) []string {
		return []string{member("format", q(certify.ReceiptFormat)), member("key_id", q(key.KeyID())), member("payload", q(p)), member("signature", q(s))}
	}
	signed := func(p string) string { // a payload signed by the key
		return hex.EncodeToString(key.Sign([]byte(certify.ReceiptFormat + "\n" + p)))
	}
	resigned := func(p string) []byte { return envelope(std(p, signed(p))...) }
	edit := func(old, new string) []byte {
		require.Contains(t, payload, old)
		return resigned(strings.Replace(payload, old, new, 1))
	}
	m := std(payload, sig)
	clone := func(s []string) []string { return append([]string(nil), s...) }

	c := receiptCorpus{
		Comment: "Written by certify's TestReceiptCorpus (go test ./certify -run TestReceiptCorpus -update-corpus). " +
			"certify.VerifyReceipt and unlearn.verify_receipt must accept every genuine file and refuse every broken one, naming field.",
		PublicKey: string(key.public().MarshalPublic()),
	}
	good := func(name string, b []byte) {
		c.Genuine = append(c.Genuine, corpusCase{Name: name, File: base64.StdEncoding.EncodeToString(b)})
	}
	bad := func(name, field string, b []byte) {
		c.Broken = append(c.Broken, corpusCase{Name: name, File: base64.StdEncoding.EncodeToString(b), Field: field})
	}
	good("as signed", exact)
	good("approximate path", approx)
	good("compact", envelope(m...))
	good("members reordered", envelope(m[3], m[1], m[2], m[0]))
	good("escaped member name", envelope(m[0], m[1], `"p\u0061yload":`+q(payload), m[3]))
	good("white space around", append(append([]byte(" \r\n\t"), exact...), " \n"...))

	// The envelope, as read.
	bad("member in another case", "file", envelope(m[0], m[1], member("Payload", q(payload)), m[3]))
	bad("extra member in another case", "file", envelope(append(clone(m), member("SIGNATURE", q(sig)))...))
	bad("duplicate payload, last edited", "file", envelope(append(clone(m), member("payload", q(strings.Replace(payload, `"records":3`, `"records":1`, 1))))...))
	bad("duplicate signature", "file", envelope(append(clone(m), member("signature", q(sig)))...))
	bad("duplicate by escape", "file", envelope(append(clone(m), `"p\u0061yload":`+q(payload))...))
	bad("unknown member", "file", envelope(append(clone(m), member("extra", `"x"`))...))
	bad("missing signature", "file", envelope(m[0], m[1], m[2]))
	bad("null signature", "file", envelope(m[0], m[1], m[2], member("signature", "null")))
	bad("number as format", "file", envelope(member("format", "1"), m[1], m[2], m[3]))
	bad("byte-order mark", "file", append([]byte("\ufeff"), exact...))
	bad("trailing data", "file", append(bytes.Clone(exact), '}'))
	bad("two documents", "file", append(bytes.Clone(exact), exact...))
	bad("not JSON", "file", []byte("receipt"))
	bad("empty", "file", nil)
	bad("an array", "file", []byte("["+string(exact)+"]"))
	bad("invalid UTF-8", "file", envelope(member("format", "\"unlearn-receipt/v1\xff\""), m[1], m[2], m[3]))
	bad("lone surrogate", "file", envelope(m[0], m[1], m[2], member("signature", `"\ud800"`)))
	bad("NaN", "file", envelope(member("format", "NaN"), m[1], m[2], m[3]))
	bad("other format", "format", envelope(member("format", q("unlearn-receipt/v0")), m[1], m[2], m[3]))
	bad("key id in upper case", "key_id", envelope(m[0], member("key_id", q(strings.ToUpper(key.KeyID()))), m[2], m[3]))
	bad("signature with spaces", "signature", envelope(append(clone(m[:3]), member("signature", q(sig[:64]+" "+sig[64:])))...))
	bad("signature in upper case", "signature", envelope(append(clone(m[:3]), member("signature", q(strings.ToUpper(sig))))...))
	bad("signature short", "signature", envelope(append(clone(m[:3]), member("signature", q(sig[:126])))...))
	bad("signature edited", "signature", envelope(append(clone(m[:3]), member("signature", q("00"+sig[2:])))...))
	bad("payload edited", "signature", envelope(std(strings.Replace(payload, `"records":3`, `"records":2`, 1), sig)...))

	// The payload, signed by the key: the signature holds, the content must not.
	bad("payload member in another case", "payload", edit(`"records":`, `"Records":`))
	bad("payload batch member in another case", "payload", edit(`"requests":`, `"Requests":`))
	bad("payload duplicate member", "payload", edit(`"records":3`, `"records":3,"records":1`))
	bad("payload member missing", "payload", edit(`"toolkit":"unlearn test",`, ``))
	bad("payload batch member missing", "payload", edit(`"store_request":4,`, ``))
	bad("payload unknown member", "payload", edit(`"head":1000`, `"head":1000,"ids":[1]`))
	bad("payload float count", "payload", edit(`"records":3`, `"records":3.0`))
	bad("payload null count", "payload", edit(`"records":3`, `"records":null`))
	bad("payload count out of range", "payload", edit(`"head":1000`, `"head":9223372036854775808`))
	bad("payload string as boolean", "payload", edit(`"needs_noise":false`, `"needs_noise":"false"`))
	bad("payload null list", "erased_releases", edit(`"erased_releases":[2,7]`, `"erased_releases":null`))
	bad("payload byte-order mark", "payload", resigned("\ufeff"+payload))
	bad("payload trailing data", "payload", resigned(payload+"{}"))
	bad("payload not JSON", "payload", resigned("receipt"))
	bad("payload NaN", "payload", edit(`"head":1000`, `"head":NaN`))
	bad("payload other format", "format", edit(`"format":"unlearn-receipt/v1"`, `"format":"unlearn-receipt/v0"`))
	bad("empty request", "request", edit(`"request":"0123456789abcdef0123456789abcdef"`, `"request":""`))
	bad("unknown path", "path", edit(`"path":"exact"`, `"path":"maybe"`))
	bad("no records", "records", edit(`"records":3,`, `"records":0,`))
	bad("more forgotten than named", "already_forgotten", edit(`"already_forgotten":1`, `"already_forgotten":4`))
	bad("empty batch", "batch", edit(`"requests":2`, `"requests":0`))
	bad("negative head", "head", edit(`"head":1000`, `"head":-1`))
	bad("releases descending", "erased_releases", edit(`"erased_releases":[2,7]`, `"erased_releases":[7,2]`))
	bad("approximate, nothing pending", "pending", edit(`"path":"exact"`, `"path":"approximate"`))
	cm := testReceipt().Commitment
	bad("commitment in upper case", "commitment", edit(cm, strings.ToUpper(cm)))
	bad("commitment short", "commitment", edit(cm, cm[:62]))
	bad("one-digit hour", "received", edit(`"received":"2026-03-01T12:`, `"received":"2026-03-01T1:`))
	bad("day out of range", "received", edit(`"received":"2026-03-01T`, `"received":"2026-02-30T`))
	bad("five fractional digits", "served", edit(`"served":"2026-03-01T12:01:00.123456Z"`, `"served":"2026-03-01T12:01:00.12345Z"`))
	bad("served before received", "served", edit(`"served":"2026-03-01T12:01:00.123456Z"`, `"served":"2026-03-01T11:00:00.000000Z"`))
	return c
}

// TestReceiptCorpus: the shared corpus is the one buildCorpus makes (with
// -update-corpus it is written again), and certify.VerifyReceipt accepts
// every genuine file of it and refuses every broken one naming its field.
// The Python client's tests run the same file.
func TestReceiptCorpus(t *testing.T) {
	want := buildCorpus(t)
	b, err := json.MarshalIndent(want, "", "  ")
	require.NoError(t, err)
	b = append(b, '\n')
	if *updateCorpus {
		require.NoError(t, os.WriteFile(corpusPath, b, 0o644))
	}
	onDisk, err := os.ReadFile(corpusPath)
	require.NoError(t, err)
	require.Equal(t, string(b), string(onDisk), "the corpus is stale: go test ./certify -run TestReceiptCorpus -update-corpus")

	var c receiptCorpus
	require.NoError(t, json.Unmarshal(onDisk, &c))
	pub, err := sign.ParsePublic("corpus", []byte(c.PublicKey))
	require.NoError(t, err)
	require.NotEmpty(t, c.Genuine)
	require.GreaterOrEqual(t, len(c.Broken), 40)
	file := func(k corpusCase) []byte {
		f, err := base64.StdEncoding.DecodeString(k.File)
		require.NoError(t, err)
		return f
	}
	for _, k := range c.Genuine {
		r, err := certify.VerifyReceipt(file(k), pub)
		require.NoError(t, err, k.Name)
		require.Equal(t, testReceipt().Request, r.Request, k.Name)
	}
	for _, k := range c.Broken {
		_, err := certify.VerifyReceipt(file(k), pub)
		require.ErrorIs(t, err, certify.ErrReceipt, k.Name)
		require.True(t, strings.HasPrefix(err.Error(), certify.ErrReceipt.Error()+": "+k.Field+":"),
			"%s: want the error to name %s, got %v", k.Name, k.Field, err)
	}
}
