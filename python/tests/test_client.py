"""The client against a real service (the Go binary on a free loopback
port): the notebook's path end to end, and every error as an exception."""

import json
import os
import subprocess

import pytest

import unlearn
from conftest import dataset, run

try:
    import numpy
except ImportError:  # the client needs no NumPy; these tests use it when present
    numpy = None


def write_stream(path, d, X, y, ids, skip):
    """The stream file (spec §1.1) of the rows whose id is not in skip."""
    with open(path, "w", encoding="utf-8") as f:
        f.write(json.dumps({"format": "olbfgs-stream/v1", "kind": "logistic", "d": d, "lambda": 0.05}) + "\n")
        for x, label, i in zip(X, y, ids):
            if i not in skip:
                f.write(json.dumps({"op": "insert", "id": i, "x": x, "y": label}) + "\n")


def test_end_to_end(service, tmp_path):
    """Ingest a data set, predict, file a deletion, wait for its receipt and
    verify it, release: the released model is `unlearn train` on the edited
    stream, bit for bit."""
    c = unlearn.Client(service.url, service.tokens["all"], public_key=service.pub)
    assert c.health()
    X, y = dataset(300, service.d)
    ids = list(range(1, 301))
    keys = ["user%03d@example.com" % i for i in ids]
    first = c.ingest(X[:200], y[:200], ids=ids[:200], keys=keys[:200])
    assert first["events"] == 200 and first["head"] == 200
    second = c.ingest(X[200:], y[200:], ids=ids[200:], keys=keys[200:])
    assert second["head"] == 300 and second["ids"] == ids[200:]

    proba = c.predict_proba(X[:20])
    labels = c.predict(X[:20])
    assert c.classes_ == ["-1", "1"]
    for p, label in zip(proba, labels):
        assert abs(p[0] + p[1] - 1) < 1e-12
        if p[1] != 0.5:
            assert label == ("1" if p[1] > 0.5 else "-1")

    request = c.forget(ids=[3, 250], keys=[keys[99]], wait=True)
    assert request.records == 3
    receipt = request.wait(timeout=60)
    assert receipt.exact and receipt["records"] == 3 and receipt["already_forgotten"] == 0
    assert receipt["head"] == 300 and receipt["needs_noise"] is False
    assert receipt["request"] == request.id

    # The released model (exact: the state itself) is `unlearn train` on
    # the stream without ids 3, 100 and 250.
    rel = c.release(epsilon=1.0, delta=1e-5)
    assert rel["exact"] and rel["path"] == "exact"
    stream = str(tmp_path / "edited.jsonl")
    write_stream(stream, service.d, X, y, ids, {3, 100, 250})
    state_file = str(tmp_path / "state.json")
    run(service.bin, "train", "--stream", stream, "--tau", "5", "--out", state_file)
    with open(state_file, encoding="utf-8") as f:
        state = json.load(f)
    released = json.loads(rel["release"])
    assert released["w"] == state["w"], "the model after the deletion is train on the edited stream, bit for bit"
    assert c.releases()[0]["id"] == rel["id"]

    # The saved receipt and release check offline with the command line.
    (tmp_path / "receipt.json").write_text(receipt.file)
    out = run(service.bin, "verify", "--receipt", str(tmp_path / "receipt.json"), "--public-key", service.pub,
              "--nonce", request.nonce.hex(), "--ids", "3,250", "--keys", keys[99])
    assert "VALID" in out and "covers exactly" in out
    (tmp_path / "release.json").write_text(rel["release"])
    (tmp_path / "cert.json").write_text(rel["certificate"])
    out = run(service.bin, "verify", "--certificate", str(tmp_path / "cert.json"), "--release", str(tmp_path / "release.json"),
              "--public-key", service.pub)
    assert "VALID" in out

    st = c.status()
    assert st["store"]["events"] == 297 and st["store"]["forgotten"] == 3 and st["queue"]["queued"] == 0


def test_errors_are_problems(service):
    X, y = dataset(10, service.d)
    with pytest.raises(unlearn.AuthenticationError) as e:
        unlearn.Client(service.url, "unl_" + "A" * 43).status()
    assert e.value.status == 401 and e.value.kind == "unauthorized"
    with pytest.raises(unlearn.ForbiddenError) as e:
        unlearn.Client(service.url, service.tokens["predict"]).status()
    assert e.value.problem["scope"] == "read"
    c = unlearn.Client(service.url, service.tokens["all"])
    with pytest.raises(unlearn.BadRequestError) as e:
        c.predict([[1.0, 2.0]])
    assert e.value.status == 422 and e.value.field == "cols"
    c.ingest(X, y, ids=list(range(1, 11)))
    with pytest.raises(unlearn.ConflictError) as e:
        c.ingest(X[:2], y[:2], ids=[11, 5])
    assert e.value.field == "ids[1]"
    with pytest.raises(unlearn.BadRequestError) as e:
        c.ingest(X[:1], [0.5], ids=[12])
    assert e.value.field == "labels[0]"
    with pytest.raises(unlearn.BadRequestError) as e:
        c.forget(ids=[999])
    assert e.value.kind == "unknown-record"
    with pytest.raises(unlearn.NotFoundError):
        c.request("0" * 32, "0" * 64)
    r = c.forget(ids=[3])
    assert len(r.secret) == 64
    assert c.request(r.id, r.secret)["state"] in ("queued", "served")
    with pytest.raises(unlearn.NotFoundError):  # bound to the secret returned at filing
        c.request(r.id, "0" * 64)
    with pytest.raises(ValueError):
        c.predict([[1.0, float("nan"), 0.0, 0.0]])
    with pytest.raises(ValueError):
        c.forget()
    assert repr(c) == "Client(%r)" % service.url  # never the token


def test_wait_times_out_and_resumes(slow_service):
    """A request not asked to wait stays queued until its deadline (an hour
    here): wait(timeout) raises WaitTimeout, and the request is served by
    the next batch a client starts."""
    c = unlearn.Client(slow_service.url, slow_service.tokens["all"], public_key=slow_service.pub)
    X, y = dataset(30, slow_service.d)
    c.ingest(X, y)
    queued = c.forget(ids=[4])
    with pytest.raises(unlearn.WaitTimeout):
        queued.wait(timeout=0.5)
    assert queued.state()["state"] == "queued"
    now = c.forget(ids=[5], wait=True)
    assert now.wait(timeout=60)["batch"]["requests"] == 2
    assert queued.wait(timeout=60)["records"] == 1
    bare = unlearn.Client(slow_service.url, slow_service.tokens["all"])
    req = bare.forget(ids=[6], wait=True)
    with pytest.raises(unlearn.ReceiptError, match="no public key"):
        req.wait(timeout=60)
    with pytest.raises(unlearn.ReceiptError, match="key_id"):
        req.wait(timeout=60, public_key=bytes(32))
    assert req.wait(timeout=60, public_key=slow_service.pub)["records"] == 1


@pytest.mark.skipif(numpy is None, reason="NumPy is not installed")
def test_numpy_arrays(service):
    c = unlearn.Client(service.url, service.tokens["all"], public_key=service.pub)
    X, y = dataset(50, service.d)
    Xa, ya = numpy.array(X), numpy.array(y)
    out = c.ingest(Xa, ya, ids=numpy.arange(1, 51))
    assert out["events"] == 50
    p = c.predict_proba(Xa[:5])
    assert isinstance(p, numpy.ndarray) and p.shape == (5, 2)
    assert c.predict_proba(X[:5]) == p.tolist(), "lists and arrays give the same numbers"
    labels = c.predict(Xa[:5])
    assert isinstance(labels, numpy.ndarray)
    receipt = c.forget(ids=numpy.array([2, 3]), wait=True).wait(timeout=60)
    assert receipt["records"] == 2
    with pytest.raises(ValueError):
        c.predict(numpy.array([1.0, 2.0]))


def species_csv(path, n):
    """A CSV of n rows: a string id, three features on unequal scales and
    offsets, a species that is a rule of them."""
    rows = ["name,a,b,c,species"]
    for i in range(n):
        a, b, c = float(i % 7 - 3), 10 + 5 * float((i * 3) % 5 - 2), 0.01 * ((i * 11) % 9)
        species = "cat" if a + 0.2 * (b - 10) > 1 else ("dog" if a < -1 else "eel")
        rows.append("p%d,%r,%r,%r,%s" % (i, a, b, c, species))
    with open(path, "w", encoding="utf-8") as f:
        f.write("\n".join(rows) + "\n")
    return rows[1:]


def test_multinomial_with_columns(unlearn_bin, tmp_path):
    """A three-class store made from a CSV with the practitioner's profile:
    predict returns the data's class names, predict_proba a probability per
    class — what `unlearn predict` writes for the same rows, bit for bit —
    and named columns are checked against the store's features."""
    from conftest import Service

    data = str(tmp_path / "species.csv")
    lines = species_csv(data, 60)
    s = Service(unlearn_bin, str(tmp_path / "svc"), init=["--data", data, "--label", "species", "--id", "name",
                                                          "--kind", "multinomial", "--classes", "all",
                                                          "--profile", "practitioner"])
    try:
        c = unlearn.Client(s.url, s.tokens["all"])
        X = [[float(v) for v in line.split(",")[1:4]] for line in lines]
        names = [line.split(",")[4] for line in lines]
        classes = ["cat", "dog", "eel"]
        assert c.contract()["classes"] == classes
        assert c.contract()["source"]["features"] == ["a", "b", "c"]
        with pytest.raises(unlearn.BadRequestError) as e:
            c.ingest(X[:2], ["cat", "fox"])
        assert e.value.field == "labels[1]" and '"cat", "dog" or "eel"' in e.value.detail
        ys = numpy.array(names) if numpy is not None else names  # strings, as a NumPy array
        c.ingest(X, ys, keys=[line.split(",")[0] for line in lines], columns=["a", "b", "c"])
        labels = c.predict(X, columns=["a", "b", "c"])
        assert c.classes_ == classes
        proba = c.predict_proba(X)
        assert len(proba) == 60 and all(len(p) == 3 and abs(sum(p) - 1) < 1e-12 for p in proba)
        assert sum(label == name for label, name in zip(labels, names)) > 36, "the profile learned the species"

        # unlearn predict on the same store and rows writes the same labels
        # and the same probabilities, bit for bit.
        out = run(s.bin, "predict", "--store", s.store, "--data", data)
        got = [line.split(",") for line in out.strip().split("\n")]
        assert got[0] == ["id", "label", "p_cat", "p_dog", "p_eel"]
        for row, label, p in zip(got[1:], labels, proba):
            assert row[1] == label
            assert [float(v) for v in row[2:]] == p

        for columns, detail in ((["a", "c", "b"], "columns in another order"), (["a", "B", "c"], "renamed?")):
            with pytest.raises(unlearn.BadRequestError) as e:
                c.predict(X[:2], columns=columns)
            assert e.value.kind == "contract-mismatch" and e.value.field == "columns"
            assert detail in e.value.detail
        with pytest.raises(unlearn.BadRequestError) as e:
            c.ingest(X[:1], ["cat"], columns=["a", "b"])
        assert e.value.kind == "contract-mismatch" and "the model's feature \"c\" is missing" in e.value.detail
        if numpy is not None:
            arr = c.predict(numpy.array(X[:4]))
            assert isinstance(arr, numpy.ndarray) and list(arr) == labels[:4]
            p = c.predict_proba(numpy.array(X[:4]))
            assert p.shape == (4, 3)
    finally:
        assert s.stop() == 0


def test_store_owned_by_the_service(service, unlearn_bin):
    """While the service runs, a second process's writes are refused naming
    the service (its pid and address), a second service refuses to start,
    and the read-only commands still work."""
    c = unlearn.Client(service.url, service.tokens["all"])
    X, y = dataset(5, service.d)
    c.ingest(X, y)
    for args in (["forget", "--store", service.store, "--ids", "1"],
                 ["serve", "--store", service.store, "--addr", "127.0.0.1:0", "--key", service.key + ".key"]):
        p = subprocess.run([unlearn_bin, *args], capture_output=True, text=True, timeout=60)
        assert p.returncode != 0, args
        assert "process id %d" % service.proc.pid in p.stderr, p.stderr
        assert "send the request to the service" in p.stderr
    p = subprocess.run([unlearn_bin, "status", "--store", service.store], capture_output=True, text=True, timeout=60)
    assert p.returncode == 0, p.stderr
    assert c.status()["store"]["events"] == 5


def write_idx(path, images, labels, shape):
    """An IDX image file (u8, n × rows × cols) and its label file."""
    import struct
    with open(path, "wb") as f:
        f.write(struct.pack(">4I", 0x803, len(images), *shape))
        for img in images:
            f.write(bytes(img))
    with open(path.replace("images-idx3", "labels-idx1"), "wb") as f:
        f.write(struct.pack(">2I", 0x801, len(labels)) + bytes(labels))


def test_idx_raw_pixels_and_class_names(unlearn_bin, tmp_path):
    """An IDX store with a scale: the client sends raw pixels and labels in
    the data's class names (NumPy arrays of ints), the service divides the
    pixels by the contract's scale as `unlearn ingest --data` does, and
    predictions on raw pixels are `unlearn predict --data`'s, bit for bit."""
    from conftest import Service
    import random

    rng = random.Random(5)
    shape = (3, 4)
    images = [[rng.randrange(256) for _ in range(12)] for _ in range(40)]
    labels = [rng.choice((0, 6)) for _ in range(40)]
    data = str(tmp_path / "t-images-idx3-ubyte")
    write_idx(data, images, labels, shape)
    s = Service(unlearn_bin, str(tmp_path / "svc"), init=["--data", data, "--classes", "0,6", "--scale", "7140"])
    try:
        c = unlearn.Client(s.url, s.tokens["all"])
        ct = c.contract()
        assert ct["classes"] == ["0", "6"] and ct["d"] == 12
        assert ct["source"]["format"] == "idx" and ct["source"]["scale"] == 7140 and ct["source"]["shape"] == [3, 4]
        if numpy is not None:
            c.ingest(numpy.array(images, dtype=numpy.uint8), numpy.array(labels), ids=list(range(1, 41)))
        else:
            c.ingest(images, labels, ids=list(range(1, 41)))
        with pytest.raises(unlearn.BadRequestError) as e:
            c.ingest(images[:2], [6, 1])
        assert e.value.field == "labels[1]" and 'want "0" or "6"' in e.value.detail
        with pytest.raises(unlearn.BadRequestError) as e:  # pixels sent already divided
            c.predict([[p / 7140 for p in images[0]]])
        j = next(j for j, p in enumerate(images[0]) if p % 7140 != 0)  # the first pixel that is no longer an integer
        assert e.value.field == "rows[0][%d]" % j and "an IDX pixel is an integer 0" in e.value.detail
        labels_http = c.predict(images)
        proba = c.predict_proba(images)
        out = run(s.bin, "predict", "--store", s.store, "--data", data)
        got = [line.split(",") for line in out.strip().split("\n")]
        assert got[0] == ["id", "label", "p_0", "p_6"]
        assert len(got) == 41
        for row, label, p in zip(got[1:], list(labels_http), list(proba)):
            assert row[1] == label
            assert [float(v) for v in row[2:]] == list(p), "bit for bit"
    finally:
        assert s.stop() == 0
