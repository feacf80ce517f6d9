"""The client of `unlearn serve` (docs/service.md, docs/openapi.json)."""

import array
import base64
import json
import math
import secrets
import sys
import socket
import ssl
import time
import urllib.error
import urllib.request
import warnings

from .errors import (InputError, InputTypeError, NoisedModelWarning, ReceiptError, ServiceUnavailable, UnlearnError,
                     WaitTimeout, problem_error)
from .receipt import NONCE_SIZE, PublicKey, verify_receipt

try:  # NumPy is optional: arrays are accepted, and returned for arrays
    import numpy as _np
except ImportError:  # pragma: no cover - exercised where NumPy is missing
    _np = None


def _is_array(x):
    return _np is not None and isinstance(x, _np.ndarray)


def _rows(X, name="X"):
    """X as a list of rows of floats, checked to be a 2-D table of finite
    numbers (InputError otherwise, naming the row and value)."""
    if _is_array(X):
        if X.ndim != 2:
            raise InputError("%s: a 2-D array (rows × features) is needed, got %d dimensions" % (name, X.ndim))
        try:
            X = _np.asarray(X, dtype=float)
        except (TypeError, ValueError) as e:
            raise InputError("%s: not an array of numbers: %s" % (name, e)) from None
        bad = _np.argwhere(~_np.isfinite(X))
        if len(bad):
            i, j = (int(v) for v in bad[0])
            raise InputError("%s[%d][%d] is %r: every value must be a finite number" % (name, i, j, float(X[i, j])))
        return X
    rows = []
    for i, r in enumerate(X):
        try:
            r = list(r)
        except TypeError:
            raise InputError("%s[%d] is not a row of numbers: %r" % (name, i, r)) from None
        row = []
        for j, v in enumerate(r):
            try:
                v = float(v)
            except (TypeError, ValueError):
                raise InputError("%s[%d][%d] is %r: not a number" % (name, i, j, v)) from None
            if not math.isfinite(v):
                raise InputError("%s[%d][%d] is %r: every value must be a finite number" % (name, i, j, v))
            row.append(v)
        rows.append(row)
    if rows and any(len(r) != len(rows[0]) for r in rows):
        i = next(i for i, r in enumerate(rows) if len(r) != len(rows[0]))
        raise InputError("%s: rows of different lengths: %s[0] has %d values, %s[%d] %d" % (name, name, len(rows[0]), name, i, len(rows[i])))
    return rows


def _cols(rows):
    """The number of values in a row (0 for no rows)."""
    if _is_array(rows):
        return int(rows.shape[1])
    return len(rows[0]) if rows else 0


def _pack(rows):
    """rows_f64: the rows' float64 values, little-endian, base64 — exact and
    far cheaper than decimal text."""
    if _is_array(rows):
        return base64.b64encode(_np.ascontiguousarray(rows, dtype="<f8").tobytes()).decode("ascii")
    a = array.array("d", (v for r in rows for v in r))
    if sys.byteorder != "little":
        a.byteswap()
    return base64.b64encode(a.tobytes()).decode("ascii")


def _named(X, columns):
    """X and its column names: columns as given, else a table's own (a
    pandas DataFrame's ``columns``, its values taken as an array)."""
    if columns is None and hasattr(X, "columns") and hasattr(X, "to_numpy"):
        columns = list(X.columns)
    if hasattr(X, "to_numpy") and not _is_array(X):
        X = X.to_numpy(dtype=float)
    if columns is not None:
        columns = [str(c) for c in columns]
    return X, columns


def _list(v, convert, name="values"):
    if v is None:
        return None
    if _is_array(v):
        v = v.tolist()
    out = []
    for i, x in enumerate(v):
        try:
            out.append(convert(x))
        except InputError:
            raise
        except (TypeError, ValueError):
            raise InputError("%s[%d] is %r: not %s" % (name, i, x, "an integer" if convert is int else "a string")) from None
    return out


def _label(v):
    """A row's label as the service takes it: a class name (a string) or a
    number, as is (a NumPy scalar as its Python value)."""
    if hasattr(v, "item") and not isinstance(v, (str, bytes)):
        v = v.item()
    if isinstance(v, bytes):
        v = v.decode("utf-8")
    if isinstance(v, bool) or not isinstance(v, (str, int, float)):
        raise InputTypeError("a label is a class name (a string) or a number, not %r" % (v,))
    if isinstance(v, float) and not math.isfinite(v):
        raise InputError("a label is a finite number or a class name, not %r" % v)
    return v


class PredictionList(list):
    """The predictions for rows given as lists: a list, with ``noised``
    (True when the model that answered is the noised one an approximate
    deletion left, pending its exact replay: see NoisedModelWarning) and
    ``pending_requests`` (the store requests pending that replay)."""

    noised = False
    pending_requests = ()


if _np is not None:
    class PredictionArray(_np.ndarray):
        """The predictions for rows given as a NumPy array: an ndarray, with
        ``noised`` and ``pending_requests`` as PredictionList's."""

        noised = False
        pending_requests = ()

        def __array_finalize__(self, obj):
            self.noised = getattr(obj, "noised", False)
            self.pending_requests = getattr(obj, "pending_requests", ())

        def __repr__(self):  # shown as the plain array it is
            return repr(self.view(_np.ndarray))
else:  # pragma: no cover - without NumPy, predictions are lists
    PredictionArray = None


def _flagged(values, arr, out):
    """values as the result type (an array for arrays), carrying the
    answer's noised flag."""
    res = _np.asarray(values).view(PredictionArray) if arr else PredictionList(values)
    res.noised = bool(out.get("noised", False))
    res.pending_requests = tuple(out.get("pending_requests") or ())
    return res


SECRET_HEADER = "Unlearn-Request-Secret"


class Client:
    """A client of one `unlearn serve` service.

    url is the service's base URL ("http://127.0.0.1:8080"), token a bearer
    token from ``unlearn token create`` with the scopes of the calls you make.
    public_key is the certifier's public key (the NAME.pub file of ``unlearn
    keygen``, its text or its 32 bytes): receipts are verified with it, and
    ForgetRequest.wait needs it. timeout bounds each HTTP request in seconds;
    ssl_context is passed to urllib for an https URL (a service with
    --tls-cert).

    Methods take plain lists or NumPy arrays; predictions come back as NumPy
    arrays when X was one, lists otherwise. Errors of the service are raised
    as ProblemError subclasses carrying the RFC 9457 problem document.
    """

    def __init__(self, url, token, public_key=None, timeout=60.0, ssl_context=None):
        self.url = url.rstrip("/")
        self._token = token
        self.public_key = PublicKey(public_key) if public_key is not None else None
        self.timeout = timeout
        self._ssl = ssl_context

    def __repr__(self):
        return "Client(%r)" % self.url  # never the token

    # -- HTTP ---------------------------------------------------------------

    def _request(self, method, path, body=None, timeout=None, headers=None):
        data = None
        headers = dict(headers or {}, Authorization="Bearer " + self._token, Accept="application/json")
        if body is not None:
            try:
                data = json.dumps(body, allow_nan=False).encode("utf-8")
            except ValueError as e:  # NaN or infinity in a number given
                raise InputError("the request holds a value JSON cannot carry: %s" % e) from None
            headers["Content-Type"] = "application/json"
        req = urllib.request.Request(self.url + path, data=data, method=method, headers=headers)
        try:
            return self._send(req, timeout)
        except (urllib.error.URLError, ConnectionError, socket.timeout, TimeoutError, ssl.SSLError) as e:
            raise ServiceUnavailable(self.url, getattr(e, "reason", None) or e) from None
        except OSError as e:  # a reset while reading the answer, …
            raise ServiceUnavailable(self.url, e) from None

    def _send(self, req, timeout):
        try:
            with urllib.request.urlopen(req, timeout=timeout or self.timeout, context=self._ssl) as res:
                raw = res.read()
                if res.headers.get_content_type() == "application/json":
                    try:
                        return json.loads(raw)
                    except ValueError:
                        raise UnlearnError("the service's answer to %s %s is not JSON" % (req.get_method(), req.full_url)) from None
                return raw.decode("utf-8")
        except urllib.error.HTTPError as e:
            raw = e.read()
            try:
                doc = json.loads(raw)
            except ValueError:
                doc = {"status": e.code, "title": e.reason, "detail": raw.decode("utf-8", "replace")[:500]}
            err = problem_error(doc, e.code)
            if e.headers.get("Retry-After", "").isdigit():
                err.retry_after = int(e.headers["Retry-After"])
            raise err from None

    # -- the API ------------------------------------------------------------

    def ingest(self, X, y, ids=None, keys=None, columns=None):
        """Appends rows X (features) with labels y — and their integer ids
        and string keys, if given, one per row — to the store's log and
        trains on them, in one transaction. X is in the data's own units, as
        the store's data contract describes its source (``contract()``): a
        CSV's values, an IDX image's raw pixels 0…255 (the service divides
        them by the contract's scale, as ``unlearn ingest --data`` does). y
        holds each row's label in the data's class names (``contract()
        ["classes"]``), strings or numbers (6 and "6" are class "6"; a NumPy
        array of ints or strings): "-1" or "1" for a binary store whose
        contract names no classes, "0" … "K−1" for such a multinomial one,
        the target of a regression. A label that is not a class is refused
        (BadRequestError naming the row and the classes). columns, or the
        column names of a table with ``columns`` (a pandas DataFrame), are
        checked by the service against the store's feature columns (names
        and order); without them only the row length is. Returns the
        service's answer: a dict with events, head (the log position of the
        last row), checkpoints and ids (the rows' ids, numbered by the
        service when ids is None)."""
        X, columns = _named(X, columns)
        rows = _rows(X)
        try:
            labels = [_label(v) for v in (y.tolist() if _is_array(y) else y)]
        except TypeError as e:
            if isinstance(e, InputError):
                raise
            raise InputError("y: not a sequence of labels: %s" % e) from None
        body = {"rows_f64": _pack(rows), "cols": _cols(rows), "labels": labels}
        if len(labels) != len(rows):
            raise InputError("%d labels for %d rows" % (len(labels), len(rows)))
        if ids is not None:
            body["ids"] = _list(ids, int, "ids")
        if keys is not None:
            body["keys"] = _list(keys, str, "keys")
        if columns is not None:
            body["columns"] = columns
        return self._request("POST", "/v1/events", body)

    def _predict(self, X, columns):
        X, columns = _named(X, columns)
        rows = _rows(X)
        body = {"rows_f64": _pack(rows), "cols": _cols(rows)}
        if columns is not None:
            body["columns"] = columns
        out = self._request("POST", "/v1/predict", body)
        if out.get("classes") is not None:
            self.classes_ = out["classes"]
        self.noised_ = bool(out.get("noised", False))
        if self.noised_:
            pending = ", ".join(str(r) for r in out.get("pending_requests") or ())
            warnings.warn(NoisedModelWarning(
                "the predictions come from the noised model an approximate deletion left (store request %s pending "
                "its exact replay): they are worse than the exact model's until that replay runs" % pending),
                stacklevel=3)
        return out, _is_array(X)

    def predict(self, X, columns=None):
        """The predicted class of each row of X, in the data's own class
        names (strings, one of ``classes_``), or its predicted value for a
        regression store. X is in the data's own units, as in ingest: what
        ``unlearn predict --data`` answers for the same raw rows, bit for
        bit. columns (or a DataFrame's column names) are
        checked against the model's features as in ingest. The model is the
        store's current state with everything it predicts with: its
        intercepts, standardization and averaged iterates."""
        out, arr = self._predict(X, columns)
        return _flagged(out["predictions"], arr, out)

    def predict_proba(self, X, columns=None):
        """The probability of each class for each row of X, in the order of
        ``classes_`` (set by this call: the class labels in the data's own
        names, ["-1", "1"] for a binary store trained without names, K
        labels for a multinomial one): like scikit-learn's predict_proba."""
        out, arr = self._predict(X, columns)
        if out.get("probabilities") is None:
            raise UnlearnError("the store's model is a regression: it has no class probabilities")
        return _flagged(out["probabilities"], arr, out)

    def forget(self, ids=None, keys=None, wait=False):
        """Files a deletion request for the records with these ids and keys.
        It returns once the service has durably queued it, as a
        ForgetRequest; its wait() returns the verified receipt once it is
        served. With wait=True the service serves its queue at once rather
        than by the deadline."""
        ids = _list(ids, int, "ids") or []
        keys = _list(keys, str, "keys") or []
        if not ids and not keys:
            raise InputError("name at least one record: ids or keys")
        nonce = secrets.token_bytes(NONCE_SIZE)
        body = {"nonce": nonce.hex(), "wait": bool(wait)}
        if ids:
            body["ids"] = ids
        if keys:
            body["keys"] = keys
        return ForgetRequest(self, self._request("POST", "/v1/forget", body), nonce, ids, keys)

    def request(self, request_id, secret):
        """The state of a deletion request by id, as a dict (its receipt
        file under "receipt" once served, and "path"; for a request served
        on the approximate path, "resolution": "pending" until the exact
        replay the store's resolution policy runs, then "resolved", with
        "resolved" and "resolved_by"). secret is the request's secret
        (ForgetRequest.secret, returned once when it was filed): the service
        answers only its holder (NotFoundError otherwise)."""
        return self._request("GET", "/v1/forget/" + request_id, headers={SECRET_HEADER: secret})

    def release(self, epsilon, delta, memory="reset", calibration="analytic"):
        """Publishes a certified release of the model, charged to the
        store's privacy budget when it carries noise; returns it as a dict
        with ``release`` and ``certificate``, the texts of the two files
        (save them as they are: the certificate covers the release file's
        SHA-256), and its id, head, path, exact, epsilon, delta."""
        try:
            epsilon, delta = float(epsilon), float(delta)
        except (TypeError, ValueError):
            raise InputError("epsilon and delta are numbers, not %r and %r" % (epsilon, delta)) from None
        return self._request("POST", "/v1/releases", {"epsilon": epsilon, "delta": delta,
                                                      "memory": memory, "calibration": calibration})

    def releases(self):
        """The releases kept in the store (without their files)."""
        return self._request("GET", "/v1/releases")["releases"]

    def get_release(self, release_id):
        """One kept release, with the texts of its file and certificate."""
        try:
            release_id = int(release_id)
        except (TypeError, ValueError):
            raise InputError("a release id is an integer, not %r" % (release_id,)) from None
        return self._request("GET", "/v1/releases/%d" % release_id)

    def contract(self):
        """The model's data contract, as a dict: kind, d, k (multinomial),
        classes (the labels ingest takes and predict answers, in the order
        of predict_proba's columns; None for a regression) and source (the
        data file's format, its CSV feature columns in the order of a row,
        an IDX image's shape and the scale its raw pixels are divided by,
        or None for a store made without a data file, whose rows are the
        stream's own values)."""
        return self._request("GET", "/v1/contract")

    def status(self):
        """The store, the deletion queue and the budget, as a dict."""
        return self._request("GET", "/v1/status")

    def health(self):
        """True while the service runs (GET /healthz, no token needed)."""
        try:
            return self._request("GET", "/healthz")["status"] == "ok"
        except UnlearnError:
            return False


class ForgetRequest:
    """A deletion request the service has durably queued. ``id`` names it;
    ``received`` and ``deadline`` are the service's times; ``records`` the
    number of distinct records it names. The nonce, ids and keys stay here,
    to check that the receipt covers exactly them."""

    def __init__(self, client, answer, nonce, ids, keys):
        self._client = client
        self.id = answer["request"]
        self.received = answer["received"]
        self.deadline = answer["deadline"]
        self.records = answer["records"]
        self.commitment = answer["commitment"]
        self.secret = answer["secret"]  # the capability to read the request's state: keep it with the nonce
        self.nonce = nonce
        self.ids, self.keys = list(ids), list(keys)

    def __repr__(self):
        return "ForgetRequest(%s, records=%d, deadline=%s)" % (self.id, self.records, self.deadline)

    def state(self):
        """The request's state as the service reports it."""
        return self._client.request(self.id, self.secret)

    def wait(self, timeout=None, public_key=None):
        """Waits until the request is served (at most timeout seconds; None:
        as long as it takes) and returns its receipt,
        verified: signed by the certifier's public key (the Client's, or
        public_key), unedited, and committed to exactly this request's ids
        and keys. Raises WaitTimeout if it is still queued then, and
        ReceiptError if the receipt does not verify."""
        key = PublicKey(public_key) if public_key is not None else self._client.public_key
        if key is None:
            raise ReceiptError("no public key to verify the receipt with: give Client(..., public_key='certifier.pub')")
        if timeout is None:
            end = None
        else:
            end = time.monotonic() + timeout
        while True:
            left = 25.0 if end is None else max(0.0, end - time.monotonic())
            poll = min(25.0, left)
            st = self._client._request("GET", "/v1/forget/%s?wait=%.3f" % (self.id, poll),
                                       timeout=poll + self._client.timeout, headers={SECRET_HEADER: self.secret})
            if st["state"] == "served":
                return verify_receipt(st["receipt"], key, self.nonce, self.ids, self.keys)
            if st["state"] == "refused":
                raise UnlearnError("deletion request %s was refused: %s" % (self.id, st.get("reason", "")))
            if end is not None and time.monotonic() >= end:
                raise WaitTimeout("deletion request %s is still queued (deadline %s)" % (self.id, self.deadline))
