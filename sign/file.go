package sign

import (
	"bytes"
	"crypto/ed25519"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"

	"unlearn/internal/atomicfile"
	"unlearn/internal/strictjson"
)

// Format tags of the key files.
const (
	// SecretFormat tags a secret key file (NAME.key).
	SecretFormat = "unlearn-secret-key/v1"
	// PublicFormat tags a public key file (NAME.pub).
	PublicFormat = "unlearn-public-key/v1"
)

// File name suffixes written by [Secret.WriteFiles].
const (
	SecretSuffix = ".key"
	PublicSuffix = ".pub"
)

// secretFile is the JSON form of a secret key file. Seed is the Ed25519
// private key seed (RFC 8032 §5.1.5); the public key and key id are
// stored for a reader and checked on loading.
type secretFile struct {
	Format       string `json:"format"`
	KeyID        string `json:"key_id"`
	PublicKey    string `json:"public_key"`
	Seed         string `json:"ed25519_seed"`
	CommitSecret string `json:"commit_secret"`
}

// publicFile is the JSON form of a public key file.
type publicFile struct {
	Format    string `json:"format"`
	KeyID     string `json:"key_id"`
	PublicKey string `json:"public_key"`
}

var b64 = base64.StdEncoding

// MarshalSecret returns the secret key file's content (indented JSON with
// a final newline). It holds the secret: write it only to a file of mode
// 0600, as [Secret.WriteFiles] does.
func (s *Secret) MarshalSecret() []byte {
	s.check()
	p := s.Public()
	return marshalIndent(secretFile{
		Format:       SecretFormat,
		KeyID:        p.KeyID(),
		PublicKey:    b64.EncodeToString(p.key),
		Seed:         b64.EncodeToString(s.priv.Seed()),
		CommitSecret: b64.EncodeToString(s.commit[:]),
	})
}

// MarshalPublic returns the public key file's content (indented JSON with
// a final newline).
func (p Public) MarshalPublic() []byte {
	p.check()
	return marshalIndent(publicFile{Format: PublicFormat, KeyID: p.KeyID(), PublicKey: b64.EncodeToString(p.key)})
}

func marshalIndent(v any) []byte {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		panic("sign: " + err.Error()) // string fields always marshal
	}
	return append(b, '\n')
}

// ParseSecret decodes a secret key file's content; path names it in
// errors. It checks the format tag, the sizes of the seed and the
// commitment secret, and that the stored public key and key id are those
// of the seed. Errors: *FileError wrapping ErrFormat, ErrKeySize or
// ErrMismatch.
func ParseSecret(path string, data []byte) (*Secret, error) {
	if err := checkFormat(path, data, SecretFormat); err != nil {
		return nil, err
	}
	var f secretFile
	if err := strictjson.Decode(bytes.NewReader(data), &f); err != nil {
		return nil, &FileError{Path: path, Err: fmt.Errorf("%w: %w", ErrFormat, err)}
	}
	seed, err := decodeField(path, "ed25519_seed", f.Seed, SeedSize)
	if err != nil {
		return nil, err
	}
	commit, err := decodeField(path, "commit_secret", f.CommitSecret, CommitSecretSize)
	if err != nil {
		return nil, err
	}
	pub, err := decodeField(path, "public_key", f.PublicKey, PublicKeySize)
	if err != nil {
		return nil, err
	}
	s := &Secret{priv: ed25519.NewKeyFromSeed(seed)}
	copy(s.commit[:], commit)
	p := s.Public()
	if !bytes.Equal(pub, p.key) {
		return nil, &FileError{Path: path, Field: "public_key", Err: fmt.Errorf("%w: it is not the public key of ed25519_seed", ErrMismatch)}
	}
	if f.KeyID != p.KeyID() {
		return nil, &FileError{Path: path, Field: "key_id", Err: fmt.Errorf("%w: %q, the public key's id is %s", ErrMismatch, f.KeyID, p.KeyID())}
	}
	return s, nil
}

// ParsePublic decodes a public key file's content; path names it in
// errors. It checks the format tag, the key size and that the key id is
// that of the key. Errors: *FileError wrapping ErrFormat, ErrKeySize or
// ErrMismatch.
func ParsePublic(path string, data []byte) (Public, error) {
	if err := checkFormat(path, data, PublicFormat); err != nil {
		return Public{}, err
	}
	var f publicFile
	if err := strictjson.Decode(bytes.NewReader(data), &f); err != nil {
		return Public{}, &FileError{Path: path, Err: fmt.Errorf("%w: %w", ErrFormat, err)}
	}
	key, err := decodeField(path, "public_key", f.PublicKey, PublicKeySize)
	if err != nil {
		return Public{}, err
	}
	p := Public{key: key}
	if f.KeyID != p.KeyID() {
		return Public{}, &FileError{Path: path, Field: "key_id", Err: fmt.Errorf("%w: %q, the public key's id is %s", ErrMismatch, f.KeyID, p.KeyID())}
	}
	return p, nil
}

// checkFormat reads the format tag alone first, so that a file of another
// kind (a public key given as the secret) is named as such.
func checkFormat(path string, data []byte, want string) error {
	var tag struct {
		Format *string `json:"format"`
	}
	if err := json.Unmarshal(data, &tag); err != nil {
		return &FileError{Path: path, Err: fmt.Errorf("%w: %w", ErrFormat, err)}
	}
	if tag.Format == nil {
		return &FileError{Path: path, Field: "format", Err: fmt.Errorf("%w: missing, want %q", ErrFormat, want)}
	}
	if *tag.Format != want {
		return formatErr(path, *tag.Format, want)
	}
	return nil
}

func formatErr(path, got, want string) error {
	hint := ""
	switch got {
	case SecretFormat:
		hint = " (this is a secret key file)"
	case PublicFormat:
		hint = " (this is a public key file)"
	}
	return &FileError{Path: path, Field: "format", Err: fmt.Errorf("%w: %q, want %q%s", ErrFormat, got, want, hint)}
}

func decodeField(path, field, s string, size int) ([]byte, error) {
	b, err := b64.Strict().DecodeString(s)
	if err != nil {
		return nil, &FileError{Path: path, Field: field, Err: fmt.Errorf("%w: bad base64: %w", ErrFormat, err)}
	}
	if len(b) != size {
		return nil, &FileError{Path: path, Field: field, Err: fmt.Errorf("%w: %d bytes, want %d", ErrKeySize, len(b), size)}
	}
	return b, nil
}

// LoadSecret reads a secret key file (see [ParseSecret]). If the file is
// readable or writable by group or others, LoadSecret still parses it and,
// when it is otherwise valid, returns the key TOGETHER WITH a
// *PermissionError (wrapping ErrPermissions): a caller that treats every
// error as fatal refuses such a file, and one that accepts it (errors.As,
// then use the key) should warn. Every other error comes with a nil key:
// a *FileError, wrapping the *fs.PathError of a file that cannot be read.
// The mode check applies where the file system has Unix permissions.
func LoadSecret(path string) (*Secret, error) {
	data, mode, err := readFile(path)
	if err != nil {
		return nil, err
	}
	s, err := ParseSecret(path, data)
	if err != nil {
		return nil, err
	}
	if mode.Perm()&0o077 != 0 {
		return s, &PermissionError{Path: path, Mode: mode}
	}
	return s, nil
}

// LoadPublic reads a public key file (see [ParsePublic]). A file that
// cannot be read is a *FileError wrapping the *fs.PathError.
func LoadPublic(path string) (Public, error) {
	data, _, err := readFile(path)
	if err != nil {
		return Public{}, err
	}
	return ParsePublic(path, data)
}

// maxKeyFile bounds what is read of a key file: a valid one is < 1 KiB.
const maxKeyFile = 64 << 10

func readFile(path string) ([]byte, fs.FileMode, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, 0, &FileError{Path: path, Err: err}
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, 0, &FileError{Path: path, Err: err}
	}
	data, err := io.ReadAll(io.LimitReader(f, maxKeyFile+1))
	if err != nil {
		return nil, 0, &FileError{Path: path, Err: err}
	}
	if len(data) > maxKeyFile {
		return nil, 0, &FileError{Path: path, Err: fmt.Errorf("%w: larger than %d bytes", ErrFormat, maxKeyFile)}
	}
	return data, st.Mode(), nil
}

// WriteFiles writes name+".key" (the secret, mode 0600) and name+".pub"
// (the public key, mode 0644) and returns their paths. Each is written
// atomically (a temporary file renamed into place). Unless force is true,
// it refuses, writing nothing, when either file exists (*FileError
// wrapping ErrExists). The check and the write are not one atomic step:
// two processes writing the same name at once may both succeed, the last
// one's files staying.
func (s *Secret) WriteFiles(name string, force bool) (keyPath, pubPath string, err error) {
	s.check()
	keyPath, pubPath = name+SecretSuffix, name+PublicSuffix
	if !force {
		for _, p := range []string{keyPath, pubPath} {
			if _, err := os.Lstat(p); err == nil {
				return "", "", &FileError{Path: p, Err: fmt.Errorf("%w (overwrite it with force)", ErrExists)}
			} else if !errors.Is(err, fs.ErrNotExist) {
				return "", "", &FileError{Path: p, Err: err}
			}
		}
	}
	write := func(path string, perm fs.FileMode, data []byte) error {
		err := atomicfile.WriteFile(path, perm, func(w io.Writer) error {
			_, err := w.Write(data)
			return err
		})
		if err != nil {
			return &FileError{Path: path, Err: err}
		}
		return nil
	}
	if err := write(keyPath, 0o600, s.MarshalSecret()); err != nil {
		return "", "", err
	}
	if err := write(pubPath, 0o644, s.Public().MarshalPublic()); err != nil {
		if !force {
			_ = os.Remove(keyPath) // it did not exist before: leave nothing half-written
		}
		return "", "", err
	}
	return keyPath, pubPath, nil
}
