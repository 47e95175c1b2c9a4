"""The transport under the generated clients: URLs, headers, the bounded retry, errors, answers."""

import asyncio
import email.utils
import json
import random
import re
import time
from dataclasses import dataclass, field
from typing import Any, AsyncIterator, Awaitable, Callable, Dict, Iterator, Mapping, Optional, Tuple
from urllib.parse import quote, urlencode

import httpx
from typing_extensions import TypedDict

from .errors import VinhistoryApiError, VinhistoryConnectionError, VinhistoryTimeoutError, error_class_for

SDK_VERSION = "1.0.0"
_RETRIED = (429, 503)
_UNSET: Any = object()


class RequestOptions(TypedDict, total=False):
    """Per call: ``timeout`` (seconds), ``max_retries``, ``retry`` (force retrying a 429/503 on or
    off: by default free calls are retried, counted ones only with an idempotency_key), extra
    ``headers``, and ``on_response`` (called with every answer: status and headers)."""

    timeout: float
    max_retries: int
    retry: bool
    headers: Mapping[str, str]
    on_response: Callable[[httpx.Response], None]


@dataclass(frozen=True)
class CallSpec:
    """One operation's request, as the generated client describes it."""

    method: str
    path: str
    path_params: Dict[str, Any] = field(default_factory=dict)
    query: Dict[str, Any] = field(default_factory=dict)
    headers: Dict[str, Any] = field(default_factory=dict)
    body: Any = _UNSET
    text_media_type: Optional[str] = None
    counted: bool = False
    answer: str = "json"


def retry_after_seconds(value: Optional[str], now: Optional[float] = None) -> Optional[int]:
    """``Retry-After`` in seconds: a number of seconds, or an HTTP date."""
    if value is None or not value.strip():
        return None
    if value.strip().isdigit():
        return int(value.strip())
    try:
        moment = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    return max(0, int(moment.timestamp() - (time.time() if now is None else now) + 0.999))


def _text(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


class _Base:
    def __init__(
        self,
        token: str,
        base_url: str,
        *,
        timeout: float = 30.0,
        max_retries: int = 2,
        max_retry_delay: float = 30.0,
        headers: Optional[Mapping[str, str]] = None,
    ) -> None:
        """``token``: an API token (``vh_live_...`` or a sandbox ``vh_test_...``); ``base_url``: the
        service's address (``https://api.example.com``). ``max_retries`` bounds the retries of a 429
        or 503 (0 turns them off); a Retry-After longer than ``max_retry_delay`` seconds (a monthly
        quota used up) is raised at once."""
        if not token:
            raise ValueError("token is required: an API token from the account (vh_live_... or vh_test_...)")
        if not re.match(r"^https?://", base_url or "", re.IGNORECASE):
            raise ValueError("base_url must be an http(s) URL, e.g. https://api.example.com")
        self.base_url = base_url.rstrip("/")
        self._token = token
        self._timeout = timeout
        self._max_retries = max_retries
        self._max_retry_delay = max_retry_delay
        self._headers = dict(headers or {})

    def _prepare(self, spec: CallSpec, options: RequestOptions) -> Tuple[str, Dict[str, str], Optional[bytes], int]:
        def fill(match: "re.Match[str]") -> str:
            value = spec.path_params.get(match.group(1))
            if value is None or value == "":
                raise ValueError(f"{spec.method} {spec.path}: the path parameter {match.group(1)} is required")
            return quote(_text(value), safe="")

        url = self.base_url + re.sub(r"\{([^}]+)\}", fill, spec.path)
        query = [(name, _text(value)) for name, value in spec.query.items() if value is not None]
        if query:
            url += "?" + urlencode(query)
        headers = {"user-agent": f"vinhistory-python/{SDK_VERSION}", "accept": "application/json", **self._headers, **dict(options.get("headers") or {})}
        headers["authorization"] = self._token
        for name, value in spec.headers.items():
            if value is not None:
                headers[name] = _text(value)
        content: Optional[bytes] = None
        if spec.body is not _UNSET:
            if isinstance(spec.body, str) and spec.text_media_type:
                content = spec.body.encode("utf-8")
                headers["content-type"] = spec.text_media_type
            else:
                content = json.dumps(spec.body, separators=(",", ":"), ensure_ascii=False).encode("utf-8")
                headers["content-type"] = "application/json"
        keyed = any(name.lower() == "idempotency-key" for name in headers)
        may_retry = options.get("retry", (not spec.counted) or keyed)
        max_retries = options.get("max_retries", self._max_retries) if may_retry else 0
        return url, headers, content, max_retries

    def _delay(self, response: httpx.Response, error: VinhistoryApiError, attempt: int, max_retries: int) -> Optional[float]:
        """Seconds to wait before retrying this answer, or None when it is not retried."""
        if response.status_code not in _RETRIED or attempt >= max_retries:
            return None
        delay = float(error.retry_after) if error.retry_after is not None else min(8.0, 0.5 * 2**attempt) * (0.5 + random.random() / 2)
        return delay if delay <= self._max_retry_delay else None

    @staticmethod
    def _read(response: httpx.Response, answer: str) -> Any:
        if response.status_code == 204 or answer == "empty":
            return None
        # The answer's own Content-Type decides, the document's media type only when it names none:
        # a caller who asks for another representation (Accept: text/csv) gets it as text.
        media_type = response.headers.get("content-type", "").split(";")[0].strip().lower()
        if media_type in ("application/x-ndjson", "application/jsonl"):
            kind = "ndjson"
        elif media_type == "application/json" or media_type.endswith("+json"):
            kind = "json"
        else:
            kind = "text" if media_type else answer
        if kind == "text":
            return response.text
        if kind == "ndjson":
            return [json.loads(line) for line in response.text.splitlines() if line.strip()]
        return response.json()

    @staticmethod
    def _error_of(response: httpx.Response) -> VinhistoryApiError:
        text = response.text
        body: Any = text
        try:
            body = json.loads(text)
        except ValueError:
            pass  # A proxy's HTML or plain-text error page: the text is kept as the body.
        fields: Dict[str, Any] = body if isinstance(body, dict) else {}
        message = fields.get("message")
        return error_class_for(response.status_code)(
            status=response.status_code,
            code=fields.get("code") if isinstance(fields.get("code"), str) else None,
            message=message if isinstance(message, str) else f"HTTP {response.status_code}: {text[:200]}",
            errors=fields.get("errors") if isinstance(fields.get("errors"), dict) else None,
            request_id=response.headers.get("x-request-id"),
            retry_after=retry_after_seconds(response.headers.get("retry-after")),
            headers=response.headers,
            body=body,
        )


class SyncCore(_Base):
    def __init__(
        self,
        token: str,
        base_url: str,
        *,
        timeout: float = 30.0,
        max_retries: int = 2,
        max_retry_delay: float = 30.0,
        headers: Optional[Mapping[str, str]] = None,
        http_client: Optional[httpx.Client] = None,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        super().__init__(token, base_url, timeout=timeout, max_retries=max_retries, max_retry_delay=max_retry_delay, headers=headers)
        self._owns_client = http_client is None
        self._client = http_client or httpx.Client()
        self._sleep = sleep

    def close(self) -> None:
        if self._owns_client:
            self._client.close()

    def __enter__(self) -> "SyncCore":
        return self

    def __exit__(self, *_: Any) -> None:
        self.close()

    def _call(self, spec: CallSpec, options: Optional[RequestOptions]) -> Any:
        options = options or {}
        url, headers, content, max_retries = self._prepare(spec, options)
        timeout = options.get("timeout", self._timeout)
        attempt = 0
        while True:
            try:
                response = self._client.request(spec.method, url, headers=headers, content=content, timeout=timeout)
            except httpx.TimeoutException as cause:
                raise VinhistoryTimeoutError(f"{spec.method} {url}: no answer within {timeout} s") from cause
            except httpx.TransportError as cause:
                raise VinhistoryConnectionError(f"{spec.method} {url}: {cause}") from cause
            if "on_response" in options:
                options["on_response"](response)
            if response.is_success:
                return self._read(response, spec.answer)
            error = self._error_of(response)
            delay = self._delay(response, error, attempt, max_retries)
            if delay is None:
                raise error
            self._sleep(delay)
            attempt += 1

    @staticmethod
    def _paginate(fetch_page: Callable[[Optional[str]], Any], items_field: str) -> Iterator[Any]:
        cursor: Optional[str] = None
        while True:
            page = fetch_page(cursor)
            yield from page[items_field]
            cursor = page.get("next_cursor")
            if not cursor:
                return


class AsyncCore(_Base):
    def __init__(
        self,
        token: str,
        base_url: str,
        *,
        timeout: float = 30.0,
        max_retries: int = 2,
        max_retry_delay: float = 30.0,
        headers: Optional[Mapping[str, str]] = None,
        http_client: Optional[httpx.AsyncClient] = None,
        sleep: Callable[[float], Awaitable[None]] = asyncio.sleep,
    ) -> None:
        super().__init__(token, base_url, timeout=timeout, max_retries=max_retries, max_retry_delay=max_retry_delay, headers=headers)
        self._owns_client = http_client is None
        self._client = http_client or httpx.AsyncClient()
        self._sleep = sleep

    async def aclose(self) -> None:
        if self._owns_client:
            await self._client.aclose()

    async def __aenter__(self) -> "AsyncCore":
        return self

    async def __aexit__(self, *_: Any) -> None:
        await self.aclose()

    async def _call(self, spec: CallSpec, options: Optional[RequestOptions]) -> Any:
        options = options or {}
        url, headers, content, max_retries = self._prepare(spec, options)
        timeout = options.get("timeout", self._timeout)
        attempt = 0
        while True:
            try:
                response = await self._client.request(spec.method, url, headers=headers, content=content, timeout=timeout)
            except httpx.TimeoutException as cause:
                raise VinhistoryTimeoutError(f"{spec.method} {url}: no answer within {timeout} s") from cause
            except httpx.TransportError as cause:
                raise VinhistoryConnectionError(f"{spec.method} {url}: {cause}") from cause
            if "on_response" in options:
                options["on_response"](response)
            if response.is_success:
                return self._read(response, spec.answer)
            error = self._error_of(response)
            delay = self._delay(response, error, attempt, max_retries)
            if delay is None:
                raise error
            await self._sleep(delay)
            attempt += 1

    @staticmethod
    async def _paginate(fetch_page: Callable[[Optional[str]], Awaitable[Any]], items_field: str) -> AsyncIterator[Any]:
        cursor: Optional[str] = None
        while True:
            page = await fetch_page(cursor)
            for item in page[items_field]:
                yield item
            cursor = page.get("next_cursor")
            if not cursor:
                return
