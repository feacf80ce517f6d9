"""The client of `unlearn serve` (docs/service.md, docs/openapi.json)."""

import array
import base64
import json
import math
import secrets
import sys
import time
import urllib.error
import urllib.request

from .errors import ProblemError, ReceiptError, UnavailableError, UnlearnError, WaitTimeout, problem_error
from .receipt import NONCE_SIZE, PublicKey, verify_receipt

try:  # NumPy is optional: arrays are accepted, and returned for arrays
    import numpy as _np
except ImportError:  # pragma: no cover - exercised where NumPy is missing
    _np = None


def _is_array(x):
    return _np is not None and isinstance(x, _np.ndarray)


def _rows(X, name="X"):
    """X as a list of rows of floats, checked to be a 2-D table of finite
    numbers."""
    if _is_array(X):
        if X.ndim != 2:
            raise ValueError("%s: a 2-D array (rows × features) is needed, got %d dimensions" % (name, X.ndim))
        if not _np.isfinite(X).all():
            raise ValueError("%s: NaN or infinite values" % name)
        return X
    rows = [list(map(float, r)) for r in X]
    if rows and any(len(r) != len(rows[0]) for r in rows):
        raise ValueError("%s: rows of different lengths" % name)
    for i, r in enumerate(rows):
        for j, v in enumerate(r):
            if not math.isfinite(v):
                raise ValueError("%s[%d][%d] is not finite" % (name, i, j))
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


def _list(v, convert):
    if v is None:
        return None
    if _is_array(v):
        v = v.tolist()
    return [convert(x) for x in v]


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

    def _request(self, method, path, body=None, timeout=None):
        data = None
        headers = {"Authorization": "Bearer " + self._token, "Accept": "application/json"}
        if body is not None:
            data = json.dumps(body, allow_nan=False).encode("utf-8")
            headers["Content-Type"] = "application/json"
        req = urllib.request.Request(self.url + path, data=data, method=method, headers=headers)
        try:
            with urllib.request.urlopen(req, timeout=timeout or self.timeout, context=self._ssl) as res:
                raw = res.read()
                if res.headers.get_content_type() == "application/json":
                    return json.loads(raw)
                return raw.decode("utf-8")
        except urllib.error.HTTPError as e:
            raw = e.read()
            try:
                doc = json.loads(raw)
            except ValueError:
                doc = {"status": e.code, "title": e.reason, "detail": raw.decode("utf-8", "replace")[:500]}
            err = problem_error(doc, e.code)
            if isinstance(err, UnavailableError) and e.headers.get("Retry-After", "").isdigit():
                err.retry_after = int(e.headers["Retry-After"])
            raise err from None

    # -- the API ------------------------------------------------------------

    def ingest(self, X, y, ids=None, keys=None, columns=None):
        """Appends rows X (features) with labels y — and their integer ids
        and string keys, if given, one per row — to the store's log and
        trains on them, in one transaction. y is ±1 for a binary store, the
        class index 0 … K−1 (the position of the class in ``classes_``) for
        a multinomial one, the target of a regression. columns, or the
        column names of a table with ``columns`` (a pandas DataFrame), are
        checked by the service against the store's feature columns (names
        and order); without them only the row length is. Returns the
        service's answer: a dict with events, head (the log position of the
        last row), checkpoints and ids (the rows' ids, numbered by the
        service when ids is None)."""
        X, columns = _named(X, columns)
        rows = _rows(X)
        labels = _list(y, float)
        body = {"rows_f64": _pack(rows), "cols": _cols(rows), "labels": labels}
        if len(labels) != len(rows):
            raise ValueError("%d labels for %d rows" % (len(labels), len(rows)))
        if ids is not None:
            body["ids"] = _list(ids, int)
        if keys is not None:
            body["keys"] = _list(keys, str)
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
        return out, _is_array(X)

    def predict(self, X, columns=None):
        """The predicted class of each row of X, in the data's own class
        names (strings, one of ``classes_``), or its predicted value for a
        regression store. columns (or a DataFrame's column names) are
        checked against the model's features as in ingest. The model is the
        store's current state with everything it predicts with: its
        intercepts, standardization and averaged iterates."""
        out, arr = self._predict(X, columns)
        labels = out["predictions"]
        return _np.asarray(labels) if arr else labels

    def predict_proba(self, X, columns=None):
        """The probability of each class for each row of X, in the order of
        ``classes_`` (set by this call: the class labels in the data's own
        names, ["-1", "1"] for a binary store trained without names, K
        labels for a multinomial one): like scikit-learn's predict_proba."""
        out, arr = self._predict(X, columns)
        if out.get("probabilities") is None:
            raise UnlearnError("the store's model is a regression: it has no class probabilities")
        return _np.asarray(out["probabilities"]) if arr else out["probabilities"]

    def forget(self, ids=None, keys=None, wait=False):
        """Files a deletion request for the records with these ids and keys.
        It returns once the service has durably queued it, as a
        ForgetRequest; its wait() returns the verified receipt once it is
        served. With wait=True the service serves its queue at once rather
        than by the deadline."""
        ids = _list(ids, int) or []
        keys = _list(keys, str) or []
        if not ids and not keys:
            raise ValueError("name at least one record: ids or keys")
        nonce = secrets.token_bytes(NONCE_SIZE)
        body = {"nonce": nonce.hex(), "wait": bool(wait)}
        if ids:
            body["ids"] = ids
        if keys:
            body["keys"] = keys
        return ForgetRequest(self, self._request("POST", "/v1/forget", body), nonce, ids, keys)

    def request(self, request_id):
        """The state of a deletion request by id, as a dict (its receipt
        file under "receipt" once served, and "path"; for a request served
        on the approximate path, "resolution": "pending" until the exact
        replay the store's resolution policy runs, then "resolved", with
        "resolved" and "resolved_by")."""
        return self._request("GET", "/v1/forget/" + request_id)

    def release(self, epsilon, delta, memory="reset", calibration="analytic"):
        """Publishes a certified release of the model, charged to the
        store's privacy budget when it carries noise; returns it as a dict
        with ``release`` and ``certificate``, the texts of the two files
        (save them as they are: the certificate covers the release file's
        SHA-256), and its id, head, path, exact, epsilon, delta."""
        return self._request("POST", "/v1/releases", {"epsilon": float(epsilon), "delta": float(delta),
                                                      "memory": memory, "calibration": calibration})

    def releases(self):
        """The releases kept in the store (without their files)."""
        return self._request("GET", "/v1/releases")["releases"]

    def get_release(self, release_id):
        """One kept release, with the texts of its file and certificate."""
        return self._request("GET", "/v1/releases/%d" % int(release_id))

    def status(self):
        """The store, the deletion queue and the budget, as a dict."""
        return self._request("GET", "/v1/status")

    def health(self):
        """True while the service runs (GET /healthz, no token needed)."""
        try:
            return self._request("GET", "/healthz")["status"] == "ok"
        except (ProblemError, OSError):
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
        self.nonce = nonce
        self.ids, self.keys = list(ids), list(keys)

    def __repr__(self):
        return "ForgetRequest(%s, records=%d, deadline=%s)" % (self.id, self.records, self.deadline)

    def state(self):
        """The request's state as the service reports it."""
        return self._client.request(self.id)

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
                                       timeout=poll + self._client.timeout)
            if st["state"] == "served":
                return verify_receipt(st["receipt"], key, self.nonce, self.ids, self.keys)
            if st["state"] == "refused":
                raise UnlearnError("deletion request %s was refused: %s" % (self.id, st.get("reason", "")))
            if end is not None and time.monotonic() >= end:
                raise WaitTimeout("deletion request %s is still queued (deadline %s)" % (self.id, self.deadline))
