package ledger

import (
	"bytes"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"

	"unlearn/internal/strictjson"
	"unlearn/sign"
)

// Format is the format tag of a ledger, recorded in its genesis entry.
const Format = "unlearn-ledger/v1"

// Record types: the "type" field of a line.
const (
	typeGenesis = "genesis"
	typeCharge  = "charge"
	typeSeal    = "seal"
)

// record is one line of a ledger file. Its canonical encoding is
// json.Marshal of it (fields in declaration order, shortest round-trip
// floats); the signature Sig is over the canonical encoding with Sig
// empty; the line's hash is SHA-256 of its canonical encoding with Sig
// filled in.
//
// A genesis record (seq 0, prev "") carries Genesis; a charge record
// (seq 1, 2, …) carries Charge and Totals; the seal, always the last line,
// has Seq = the number of entries and Prev = the hash of the last one.
type record struct {
	Type    string       `json:"type"`
	Seq     int          `json:"seq"`
	Prev    string       `json:"prev"`
	Genesis *genesisJSON `json:"genesis,omitempty"`
	Charge  *chargeJSON  `json:"charge,omitempty"`
	Totals  *totalsJSON  `json:"totals,omitempty"`
	Sig     string       `json:"sig"`
}

type genesisJSON struct {
	Format  string  `json:"format"`
	Epsilon float64 `json:"epsilon"`
	Delta   float64 `json:"delta"`
	KeyID   string  `json:"key_id"`
}

type chargeJSON struct {
	Label       string  `json:"label"`
	Certificate string  `json:"certificate"`
	Alpha       float64 `json:"alpha"`
	Sigma       float64 `json:"sigma"`
	Beta        float64 `json:"beta"`
}

type totalsJSON struct {
	Releases int     `json:"releases"`
	Epsilon  float64 `json:"epsilon"`
	Beta     float64 `json:"beta"`
}

var b64 = base64.StdEncoding

// canonical returns the canonical encoding of r.
func canonical(r *record) ([]byte, error) {
	b, err := json.Marshal(r)
	if err != nil { // a non-finite float
		return nil, fmt.Errorf("%w: %w", ErrCharge, err)
	}
	return b, nil
}

// signedBytes returns what r's signature covers: its canonical encoding
// with Sig empty.
func signedBytes(r *record) ([]byte, error) {
	cp := *r
	cp.Sig = ""
	return canonical(&cp)
}

// signRecord fills in r.Sig and returns r's line (without newline).
func signRecord(r *record, key *sign.Secret) ([]byte, error) {
	msg, err := signedBytes(r)
	if err != nil {
		return nil, err
	}
	r.Sig = b64.EncodeToString(key.Sign(msg))
	return canonical(r)
}

// hashLine is the hash of a line: hex SHA-256 of its bytes.
func hashLine(line []byte) string {
	sum := sha256.Sum256(line)
	return hex.EncodeToString(sum[:])
}

// decodeLine parses one line strictly and checks it is canonical.
func decodeLine(line []byte) (*record, string, error) {
	if len(bytes.TrimSpace(line)) == 0 {
		return nil, "", fmt.Errorf("%w: empty line", ErrFormat)
	}
	var r record
	if err := strictjson.Decode(bytes.NewReader(line), &r); err != nil {
		return nil, "", fmt.Errorf("%w: %w", ErrFormat, err)
	}
	c, err := canonical(&r)
	if err != nil {
		return nil, "", err
	}
	if !bytes.Equal(c, line) {
		return &r, "", ErrNotCanonical
	}
	return &r, hashLine(line), nil
}

// verifyRecord checks r's signature under pub.
func verifyRecord(r *record, pub sign.Public) error {
	sig, err := b64.Strict().DecodeString(r.Sig)
	if err != nil {
		return fmt.Errorf("%w: bad base64: %w", ErrSignature, err)
	}
	msg, err := signedBytes(r)
	if err != nil {
		return err
	}
	if err := pub.Verify(msg, sig); err != nil {
		return fmt.Errorf("%w (edited, or signed by another key): %w", ErrSignature, err)
	}
	return nil
}
