"""The HTTP seam every provider shares: pooled httpx clients, error translation, SSE events.

HTTP failures become one ModelError family carrying status, provider, request id and the
provider's own explanation (never the key); rate limits, server errors and timeouts are marked
retryable with the Retry-After hint parsed, so the `retry` middleware can act on them.
"""

from __future__ import annotations

import asyncio
import email.utils
import functools
import json
import re
import ssl
import time
from collections.abc import AsyncIterator, Callable, Mapping
from contextlib import asynccontextmanager
from dataclasses import dataclass
from typing import Any

import httpx

from ..errors import ModelError
from ..settings import RETRYABLE_STATUSES
from .base import ModelInfo
from .config import ProviderConfig, ProviderSpec, provider_config


@dataclass(frozen=True)
class SSEEvent:
    event: str
    data: str


class HttpClient:
    """Pooled httpx clients per event loop (sync entry points run each call in a fresh loop).

    Requests are spread over a few clients: httpcore's pool does work proportional to its size on
    every request and reopens connections above its keep-alive limit, so one big pool caps a
    concurrent batch at about half its throughput; eight small ones measured 2x faster (bench_batch.py).
    """

    POOLS = 8

    def __init__(self, config: ProviderConfig, *, transport: httpx.AsyncBaseTransport | None = None) -> None:
        self.config = config
        self._transport = transport
        self._clients: dict[int, tuple[asyncio.AbstractEventLoop, list[httpx.AsyncClient]]] = {}
        self._turn = 0

    def client(self) -> httpx.AsyncClient:
        loop = asyncio.get_running_loop()
        found = self._clients.get(id(loop))
        if found is None or found[0] is not loop:
            self._forget_closed_loops()
            found = self._clients[id(loop)] = (loop, [self._new_client() for _ in range(self.POOLS)])
        self._turn = (self._turn + 1) % self.POOLS
        return found[1][self._turn]

    def _new_client(self) -> httpx.AsyncClient:
        return httpx.AsyncClient(base_url=self.config.base_url, timeout=self.config.timeout,
                                 headers=dict(self.config.headers), transport=self._transport, verify=_ssl_context())

    def _forget_closed_loops(self) -> None:
        for key, (loop, _) in list(self._clients.items()):
            if loop.is_closed():
                del self._clients[key]

    async def post_json(self, path: str, body: Mapping[str, Any], headers: Mapping[str, str]) -> tuple[Any, httpx.Response]:
        try:
            response = await self.client().post(path, json=body, headers=dict(headers))
        except httpx.HTTPError as exc:
            raise self._transport_error(exc, path) from exc
        if response.status_code >= 400:
            raise self.status_error(response)
        try:
            return response.json(), response
        except ValueError:
            raise ModelError(f"the reply is not JSON: {response.text[:500]!r}", provider=self.config.provider,
                             status=response.status_code, request_id=request_id(response)) from None

    @asynccontextmanager
    async def stream(self, path: str, body: Mapping[str, Any], headers: Mapping[str, str]) -> AsyncIterator[httpx.Response]:
        """A streamed POST; leaving the block (also by cancellation) closes the connection."""
        try:
            async with self.client().stream("POST", path, json=body, headers=dict(headers)) as response:
                if response.status_code >= 400:
                    await response.aread()
                    raise self.status_error(response)
                yield response
        except httpx.HTTPError as exc:
            raise self._transport_error(exc, path) from exc

    def status_error(self, response: httpx.Response) -> ModelError:
        status = response.status_code
        return ModelError(provider_message(response), status=status, provider=self.config.provider,
                          request_id=request_id(response), retryable=status in RETRYABLE_STATUSES,
                          retry_after=retry_after(response.headers) or body_retry_delay(response))

    def _transport_error(self, exc: httpx.HTTPError, path: str) -> ModelError:
        url = f"{self.config.base_url}{path}"
        if isinstance(exc, httpx.TimeoutException):
            return ModelError(f"timed out after {self.config.timeout:g} s calling {url}", provider=self.config.provider,
                              retryable=True)
        if isinstance(exc, httpx.ConnectError):
            return ModelError(f"cannot connect to {url}: {exc} (is the base URL right and the server running?)",
                              provider=self.config.provider, retryable=True)
        return ModelError(f"connection to {url} failed: {type(exc).__name__}: {exc}", provider=self.config.provider,
                          retryable=True)


@functools.lru_cache(maxsize=1)
def _ssl_context() -> ssl.SSLContext:
    # Loading the CA bundle takes ~25 ms; every client (and every event loop of the sync entry points) shares one.
    return httpx.create_ssl_context()


class HttpModel:
    """What every HTTP provider's model shares: its name, the provider's model id, settings and client.

    `specs` are the providers this class serves (the one whose prefix the name carries supplies the
    settings when none are given; a class serving one provider uses it for any name);
    `default_info` is the capabilities unless `info=` says otherwise.
    """

    specs: tuple[ProviderSpec, ...] = ()
    default_info = ModelInfo()

    def __init__(self, name: str, *, model_id: str | None = None, config: ProviderConfig | None = None,
                 info: ModelInfo | None = None, transport: httpx.AsyncBaseTransport | None = None) -> None:
        prefix, _, rest = name.partition("/")
        self.name = name
        self.model_id = model_id or rest or name
        self.config = config or provider_config(self.spec_for(prefix))
        self.info = info or self.default_info
        self.http = HttpClient(self.config, transport=transport)

    @classmethod
    def spec_for(cls, prefix: str) -> ProviderSpec:
        found = next((spec for spec in cls.specs if spec.prefix == prefix), None)
        if found is None and len(cls.specs) == 1:
            return cls.specs[0]
        return found or ProviderSpec(prefix)


async def sse_events(response: httpx.Response) -> AsyncIterator[SSEEvent]:
    """Server-sent events from a streamed response, as the SSE spec frames them."""
    event, data = "", []
    async for line in response.aiter_lines():
        if not line:
            if data:
                yield SSEEvent(event or "message", "\n".join(data))
            event, data = "", []
            continue
        if line.startswith(":"):
            continue  # a comment / keep-alive
        name, _, value = line.partition(":")
        value = value[1:] if value.startswith(" ") else value
        if name == "data":
            data.append(value)
        elif name == "event":
            event = value
    if data:
        yield SSEEvent(event or "message", "\n".join(data))


def sse_json(event: SSEEvent, provider: str, partial: Callable[[], Any] = lambda: None,
             request: str | None = None) -> Any:
    """The event's JSON; a malformed event is a ModelError keeping what had arrived (`partial()`, built only then)."""
    try:
        return json.loads(event.data)
    except ValueError:
        raise ModelError(f"malformed stream event (not JSON): {event.data[:300]!r}", provider=provider,
                         request_id=request, partial=partial()) from None


def provider_message(response: httpx.Response) -> str:
    """The provider's own explanation of an error, from the usual JSON shapes, else the body text."""
    try:
        body = response.json()
    except ValueError:
        return response.text[:1000] or response.reason_phrase
    error = body.get("error", body) if isinstance(body, dict) else body
    if isinstance(error, dict):
        return str(error.get("message") or error.get("msg") or json.dumps(error)[:1000])
    return str(error)[:1000]


def request_id(response: httpx.Response) -> str | None:
    for header in ("x-request-id", "request-id", "x-goog-request-id", "openai-request-id"):
        if header in response.headers:
            return response.headers[header]
    return None


def body_retry_delay(response: httpx.Response) -> float | None:
    """Google APIs state how long to wait in the body (google.rpc.RetryInfo `"17s"`), not in Retry-After."""
    try:
        details = response.json()["error"]["details"]
    except (ValueError, KeyError, TypeError):
        return None
    for detail in details if isinstance(details, list) else []:
        if isinstance(detail, dict) and str(detail.get("@type", "")).endswith("RetryInfo"):
            match = re.fullmatch(r"(\d+(?:\.\d+)?)s", str(detail.get("retryDelay", "")))
            return float(match.group(1)) if match else None
    return None


def retry_after(headers: Mapping[str, str]) -> float | None:
    """Seconds from Retry-After (seconds or an HTTP date) or retry-after-ms."""
    if "retry-after-ms" in headers:
        try:
            return float(headers["retry-after-ms"]) / 1000
        except ValueError:
            pass
    value = headers.get("retry-after")
    if not value:
        return None
    try:
        return max(float(value), 0.0)
    except ValueError:
        pass
    try:
        parsed = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    return max(parsed.timestamp() - time.time(), 0.0)
