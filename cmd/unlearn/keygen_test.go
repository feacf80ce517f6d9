package main

import (
	"encoding/base64"
	"encoding/json"
	"io/fs"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"unlearn/sign"
)

func TestKeygen(t *testing.T) {
	name := filepath.Join(t.TempDir(), "certifier")
	out, err := runCLI(t, "keygen", "--out", name)
	require.NoError(t, err, out)
	key, err := sign.LoadSecret(name + ".key")
	require.NoError(t, err)
	pub, err := sign.LoadPublic(name + ".pub")
	require.NoError(t, err)
	require.True(t, key.Public().Equal(pub))
	st, err := os.Stat(name + ".key")
	require.NoError(t, err)
	require.Equal(t, fs.FileMode(0o600), st.Mode().Perm())

	require.Contains(t, out, key.KeyID())
	require.Contains(t, out, name+".key")
	require.Contains(t, out, name+".pub")
	// The secret is never printed.
	var f map[string]string
	require.NoError(t, json.Unmarshal(mustRead(t, name+".key"), &f))
	for _, field := range []string{"ed25519_seed", "commit_secret"} {
		raw, err := base64.StdEncoding.DecodeString(f[field])
		require.NoError(t, err)
		require.Len(t, raw, 32)
		require.NotContains(t, out, f[field])
	}

	// Never overwritten without --force.
	before := mustRead(t, name+".key")
	out, err = runCLI(t, "keygen", "--out", name)
	require.ErrorContains(t, err, "--out")
	require.ErrorContains(t, err, name+".key")
	require.ErrorContains(t, err, "--force")
	require.Equal(t, before, mustRead(t, name+".key"), out)
	_, err = runCLI(t, "keygen", "--out", name, "--force")
	require.NoError(t, err)
	again, err := sign.LoadSecret(name + ".key")
	require.NoError(t, err)
	require.NotEqual(t, key.KeyID(), again.KeyID())
}

func TestKeygenFlagErrors(t *testing.T) {
	dir := t.TempDir()
	for _, tt := range []struct {
		name string
		args []string
	}{
		{"no out", []string{"keygen"}},
		{"out with suffix", []string{"keygen", "--out", filepath.Join(dir, "c.key")}},
		{"out with pub suffix", []string{"keygen", "--out", filepath.Join(dir, "c.pub")}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, err := runCLI(t, tt.args...)
			require.ErrorContains(t, err, "--out")
			var ue usageError
			require.ErrorAs(t, err, &ue)
		})
	}
	ents, err := os.ReadDir(dir)
	require.NoError(t, err)
	require.Empty(t, ents)
}
