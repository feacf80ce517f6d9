"""Every error the client raises is an unlearn.UnlearnError: input it
refuses (also a ValueError), a service it cannot reach (also a
ConnectionError), a public key that is not one (naming the file), and the
service's problems; predictions from the noised model of a pending
approximate deletion are flagged and warned about."""

import json
import os
import socket
import threading
import warnings

import pytest

import unlearn
from conftest import Service, dataset

try:
    import numpy
except ImportError:  # the client needs no NumPy; these tests use it when present
    numpy = None


def test_input_errors_are_unlearn_and_value_errors(service):
    c = unlearn.Client(service.url, service.tokens["all"])
    cases = [
        (lambda: c.predict([[1.0, float("nan"), 0.0, 0.0]]), "X[0][1] is nan"),
        (lambda: c.predict([[1.0, "two", 0.0, 0.0]]), "X[0][1] is 'two': not a number"),
        (lambda: c.predict([[1.0, 2.0, 3.0, 4.0], [1.0]]), "X[1] 1"),
        (lambda: c.ingest([[1.0] * 4] * 2, [1]), "1 labels for 2 rows"),
        (lambda: c.ingest([[1.0] * 4], [1], ids=["x"]), "ids[0] is 'x': not an integer"),
        (lambda: c.forget(), "name at least one record"),
        (lambda: c.forget(ids=["seven"]), "ids[0]"),
        (lambda: c.release(epsilon="a lot", delta=1e-5), "epsilon and delta"),
        (lambda: c.release(epsilon=float("inf"), delta=1e-5), "JSON cannot carry"),
        (lambda: c.get_release("first"), "a release id is an integer"),
    ]
    for call, words in cases:
        with pytest.raises(unlearn.InputError) as e:
            call()
        assert isinstance(e.value, ValueError) and isinstance(e.value, unlearn.UnlearnError)
        assert words in str(e.value), str(e.value)
    with pytest.raises(unlearn.InputTypeError) as e:
        c.ingest([[1.0] * 4], [object()])
    assert isinstance(e.value, TypeError) and isinstance(e.value, unlearn.UnlearnError)
    if numpy is not None:
        with pytest.raises(unlearn.InputError, match=r"X\[1\]\[2\] is inf"):
            c.predict(numpy.array([[0.0] * 4, [0.0, 0.0, numpy.inf, 0.0]]))


def test_service_unavailable():
    """A refused connection and a service that does not answer in time are
    ServiceUnavailable: an UnlearnError and a ConnectionError."""
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()  # nothing listens there now
    with pytest.raises(unlearn.ServiceUnavailable) as e:
        unlearn.Client("http://127.0.0.1:%d" % port, "t").status()
    assert isinstance(e.value, ConnectionError) and isinstance(e.value, unlearn.UnlearnError)
    assert "127.0.0.1:%d" % port in str(e.value)
    assert not unlearn.Client("http://127.0.0.1:%d" % port, "t").health()

    mute = socket.socket()  # accepts, never answers
    mute.bind(("127.0.0.1", 0))
    mute.listen(1)
    conns = []
    t = threading.Thread(target=lambda: conns.append(mute.accept()), daemon=True)
    t.start()
    try:
        with pytest.raises(unlearn.ServiceUnavailable) as e:
            unlearn.Client("http://127.0.0.1:%d" % mute.getsockname()[1], "t", timeout=0.3).status()
        assert isinstance(e.value, ConnectionError)
        assert "timed out" in str(e.value)
    finally:
        t.join(5)
        for c, _ in conns:
            c.close()
        mute.close()


def test_public_key_that_is_not_one(tmp_path, service):
    """A public key file that is not one — the private key, another
    document, a missing file — is a PublicKeyError naming the file."""
    private = service.key + ".key"
    other = tmp_path / "notes.txt"
    other.write_text("not a key\n")
    doc = tmp_path / "doc.json"
    doc.write_text(json.dumps({"format": "something-else"}))
    missing = str(tmp_path / "nowhere.pub")
    for path, words in ((private, "is not a public key"), (str(other), "not a JSON document"),
                        (str(doc), "'something-else'"), (missing, "cannot be read")):
        with pytest.raises(unlearn.PublicKeyError) as e:
            unlearn.Client(service.url, "t", public_key=path)
        assert path in str(e.value) and words in str(e.value), str(e.value)
        assert isinstance(e.value, unlearn.UnlearnError) and isinstance(e.value, ValueError)
    assert unlearn.Client(service.url, "t", public_key=service.pub).public_key.key_id


def test_every_exception_is_an_unlearn_error():
    for name in unlearn.__all__:
        obj = getattr(unlearn, name)
        if isinstance(obj, type) and issubclass(obj, BaseException) and not issubclass(obj, Warning):
            assert issubclass(obj, unlearn.UnlearnError), name


def test_predictions_from_the_noised_model_are_flagged(unlearn_bin, tmp_path):
    """While an approximate deletion is pending, predict and predict_proba
    warn (NoisedModelWarning) and flag their result (noised,
    pending_requests); the exact model's are not flagged."""
    d = 3
    s = Service(unlearn_bin, str(tmp_path), d=d, init_extra=["--radius", "100", "--sample-bound", "1e4"],
                serve_extra=["--max-replay", "5", "--intervention", "noop", "--epsilon", "1", "--delta", "1e-5"],
                budget=(10, 1e-3))
    try:
        c = unlearn.Client(s.url, s.tokens["all"], public_key=s.pub)
        X, y = dataset(60, d)
        c.ingest(X, y, ids=list(range(1, 61)))
        with warnings.catch_warnings():
            warnings.simplefilter("error")  # no warning for the exact model
            p = c.predict(X[:3])
        assert p.noised is False and p.pending_requests == () and c.noised_ is False
        receipt = c.forget(ids=[3], wait=True).wait(timeout=60)
        assert receipt["path"] == "approximate"
        with pytest.warns(unlearn.NoisedModelWarning, match="noised model") as w:
            p = c.predict(X[:3])
        assert issubclass(w[0].category, UserWarning)
        assert p.noised is True and p.pending_requests == (receipt["batch"]["store_request"],)
        assert isinstance(p, list) and len(p) == 3 and c.noised_ is True
        if numpy is not None:
            with pytest.warns(unlearn.NoisedModelWarning):
                pr = c.predict_proba(numpy.asarray(X[:3]))
            assert isinstance(pr, numpy.ndarray) and pr.shape == (3, 2) and pr.noised is True
            assert (pr.sum(axis=1) > 0.999).all()
    finally:
        assert s.stop() == 0
