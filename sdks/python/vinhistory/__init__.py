"""Client of the vinhistory API: sync (``Vinhistory``) and asyncio (``AsyncVinhistory``)."""

from ._client import AsyncVinhistory, Vinhistory
from ._core import SDK_VERSION, RequestOptions, retry_after_seconds
from ._types import *  # noqa: F403 - every generated type is part of the package's interface
from .errors import (
    AuthenticationError,
    BadRequestError,
    ConflictError,
    InternalServerError,
    NotFoundError,
    PayloadTooLargeError,
    PermissionDeniedError,
    RateLimitError,
    ServiceUnavailableError,
    SubscriptionRequiredError,
    UnprocessableEntityError,
    VinhistoryApiError,
    VinhistoryConnectionError,
    VinhistoryError,
    VinhistoryTimeoutError,
)
from .webhooks import EVENT_ID_HEADER, SIGNATURE_HEADER, WebhookSignatureError, parse_webhook_event, verify_webhook_signature

__version__ = SDK_VERSION
