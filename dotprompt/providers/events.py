"""A stream event's JSON, and the error an API may send inside a 200 stream, as ModelErrors.

What every provider's stream state does with an event before its own shape check (`dialects/shape.py`).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from typing import Any, Final

from .._http.errors import RETRYABLE_STATUSES
from .._http.sse import SSEEvent
from ..errors import ModelError

__all__ = ["RETRYABLE_STREAM_ERRORS", "sse_json", "stream_error"]

RETRYABLE_STREAM_ERRORS: Final = frozenset({"overloaded_error", "api_error", "rate_limit_error", "timeout_error",
                                            "server_error", "rate_limit_exceeded", "UNAVAILABLE", "RESOURCE_EXHAUSTED",
                                            "INTERNAL", "DEADLINE_EXCEEDED"})
"""Error types/statuses inside an HTTP 200 stream (no status code) that are worth retrying, all providers."""


def sse_json(event: SSEEvent, provider: str, partial: Callable[[], Any] = lambda: None,
             request: str | None = None) -> Any:
    """The event's JSON; a malformed event is a ModelError keeping what had arrived (`partial()`, built only then)."""
    try:
        return json.loads(event.data)
    except (ValueError, RecursionError):  # RecursionError: JSON nested past the parser's depth (hostile)
        if event.event == "error":  # a plain-text error event: its text is the explanation
            raise ModelError(f"the stream reported an error: {event.data[:1000]}", provider=provider,
                             request_id=request, retryable=True, partial=partial()) from None
        raise ModelError(f"malformed stream event (not JSON): {event.data[:300]!r}", provider=provider,
                         request_id=request, partial=partial()) from None


def stream_error(event: SSEEvent, data: Any, provider: str, request: str | None,
                 partial: Callable[[], Any]) -> ModelError | None:
    """The ModelError for an error event inside a 200 stream, or None if this is no error event.

    All three APIs: `{"error": {...}}` (OpenAI-compatible servers, Gemini, Anthropic's `type: error`)
    or an `event: error` whose data is the error itself. The provider's message is kept."""
    if isinstance(data, Mapping) and data.get("error") is not None:
        error = data["error"]
    elif event.event == "error":
        error = data
    else:
        return None
    error = error if isinstance(error, Mapping) else {"message": str(error)}
    kind = next((str(error[k]) for k in ("type", "status", "code") if isinstance(error.get(k), str)), None)
    code = error.get("code") if isinstance(error.get("code"), int) and 100 <= error["code"] < 600 else None
    text = str(error.get("message") or error.get("msg") or kind or json.dumps(error, default=str)[:1000])
    message = f"{text} ({kind})" if kind and kind not in text else text
    return ModelError(f"the stream reported an error: {message}", status=code, provider=provider, request_id=request,
                      retryable=code in RETRYABLE_STATUSES or kind in RETRYABLE_STREAM_ERRORS, partial=partial())

