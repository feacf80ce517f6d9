package main

import (
	"bytes"
	"encoding/hex"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"unlearn/certify"
	"unlearn/sign"
	"unlearn/store"
)

// runCLISplit runs the command with standard output and error apart.
func runCLISplit(t *testing.T, args ...string) (stdout, stderr string, err error) {
	t.Helper()
	root := newRootCmd()
	var out, errb bytes.Buffer
	root.SetOut(&out)
	root.SetErr(&errb)
	root.SetArgs(args)
	err = root.Execute()
	return out.String(), errb.String(), err
}

// TestToken: create prints the token alone on standard output (a script
// captures it), the store keeps only its hash, list never shows it, revoke
// records the revocation.
func TestToken(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "model")
	_, err := runCLI(t, "init", "--store", dir, "--kind", "logistic", "--d", "3")
	require.NoError(t, err)
	stdout, stderr, err := runCLISplit(t, "token", "create", "--store", dir, "--scopes", "ingest, read", "--name", "app")
	require.NoError(t, err, stderr)
	require.Regexp(t, regexp.MustCompile(`^unl_[A-Za-z0-9_-]{43}\n$`), stdout, "the token alone on standard output")
	require.Contains(t, stderr, `created token 1 ("app") with scopes ingest,read`)
	token := strings.TrimSpace(stdout)

	st, err := store.Open(dir)
	require.NoError(t, err)
	all, err := st.Tokens()
	require.NoError(t, err)
	require.NoError(t, st.Close())
	require.Len(t, all, 1)
	require.Equal(t, store.HashToken(token), all[0].Hash)
	db, err := os.ReadFile(filepath.Join(dir, store.FileName))
	require.NoError(t, err)
	require.NotContains(t, string(db), token[4:], "the token's text is not stored")

	out, err := runCLI(t, "token", "list", "--store", dir)
	require.NoError(t, err)
	require.Contains(t, out, "ingest,read")
	require.NotContains(t, out, token[4:])
	_, stderr, err = runCLISplit(t, "token", "revoke", "--store", dir, "1")
	require.NoError(t, err)
	require.Contains(t, stderr, "revoked token 1")
	out, err = runCLI(t, "token", "list", "--store", dir, "--json")
	require.NoError(t, err)
	require.Contains(t, out, `"revoked"`)

	_, err = runCLI(t, "token", "revoke", "--store", dir, "9")
	require.ErrorContains(t, err, "no token 9")
	_, err = runCLI(t, "token", "create", "--store", dir, "--scopes", "ingest,admin")
	require.ErrorContains(t, err, "--scopes")
	require.ErrorContains(t, err, `unknown scope "admin"`)
	stdout, _, err = runCLISplit(t, "token", "create", "--store", dir, "--scopes", "all")
	require.NoError(t, err)
	require.Regexp(t, `^unl_`, stdout)
}

// TestVerifyReceipt: a receipt checks with the certifier's public key, and
// with the request's nonce, ids and keys its commitment too; an edited
// receipt, another key or other records are refused.
func TestVerifyReceipt(t *testing.T) {
	tmp := t.TempDir()
	key, err := sign.Generate()
	require.NoError(t, err)
	_, pubPath, err := key.WriteFiles(filepath.Join(tmp, "certifier"), false)
	require.NoError(t, err)
	nonce := bytes.Repeat([]byte{9}, certify.NonceSize)
	at := time.Date(2026, 5, 1, 8, 0, 0, 0, time.UTC)
	r := &certify.Receipt{Toolkit: "unlearn test", Request: "00112233445566778899aabbccddeeff",
		Received: certify.ReceiptTime(at), Deadline: certify.ReceiptTime(at.Add(time.Hour)), Served: certify.ReceiptTime(at.Add(time.Minute)),
		Path: "exact", Records: 3, Commitment: certify.ForgetCommitment(nonce, []int64{4, 9}, []string{"ana@example.org"}),
		Batch: certify.ReceiptBatch{StoreRequest: 2, Requests: 1, Records: 3}, ErasedReleases: []int64{}, Head: 77}
	file, err := certify.SignReceipt(r, key)
	require.NoError(t, err)
	path := filepath.Join(tmp, "receipt.json")
	require.NoError(t, os.WriteFile(path, file, 0o644))

	out, err := runCLI(t, "verify", "--receipt", path, "--public-key", pubPath)
	require.NoError(t, err, out)
	require.Contains(t, out, "VALID: "+path)
	require.Contains(t, out, "records      3")
	out, err = runCLI(t, "verify", "--receipt", path, "--public-key", pubPath, "--nonce", hex.EncodeToString(nonce), "--ids", "9,4", "--keys", "ana@example.org")
	require.NoError(t, err, out)
	require.Contains(t, out, "covers exactly the 2 ids and 1 keys")

	_, err = runCLI(t, "verify", "--receipt", path, "--public-key", pubPath, "--nonce", hex.EncodeToString(nonce), "--ids", "4")
	require.ErrorContains(t, err, "INVALID receipt")
	other, err := sign.Generate()
	require.NoError(t, err)
	_, otherPub, err := other.WriteFiles(filepath.Join(tmp, "other"), false)
	require.NoError(t, err)
	_, err = runCLI(t, "verify", "--receipt", path, "--public-key", otherPub)
	require.ErrorContains(t, err, "key_id")
	edited := bytes.Replace(file, []byte(`\"records\":3`), []byte(`\"records\":2`), 1)
	require.NotEqual(t, file, edited)
	require.NoError(t, os.WriteFile(path, edited, 0o644))
	_, err = runCLI(t, "verify", "--receipt", path, "--public-key", pubPath)
	require.ErrorContains(t, err, "signature")
	_, err = runCLI(t, "verify", "--receipt", path)
	require.ErrorContains(t, err, "--public-key")
	_, err = runCLI(t, "verify", "--receipt", path, "--public-key", pubPath, "--ids", "4")
	require.ErrorContains(t, err, "--nonce")
}

// TestServeFlags: the command refuses a bad command line before it opens
// the store, naming the flag.
func TestServeFlags(t *testing.T) {
	for _, tc := range []struct {
		args []string
		flag string
	}{
		{[]string{"--store", "x", "--key", "k.key"}, "--addr"},
		{[]string{"--store", "x", "--addr", "127.0.0.1:0"}, "--key"},
		{[]string{"--store", "x", "--addr", "127.0.0.1:0", "--key", "k.key", "--tls-cert", "c.pem"}, "--tls-cert"},
		{[]string{"--store", "x", "--addr", "127.0.0.1:0", "--key", "k.key", "--max-replay", "10"}, "--intervention"},
		{[]string{"--store", "x", "--addr", "127.0.0.1:0", "--key", "k.key", "--max-replay", "10", "--intervention", "noop", "--delta", "1e-5"}, "--epsilon"},
		{[]string{"--store", "x", "--addr", "127.0.0.1:0", "--key", "k.key", "--max-replay", "10", "--intervention", "noop", "--epsilon", "1"}, "--delta"},
		{[]string{"--store", "x", "--addr", "127.0.0.1:0", "--key", "k.key", "--max-replay", "10", "--intervention", "noop", "--epsilon", "1", "--delta", "1e-5", "--memory", "exact"}, "--memory"},
		{[]string{"--store", "x", "--addr", "127.0.0.1:0", "--key", "k.key", "--epsilon", "1"}, "--epsilon"},
		{[]string{"--store", "x", "--addr", "127.0.0.1:0", "--key", "k.key", "--ages", "exact"}, "--ages"},
		{[]string{"--store", "x", "--addr", "127.0.0.1:0", "--key", "k.key", "--resolve-check", "0s"}, "--resolve-check"},
		{[]string{"--store", "x", "--addr", "127.0.0.1:0", "--key", "k.key", "--forget-within", "0s"}, "--forget-within"},
		{[]string{"--store", "x", "--addr", "127.0.0.1:0", "--key", "k.key", "--max-body", "10"}, "--max-body"},
		{[]string{"--store", "x", "--addr", "127.0.0.1:0", "--key", filepath.Join(t.TempDir(), "none.key")}, "--key"},
	} {
		_, err := runCLI(t, append([]string{"serve"}, tc.args...)...)
		require.ErrorContains(t, err, tc.flag, "%v", tc.args)
	}
}
