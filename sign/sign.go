package sign

import (
	"crypto/ed25519"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"io"
)

// Sizes of the key material, in bytes.
const (
	// PublicKeySize is the size of an Ed25519 public key.
	PublicKeySize = ed25519.PublicKeySize
	// SeedSize is the size of the Ed25519 private key seed (RFC 8032 §5.1.5).
	SeedSize = ed25519.SeedSize
	// SignatureSize is the size of an Ed25519 signature.
	SignatureSize = ed25519.SignatureSize
	// CommitSecretSize is the size of the commitment secret: the output
	// size of SHA-256, the HMAC key length RFC 2104 §3 recommends.
	CommitSecretSize = 32
)

// commitPrefix starts every committed message (see [Secret.Commit]).
const commitPrefix = "unlearn-commit/v1"

// Public is an Ed25519 public key. The zero value is no key; its methods
// panic.
type Public struct {
	key ed25519.PublicKey
}

// Secret is a certifier's secret: an Ed25519 private key and an
// independent 32-byte commitment secret. Create one with [Generate] or
// [LoadSecret]. A *Secret is safe for concurrent use; it is never printed
// by this package (its String method hides it).
type Secret struct {
	priv   ed25519.PrivateKey
	commit [CommitSecretSize]byte
}

// Generate returns a new secret: an Ed25519 key pair and a commitment
// secret, both from crypto/rand. The error is that of crypto/rand (which
// does not fail on supported platforms).
func Generate() (*Secret, error) {
	return generate(rand.Reader)
}

func generate(r io.Reader) (*Secret, error) {
	var seed [SeedSize]byte
	s := &Secret{}
	if _, err := io.ReadFull(r, seed[:]); err != nil {
		return nil, fmt.Errorf("sign: generate: %w", err)
	}
	if _, err := io.ReadFull(r, s.commit[:]); err != nil {
		return nil, fmt.Errorf("sign: generate: %w", err)
	}
	s.priv = ed25519.NewKeyFromSeed(seed[:])
	return s, nil
}

// NewPublic returns the public key with the given 32 bytes. Errors:
// ErrKeySize.
func NewPublic(key []byte) (Public, error) {
	if len(key) != PublicKeySize {
		return Public{}, fmt.Errorf("sign: public key of %d bytes: %w (want %d)", len(key), ErrKeySize, PublicKeySize)
	}
	return Public{key: append(ed25519.PublicKey(nil), key...)}, nil
}

func (s *Secret) check() {
	if s == nil || len(s.priv) != ed25519.PrivateKeySize {
		panic("sign: nil or zero Secret")
	}
}

func (p Public) check() {
	if len(p.key) != PublicKeySize {
		panic("sign: zero Public key")
	}
}

// Public returns the public key of s.
func (s *Secret) Public() Public {
	s.check()
	return Public{key: append(ed25519.PublicKey(nil), s.priv[SeedSize:]...)}
}

// KeyID returns the key id of s's public key (see [Public.KeyID]).
func (s *Secret) KeyID() string { return s.Public().KeyID() }

// String returns "sign.Secret(KEYID)": never the secret.
func (s *Secret) String() string {
	if s == nil || len(s.priv) != ed25519.PrivateKeySize {
		return "sign.Secret(<none>)"
	}
	return "sign.Secret(" + s.KeyID() + ")"
}

// Sign returns the Ed25519 signature (64 bytes) of msg. Sign msg's
// canonical encoding (see the package documentation).
func (s *Secret) Sign(msg []byte) []byte {
	s.check()
	return ed25519.Sign(s.priv, msg)
}

// Commit returns the keyed commitment to data under domain, in hex (64
// characters): HMAC-SHA256 under s's commitment secret of
// "unlearn-commit/v1" ‖ uint64_be(len(domain)) ‖ domain ‖ data. Without
// the secret it cannot be recomputed from candidate data, and commitments
// under different domains or different secrets are unrelated.
func (s *Secret) Commit(domain string, data []byte) string {
	return hex.EncodeToString(s.commitMAC(domain, data))
}

// CheckCommit reports whether commitment is s's commitment to data under
// domain, comparing in constant time.
func (s *Secret) CheckCommit(domain string, data []byte, commitment string) bool {
	got, err := hex.DecodeString(commitment)
	if err != nil {
		return false
	}
	return hmac.Equal(got, s.commitMAC(domain, data))
}

func (s *Secret) commitMAC(domain string, data []byte) []byte {
	s.check()
	m := hmac.New(sha256.New, s.commit[:])
	m.Write([]byte(commitPrefix)) // hash.Hash writes never fail
	var n [8]byte
	binary.BigEndian.PutUint64(n[:], uint64(len(domain)))
	m.Write(n[:])
	m.Write([]byte(domain))
	m.Write(data)
	return m.Sum(nil)
}

// Verify checks that sig is p's Ed25519 signature of msg. It returns nil
// or an error wrapping ErrSignature.
func (p Public) Verify(msg, sig []byte) error {
	p.check()
	if len(sig) != SignatureSize {
		return fmt.Errorf("sign: signature of %d bytes, want %d: %w", len(sig), SignatureSize, ErrSignature)
	}
	if !ed25519.Verify(p.key, msg, sig) {
		return fmt.Errorf("sign: key %s: %w", p.KeyID(), ErrSignature)
	}
	return nil
}

// Bytes returns a copy of the 32 bytes of the public key.
func (p Public) Bytes() []byte {
	p.check()
	return append([]byte(nil), p.key...)
}

// IsZero reports whether p is the zero value (no key).
func (p Public) IsZero() bool { return len(p.key) == 0 }

// Equal reports whether p and q are the same key.
func (p Public) Equal(q Public) bool { return p.key.Equal(q.key) }

// KeyID returns the key id: the first 16 bytes of SHA-256 of the public
// key, in hex (32 characters).
func (p Public) KeyID() string {
	p.check()
	sum := sha256.Sum256(p.key)
	return hex.EncodeToString(sum[:16])
}

// String returns "sign.Public(KEYID)".
func (p Public) String() string {
	if p.IsZero() {
		return "sign.Public(<none>)"
	}
	return "sign.Public(" + p.KeyID() + ")"
}

// GoString is String, so that %#v does not print the secret either.
func (s *Secret) GoString() string { return s.String() }
