package main

import (
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"unlearn/serve"
	"unlearn/sign"
	"unlearn/store"
)

// TestWritersRefusedWhileServed: while a service owns a store, the
// commands that write (ingest, forget, release, a second serve) are refused
// naming it and saying where to send the request, with nothing written;
// the read-only ones (status, releases, export) and token commands work.
func TestWritersRefusedWhileServed(t *testing.T) {
	root := t.TempDir()
	dir := filepath.Join(root, "model")
	_, err := runCLI(t, "init", "--store", dir, "--kind", "logistic", "--d", "2")
	require.NoError(t, err)
	data := filepath.Join(root, "s.jsonl")
	require.NoError(t, os.WriteFile(data, []byte(`{"format":"olbfgs-stream/v1","kind":"logistic","d":2,"lambda":0.05}
{"op":"insert","id":1,"x":[0.5,1],"y":1}
{"op":"insert","id":2,"x":[-0.5,1],"y":-1}
`), 0o600))
	_, err = runCLI(t, "ingest", "--store", dir, data)
	require.NoError(t, err)
	_, err = runCLI(t, "keygen", "--out", filepath.Join(root, "certifier"))
	require.NoError(t, err)
	key, err := sign.LoadSecret(filepath.Join(root, "certifier.key"))
	require.NoError(t, err)

	st, err := store.Open(dir)
	require.NoError(t, err)
	srv, err := serve.New(st, serve.Options{Key: key, Addr: "127.0.0.1:8099", Log: slog.New(slog.NewTextHandler(io.Discard, nil))})
	require.NoError(t, err)
	defer func() { _ = srv.Close(t.Context()); _ = st.Close() }()
	before, err := os.ReadFile(filepath.Join(dir, store.FileName))
	require.NoError(t, err)

	owner := fmt.Sprintf("process id %d listening on 127.0.0.1:8099", os.Getpid())
	for _, args := range [][]string{
		{"ingest", "--store", dir, data},
		{"forget", "--store", dir, "--ids", "1"},
		{"forget", "--store", dir, "--resolve"},
		{"release", "--store", dir, "--out", filepath.Join(root, "r.json"), "--certificate", filepath.Join(root, "c.json"), "--epsilon", "1", "--delta", "1e-5"},
		{"serve", "--store", dir, "--addr", "127.0.0.1:0", "--key", filepath.Join(root, "certifier.key"), "--forget-within", time.Minute.String()},
	} {
		_, err := runCLI(t, args...)
		require.Error(t, err, args[0])
		require.ErrorIs(t, err, store.ErrOwned, strings.Join(args, " "))
		require.Contains(t, err.Error(), owner, args[0])
		require.Contains(t, err.Error(), "send the request to the service", args[0])
	}
	after, err := os.ReadFile(filepath.Join(dir, store.FileName))
	require.NoError(t, err)
	require.Equal(t, before, after, "nothing was written")

	out, err := runCLI(t, "status", "--store", dir)
	require.NoError(t, err)
	require.Contains(t, out, "2")
	_, err = runCLI(t, "releases", "--store", dir)
	require.NoError(t, err)
	_, err = runCLI(t, "export", "--store", dir, "--out", filepath.Join(root, "export.jsonl"))
	require.NoError(t, err)
	_, _, err = runCLISplit(t, "token", "create", "--store", dir, "--scopes", "read")
	require.NoError(t, err)
}
