"""The HTTP seam every provider shares: pooled httpx clients, error translation, SSE events.

HTTP failures become one ModelError family carrying status, provider, request id and the
provider's own explanation (never the key); rate limits, server errors and timeouts are marked
retryable with the Retry-After hint parsed, so the `retry` middleware can act on them.

Every call has an overall deadline (`deadline`, default DEFAULT_DEADLINE) and a size cap
(`max_response_bytes`, default DEFAULT_MAX_RESPONSE_BYTES), both checked as bytes arrive: a stream
that sends keep-alives or a token now and then forever, or hundreds of megabytes, ends as a
ModelError keeping what had streamed. While nothing arrives, the read timeout (`timeout`) applies.
SSE is framed here, splitting lines on CR and LF only (the SSE spec), not with `aiter_lines()`,
which also splits on U+2028/U+2029/U+0085 inside a token. (httpx-sse frames the same way but owns
the read loop, so the byte cap could not act before a long line is buffered, and it refuses a
stream whose Content-Type is not text/event-stream, which works today.)

The transport under httpx is httpx's own (httpcore) or aiohttp's (the `httpx-aiohttp` package, extra
`dotprompt-toolkit[aiohttp]`): the same httpx API, about twice the requests per second at 32 in
flight (bench/bench_batch.py). Batch runs use aiohttp when it is installed (`batch_transport()`, which
also closes its sessions: aiohttp complains of a session left to the garbage collector, so single
calls, whose loop the sync API keeps between calls, keep httpx's); $DOTPROMPT_HTTP_TRANSPORT=httpx
keeps httpx's for batches too. Its errors arrive as httpx's, translated as below.
"""

from __future__ import annotations

import asyncio
import base64
import codecs
import contextvars
import email.utils
import functools
import json
import math
import re
import ssl
import time
import urllib.parse
import urllib.request
import weakref
from collections.abc import AsyncIterable, AsyncIterator, Callable, Mapping
from contextlib import asynccontextmanager
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

import httpx

from .._util.redact import remember_secret, url_credentials
from ..errors import ModelError, UsageError
from ..providers.base import Model, ModelInfo, OnChunk
from ..providers.config import ProviderConfig, ProviderSpec, provider_config
from ..providers.dialects.strict import Structured, log_fallback
from ..settings import (
    DEFAULT_DEADLINE,
    DEFAULT_MAX_RESPONSE_BYTES,
    ERROR_BODY_BYTES,
    RETRYABLE_STATUSES,
    RETRYABLE_STREAM_ERRORS,
    env_http_transport,
    proxy_environment,
)
from ..types import GenerateRequest, ModelResponse

if TYPE_CHECKING:
    from httpx_aiohttp import AiohttpTransport

SECRET_HEADERS = frozenset({"authorization", "x-api-key", "api-key", "x-goog-api-key", "proxy-authorization"})


# The transport new clients of this context use, when $DOTPROMPT_HTTP_TRANSPORT does not say.
_context_transport: contextvars.ContextVar[str] = contextvars.ContextVar("dotprompt_http_transport", default="httpx")
_all_clients: weakref.WeakSet[HttpClient] = weakref.WeakSet()


def aiohttp_available() -> bool:
    try:
        import httpx_aiohttp  # noqa: F401
    except ImportError:
        return False
    return True


def select_batch_transport() -> str:
    """From now on in this context, new clients use the batch transport (aiohttp when installed, unless
    $DOTPROMPT_HTTP_TRANSPORT says httpx); returns its name. Whoever calls this closes them
    (`close_clients`) before its loop ends; `batch_transport()` does both."""
    kind = env_http_transport() or ("aiohttp" if aiohttp_available() else "httpx")
    _context_transport.set(kind)
    return kind


@asynccontextmanager
async def batch_transport() -> AsyncIterator[str]:
    """Inside the block, calls of this task (and the tasks it starts) use aiohttp when it is installed
    (yields the transport's name); on leaving, the clients made for it are closed."""
    kind = env_http_transport() or ("aiohttp" if aiohttp_available() else "httpx")
    token = _context_transport.set(kind)
    try:
        yield kind
    finally:
        _context_transport.reset(token)
        if kind == "aiohttp":
            await close_clients("aiohttp")


async def close_clients(kind: str) -> None:
    """Close every client of the running loop made with transport `kind` (the next call makes new ones)."""
    loop = asyncio.get_running_loop()
    for http in list(_all_clients):
        found = http.forget(loop, kind)
        for client in found:
            await client.aclose()


@dataclass(frozen=True)
class SSEEvent:
    event: str
    data: str


@dataclass
class _Pooled:
    """A pooled client, with what its requests reuse: its own headers (httpx's defaults and the
    configured ones, names in lower case), and its transport when that is called directly."""

    client: httpx.AsyncClient
    headers: dict[str, str]
    direct: httpx.AsyncBaseTransport | None
    busy: int = 0  # requests in flight on it


class HttpClient:
    """Pooled httpx clients per event loop (the sync entry points keep one loop per thread).

    Concurrent requests are spread over up to POOLS clients: httpcore's pool does work proportional to
    its size on every request and reopens connections above its keep-alive limit, so one big pool caps
    a concurrent batch at about half its throughput; eight small ones measured 2x faster
    (bench_batch.py). The clients are made as they are needed: a request goes to the least busy one,
    and a new one is made only while every client has a request in flight, so calls one after another
    keep reusing one client and its open connection.
    """

    POOLS = 8

    def __init__(self, config: ProviderConfig, *, transport: httpx.AsyncBaseTransport | None = None,
                 deadline: float | None = None, max_response_bytes: int | None = None, auth: httpx.Auth | None = None,
                 params: Mapping[str, str] | None = None) -> None:
        self.config = config
        self.auth = auth  # e.g. a bearer token fetched per request (Azure Entra, Vertex AI)
        self.params = dict(params or {})  # query parameters every request carries (Azure's api-version)
        # The deadline is never shorter than one read timeout: whoever raised the timeout meant long calls.
        self.deadline = float(deadline or config.deadline or max(DEFAULT_DEADLINE, config.timeout))
        self.max_response_bytes = int(max_response_bytes or config.max_response_bytes or DEFAULT_MAX_RESPONSE_BYTES)
        self._transport = transport
        self._timeout_parts = self._timeout().as_dict()
        self._urls: dict[str, httpx.URL] = {}
        self._clients: dict[tuple[int, str], tuple[asyncio.AbstractEventLoop, list[_Pooled]]] = {}
        _remember_secrets(config)
        _all_clients.add(self)

    def client(self) -> httpx.AsyncClient:
        return self._pooled().client

    def _pooled(self) -> _Pooled:
        loop = asyncio.get_running_loop()
        kind = "given" if self._transport is not None else _context_transport.get()
        found = self._clients.get((id(loop), kind))
        if found is None or found[0] is not loop:
            self._forget_closed_loops()
            found = self._clients[(id(loop), kind)] = (loop, [])
        pools = found[1]
        idlest = min(pools, key=_busy) if pools else None
        if idlest is None or (idlest.busy and len(pools) < self.POOLS):
            idlest = self._new_client(kind)
            pools.append(idlest)
        return idlest

    def _new_client(self, kind: str) -> _Pooled:
        transport = self._transport
        if kind == "aiohttp":
            transport = _aiohttp_transport(env_proxy(self.config.base_url))
        client = httpx.AsyncClient(base_url=self.config.base_url, timeout=self.config.timeout,
                                   headers=dict(self.config.headers), transport=transport, verify=_ssl_context(),
                                   auth=self.auth, params=self.params)
        # Called directly when client.send has nothing to add but its cookie jar: no auth, no URL credentials.
        direct = kind == "aiohttp" and transport is not None and self.auth is None and not client.base_url.userinfo
        return _Pooled(client, {name.lower(): value for name, value in client.headers.items()},
                       transport if direct else None)

    def forget(self, loop: asyncio.AbstractEventLoop, kind: str) -> list[httpx.AsyncClient]:
        """Drop (and return, for closing) the clients made on `loop` with transport `kind`."""
        found = self._clients.get((id(loop), kind))
        if found is None or found[0] is not loop:
            return []
        del self._clients[(id(loop), kind)]
        return [pooled.client for pooled in found[1]]

    def _forget_closed_loops(self) -> None:
        for key, (loop, _) in list(self._clients.items()):
            if loop.is_closed():
                del self._clients[key]

    async def post_json(self, path: str, body: Mapping[str, Any], headers: Mapping[str, str]) -> tuple[Any, httpx.Response]:
        """POST and parse the JSON reply, within the deadline and the size cap."""
        started = time.monotonic()
        try:
            async with self._post(path, body, headers) as response:
                if response.status_code >= 400:
                    raise self.status_error(response, await read_capped(response, ERROR_BODY_BYTES))
                raw = b"".join([chunk async for chunk in self.chunks(response, started, path)])
        except httpx.HTTPError as exc:
            raise self._transport_error(exc, path) from exc
        try:
            return json.loads(raw), response
        except (ValueError, RecursionError):  # RecursionError: JSON nested past the parser's depth (hostile)
            text = raw[:500].decode("utf-8", "replace")
            raise ModelError(f"the reply is not JSON: {text!r}", provider=self.config.provider,
                             status=response.status_code, request_id=request_id(response)) from None

    @asynccontextmanager
    async def stream(self, path: str, body: Mapping[str, Any], headers: Mapping[str, str]) -> AsyncIterator[EventStream]:
        """A streamed POST; leaving the block (also by cancellation) closes the connection."""
        started = time.monotonic()
        try:
            async with self._post(path, body, headers) as response:
                if response.status_code >= 400:
                    raise self.status_error(response, await read_capped(response, ERROR_BODY_BYTES))
                yield EventStream(self, response, started, path)
        except httpx.HTTPError as exc:
            raise self._transport_error(exc, path) from exc

    def _timeout(self) -> httpx.Timeout:
        # Waiting for a first byte never outlasts the deadline either.
        return httpx.Timeout(min(self.config.timeout, self.deadline))

    @asynccontextmanager
    async def _post(self, path: str, body: Mapping[str, Any], headers: Mapping[str, str]) -> AsyncIterator[httpx.Response]:
        """`client.stream("POST", path, json=body, ...)` on the least busy client (counted busy until the
        block is left), with the request built from parts worked out once: httpx's build_request (merging
        URL, headers, cookies and parameters anew) was a quarter of httpx's time per call. The same
        request results; a client with query parameters (Azure's api-version) or a path that is not
        absolute takes httpx's own way."""
        pooled = self._pooled()
        pooled.busy += 1
        try:
            client = pooled.client
            if self.params or not path.startswith("/"):
                async with client.stream("POST", path, json=body, headers=dict(headers), timeout=self._timeout()) as response:
                    yield response
                return
            request = self._request(pooled, path, body, headers)
            direct = pooled.direct
            if direct is None:
                response = await client.send(request, stream=True)
            else:
                # What client.send adds around the transport is auth (none here), redirects (not followed)
                # and the cookie jar, whose update cost a tenth of the call even with no cookie to keep.
                response = await direct.handle_async_request(request)
                if "set-cookie" in response.headers:
                    client.cookies.extract_cookies(response)
            try:
                yield response
            finally:
                await response.aclose()
        finally:
            pooled.busy -= 1

    def _request(self, pooled: _Pooled, path: str, body: Mapping[str, Any], headers: Mapping[str, str]) -> httpx.Request:
        """The request `client.build_request` would make, from the parts kept on `pooled`."""
        client = pooled.client
        merged = {**pooled.headers, **{name.lower(): value for name, value in headers.items()}}
        merged.setdefault("content-type", "application/json")
        # The bytes httpx's `json=` sends (allow_nan=False: a NaN is a ValueError there too).
        content = json.dumps(body, ensure_ascii=False, separators=(",", ":"), allow_nan=False).encode("utf-8")
        request = httpx.Request("POST", self._url_of(client, path), headers=merged, content=content,
                                extensions={"timeout": self._timeout_parts})
        if client.cookies:  # a provider's cookies (a load balancer's) go back, as build_request sends them
            client.cookies.set_cookie_header(request)
        return request

    def _url_of(self, client: httpx.AsyncClient, path: str) -> httpx.URL:
        found = self._urls.get(path)
        if found is None:
            if len(self._urls) >= 256:  # paths name models (Gemini): a long run with many models stays bounded
                self._urls.clear()
            base = client.base_url  # with the trailing slash httpx gives it
            found = self._urls[path] = base.copy_with(raw_path=base.raw_path + path.lstrip("/").encode())
        return found

    async def chunks(self, response: httpx.Response, started: float, path: str,
                     partial: Callable[[], Any] = lambda: None) -> AsyncIterator[bytes]:
        """The (decoded) body bytes; past the size cap or the deadline, a ModelError keeping `partial()`.

        The deadline is checked on every chunk, keep-alives included, so a stream that never stops
        ends; while nothing arrives the read timeout ends it instead."""
        received = 0
        async for chunk in response.aiter_bytes():
            received += len(chunk)
            if received > self.max_response_bytes:
                raise ModelError(f"the reply from {self._url(path)} is larger than max_response_bytes="
                                 f"{self.max_response_bytes} (raise it in [tool.dotprompt.providers."
                                 f"{self.config.provider}] or with max_response_bytes=... if this is expected)",
                                 provider=self.config.provider, request_id=request_id(response), partial=partial())
            if time.monotonic() - started > self.deadline:
                raise self.past_deadline(response, path, partial)
            yield chunk

    def past_deadline(self, response: httpx.Response, path: str, partial: Callable[[], Any]) -> ModelError:
        return ModelError(f"no complete reply from {self._url(path)} within the deadline of {self.deadline:g} s "
                          f"(the server kept the call open; raise `deadline` in [tool.dotprompt.providers."
                          f"{self.config.provider}] or with deadline=... if calls this long are expected)",
                          provider=self.config.provider, request_id=request_id(response), retryable=True,
                          partial=partial())

    def _url(self, path: str) -> str:
        return f"{self.config.base_url}{path}"

    def status_error(self, response: httpx.Response, body: bytes | None = None) -> ModelError:
        """The ModelError for an HTTP error reply; `body` is what was read of it (default: all of it)."""
        status = response.status_code
        body = response.content if body is None else body
        return ModelError(provider_message(response, body), status=status, provider=self.config.provider,
                          request_id=request_id(response), retryable=status in RETRYABLE_STATUSES,
                          retry_after=retry_after(response.headers) or body_retry_delay(response, body))

    def _transport_error(self, exc: httpx.HTTPError, path: str) -> ModelError:
        url = self._url(path)
        kind = _failure_kind(exc)
        if kind == "timeout":
            return ModelError(f"timed out after {self.config.timeout:g} s calling {url}: nothing arrived for that long "
                              f"(raise `timeout` in [tool.dotprompt.providers.{self.config.provider}] of pyproject.toml, "
                              f"or pass timeout=... where the model is made){self.config.timeout_hint}",
                              provider=self.config.provider,
                              retryable=True)
        if kind == "connect":
            return ModelError(f"cannot connect to {url}: {exc} (is the base URL right and the server running?)",
                              provider=self.config.provider, retryable=True)
        return ModelError(f"connection to {url} failed: {type(exc).__name__}: {exc}", provider=self.config.provider,
                          retryable=True)


def _busy(pooled: _Pooled) -> int:
    return pooled.busy


class EventStream:
    """An open SSE reply: `events()` yields its events within the deadline and the size cap."""

    def __init__(self, http: HttpClient, response: httpx.Response, started: float, path: str) -> None:
        self.http = http
        self.response = response
        self.request_id = request_id(response)
        self._started = started
        self._path = path

    def events(self, partial: Callable[[], Any] = lambda: None) -> AsyncIterator[SSEEvent]:
        """The events; a limit hit is a ModelError keeping `partial()` (what the caller accumulated)."""
        return sse_events(self.http.chunks(self.response, self._started, self._path, partial))


async def read_capped(response: httpx.Response, limit: int) -> bytes:
    """At most `limit` bytes of the body; the rest is left unread (the connection is closed after)."""
    parts, size = [], 0
    async for chunk in response.aiter_bytes():
        parts.append(chunk)
        size += len(chunk)
        if size >= limit:
            break
    return b"".join(parts)[:limit]


def _remember_secrets(config: ProviderConfig) -> None:
    """Tell `redact` every credential this provider uses: the key, secret headers, URL userinfo."""
    remember_secret(config.api_key)
    for name, value in config.headers.items():
        if name.lower() in SECRET_HEADERS:
            remember_secret(value.split(" ", 1)[-1])  # "Bearer KEY": the key part
    user_password = url_credentials(config.base_url)
    for part in user_password:
        remember_secret(part)
    if len(user_password) == 2:  # httpx sends URL credentials as Basic auth: an echo would carry them encoded
        remember_secret(base64.b64encode(f"{user_password[1]}:{user_password[0]}".encode()).decode())


def _aiohttp_transport(proxy: httpx.Proxy | None) -> httpx.AsyncBaseTransport:
    return _aiohttp_class()(verify=_ssl_context(), limits=httpx.Limits(max_connections=None), proxy=proxy,
                            client=lambda: _aiohttp_session())


def env_proxy(url: str) -> httpx.Proxy | None:
    """The proxy HTTP_PROXY / HTTPS_PROXY / ALL_PROXY name for `url`, unless NO_PROXY exempts its host.

    httpx applies these itself only to its own transport; given another one (aiohttp's) it ignores
    them, so the aiohttp transport is handed the proxy of the provider's base URL, chosen once."""
    parts = urllib.parse.urlsplit(url)
    proxies = proxy_environment()
    # proxy_bypass_environment is undocumented (typeshed leaves it out) but in urllib.request on every supported Python
    if not parts.hostname or urllib.request.proxy_bypass_environment(parts.hostname, proxies):  # type: ignore[attr-defined]
        return None
    chosen = proxies.get(parts.scheme) or proxies.get("all")
    if not chosen:
        return None
    where = f"the proxy {chosen!r} that {parts.scheme.upper()}_PROXY or ALL_PROXY names for {parts.hostname}"
    try:
        proxy = httpx.Proxy(chosen if "://" in chosen else f"http://{chosen}")
    except (httpx.InvalidURL, ValueError) as exc:
        raise UsageError(f"{where} is not a usable URL ({exc}); fix it, or exempt the host with NO_PROXY") from None
    if proxy.url.scheme not in ("http", "https"):
        raise UsageError(f"{where} is a {proxy.url.scheme} proxy, which the aiohttp transport cannot use; set "
                         "DOTPROMPT_HTTP_TRANSPORT=httpx (with httpx[socks] installed for a SOCKS proxy)")
    return proxy


@functools.lru_cache(maxsize=1)
def _aiohttp_class() -> type[AiohttpTransport]:
    try:
        from httpx_aiohttp import AiohttpTransport
    except ImportError:
        raise UsageError("DOTPROMPT_HTTP_TRANSPORT=aiohttp needs the httpx-aiohttp package: "
                         "pip install 'dotprompt-toolkit[aiohttp]' (or set it to httpx)") from None

    class Transport(AiohttpTransport):
        """httpx-aiohttp, plus what it leaves out: credentials in the URL (httpx has already turned them
        into an Authorization header; aiohttp refuses a URL with both) and aiohttp's errors that are no
        httpx errors (a ValueError for a bad header, say), which become httpx.TransportError."""

        async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
            if request.url.userinfo:
                request.url = request.url.copy_with(userinfo=b"")
            try:
                return await super().handle_async_request(request)
            except (httpx.HTTPError, asyncio.CancelledError):
                raise
            except Exception as exc:
                raise httpx.TransportError(f"{type(exc).__name__}: {exc}") from exc

    return Transport


def _aiohttp_session() -> Any:
    import aiohttp

    connector = aiohttp.TCPConnector(ssl=_ssl_context(), limit=0)
    # trust_env stays off: the proxy from the environment comes with each transport (`env_proxy`), and
    # aiohttp's trust_env would read ~/.netrc in a worker thread on every request (a batch ran at 37 %
    # of the ideal rate with it, 62-67 % without) and could send its credentials.
    return aiohttp.ClientSession(connector=connector, trust_env=False)


def _failure_kind(exc: httpx.HTTPError) -> str:
    """timeout, connect or other. httpx-aiohttp maps every aiohttp connection error, a refused connect
    and a server hanging up included, to httpx.ConnectTimeout: for those the aiohttp error underneath
    decides (only an asyncio TimeoutError is a timeout)."""
    cause = exc.__cause__
    if cause is not None and type(cause).__module__.startswith("aiohttp"):
        if isinstance(cause, TimeoutError):
            return "timeout"
        names = {klass.__name__ for klass in type(cause).__mro__}
        return "connect" if "ClientConnectorError" in names else "other"
    if isinstance(exc, httpx.TimeoutException):
        return "timeout"
    return "connect" if isinstance(exc, httpx.ConnectError) else "other"


@functools.lru_cache(maxsize=1)
def _ssl_context() -> ssl.SSLContext:
    # Loading the CA bundle takes ~25 ms; every client (and every event loop of the sync entry points) shares one.
    return httpx.create_ssl_context()


class StreamedReply(Protocol):
    """A provider's reply being built from its stream events (the hooks `HttpModel._stream` calls)."""

    request_id: str | None
    chars: int  # text and arguments received so far (for the error messages)

    def parse(self, event: SSEEvent) -> Any:
        """The event's data, checked: an error event or a wrongly shaped one is a ModelError keeping the partial."""

    def add(self, data: Any, on_chunk: OnChunk) -> None: ...

    @property
    def finished(self) -> bool:
        """The last event has come: stop reading (a provider whose stream just ends says False)."""

    def incomplete(self) -> str | None:
        """Why the stream as read so far is no whole reply, or None when it is."""

    def reply(self) -> Any:
        """The reply as the provider's non-streamed JSON, for `HttpModel.reply`."""

    def snapshot(self) -> Any: ...

    def fail(self, message: str, *, retryable: bool = False) -> ModelError: ...


class HttpModel(Model):
    """What every HTTP provider's model shares: its name, the provider's model id, settings and client,
    and the call itself (build the body, POST it or read the stream, map the reply, errors).

    `specs` are the providers this class serves (the one whose prefix the name carries supplies the
    settings when none are given; a class serving one provider uses it for any name);
    `default_info` is the capabilities unless `info=` says otherwise. A provider fills in the hooks:
    `headers`, `path`, `structured`, `body`, `reply` and `stream_state`.
    """

    specs: tuple[ProviderSpec, ...] = ()
    default_info = ModelInfo()

    def __init__(self, name: str, *, model_id: str | None = None, config: ProviderConfig | None = None,
                 info: ModelInfo | None = None, transport: httpx.AsyncBaseTransport | None = None,
                 deadline: float | None = None, max_response_bytes: int | None = None, auth: httpx.Auth | None = None,
                 params: Mapping[str, str] | None = None) -> None:
        prefix, _, rest = name.partition("/")
        self.name = name
        self.model_id = model_id or rest or name
        self.config = config or provider_config(self.spec_for(prefix))
        self.info = info or self.default_info
        self.http = HttpClient(self.config, transport=transport, deadline=deadline, max_response_bytes=max_response_bytes,
                               auth=auth, params=params)

    @classmethod
    def spec_for(cls, prefix: str) -> ProviderSpec:
        found = next((spec for spec in cls.specs if spec.prefix == prefix), None)
        if found is None and len(cls.specs) == 1:
            return cls.specs[0]
        return found or ProviderSpec(prefix)

    async def generate(self, request: GenerateRequest, on_chunk: OnChunk | None = None) -> ModelResponse:
        structured = self.structured(request)
        log_fallback(structured, self.name, self)
        body = self.body(request, stream=on_chunk is not None, structured=structured)
        if on_chunk is None:
            data, response = await self.http.post_json(self.path(False), body, self.headers())
            return self.reply(data, request_id(response), structured)
        return await self._stream(body, on_chunk, structured)

    def wire_request(self, request: GenerateRequest, *, stream: bool = False) -> dict[str, Any]:
        """The body this model would POST for `request` (what `preview_request(..., wire=True)` shows)."""
        return self.body(request, stream=stream, structured=self.structured(request))

    async def _stream(self, body: dict[str, Any], on_chunk: OnChunk, structured: Structured | None) -> ModelResponse:
        state = self.stream_state(structured)
        async with self.http.stream(self.path(True), body, self.headers()) as stream:
            state.request_id = stream.request_id
            try:
                async for event in stream.events(partial=state.snapshot):
                    state.add(state.parse(event), on_chunk)
                    if state.finished:
                        break
            except httpx.HTTPError as exc:
                raise state.fail(f"the stream broke after {state.chars} characters: {type(exc).__name__}: {exc}",
                                 retryable=True) from exc
        if (why := state.incomplete()) is not None:  # never hand on a reply that was silently cut short
            raise state.fail(why, retryable=True)
        return self.reply(state.reply(), state.request_id, structured)

    # -- the provider's hooks ----------------------------------------------------------------------

    def headers(self) -> dict[str, str]:
        return {}

    def path(self, stream: bool) -> str:
        """The endpoint below the base URL, for a streamed call or not."""
        raise NotImplementedError

    def structured(self, request: GenerateRequest) -> Structured | None:
        """How this request's output schema is enforced (None without one)."""
        raise NotImplementedError

    def body(self, request: GenerateRequest, *, stream: bool, structured: Structured | None) -> dict[str, Any]:
        raise NotImplementedError

    def reply(self, data: Any, request: str | None, structured: Structured | None) -> ModelResponse:
        """The provider's JSON reply as our response (`request`: the provider's request id, if it sent one)."""
        raise NotImplementedError

    def stream_state(self, structured: Structured | None) -> StreamedReply:
        raise NotImplementedError


async def sse_events(source: httpx.Response | AsyncIterable[bytes]) -> AsyncIterator[SSEEvent]:
    """Server-sent events from a streamed response (or its bytes), as the SSE spec frames them:
    lines end at CR, LF or CRLF only; a blank line ends an event; `:` lines are comments (keep-alives)."""
    chunks = source.aiter_bytes() if isinstance(source, httpx.Response) else source
    decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
    lines, builder = _LineSplitter(), _EventBuilder()
    first = True
    async for chunk in chunks:
        text = decoder.decode(chunk)
        if first and text:
            text, first = text.removeprefix("\ufeff"), False  # the spec allows one leading BOM
        for line in lines.feed(text):
            if (event := builder.line(line)) is not None:
                yield event
    for line in [*lines.feed(decoder.decode(b"", final=True)), *lines.close(), ""]:  # "": a last event without its blank line
        if (event := builder.line(line)) is not None:
            yield event


class _EventBuilder:
    """Applies SSE lines to the event being built; a blank line finishes it (if it has data)."""

    def __init__(self) -> None:
        self.event: str = ""
        self.data: list[str] = []

    def line(self, line: str) -> SSEEvent | None:
        if not line:
            done = SSEEvent(self.event or "message", "\n".join(self.data)) if self.data else None
            self.event, self.data = "", []
            return done
        if line.startswith(":"):
            return None  # a comment / keep-alive
        name, _, value = line.partition(":")
        value = value[1:] if value.startswith(" ") else value
        if name == "data":
            self.data.append(value)
        elif name == "event":
            self.event = value
        return None


class _LineSplitter:
    """Incremental line splitting at CR, LF and CRLF only (a CRLF may be cut between two chunks).

    A line's pieces are kept in a list, not concatenated per chunk, so a long line costs linear time."""

    def __init__(self) -> None:
        self.pending: list[str] = []
        self.after_cr = False

    def feed(self, text: str) -> list[str]:
        if self.after_cr and text.startswith("\n"):
            text = text[1:]  # the LF of a CRLF whose CR ended the previous chunk
        self.after_cr = False
        lines, start = [], 0
        for match in _EOL.finditer(text):
            self.pending.append(text[start:match.start()])
            lines.append("".join(self.pending))
            self.pending = []
            start = match.end()
        if start < len(text):
            self.pending.append(text[start:])
        elif text.endswith("\r"):
            self.after_cr = True
        return lines

    def close(self) -> list[str]:
        return ["".join(self.pending)] if self.pending else []


_EOL = re.compile(r"\r\n|\r|\n")


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
