"""The check of a webhook delivery's ``Vinhistory-Signature`` (docs/webhooks.md).

``t=<unix seconds>,v1=<hex HMAC-SHA256 of "<t>.<raw body>">``, keyed by the whole secret
(``whsec_...``), one ``v1`` per signing secret during a rotation.
"""

import hashlib
import hmac
import json
import time
from typing import Any, Dict, Optional, Union

from .errors import VinhistoryError

SIGNATURE_HEADER = "Vinhistory-Signature"
EVENT_ID_HEADER = "Vinhistory-Event-Id"


class WebhookSignatureError(VinhistoryError):
    """A delivery whose signature is missing, wrong or too old."""


def verify_webhook_signature(
    header: str,
    raw_body: Union[bytes, str],
    secret: str,
    *,
    tolerance_seconds: int = 300,
    now: Optional[float] = None,
) -> bool:
    """True when some ``v1`` of the header signs ``raw_body`` with ``secret`` and ``t`` is within
    ``tolerance_seconds`` of now. Pass the body exactly as received, before any JSON parsing."""
    body = raw_body.encode("utf-8") if isinstance(raw_body, str) else raw_body
    timestamp: Optional[int] = None
    signatures = []
    for part in header.split(","):
        name, _, value = part.partition("=")
        name, value = name.strip(), value.strip()
        if name == "t" and value.isdigit():
            timestamp = int(value)
        elif name == "v1":
            signatures.append(value)
    current = time.time() if now is None else now
    if timestamp is None or abs(current - timestamp) > tolerance_seconds:
        return False
    expected = hmac.new(secret.encode("utf-8"), f"{timestamp}.".encode("ascii") + body, hashlib.sha256).hexdigest()
    return any(hmac.compare_digest(expected, given) for given in signatures)


def parse_webhook_event(
    header: Optional[str],
    raw_body: Union[bytes, str],
    secret: str,
    *,
    tolerance_seconds: int = 300,
    now: Optional[float] = None,
) -> Dict[str, Any]:
    """The event of a delivery whose signature holds; raises WebhookSignatureError otherwise."""
    if not header:
        raise WebhookSignatureError(f"no {SIGNATURE_HEADER} header")
    if not verify_webhook_signature(header, raw_body, secret, tolerance_seconds=tolerance_seconds, now=now):
        raise WebhookSignatureError("the signature does not match, or its timestamp is too old")
    event: Dict[str, Any] = json.loads(raw_body)
    return event
