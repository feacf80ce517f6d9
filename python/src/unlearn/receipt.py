"""Deletion receipts: their verification and the commitment they carry.

A receipt file (docs/schemas/unlearn-receipt-v1.schema.json) is a JSON object
``{"format", "key_id", "payload", "signature"}``: ``payload`` is the receipt's
JSON as a string, and ``signature`` the hex Ed25519 signature, by the
service's certifier key, of ``b"unlearn-receipt/v1\\n" + payload`` (its UTF-8
bytes, exactly as sent). ``unlearn verify --receipt FILE --public-key K.pub``
checks the same thing.
"""

import base64
import hashlib
import hmac
import json
import re
import struct

from . import _ed25519
from .errors import PublicKeyError, ReceiptError

FORMAT = "unlearn-receipt/v1"
COMMITMENT_FORMAT = b"unlearn-forget-request/v1"
NONCE_SIZE = 32

# The members of a receipt's payload (certify.Receipt).
_FIELDS = {
    "format", "toolkit", "request", "received", "deadline", "served", "path", "records",
    "already_forgotten", "commitment", "batch", "erased_releases", "head", "needs_noise", "pending",
}


class PublicKey:
    """A certifier's Ed25519 public key, read from an ``unlearn keygen``
    NAME.pub file, its JSON text, or its 32 raw bytes."""

    def __init__(self, key):
        if isinstance(key, PublicKey):
            self.raw = key.raw
            return
        if isinstance(key, (bytes, bytearray)) and len(key) == 32:
            raw = bytes(key)
        else:
            where = "the public key"
            text = key
            try:
                if isinstance(key, (bytes, bytearray)):
                    text = key.decode("utf-8")
                elif not str(key).lstrip().startswith("{"):
                    where = "public key file %s" % key
                    with open(key, encoding="utf-8") as f:
                        text = f.read()
            except (OSError, UnicodeDecodeError) as e:
                raise PublicKeyError("%s: cannot be read: %s" % (where, getattr(e, "strerror", None) or e)) from None
            raw = _public_key_of(text, where)
        if len(raw) != 32:
            raise PublicKeyError("the public key: %d bytes, want 32" % len(raw))
        self.raw = raw

    @property
    def key_id(self):
        """The key id: the first 16 bytes of SHA-256 of the key, in hex."""
        return hashlib.sha256(self.raw).hexdigest()[:32]

    def __repr__(self):
        return "PublicKey(%s)" % self.key_id


def _public_key_of(text, where):
    """The 32 bytes of an ``unlearn keygen`` NAME.pub document, or a
    PublicKeyError naming where it came from."""
    hint = "give the NAME.pub file that unlearn keygen wrote"
    try:
        doc = json.loads(text)
    except ValueError:
        raise PublicKeyError("%s is not a public key (not a JSON document): %s" % (where, hint)) from None
    if not isinstance(doc, dict) or doc.get("format") != "unlearn-public-key/v1":
        fmt = doc.get("format") if isinstance(doc, dict) else None
        raise PublicKeyError("%s is not a public key (format %r, want unlearn-public-key/v1): %s" % (where, fmt, hint))
    try:
        raw = base64.b64decode(doc["public_key"], validate=True)
    except (KeyError, TypeError, ValueError):
        raise PublicKeyError("%s: public_key is not base64 of 32 bytes" % where) from None
    if len(raw) != 32:
        raise PublicKeyError("%s: %d bytes, want 32" % (where, len(raw)))
    if hashlib.sha256(raw).hexdigest()[:32] != doc.get("key_id"):
        raise PublicKeyError("%s: its key_id does not match the key" % where)
    return raw


def commitment(nonce, ids=(), keys=()):
    """The commitment of a deletion request to its ids and keys under the
    requester's nonce (certify.ForgetCommitment): the hex HMAC-SHA256 keyed by
    the nonce of ``b"unlearn-forget-request/v1"``, the number of distinct ids
    and each id ascending as a big-endian int64, then the number of distinct
    keys and each key (UTF-8, ascending by bytes) preceded by its length, the
    counts and lengths big-endian uint64."""
    ids = sorted({int(i) for i in ids})
    keys = sorted({k.encode("utf-8") for k in keys})
    msg = [COMMITMENT_FORMAT, struct.pack(">Q", len(ids))]
    msg += [struct.pack(">q", i) for i in ids]
    msg.append(struct.pack(">Q", len(keys)))
    for k in keys:
        msg += [struct.pack(">Q", len(k)), k]
    return hmac.new(bytes(nonce), b"".join(msg), hashlib.sha256).hexdigest()


class Receipt(dict):
    """A verified deletion receipt: a dict of its fields (request, received,
    deadline, served, path, records, already_forgotten, commitment, batch,
    erased_releases, head, needs_noise, pending, …), with ``file`` the signed
    receipt file as received (save it to prove the deletion later) and
    ``key_id`` the key that signed it."""

    file = ""
    key_id = ""

    @property
    def exact(self):
        """True when the records were removed by exact replay: the model is
        bit for bit the one trained without them."""
        return self["path"] == "exact"


_ENVELOPE = ("format", "key_id", "payload", "signature")
_BATCH = ("store_request", "requests", "records")
_STRINGS = ("format", "toolkit", "request", "received", "deadline", "served", "path", "commitment", "pending")
_INTS = ("records", "already_forgotten", "head")
_INT64 = (-(1 << 63), (1 << 63) - 1)
_HEX = re.compile(r"[0-9a-f]*")
_TIME = re.compile(r"([0-9]{4})-([0-9]{2})-([0-9]{2})T([0-9]{2}):([0-9]{2}):([0-9]{2})\.([0-9]{6})Z")


class _Refused(Exception):
    """A document that the strict reader refuses (see _loads)."""


def _no_duplicates(pairs):
    obj = {}
    for k, v in pairs:
        if k in obj:
            raise _Refused("duplicate member %r (a member may appear only once)" % k)
        obj[k] = v
    return obj


def _no_constant(name):
    raise _Refused("malformed JSON: %s is not a JSON value" % name)


def _valid_text(v):
    """Reports whether every string of a parsed value is valid Unicode (no
    lone surrogate from a \\ud800 escape)."""
    if isinstance(v, str):
        try:
            v.encode("utf-8")
        except UnicodeEncodeError:
            return False
        return True
    if isinstance(v, dict):
        return all(_valid_text(k) and _valid_text(x) for k, x in v.items())
    if isinstance(v, list):
        return all(_valid_text(x) for x in v)
    return True


def _loads(text, where):
    """Parses one JSON document as strictly as the toolkit's Go reader
    (internal/strictjson): a member named twice, NaN or Infinity, a lone
    surrogate, a byte-order mark, invalid UTF-8 and trailing data are
    refused with a ReceiptError naming where."""
    try:
        if isinstance(text, (bytes, bytearray)):
            text = bytes(text).decode("utf-8")
        v = json.loads(text, object_pairs_hook=_no_duplicates, parse_constant=_no_constant)
    except _Refused as e:
        raise ReceiptError("%s: %s" % (where, e)) from None
    except (ValueError, TypeError) as e:  # JSONDecodeError and UnicodeDecodeError are ValueErrors
        raise ReceiptError("%s: not one JSON document: %s" % (where, e)) from None
    if not _valid_text(v):
        raise ReceiptError("%s: a string is not valid Unicode (a lone surrogate)" % where)
    return v


def _members(obj, names, where, prefix=""):
    """Checks that obj is an object of exactly the given members."""
    if not isinstance(obj, dict):
        raise ReceiptError("%s: %s is not an object" % (where, prefix.rstrip(".") or "the document"))
    for k in obj:
        if k not in names:
            raise ReceiptError("%s: unknown member %r (member names are exact and case-sensitive)" % (where, prefix + k))
    for k in names:
        if k not in obj:
            raise ReceiptError("%s: missing member %r" % (where, prefix + k))


def _is_int(v):
    return isinstance(v, int) and not isinstance(v, bool) and _INT64[0] <= v <= _INT64[1]


def _lower_hex(s, n):
    return isinstance(s, str) and len(s) == n and _HEX.fullmatch(s) is not None


def _receipt_time(s):
    """The time tuple of a receipt time (certify.ReceiptTimeLayout), or None
    unless s is exactly that layout's form of a valid time."""
    m = _TIME.fullmatch(s)
    if m is None:
        return None
    y, mo, d, h, mi, sec, us = (int(g) for g in m.groups())
    leap = y % 4 == 0 and (y % 100 != 0 or y % 400 == 0)
    days = (31, 29 if leap else 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31)
    if not (1 <= mo <= 12 and 1 <= d <= days[mo - 1] and h < 24 and mi < 60 and sec < 60):
        return None
    return (y, mo, d, h, mi, sec, us)


def _check_payload(body):
    """The checks of certify's VerifyReceipt on the payload, in its order."""
    _members(body, _FIELDS, "payload")
    for k in _STRINGS:
        if not isinstance(body[k], str):
            raise ReceiptError("payload: member %r: not a string" % k)
    for k in _INTS:
        if not _is_int(body[k]):
            raise ReceiptError("payload: member %r: not an integer in range" % k)
    if not isinstance(body["needs_noise"], bool):
        raise ReceiptError("payload: member 'needs_noise': not true or false")
    _members(body["batch"], _BATCH, "payload", "batch.")
    for k in _BATCH:
        if not _is_int(body["batch"][k]):
            raise ReceiptError("payload: member 'batch.%s': not an integer in range" % k)
    erased = body["erased_releases"]
    if erased is not None:
        if not isinstance(erased, list):
            raise ReceiptError("payload: member 'erased_releases': not an array")
        for i, v in enumerate(erased):
            if not _is_int(v):
                raise ReceiptError("payload: member 'erased_releases[%d]': not an integer in range" % i)
    b = body
    if b["format"] != FORMAT:
        raise ReceiptError("format: %r, want %r" % (b["format"], FORMAT))
    if b["request"] == "":
        raise ReceiptError("request: empty")
    if b["path"] not in ("exact", "approximate", "none"):
        raise ReceiptError("path: %r, want exact, approximate or none" % b["path"])
    if b["records"] < 1:
        raise ReceiptError("records: %d, want at least 1" % b["records"])
    if not 0 <= b["already_forgotten"] <= b["records"]:
        raise ReceiptError("already_forgotten: %d of %d records" % (b["already_forgotten"], b["records"]))
    if b["batch"]["requests"] < 1 or b["batch"]["records"] < 1:
        raise ReceiptError("batch: %d requests, %d records: want at least 1 each" % (b["batch"]["requests"], b["batch"]["records"]))
    if b["head"] < 0:
        raise ReceiptError("head: %d" % b["head"])
    if erased is None:
        raise ReceiptError("erased_releases: missing (an empty list when none)")
    if erased != sorted(erased):
        raise ReceiptError("erased_releases: not ascending")
    if b["path"] == "approximate" and (not b["needs_noise"] or b["pending"] == ""):
        raise ReceiptError("pending: an approximate path leaves the records' influence in the state: needs_noise and pending must say so")
    if not _lower_hex(b["commitment"], 64):
        raise ReceiptError("commitment: %r: want 64 lower-case hex digits" % b["commitment"])
    times = []
    for k in ("received", "deadline", "served"):
        t = _receipt_time(b[k])
        if t is None:
            raise ReceiptError("%s: %r: want 2006-01-02T15:04:05.000000Z" % (k, b[k]))
        times.append(t)
    if times[2] < times[0]:
        raise ReceiptError("served: %s is before received %s" % (b["served"], b["received"]))


def verify_receipt(file, public_key, nonce=None, ids=None, keys=None):
    """Verifies a signed receipt file (str, bytes or a parsed dict) with the
    certifier's public key and returns the Receipt. With nonce, it also
    checks that the receipt's commitment covers exactly the given ids and
    keys. Raises ReceiptError naming what fails.

    It refuses exactly what ``unlearn verify --receipt`` (certify's
    VerifyReceipt) refuses: anything but one JSON object of exactly the four
    members, each a string (a member named twice or in another case, a
    byte-order mark, invalid UTF-8, NaN or trailing data included); another
    format or key id; a signature other than 128 lower-case hex digits or
    that does not verify; a payload that is not exactly one receipt object
    of the right members and types, or whose values are out of their
    domain. Both verifiers run the corpus tests/data/receipt-corpus.json."""
    pub = PublicKey(public_key)
    env = file if isinstance(file, dict) else _loads(file, "file")
    _members(env, _ENVELOPE, "file")
    if not _valid_text(env):
        raise ReceiptError("file: a string is not valid Unicode (a lone surrogate)")
    for k in _ENVELOPE:
        if not isinstance(env[k], str):
            raise ReceiptError("file: member %r: not a string" % k)
    if env["format"] != FORMAT:
        raise ReceiptError("format: %r, want %r" % (env["format"], FORMAT))
    if env["key_id"] != pub.key_id:
        raise ReceiptError("key_id: signed by key %r, not by the given key %s" % (env["key_id"], pub.key_id))
    if not _lower_hex(env["signature"], 128):
        raise ReceiptError("signature: want 128 lower-case hex digits")
    sig = bytes.fromhex(env["signature"])
    payload = env["payload"]
    if not _ed25519.verify(pub.raw, FORMAT.encode() + b"\n" + payload.encode("utf-8"), sig):
        raise ReceiptError("signature: does not verify (the receipt was edited after signing, or signed by another key)")
    body = _loads(payload, "payload")
    _check_payload(body)
    if nonce is not None:
        if commitment(nonce, ids or (), keys or ()) != body["commitment"]:
            raise ReceiptError("commitment: the receipt does not cover exactly these ids and keys under this nonce")
    r = Receipt(body)
    if isinstance(file, (bytes, bytearray)):
        file = bytes(file).decode("utf-8")
    r.file = json.dumps(env, indent=2) + "\n" if not isinstance(file, str) else file
    r.key_id = env["key_id"]
    return r
