package sign

import (
	"bytes"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"pgregory.net/rapid"

	"unlearn/internal/testutil"
)

func TestMain(m *testing.M) { testutil.RunWithRapidDefaults(m, 1000, 1) }

// seeded returns a reproducible secret for tests (never for keys in use).
func seeded(t testing.TB, seed uint64) *Secret {
	t.Helper()
	var s [32]byte
	s[0] = byte(seed)
	s[1] = byte(seed >> 8)
	sec, err := generate(rand.NewChaCha8(s))
	require.NoError(t, err)
	return sec
}

func TestSignVerifyRoundTrip(t *testing.T) {
	s := seeded(t, 1)
	for _, msg := range [][]byte{nil, {}, []byte("x"), bytes.Repeat([]byte("ledger"), 1000)} {
		sig := s.Sign(msg)
		require.Len(t, sig, SignatureSize)
		require.NoError(t, s.Public().Verify(msg, sig))
		// Ed25519 is deterministic (RFC 8032 §5.1.6): same key, same message, same bytes.
		require.Equal(t, sig, s.Sign(msg))
	}
}

func TestGenerateIsRandom(t *testing.T) {
	a, err := Generate()
	require.NoError(t, err)
	b, err := Generate()
	require.NoError(t, err)
	require.False(t, a.Public().Equal(b.Public()))
	require.NotEqual(t, a.commit, b.commit)
	// The commitment secret is not the signing seed.
	require.NotEqual(t, a.commit[:], []byte(a.priv.Seed()))
}

func TestVerifyRefusesAnotherKey(t *testing.T) {
	a, b := seeded(t, 1), seeded(t, 2)
	msg := []byte("charge 1")
	err := b.Public().Verify(msg, a.Sign(msg))
	require.ErrorIs(t, err, ErrSignature)
	require.Contains(t, err.Error(), b.KeyID())
}

func TestVerifyRefusesEveryFlippedBit(t *testing.T) {
	s := seeded(t, 3)
	p := s.Public()
	msg := []byte(`{"seq":1,"alpha":1,"sigma":3.7324}`)
	sig := s.Sign(msg)
	for i := range len(msg) * 8 {
		m := bytes.Clone(msg)
		m[i/8] ^= 1 << (i % 8)
		require.ErrorIs(t, p.Verify(m, sig), ErrSignature, "message bit %d", i)
	}
	for i := range len(sig) * 8 {
		g := bytes.Clone(sig)
		g[i/8] ^= 1 << (i % 8)
		require.ErrorIs(t, p.Verify(msg, g), ErrSignature, "signature bit %d", i)
	}
	for _, g := range [][]byte{nil, sig[:63], append(bytes.Clone(sig), 0)} {
		require.ErrorIs(t, p.Verify(msg, g), ErrSignature, "signature of %d bytes", len(g))
	}
}

func TestSignVerifyProperty(t *testing.T) {
	s := seeded(t, 4)
	p := s.Public()
	rapid.Check(t, func(t *rapid.T) {
		msg := rapid.SliceOf(rapid.Byte()).Draw(t, "msg")
		other := rapid.SliceOf(rapid.Byte()).Draw(t, "other")
		sig := s.Sign(msg)
		if err := p.Verify(msg, sig); err != nil {
			t.Fatalf("own signature refused: %v", err)
		}
		if !bytes.Equal(msg, other) && p.Verify(other, sig) == nil {
			t.Fatalf("signature of %x accepted for %x", msg, other)
		}
	})
}

func TestCommit(t *testing.T) {
	s := seeded(t, 5)
	data := []byte("state before noise")
	c := s.Commit("state", data)

	t.Run("the documented HMAC-SHA256", func(t *testing.T) {
		m := hmac.New(sha256.New, s.commit[:])
		m.Write([]byte("unlearn-commit/v1"))
		m.Write([]byte{0, 0, 0, 0, 0, 0, 0, 5})
		m.Write([]byte("state"))
		m.Write(data)
		require.Equal(t, hex.EncodeToString(m.Sum(nil)), c)
		require.Len(t, c, 64)
	})
	t.Run("deterministic and checkable", func(t *testing.T) {
		require.Equal(t, c, s.Commit("state", data))
		require.True(t, s.CheckCommit("state", data, c))
		require.False(t, s.CheckCommit("state", []byte("state before noisE"), c))
		require.False(t, s.CheckCommit("retained", data, c))
		require.False(t, s.CheckCommit("state", data, c[:62]))
		require.False(t, s.CheckCommit("state", data, "zz"+c[2:]))
	})
	t.Run("differs per domain", func(t *testing.T) {
		require.NotEqual(t, c, s.Commit("retained", data))
		require.NotEqual(t, c, s.Commit("", data))
	})
	t.Run("domain and data cannot be shifted into each other", func(t *testing.T) {
		require.NotEqual(t, s.Commit("ab", []byte("c")), s.Commit("a", []byte("bc")))
		require.NotEqual(t, s.Commit("", []byte("abc")), s.Commit("abc", nil))
	})
	t.Run("differs per key", func(t *testing.T) {
		require.NotEqual(t, c, seeded(t, 6).Commit("state", data))
	})
	t.Run("not a function of the public key or the data alone", func(t *testing.T) {
		// Same signing key, another commitment secret: same public key,
		// different commitment, so nothing public determines it.
		other := &Secret{priv: s.priv}
		other.commit[0] = 1
		require.True(t, other.Public().Equal(s.Public()))
		require.NotEqual(t, c, other.Commit("state", data))
		// And it is not the plain SHA-256 a membership test would recompute.
		plain := sha256.Sum256(data)
		require.NotEqual(t, hex.EncodeToString(plain[:]), c)
		m := hmac.New(sha256.New, s.Public().Bytes())
		m.Write(data)
		require.NotEqual(t, hex.EncodeToString(m.Sum(nil)), c)
	})
}

func TestKeyID(t *testing.T) {
	s := seeded(t, 7)
	sum := sha256.Sum256(s.Public().Bytes())
	require.Equal(t, hex.EncodeToString(sum[:16]), s.KeyID())
	require.Equal(t, s.KeyID(), s.Public().KeyID())
	require.NotEqual(t, s.KeyID(), seeded(t, 8).KeyID())
}

func TestNewPublic(t *testing.T) {
	s := seeded(t, 9)
	p, err := NewPublic(s.Public().Bytes())
	require.NoError(t, err)
	require.True(t, p.Equal(s.Public()))
	for _, n := range []int{0, 31, 33} {
		_, err := NewPublic(make([]byte, n))
		require.ErrorIs(t, err, ErrKeySize, "%d bytes", n)
	}
}

func TestSecretIsNeverPrinted(t *testing.T) {
	s := seeded(t, 10)
	secrets := []string{
		hex.EncodeToString(s.priv.Seed()), hex.EncodeToString(s.commit[:]),
		b64.EncodeToString(s.priv.Seed()), b64.EncodeToString(s.commit[:]),
	}
	for _, verb := range []string{"%v", "%+v", "%#v", "%s", "%x", "%q"} {
		out := fmt.Sprintf(verb, s)
		for _, sec := range secrets {
			require.NotContains(t, strings.ToLower(out), strings.ToLower(sec), "verb %s printed %q", verb, out)
		}
		if verb != "%x" { // %x hex-encodes the String form
			require.Contains(t, out, s.KeyID(), "verb %s", verb)
		}
	}
}

func TestZeroKeysPanic(t *testing.T) {
	testutil.WantPanic(t, "sign: ", func() { (&Secret{}).Sign(nil) })
	testutil.WantPanic(t, "sign: ", func() { (*Secret)(nil).Commit("d", nil) })
	testutil.WantPanic(t, "sign: ", func() { _ = Public{}.Verify(nil, nil) })
	require.True(t, Public{}.IsZero())
	require.Equal(t, "sign.Public(<none>)", Public{}.String())
	var fe *FileError
	require.False(t, errors.As(ErrSignature, &fe))
}
