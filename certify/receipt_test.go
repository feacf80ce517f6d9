package certify_test

import (
	"bytes"
	"encoding/hex"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/stretchr/testify/require"

	"unlearn/certify"
	"unlearn/sign"
)

func testReceipt() *certify.Receipt {
	at := time.Date(2026, 3, 1, 12, 0, 0, 123456000, time.UTC)
	return &certify.Receipt{
		Toolkit: "unlearn test", Request: "0123456789abcdef0123456789abcdef",
		Received: certify.ReceiptTime(at), Deadline: certify.ReceiptTime(at.Add(10 * time.Minute)), Served: certify.ReceiptTime(at.Add(time.Minute)),
		Path: "exact", Records: 3, AlreadyForgotten: 1,
		Commitment:     certify.ForgetCommitment(make([]byte, 32), []int64{3, 1, 2}, nil),
		Batch:          certify.ReceiptBatch{StoreRequest: 4, Requests: 2, Records: 5},
		ErasedReleases: []int64{2, 7}, Head: 1000,
	}
}

// TestReceiptRoundTrip: a signed receipt verifies with the signer's public
// key and carries the receipt unchanged.
func TestReceiptRoundTrip(t *testing.T) {
	key, err := sign.Generate()
	require.NoError(t, err)
	r := testReceipt()
	file, err := certify.SignReceipt(r, key)
	require.NoError(t, err)
	got, err := certify.VerifyReceipt(file, key.Public())
	require.NoError(t, err)
	require.Equal(t, r, got)
	require.Contains(t, got.Summary(), "store request 4: 2 requests, 5 records")
}

// TestReceiptRefused: every edit of a signed receipt, another key, and
// malformed files are refused with ErrReceipt.
func TestReceiptRefused(t *testing.T) {
	key, err := sign.Generate()
	require.NoError(t, err)
	other, err := sign.Generate()
	require.NoError(t, err)
	file, err := certify.SignReceipt(testReceipt(), key)
	require.NoError(t, err)
	var env map[string]string
	require.NoError(t, json.Unmarshal(file, &env))
	edit := func(f func(map[string]string)) []byte {
		e := map[string]string{}
		for k, v := range env {
			e[k] = v
		}
		f(e)
		b, _ := json.Marshal(e)
		return b
	}
	resign := func(payload string) []byte { // a payload edited and signed again by the key
		return edit(func(e map[string]string) {
			e["payload"] = payload
			e["signature"] = hex.EncodeToString(key.Sign([]byte(certify.ReceiptFormat + "\n" + payload)))
		})
	}
	for name, tc := range map[string]struct {
		file []byte
		pub  sign.Public
		want string
	}{
		"other key": {file: file, pub: other.Public(), want: "key_id"},
		"records edited": {file: edit(func(e map[string]string) {
			e["payload"] = strings.Replace(e["payload"], `"records":3`, `"records":2`, 1)
		}), pub: key.Public(), want: "signature"},
		"signature edited":       {file: edit(func(e map[string]string) { e["signature"] = flipFirstByte(e["signature"]) }), pub: key.Public(), want: "signature"},
		"signature not hex":      {file: edit(func(e map[string]string) { e["signature"] = "zz" }), pub: key.Public(), want: "signature"},
		"format":                 {file: edit(func(e map[string]string) { e["format"] = "unlearn-receipt/v0" }), pub: key.Public(), want: "format"},
		"unknown field":          {file: edit(func(e map[string]string) { e["extra"] = "x" }), pub: key.Public(), want: "file"},
		"trailing data":          {file: append(bytes.Clone(file), '}'), pub: key.Public(), want: "file"},
		"payload field":          {file: resign(strings.Replace(env["payload"], `"head":1000`, `"head":1000,"ids":[1]`, 1)), pub: key.Public(), want: "payload"},
		"served before received": {file: resign(strings.Replace(env["payload"], `"served":"2026-03-01T12:01:00.123456Z"`, `"served":"2026-03-01T11:00:00.000000Z"`, 1)), pub: key.Public(), want: "served"},
		"bad path":               {file: resign(strings.Replace(env["payload"], `"path":"exact"`, `"path":"maybe"`, 1)), pub: key.Public(), want: "path"},
		"not JSON":               {file: []byte("receipt"), pub: key.Public(), want: "file"},
	} {
		t.Run(name, func(t *testing.T) {
			_, err := certify.VerifyReceipt(tc.file, tc.pub)
			require.ErrorIs(t, err, certify.ErrReceipt)
			require.Contains(t, err.Error(), tc.want)
		})
	}
}

// TestForgetCommitment: the commitment is a function of the sets of ids and
// keys (order and repeats do not matter), changes with any id, key or the
// nonce, and matches the construction written out by hand (the vector the
// Python client's tests share).
func TestForgetCommitment(t *testing.T) {
	nonce := bytes.Repeat([]byte{7}, 32)
	a := certify.ForgetCommitment(nonce, []int64{3, -1, 3, 2}, []string{"b", "a", "b"})
	require.Equal(t, a, certify.ForgetCommitment(nonce, []int64{-1, 2, 3}, []string{"a", "b"}))
	require.NotEqual(t, a, certify.ForgetCommitment(nonce, []int64{-1, 2, 4}, []string{"a", "b"}))
	require.NotEqual(t, a, certify.ForgetCommitment(nonce, []int64{-1, 2, 3}, []string{"a", "c"}))
	require.NotEqual(t, a, certify.ForgetCommitment(bytes.Repeat([]byte{8}, 32), []int64{-1, 2, 3}, []string{"a", "b"}))
	// Ids and keys are in separate, counted fields: no id list reads as a key list.
	require.NotEqual(t, certify.ForgetCommitment(nonce, nil, []string{"a"}), certify.ForgetCommitment(nonce, []int64{1}, nil))
	// Computed with Python's hmac and struct modules:
	//   hmac.new(bytes([7])*32, b"unlearn-forget-request/v1" + struct.pack(">Qqqq", 3, -1, 2, 3)
	//            + struct.pack(">Q", 2) + struct.pack(">Q", 1) + b"a" + struct.pack(">Q", 1) + b"b", "sha256").hexdigest()
	require.Equal(t, "22ea1b1ffc3bac7aea2ba083bd5db2e8e2ac5fb9d8ad0980154e88c0bb5a49f3", a)
}

// TestReceiptSchema: a signed receipt and the receipt it carries validate
// against docs/schemas/unlearn-receipt-v1.schema.json, and a receipt with
// an id in it does not.
func TestReceiptSchema(t *testing.T) {
	abs, err := filepath.Abs("../docs/schemas/unlearn-receipt-v1.schema.json")
	require.NoError(t, err)
	c := jsonschema.NewCompiler()
	env, err := c.Compile("file://" + filepath.ToSlash(abs))
	require.NoError(t, err)
	body, err := c.Compile("file://" + filepath.ToSlash(abs) + "#/$defs/receipt")
	require.NoError(t, err)
	key, err := sign.Generate()
	require.NoError(t, err)
	file, err := certify.SignReceipt(testReceipt(), key)
	require.NoError(t, err)
	validate := func(s *jsonschema.Schema, b []byte) error {
		v, err := jsonschema.UnmarshalJSON(bytes.NewReader(b))
		require.NoError(t, err)
		return s.Validate(v)
	}
	require.NoError(t, validate(env, file))
	var e struct{ Payload string }
	require.NoError(t, json.Unmarshal(file, &e))
	require.NoError(t, validate(body, []byte(e.Payload)))
	require.Error(t, validate(body, []byte(strings.Replace(e.Payload, `"head":1000`, `"head":1000,"ids":[3]`, 1))))
}

// flipFirstByte returns the hex string sig with its first byte's bits
// inverted: always a change (replacing it by "00" is none for a signature
// that starts with 00, one key in 256).
func flipFirstByte(sig string) string {
	b, err := hex.DecodeString(sig[:2])
	if err != nil {
		panic(err)
	}
	return hex.EncodeToString([]byte{^b[0]}) + sig[2:]
}
