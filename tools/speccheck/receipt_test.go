package speccheck

import (
	"bytes"
	"crypto/rand"
	"encoding/json"
	"fmt"
	"time"

	"unlearn/certify"
	"unlearn/internal/strictjson"
)

// addReceipts signs deletion receipts (unlearn-receipt/v1) with o.key, one
// per serving path, as the service writes them (certify.SignReceipt), and
// keeps each envelope and its payload.
func addReceipts(o *outputs) error {
	o.receipts, o.receiptPayloads = map[string][]byte{}, map[string][]byte{}
	received := time.Date(2026, 3, 1, 12, 0, 0, 123456000, time.UTC)
	nonce := make([]byte, 32)
	if _, err := rand.Read(nonce); err != nil {
		return err
	}
	for _, r := range []certify.Receipt{
		{Path: "exact", Records: 2, ErasedReleases: []int64{3, 7}, Head: 120,
			Batch: certify.ReceiptBatch{StoreRequest: 4, Requests: 2, Records: 3}},
		{Path: "approximate", Records: 1, ErasedReleases: []int64{}, Head: 88, NeedsNoise: true,
			Pending: "the exact replay of store request 5",
			Batch:   certify.ReceiptBatch{StoreRequest: 5, Requests: 1, Records: 1}},
		{Path: "none", Records: 1, AlreadyForgotten: 1, ErasedReleases: []int64{}, Head: 88,
			Batch: certify.ReceiptBatch{Requests: 1, Records: 1}},
	} {
		r.Toolkit, r.Request = "speccheck", "0123456789abcdef0123456789abcdef"
		r.Received = certify.ReceiptTime(received)
		r.Deadline = certify.ReceiptTime(received.Add(72 * time.Hour))
		r.Served = certify.ReceiptTime(received.Add(90 * time.Second))
		r.Commitment = certify.ForgetCommitment(nonce, []int64{11, 12}, []string{"a@example.org"})
		env, err := certify.SignReceipt(&r, o.key)
		if err != nil {
			return fmt.Errorf("receipt %s: %w", r.Path, err)
		}
		o.receipts[r.Path] = env
		var e struct {
			Payload string `json:"payload"`
		}
		if err := json.Unmarshal(env, &e); err != nil {
			return err
		}
		o.receiptPayloads[r.Path] = []byte(e.Payload)
	}
	return nil
}

// receiptFormats are the two schemas of a receipt: the signed envelope and
// the receipt its payload carries.
func receiptFormats() []format {
	return []format{
		{
			name: "receipt", schema: "unlearn-receipt-v1.schema.json",
			docs: func(o *outputs) map[string][]byte { return o.receipts },
			read: func(o *outputs, doc []byte) error {
				_, err := certify.VerifyReceipt(doc, o.publicKey)
				return err
			},
			broken: []breakage{
				{"format v2", "exact", editDoc(set("format", "unlearn-receipt/v2")), true},
				{"an unknown field", "exact", editDoc(set("ids", []any{11})), true},
				{"no signature", "exact", editDoc(del("signature")), true},
				{"a short key id", "exact", editDoc(set("key_id", "abc")), true},
				{"an upper-case signature", "exact", editDoc(set("signature", string(bytes.Repeat([]byte("A"), 128)))), true},
			},
		},
		{
			name: "receipt payload", schema: "unlearn-receipt-v1.schema.json#/$defs/receipt",
			docs: func(o *outputs) map[string][]byte { return o.receiptPayloads },
			// The reader is the signer's own check: a payload it refuses
			// to sign is one no verifier accepts.
			read: func(o *outputs, doc []byte) error {
				var r certify.Receipt
				if err := strictjson.Decode(bytes.NewReader(doc), &r); err != nil {
					return err
				}
				if r.Format != certify.ReceiptFormat {
					return fmt.Errorf("format %q", r.Format)
				}
				_, err := certify.SignReceipt(&r, o.key)
				return err
			},
			broken: []breakage{
				{"a path of its own", "exact", editDoc(set("path", "partial")), true},
				{"no records", "exact", editDoc(set("records", 0)), true},
				{"a record id", "exact", editDoc(set("ids", []any{11})), true},
				{"a time without microseconds", "exact", editDoc(set("served", "2026-03-01T12:01:30Z")), true},
				{"a short commitment", "exact", editDoc(set("commitment", "00ff")), true},
				{"no erased releases", "approximate", editDoc(del("erased_releases")), true},
				{"a negative head", "none", editDoc(set("head", -1)), true},
				{"a release id 0", "exact", editDoc(set("erased_releases/0", 0)), false},
			},
		},
	}
}
