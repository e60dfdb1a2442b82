"""What an HTTP error reply says: the provider's own explanation, the request id, how long to wait.

Read from the usual JSON shapes of the providers' error bodies; a body that is no JSON is its text.
"""

from __future__ import annotations

import email.utils
import json
import math
import re
import time
from collections.abc import Mapping
from typing import Any, Final

import httpx

__all__ = ["ERROR_BODY_BYTES", "RETRYABLE_STATUSES", "body_retry_delay", "provider_message", "read_capped", "request_id",
           "retry_after"]

RETRYABLE_STATUSES: Final = frozenset({408, 409, 425, 429, 500, 502, 503, 504, 529})
"""HTTP statuses worth another attempt: timeouts, conflicts, rate limits, server errors, overload (529)."""

ERROR_BODY_BYTES: Final = 256 * 1024
"""Of an error reply only this much is read: enough for any explanation, and a huge one cannot exhaust memory."""


async def read_capped(response: httpx.Response, limit: int) -> bytes:
    """At most `limit` bytes of the body; the rest is left unread (the connection is closed after)."""
    parts, size = [], 0
    async for chunk in response.aiter_bytes():
        parts.append(chunk)
        size += len(chunk)
        if size >= limit:
            break
    return b"".join(parts)[:limit]



def _json_body(body: bytes) -> Any:
    try:
        return json.loads(body)
    except (ValueError, RecursionError):
        return None


def provider_message(response: httpx.Response, body: bytes | None = None) -> str:
    """The provider's own explanation of an error, from the usual JSON shapes, else the body text."""
    body = response.content if body is None else body
    data = _json_body(body)
    if data is None:
        return body[:1000].decode(response.encoding or "utf-8", "replace") or response.reason_phrase
    error = data.get("error", data) if isinstance(data, dict) else data
    if isinstance(error, dict):
        return str(error.get("message") or error.get("msg") or json.dumps(error)[:1000])
    return str(error)[:1000]


def request_id(response: httpx.Response) -> str | None:
    for header in ("x-request-id", "request-id", "x-goog-request-id", "openai-request-id"):
        if header in response.headers:
            return response.headers[header]
    return None


def body_retry_delay(response: httpx.Response, body: bytes | None = None) -> float | None:
    """Google APIs state how long to wait in the body (google.rpc.RetryInfo `"17s"`), not in Retry-After."""
    data = _json_body(response.content if body is None else body)
    try:
        details = data["error"]["details"]
    except (KeyError, TypeError):
        return None
    for detail in details if isinstance(details, list) else []:
        if isinstance(detail, dict) and str(detail.get("@type", "")).endswith("RetryInfo"):
            match = re.fullmatch(r"(\d+(?:\.\d+)?)s", str(detail.get("retryDelay", "")))
            return float(match.group(1)) if match else None
    return None


def retry_after(headers: Mapping[str, str]) -> float | None:
    """Seconds from Retry-After (seconds or an HTTP date) or retry-after-ms.

    ModelError clamps what this returns: NaN is no hint, a negative wait 0, more than MAX_RETRY_AFTER that."""
    if "retry-after-ms" in headers:
        try:
            return _finite(float(headers["retry-after-ms"]) / 1000)
        except ValueError:
            pass
    value = headers.get("retry-after")
    if not value:
        return None
    try:
        return _finite(max(float(value), 0.0))
    except ValueError:
        pass
    try:
        parsed = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError, OverflowError, IndexError):
        return None
    return max(parsed.timestamp() - time.time(), 0.0)


def _finite(seconds: float) -> float | None:
    """NaN is no hint at all ("nan" parses as a float); infinity is left for ModelError to clamp."""
    return None if math.isnan(seconds) else seconds
