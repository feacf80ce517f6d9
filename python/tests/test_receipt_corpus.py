"""The shared corpus of receipt files (tests/data/receipt-corpus.json,
written by certify's TestReceiptCorpus, which runs it against the Go
verifier): verify_receipt accepts every genuine file and refuses every
broken one with a ReceiptError naming the same field as the Go verifier."""

import base64
import json
import os

import pytest

import unlearn

DATA = os.path.join(os.path.dirname(os.path.abspath(__file__)), "data")


def corpus():
    with open(os.path.join(DATA, "receipt-corpus.json"), encoding="utf-8") as f:
        return json.load(f)


C = corpus()


def test_corpus_is_large():
    assert len(C["genuine"]) >= 4 and len(C["broken"]) >= 40


@pytest.mark.parametrize("case", C["genuine"], ids=[c["name"] for c in C["genuine"]])
@pytest.mark.parametrize("form", ["bytes", "str"])
def test_genuine_accepted(case, form):
    file = base64.b64decode(case["file_b64"])
    if form == "str":
        file = file.decode("utf-8")
    r = unlearn.verify_receipt(file, C["public_key"])
    assert r["request"] == "0123456789abcdef0123456789abcdef"
    assert r.key_id == unlearn.PublicKey(C["public_key"]).key_id


@pytest.mark.parametrize("case", C["broken"], ids=[c["name"] for c in C["broken"]])
def test_broken_refused(case):
    file = base64.b64decode(case["file_b64"])
    with pytest.raises(unlearn.ReceiptError) as e:
        unlearn.verify_receipt(file, C["public_key"])
    assert str(e.value).startswith(case["field"] + ":"), (case["name"], str(e.value))
    # As text (when it is text), the same refusal.
    try:
        text = file.decode("utf-8")
    except UnicodeDecodeError:
        return
    with pytest.raises(unlearn.ReceiptError) as e:
        unlearn.verify_receipt(text, C["public_key"])
    assert str(e.value).startswith(case["field"] + ":"), (case["name"], str(e.value))
