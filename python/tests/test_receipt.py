"""Receipts signed by the Go toolkit (tests/data, written by the serve
package's TestPythonGoldenReceipt) verify here, and every edit is refused."""

import json
import os

import pytest

import unlearn

DATA = os.path.join(os.path.dirname(os.path.abspath(__file__)), "data")


def golden():
    with open(os.path.join(DATA, "receipt.json"), encoding="utf-8") as f:
        receipt = f.read()
    with open(os.path.join(DATA, "request.json"), encoding="utf-8") as f:
        request = json.load(f)
    return receipt, os.path.join(DATA, "certifier.pub"), request


def test_go_signed_receipt_verifies():
    receipt, pub, req = golden()
    r = unlearn.verify_receipt(receipt, pub, bytes.fromhex(req["nonce"]), req["ids"], req["keys"])
    assert r["request"] == req["request"]
    assert r["path"] == "exact" and r.exact
    assert r["records"] == len(set(req["ids"])) + len(set(req["keys"]))
    assert r.key_id == unlearn.PublicKey(pub).key_id
    # The receipt text round-trips: a saved file verifies again.
    assert unlearn.verify_receipt(r.file, pub)["request"] == req["request"]


def test_edits_refused():
    receipt, pub, req = golden()
    env = json.loads(receipt)
    payload = json.loads(env["payload"])

    def with_payload(**change):
        p = dict(payload, **change)
        return json.dumps(dict(env, payload=json.dumps(p, separators=(",", ":"))))

    for bad in (with_payload(records=payload["records"] + 1), with_payload(path="approximate"),
                with_payload(erased_releases=[1]), with_payload(head=payload["head"] + 1)):
        with pytest.raises(unlearn.ReceiptError, match="signature"):
            unlearn.verify_receipt(bad, pub)
    with pytest.raises(unlearn.ReceiptError, match="format"):
        unlearn.verify_receipt(json.dumps(dict(env, format="unlearn-receipt/v0")), pub)
    with pytest.raises(unlearn.ReceiptError, match="file"):
        unlearn.verify_receipt(json.dumps(dict(env, extra=1)), pub)
    with pytest.raises(unlearn.ReceiptError, match="key_id"):
        unlearn.verify_receipt(receipt, bytes(32))
    with pytest.raises(unlearn.ReceiptError, match="commitment"):
        unlearn.verify_receipt(receipt, pub, bytes.fromhex(req["nonce"]), req["ids"] + [999999], req["keys"])
    with pytest.raises(unlearn.ReceiptError, match="commitment"):
        unlearn.verify_receipt(receipt, pub, bytes(32), req["ids"], req["keys"])


def test_commitment_vector():
    # The vector of certify's TestForgetCommitment (computed there in Go):
    # the same sets of ids and keys, repeated and out of order.
    assert unlearn.commitment(bytes([7]) * 32, [3, -1, 3, 2], ["b", "a", "b"]) == \
        "22ea1b1ffc3bac7aea2ba083bd5db2e8e2ac5fb9d8ad0980154e88c0bb5a49f3"


def test_public_key_file_checked(tmp_path):
    _, pub, _ = golden()
    with open(pub, encoding="utf-8") as f:
        doc = json.load(f)
    doc["key_id"] = "0" * 32
    bad = tmp_path / "bad.pub"
    bad.write_text(json.dumps(doc))
    with pytest.raises(unlearn.ReceiptError, match="key_id"):
        unlearn.PublicKey(str(bad))
