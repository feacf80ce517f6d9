package serve

import (
	"encoding/hex"
	"encoding/json"
	"flag"
	"net/http"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"unlearn/certify"
	"unlearn/sign"
)

var update = flag.Bool("update", false, "rewrite the Python client's golden receipt (python/tests/data)")

const goldenDir = "../python/tests/data"

// goldenRequest is python/tests/data/request.json: what the requester kept.
type goldenRequest struct {
	Request string   `json:"request"`
	Nonce   string   `json:"nonce"`
	IDs     []int64  `json:"ids"`
	Keys    []string `json:"keys"`
}

// TestPythonGoldenReceipt: the receipt the Python client's tests verify
// (python/tests/data) is a receipt of this service, signed by the key
// beside it, committed to the request beside it. With -update it is made
// again by a real service.
func TestPythonGoldenReceipt(t *testing.T) {
	if *update {
		f := newFixture(t, fixtureOptions{opt: Options{ForgetWithin: time.Hour}})
		x, y := rows(12, 6, 3)
		f.ingest(x, y, seq(1, 6))
		res := f.do("POST", "/v1/events", f.tokens["ingest"], map[string]any{"rows": x[:2], "labels": y[:2], "ids": []int64{7, 8}, "keys": []string{"ana@example.org", "bo@example.org"}})
		require.Equal(t, http.StatusOK, res.status, "%s", res.body)
		req := goldenRequest{Nonce: hex.EncodeToString([]byte("a golden nonce, not a secret one")[:32]), IDs: []int64{2, 5}, Keys: []string{"bo@example.org"}}
		res = f.do("POST", "/v1/forget", f.tokens["forget"], map[string]any{"ids": req.IDs, "keys": req.Keys, "nonce": req.Nonce, "wait": true})
		require.Equal(t, http.StatusAccepted, res.status, "%s", res.body)
		var st forgetState
		res.json(t, &st)
		req.Request = st.Request
		st = f.waitServed(st.Request)
		require.NoError(t, os.WriteFile(filepath.Join(goldenDir, "receipt.json"), append(st.Receipt, '\n'), 0o644))
		require.NoError(t, os.WriteFile(filepath.Join(goldenDir, "certifier.pub"), f.key.Public().MarshalPublic(), 0o644))
		b, _ := json.MarshalIndent(req, "", "  ")
		require.NoError(t, os.WriteFile(filepath.Join(goldenDir, "request.json"), append(b, '\n'), 0o644))
	}
	receipt, err := os.ReadFile(filepath.Join(goldenDir, "receipt.json"))
	require.NoError(t, err)
	pub, err := sign.LoadPublic(filepath.Join(goldenDir, "certifier.pub"))
	require.NoError(t, err)
	var req goldenRequest
	b, err := os.ReadFile(filepath.Join(goldenDir, "request.json"))
	require.NoError(t, err)
	require.NoError(t, json.Unmarshal(b, &req))
	rc, err := certify.VerifyReceipt(receipt, pub)
	require.NoError(t, err)
	nonce, err := hex.DecodeString(req.Nonce)
	require.NoError(t, err)
	require.Equal(t, certify.ForgetCommitment(nonce, req.IDs, req.Keys), rc.Commitment)
	require.Equal(t, req.Request, rc.Request)
	require.Equal(t, 3, rc.Records)
}
