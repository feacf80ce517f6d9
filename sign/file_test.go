package sign

import (
	"bytes"
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

func writeKeys(t *testing.T, s *Secret) (dir, keyPath, pubPath string) {
	t.Helper()
	dir = t.TempDir()
	keyPath, pubPath, err := s.WriteFiles(filepath.Join(dir, "certifier"), false)
	require.NoError(t, err)
	require.Equal(t, filepath.Join(dir, "certifier.key"), keyPath)
	require.Equal(t, filepath.Join(dir, "certifier.pub"), pubPath)
	return dir, keyPath, pubPath
}

func TestWriteAndLoadFiles(t *testing.T) {
	s := seeded(t, 20)
	dir, keyPath, pubPath := writeKeys(t, s)

	if runtime.GOOS != "windows" {
		st, err := os.Stat(keyPath)
		require.NoError(t, err)
		require.Equal(t, fs.FileMode(0o600), st.Mode().Perm(), "secret key file mode")
		st, err = os.Stat(pubPath)
		require.NoError(t, err)
		require.Equal(t, fs.FileMode(0o644), st.Mode().Perm(), "public key file mode")
	}
	ents, err := os.ReadDir(dir)
	require.NoError(t, err)
	require.Len(t, ents, 2, "no temporary files left")

	got, err := LoadSecret(keyPath)
	require.NoError(t, err)
	require.True(t, got.Public().Equal(s.Public()))
	msg := []byte("m")
	require.Equal(t, s.Sign(msg), got.Sign(msg))
	require.Equal(t, s.Commit("d", msg), got.Commit("d", msg), "the commitment secret survives the file")

	pub, err := LoadPublic(pubPath)
	require.NoError(t, err)
	require.True(t, pub.Equal(s.Public()))
	require.NoError(t, pub.Verify(msg, got.Sign(msg)))

	// The public file holds no secret.
	pubData, err := os.ReadFile(pubPath)
	require.NoError(t, err)
	require.NotContains(t, string(pubData), b64.EncodeToString(s.priv.Seed()))
	require.NotContains(t, string(pubData), b64.EncodeToString(s.commit[:]))
}

func TestWriteFilesNeverOverwritesUnlessForced(t *testing.T) {
	s, other := seeded(t, 21), seeded(t, 22)
	_, keyPath, pubPath := writeKeys(t, s)
	name := strings.TrimSuffix(keyPath, SecretSuffix)
	before := map[string][]byte{}
	for _, p := range []string{keyPath, pubPath} {
		b, err := os.ReadFile(p)
		require.NoError(t, err)
		before[p] = b
	}
	_, _, err := other.WriteFiles(name, false)
	require.ErrorIs(t, err, ErrExists)
	var fe *FileError
	require.ErrorAs(t, err, &fe)
	require.Equal(t, keyPath, fe.Path)
	for p, b := range before {
		got, err := os.ReadFile(p)
		require.NoError(t, err)
		require.Equal(t, b, got, "%s changed", p)
	}

	// Only the .pub exists: still refused, and no .key is created.
	require.NoError(t, os.Remove(keyPath))
	_, _, err = other.WriteFiles(name, false)
	require.ErrorIs(t, err, ErrExists)
	require.NoFileExists(t, keyPath)

	_, _, err = other.WriteFiles(name, true)
	require.NoError(t, err)
	got, err := LoadSecret(keyPath)
	require.NoError(t, err)
	require.True(t, got.Public().Equal(other.Public()))
}

func TestLoadSecretPermissions(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("no Unix permissions")
	}
	s := seeded(t, 23)
	_, keyPath, _ := writeKeys(t, s)
	for _, mode := range []fs.FileMode{0o640, 0o604, 0o660, 0o666, 0o620} {
		require.NoError(t, os.Chmod(keyPath, mode))
		got, err := LoadSecret(keyPath)
		require.ErrorIs(t, err, ErrPermissions, "mode %04o", mode)
		var pe *PermissionError
		require.ErrorAs(t, err, &pe)
		require.Equal(t, keyPath, pe.Path)
		require.Equal(t, mode, pe.Mode.Perm())
		require.Contains(t, err.Error(), keyPath)
		require.NotNil(t, got, "the key comes with the warning")
		require.True(t, got.Public().Equal(s.Public()))
	}
	require.NoError(t, os.Chmod(keyPath, 0o400))
	_, err := LoadSecret(keyPath)
	require.NoError(t, err, "owner read-only is fine")
}

// field rewrites one JSON field of a key file.
func field(t *testing.T, data []byte, name string, value any) []byte {
	t.Helper()
	var m map[string]any
	require.NoError(t, json.Unmarshal(data, &m))
	if value == nil {
		delete(m, name)
	} else {
		m[name] = value
	}
	b, err := json.Marshal(m)
	require.NoError(t, err)
	return b
}

func TestParseSecretRefuses(t *testing.T) {
	s, other := seeded(t, 24), seeded(t, 25)
	good := s.MarshalSecret()
	const path = "dir/certifier.key"
	tests := []struct {
		name      string
		data      []byte
		wantErr   error
		wantField string
	}{
		{"empty", nil, ErrFormat, ""},
		{"not JSON", []byte("-----BEGIN PRIVATE KEY-----"), ErrFormat, ""},
		{"JSON but not an object", []byte(`[1]`), ErrFormat, ""},
		{"trailing data", append(bytes.Clone(good), "{}"...), ErrFormat, ""},
		{"unknown field", field(t, good, "comment", "x"), ErrFormat, ""},
		{"other format", field(t, good, "format", "unlearn-secret-key/v2"), ErrFormat, "format"},
		{"a public key file", other.Public().MarshalPublic(), ErrFormat, "format"},
		{"no format", field(t, good, "format", nil), ErrFormat, "format"},
		{"no seed", field(t, good, "ed25519_seed", nil), ErrKeySize, "ed25519_seed"},
		{"bad base64 seed", field(t, good, "ed25519_seed", "!!!"), ErrFormat, "ed25519_seed"},
		{"short seed", field(t, good, "ed25519_seed", b64.EncodeToString(make([]byte, 31))), ErrKeySize, "ed25519_seed"},
		{"long commitment secret", field(t, good, "commit_secret", b64.EncodeToString(make([]byte, 33))), ErrKeySize, "commit_secret"},
		{"short public key", field(t, good, "public_key", b64.EncodeToString(make([]byte, 16))), ErrKeySize, "public_key"},
		{"another public key", field(t, good, "public_key", b64.EncodeToString(other.Public().Bytes())), ErrMismatch, "public_key"},
		{"another seed", field(t, good, "ed25519_seed", b64.EncodeToString(other.priv.Seed())), ErrMismatch, "public_key"},
		{"another key id", field(t, good, "key_id", other.KeyID()), ErrMismatch, "key_id"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ParseSecret(path, tt.data)
			require.Nil(t, got)
			require.ErrorIs(t, err, tt.wantErr)
			var fe *FileError
			require.ErrorAs(t, err, &fe)
			require.Equal(t, path, fe.Path)
			require.Equal(t, tt.wantField, fe.Field)
			require.Contains(t, err.Error(), path)
		})
	}
}

func TestParsePublicRefuses(t *testing.T) {
	s, other := seeded(t, 26), seeded(t, 27)
	good := s.Public().MarshalPublic()
	const path = "certifier.pub"
	tests := []struct {
		name      string
		data      []byte
		wantErr   error
		wantField string
	}{
		{"empty", nil, ErrFormat, ""},
		{"a secret key file", s.MarshalSecret(), ErrFormat, "format"},
		{"other format", field(t, good, "format", SecretFormat), ErrFormat, "format"},
		{"short key", field(t, good, "public_key", b64.EncodeToString(make([]byte, 31))), ErrKeySize, "public_key"},
		{"another key id", field(t, good, "key_id", other.KeyID()), ErrMismatch, "key_id"},
		{"another key", field(t, good, "public_key", b64.EncodeToString(other.Public().Bytes())), ErrMismatch, "key_id"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ParsePublic(path, tt.data)
			require.True(t, got.IsZero())
			require.ErrorIs(t, err, tt.wantErr)
			var fe *FileError
			require.ErrorAs(t, err, &fe)
			require.Equal(t, path, fe.Path)
			require.Equal(t, tt.wantField, fe.Field)
		})
	}
}

func TestTruncatedKeyFilesAreRefused(t *testing.T) {
	s := seeded(t, 28)
	_, keyPath, pubPath := writeKeys(t, s)
	for _, p := range []string{keyPath, pubPath} {
		full, err := os.ReadFile(p)
		require.NoError(t, err)
		for n := range len(full) - 1 { // the last byte is the final newline
			require.NoError(t, os.WriteFile(p, full[:n], 0o600))
			var err error
			if p == keyPath {
				_, err = LoadSecret(p)
			} else {
				_, err = LoadPublic(p)
			}
			require.Error(t, err, "%s truncated to %d bytes", p, n)
			require.False(t, errors.Is(err, ErrPermissions))
			require.Contains(t, err.Error(), p)
		}
	}
}

func TestLoadMissingFile(t *testing.T) {
	p := filepath.Join(t.TempDir(), "nope.key")
	_, err := LoadSecret(p)
	require.ErrorIs(t, err, fs.ErrNotExist)
	var fe *FileError
	require.ErrorAs(t, err, &fe)
	require.Equal(t, p, fe.Path)
	_, err = LoadPublic(p)
	require.ErrorIs(t, err, fs.ErrNotExist)
}

func TestLoadRefusesHugeFile(t *testing.T) {
	p := filepath.Join(t.TempDir(), "big.pub")
	require.NoError(t, os.WriteFile(p, bytes.Repeat([]byte(" "), maxKeyFile+1), 0o600))
	_, err := LoadPublic(p)
	require.ErrorIs(t, err, ErrFormat)
}
