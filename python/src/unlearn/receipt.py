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
import struct

from . import _ed25519
from .errors import ReceiptError

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
            text = key
            if isinstance(key, (bytes, bytearray)):
                text = key.decode("utf-8")
            elif not str(key).lstrip().startswith("{"):
                with open(key, encoding="utf-8") as f:
                    text = f.read()
            doc = json.loads(text)
            if doc.get("format") != "unlearn-public-key/v1":
                raise ReceiptError("public key: format %r, want unlearn-public-key/v1" % doc.get("format"))
            raw = base64.b64decode(doc["public_key"], validate=True)
            if hashlib.sha256(raw).hexdigest()[:32] != doc.get("key_id"):
                raise ReceiptError("public key: its key_id does not match the key")
        if len(raw) != 32:
            raise ReceiptError("public key: %d bytes, want 32" % len(raw))
        self.raw = raw

    @property
    def key_id(self):
        """The key id: the first 16 bytes of SHA-256 of the key, in hex."""
        return hashlib.sha256(self.raw).hexdigest()[:32]

    def __repr__(self):
        return "PublicKey(%s)" % self.key_id


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


def verify_receipt(file, public_key, nonce=None, ids=None, keys=None):
    """Verifies a signed receipt file (str, bytes or a parsed dict) with the
    certifier's public key and returns the Receipt. With nonce, it also
    checks that the receipt's commitment covers exactly the given ids and
    keys. Raises ReceiptError naming what fails."""
    pub = PublicKey(public_key)
    if isinstance(file, (bytes, bytearray)):
        file = file.decode("utf-8")
    env = json.loads(file) if isinstance(file, str) else file
    if not isinstance(env, dict) or set(env) != {"format", "key_id", "payload", "signature"}:
        raise ReceiptError("file: want exactly format, key_id, payload and signature")
    if env["format"] != FORMAT:
        raise ReceiptError("format: %r, want %r" % (env["format"], FORMAT))
    if env["key_id"] != pub.key_id:
        raise ReceiptError("key_id: signed by key %r, not by the given key %s" % (env["key_id"], pub.key_id))
    try:
        sig = bytes.fromhex(env["signature"])
    except (TypeError, ValueError):
        raise ReceiptError("signature: not hex") from None
    payload = env["payload"]
    if not isinstance(payload, str):
        raise ReceiptError("payload: not a string")
    if not _ed25519.verify(pub.raw, FORMAT.encode() + b"\n" + payload.encode("utf-8"), sig):
        raise ReceiptError("signature: does not verify (the receipt was edited after signing, or signed by another key)")
    body = json.loads(payload)
    if not isinstance(body, dict) or set(body) != _FIELDS:
        raise ReceiptError("payload: unexpected members %s" % sorted(set(body) ^ _FIELDS))
    if body["format"] != FORMAT:
        raise ReceiptError("payload format: %r" % body["format"])
    if nonce is not None:
        if commitment(nonce, ids or (), keys or ()) != body["commitment"]:
            raise ReceiptError("commitment: the receipt does not cover exactly these ids and keys under this nonce")
    r = Receipt(body)
    r.file = json.dumps(env, indent=2) + "\n" if not isinstance(file, str) else file
    r.key_id = env["key_id"]
    return r
