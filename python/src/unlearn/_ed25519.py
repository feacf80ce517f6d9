"""Ed25519 signature verification (RFC 8032 §5.1), standard library only.

Only verification is implemented: the client checks receipts signed by the
service's certifier key; it never signs. Every value involved is public (the
key, the message, the signature), so the arithmetic need not be constant
time; it is written for clarity, after RFC 8032 §5.1 and its reference code
(§6), with Python's integers for the field GF(p), p = 2^255 − 19.

Verification follows RFC 8032 §5.1.7 and, like Go's crypto/ed25519 (which
signs the receipts), checks the cofactorless equation [S]B = R + [k]A by
encoding R' = [S]B − [k]A and comparing it with the signature's R bytes; S
must be below the group order L. Public keys are decoded as §5.1.3 says
(a y coordinate ≥ p is refused).
"""

import hashlib

P = 2**255 - 19
L = 2**252 + 27742317777372353535851937790883648493  # the order of the base point
D = -121665 * pow(121666, P - 2, P) % P  # the curve constant d = −121665/121666
SQRT_M1 = pow(2, (P - 1) // 4, P)  # a square root of −1


def _inv(x):
    return pow(x, P - 2, P)


# Points in extended homogeneous coordinates (X, Y, Z, T), x = X/Z,
# y = Y/Z, x·y = T/Z (RFC 8032 §5.1.4).


def _add(p, q):
    """The sum of two points (RFC 8032 §5.1.4, "add-2008-hwcd-3")."""
    x1, y1, z1, t1 = p
    x2, y2, z2, t2 = q
    a = (y1 - x1) * (y2 - x2) % P
    b = (y1 + x1) * (y2 + x2) % P
    c = t1 * 2 * D * t2 % P
    d = z1 * 2 * z2 % P
    e, f, g, h = b - a, d - c, d + c, b + a
    return (e * f % P, g * h % P, f * g % P, e * h % P)


IDENTITY = (0, 1, 1, 0)


def _mul(s, p):
    """[s]p by double and add (s ≥ 0)."""
    q = IDENTITY
    while s > 0:
        if s & 1:
            q = _add(q, p)
        p = _add(p, p)
        s >>= 1
    return q


def _neg(p):
    x, y, z, t = p
    return (-x % P, y, z, -t % P)


def _recover_x(y, sign):
    """The x of y with the given low bit (RFC 8032 §5.1.3, steps 2–4), or
    None if there is none."""
    if y >= P:
        return None
    x2 = (y * y - 1) * _inv(D * y * y + 1) % P
    if x2 == 0:
        return None if sign else 0
    x = pow(x2, (P + 3) // 8, P)
    if (x * x - x2) % P != 0:
        x = x * SQRT_M1 % P
    if (x * x - x2) % P != 0:
        return None
    if x & 1 != sign:
        x = P - x
    return x


def _decode(b):
    """The point encoded by 32 bytes (RFC 8032 §5.1.3), or None."""
    if len(b) != 32:
        return None
    y = int.from_bytes(b, "little")
    sign = y >> 255
    y &= (1 << 255) - 1
    x = _recover_x(y, sign)
    if x is None:
        return None
    return (x, y, 1, x * y % P)


def _encode(p):
    """The 32-byte encoding of a point (RFC 8032 §5.1.2)."""
    x, y, z, _ = p
    zi = _inv(z)
    x, y = x * zi % P, y * zi % P
    return (y | ((x & 1) << 255)).to_bytes(32, "little")


_BY = 4 * _inv(5) % P
B = (_recover_x(_BY, 0), _BY, 1, _recover_x(_BY, 0) * _BY % P)  # the base point


def verify(public_key, message, signature):
    """Reports whether signature is public_key's Ed25519 signature of
    message (all bytes): RFC 8032 §5.1.7, cofactorless, as Go's
    crypto/ed25519. Malformed keys and signatures verify nothing."""
    if len(public_key) != 32 or len(signature) != 64:
        return False
    a = _decode(public_key)
    if a is None:
        return False
    r_bytes, s = signature[:32], int.from_bytes(signature[32:], "little")
    if s >= L:
        return False
    k = int.from_bytes(hashlib.sha512(r_bytes + public_key + message).digest(), "little") % L
    r = _add(_mul(s, B), _neg(_mul(k, a)))
    return _encode(r) == r_bytes
