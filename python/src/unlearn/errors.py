"""The client's exceptions. Every error answer of the service is an RFC 9457
problem document; the client raises it as a ProblemError (or a subclass by
status) carrying its members."""


class UnlearnError(Exception):
    """The base of the client's exceptions."""


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


class ReceiptError(UnlearnError):
    """A receipt that does not verify: malformed, signed by another key,
    edited after signing, or not covering the request's records."""


class WaitTimeout(UnlearnError, TimeoutError):
    """A deletion request was not served within the wait's timeout (it stays
    queued: wait again)."""


_BY_STATUS = {400: BadRequestError, 401: AuthenticationError, 403: ForbiddenError, 404: NotFoundError,
              405: BadRequestError, 408: BadRequestError, 409: ConflictError, 413: BadRequestError,
              415: BadRequestError, 422: BadRequestError, 429: TooManyRequestsError, 503: UnavailableError}


def problem_error(problem, status):
    """The exception of a problem document."""
    return _BY_STATUS.get(status, ProblemError)(problem, status)
