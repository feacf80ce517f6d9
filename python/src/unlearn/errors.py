"""The client's exceptions and warnings. Every exception the client raises
is an UnlearnError: an error answer of the service (an RFC 9457 problem
document) as a ProblemError, or a subclass by status, carrying its members;
input the client refuses before sending it as an InputError (a ValueError
too); a service that cannot be reached as ServiceUnavailable (a
ConnectionError too); a public key that is not one as PublicKeyError; a
receipt that does not verify as ReceiptError."""


class UnlearnError(Exception):
    """The base of the client's exceptions: ``except unlearn.UnlearnError``
    catches every error the client raises."""


class InputError(UnlearnError, ValueError):
    """Input the client refuses before sending it (rows that are not a table
    of finite numbers, as many labels as rows, a deletion request naming no
    record, …). A ValueError too, so that ``except ValueError`` keeps
    working."""


class InputTypeError(InputError, TypeError):
    """Input of the wrong type (a label that is neither a class name nor a
    number). A TypeError and an InputError."""


class ServiceUnavailable(UnlearnError, ConnectionError):
    """The service could not be reached or did not answer in time
    (connection refused, a name that does not resolve, a timeout, a TLS
    failure). A ConnectionError too. ``reason`` is the underlying error."""

    def __init__(self, url, reason):
        self.url, self.reason = url, reason
        super().__init__("the service at %s did not answer: %s" % (url, reason))


class UnlearnWarning(UserWarning):
    """The base of the client's warnings."""


class NoisedModelWarning(UnlearnWarning):
    """Predictions answered by the noised model an approximate deletion
    left, while the exact replay that resolves it is pending: they are
    worse than the exact model's, the more so the larger the noise
    (docs/service.md, "The approximate path"). Silence it with
    ``warnings.simplefilter("ignore", unlearn.NoisedModelWarning)``; the
    result's ``noised`` attribute says the same."""


class ReceiptError(UnlearnError):
    """A receipt that does not verify: malformed, signed by another key,
    edited after signing, or not covering the request's records."""


class PublicKeyError(ReceiptError, ValueError):
    """A public key that is not one: a file that cannot be read, or that is
    not an ``unlearn keygen`` NAME.pub file (the private NAME.key, another
    JSON document, …). The message names the file. A ValueError, and a
    ReceiptError (no receipt can be verified with it)."""


class ProblemError(UnlearnError):
    """An error answer of the service: an RFC 9457 problem document.

    Attributes: status (the HTTP status), type (urn:unlearn:problem:…),
    title, detail, field (the request member at fault, if one is), and
    problem (the whole document as a dict)."""

    def __init__(self, problem, status=None):
        self.problem = dict(problem)
        self.status = self.problem.get("status", status)
        self.type = self.problem.get("type", "about:blank")
        self.title = self.problem.get("title", "")
        self.detail = self.problem.get("detail", "")
        self.field = self.problem.get("field")
        msg = "%s %s: %s" % (self.status, self.title, self.detail)
        if self.field:
            msg += " [%s]" % self.field
        super().__init__(msg)

    @property
    def kind(self):
        """The problem's kind: its type without urn:unlearn:problem: (bad-request, unauthorized, …)."""
        return self.type.rsplit(":", 1)[-1]


class BadRequestError(ProblemError):
    """400, 413, 415 and 422: the request is malformed or its content refused."""


class AuthenticationError(ProblemError):
    """401: no token, or an unknown or revoked one."""


class ForbiddenError(ProblemError):
    """403: the token lacks the route's scope (``.problem["scope"]``)."""


class NotFoundError(ProblemError):
    """404: no such route, deletion request or release."""


class ConflictError(ProblemError):
    """409: an id or key the store already holds, a budget exceeded, a store
    that cannot predict or publish."""


class UnavailableError(ProblemError):
    """503: the store is busy with another write, or the service is shutting
    down; retry (``retry_after`` seconds, when the service said)."""

    retry_after = None


class TooManyRequestsError(ProblemError):
    """429: a limit of the service (the deletion queue, a token's share of
    it, the predictions running at once); retry after ``retry_after``
    seconds."""

    retry_after = None


class WaitTimeout(UnlearnError, TimeoutError):
    """A deletion request was not served within the wait's timeout (it stays
    queued: wait again)."""


_BY_STATUS = {400: BadRequestError, 401: AuthenticationError, 403: ForbiddenError, 404: NotFoundError,
              405: BadRequestError, 408: BadRequestError, 409: ConflictError, 413: BadRequestError,
              415: BadRequestError, 422: BadRequestError, 429: TooManyRequestsError, 503: UnavailableError}


def problem_error(problem, status):
    """The exception of a problem document."""
    return _BY_STATUS.get(status, ProblemError)(problem, status)
