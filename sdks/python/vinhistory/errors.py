"""The errors the clients raise: one class per status of an error answer, and two for no answer."""

from typing import Any, Dict, List, Mapping, Optional, Type

from ._types import ErrorCode


class VinhistoryError(Exception):
    """Every error of this package."""


class VinhistoryApiError(VinhistoryError):
    """An error answer of the API (a status outside 2xx).

    Catch this class for all of them, or a subclass for one status; ``code`` tells apart the
    errors that share a status (``rate_limited`` and ``quota_exceeded`` are both 429).
    """

    def __init__(
        self,
        *,
        status: int,
        code: Optional[ErrorCode],
        message: str,
        errors: Optional[Dict[str, List[str]]],
        request_id: Optional[str],
        retry_after: Optional[int],
        headers: Mapping[str, str],
        body: Any,
    ) -> None:
        super().__init__(message)
        self.status = status
        self.code = code
        self.message = message
        #: For a 422: each refused field (or header) with what is wrong.
        self.errors = errors
        #: ``X-Request-Id``: quote it to support.
        self.request_id = request_id
        #: ``Retry-After`` in seconds, on a 429 or 503.
        self.retry_after = retry_after
        self.headers = headers
        #: The body as parsed JSON, or its text when it was not JSON.
        self.body = body

    def __str__(self) -> str:
        return f"{self.status} {self.code or ''}: {self.message}".replace("  ", " ")


class BadRequestError(VinhistoryApiError):
    """400: the request could not be read (a body that is not JSON)."""


class AuthenticationError(VinhistoryApiError):
    """401: the token is missing, unknown or revoked."""


class SubscriptionRequiredError(VinhistoryApiError):
    """402: the account has no subscription in force."""


class PermissionDeniedError(VinhistoryApiError):
    """403: a sandbox token on an operation that takes only live tokens."""


class NotFoundError(VinhistoryApiError):
    """404: no records for the VIN or lot (``no_records``, counted), or no such resource (``not_found``)."""


class ConflictError(VinhistoryApiError):
    """409: the plan's watch limit, a disabled webhook endpoint."""


class PayloadTooLargeError(VinhistoryApiError):
    """413: the body is larger than the operation takes."""


class UnprocessableEntityError(VinhistoryApiError):
    """422: a field, parameter or header is refused (``errors`` says which), or an Idempotency-Key conflict."""


class RateLimitError(VinhistoryApiError):
    """429: the per-second rate (``rate_limited``) or the monthly quota (``quota_exceeded``); ``retry_after`` says when."""


class ServiceUnavailableError(VinhistoryApiError):
    """503: the service is busy; nothing was done or counted."""


class InternalServerError(VinhistoryApiError):
    """Any other 5xx: a fault of the service."""


class VinhistoryConnectionError(VinhistoryError):
    """No answer came: the connection failed or was refused."""


class VinhistoryTimeoutError(VinhistoryConnectionError):
    """The request took longer than its timeout; nothing is known of what the service did."""


_BY_STATUS: Dict[int, Type[VinhistoryApiError]] = {
    400: BadRequestError,
    401: AuthenticationError,
    402: SubscriptionRequiredError,
    403: PermissionDeniedError,
    404: NotFoundError,
    409: ConflictError,
    413: PayloadTooLargeError,
    422: UnprocessableEntityError,
    429: RateLimitError,
    503: ServiceUnavailableError,
}


def error_class_for(status: int) -> Type[VinhistoryApiError]:
    """The class of an error answer's status: its own, else the base (a 5xx: InternalServerError)."""
    return _BY_STATUS.get(status) or (InternalServerError if status >= 500 else VinhistoryApiError)
