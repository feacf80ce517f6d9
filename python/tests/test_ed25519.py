"""Ed25519 verification against RFC 8032 §7.1's test vectors, and the ways a
signature must fail."""

import hashlib

import pytest

from unlearn import _ed25519

# RFC 8032 §7.1: TEST 1, TEST 2, TEST 3 and TEST SHA(abc) (public key,
# message, signature; the message of the last is SHA-512("abc")).
VECTORS = [
    ("d75a980182b10ab7d54bfed3c964073a0ee172f3daa62325af021a68f707511a", "",
     "e5564300c360ac729086e2cc806e828a84877f1eb8e5d974d873e065224901555fb8821590a33bacc61e39701cf9b46bd25bf5f0595bbe24655141438e7a100b"),
    ("3d4017c3e843895a92b70aa74d1b7ebc9c982ccf2ec4968cc0cd55f12af4660c", "72",
     "92a009a9f0d4cab8720e820b5f642540a2b27b5416503f8fb3762223ebdb69da085ac1e43e15996e458f3613d0f11d8c387b2eaeb4302aeeb00d291612bb0c00"),
    ("fc51cd8e6218a1a38da47ed00230f0580816ed13ba3303ac5deb911548908025", "af82",
     "6291d657deec24024827e69c3abe01a30ce548a284743a445e3680d7db5ac3ac18ff9b538d16f290ae67f760984dc6594a7c15e9716ed28dc027beceea1ec40a"),
    ("ec172b93ad5e563bf4932c70e1245034c35467ef2efd4d64ebf819683467e2bf", hashlib.sha512(b"abc").hexdigest(),
     "dc2a4459e7369633a52b1bf277839a00201009a3efbf3ecb69bea2186c26b58909351fc9ac90b3ecfdfbc7c66431e0303dca179c138ac17ad9bef1177331a704"),
]


@pytest.mark.parametrize("pub,msg,sig", VECTORS)
def test_rfc8032_vectors(pub, msg, sig):
    assert _ed25519.verify(bytes.fromhex(pub), bytes.fromhex(msg), bytes.fromhex(sig))


@pytest.mark.parametrize("pub,msg,sig", VECTORS)
def test_every_bit_matters(pub, msg, sig):
    pub, msg, sig = bytes.fromhex(pub), bytes.fromhex(msg), bytes.fromhex(sig)
    for i in range(0, len(sig) * 8, 37):  # a spread of the signature's bits
        bad = bytearray(sig)
        bad[i // 8] ^= 1 << (i % 8)
        assert not _ed25519.verify(pub, msg, bytes(bad)), "signature bit %d" % i
    assert not _ed25519.verify(pub, msg + b"\x00", sig)
    if msg:
        bad = bytearray(msg)
        bad[0] ^= 1
        assert not _ed25519.verify(pub, bytes(bad), sig)
    other = bytes.fromhex(VECTORS[0][0]) if pub != bytes.fromhex(VECTORS[0][0]) else bytes.fromhex(VECTORS[1][0])
    assert not _ed25519.verify(other, msg, sig)


def test_malleability_and_malformed():
    pub, msg, sig = (bytes.fromhex(v) for v in VECTORS[1])
    # S + L encodes the same scalar mod L: refused (RFC 8032 §5.1.7: S < L).
    s = int.from_bytes(sig[32:], "little") + _ed25519.L
    assert s < 2**256
    assert not _ed25519.verify(pub, msg, sig[:32] + s.to_bytes(32, "little"))
    assert not _ed25519.verify(pub, msg, sig[:63])
    assert not _ed25519.verify(pub[:31], msg, sig)
    # A y coordinate ≥ p is no point (RFC 8032 §5.1.3).
    assert not _ed25519.verify((2**255 - 1).to_bytes(32, "little"), msg, sig)
    # y = 2 is not on the curve: no x satisfies the equation.
    assert _ed25519._decode((2).to_bytes(32, "little")) is None


def test_point_arithmetic():
    # The base point has order L: [L]B is the identity, [L+1]B is B.
    assert _ed25519._encode(_ed25519._mul(_ed25519.L, _ed25519.B)) == _ed25519._encode(_ed25519.IDENTITY)
    assert _ed25519._encode(_ed25519._mul(_ed25519.L + 1, _ed25519.B)) == _ed25519._encode(_ed25519.B)
    # Encoding and decoding are inverse on [k]B.
    for k in (1, 2, 3, 12345, 2**200 + 7):
        p = _ed25519._mul(k, _ed25519.B)
        assert _ed25519._encode(_ed25519._decode(_ed25519._encode(p))) == _ed25519._encode(p)
