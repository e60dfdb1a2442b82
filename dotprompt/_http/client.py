"""Pooled httpx clients, their transports, and HTTP failures translated to ModelErrors; HTTP only.

HTTP failures become one ModelError family carrying status, provider, request id and the
provider's own explanation (never the key; `errors.py` reads it from the body); rate limits, server
errors and timeouts are marked retryable with the Retry-After hint parsed, so the `retry`
middleware can act on them.

Every call has an overall deadline (`deadline`, default DEFAULT_DEADLINE) and a size cap
(`max_response_bytes`, default DEFAULT_MAX_RESPONSE_BYTES), both checked as bytes arrive: a stream
that sends keep-alives or a token now and then forever, or hundreds of megabytes, ends as a
ModelError keeping what had streamed. While nothing arrives, the read timeout (`timeout`) applies.
Server-sent events are framed by `sse.py`. The provider base that calls this (`HttpModel`) is
`providers/http_model.py`: this package knows no provider, only the `Endpoint` it is given.

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
import contextvars
import functools
import json
import ssl
import time
import urllib.parse
import urllib.request
import weakref
from collections.abc import AsyncIterator, Callable, Mapping
from contextlib import asynccontextmanager
from typing import TYPE_CHECKING, Any, Protocol

import httpx

from .._util.redact import remember_secret, url_credentials
from ..errors import ModelError, UsageError
from ..settings import (
    DEFAULT_DEADLINE,
    DEFAULT_MAX_RESPONSE_BYTES,
    env_http_transport,
    proxy_environment,
)
from .errors import ERROR_BODY_BYTES, RETRYABLE_STATUSES, body_retry_delay, provider_message, read_capped, request_id, retry_after
from .request import Pooled, build_post, pooled_client, send
from .sse import SSEEvent, sse_events

if TYPE_CHECKING:
    from httpx_aiohttp import AiohttpTransport

__all__ = ["SECRET_HEADERS", "Endpoint", "EventStream", "HttpClient", "aiohttp_available", "batch_transport",
           "close_clients", "env_proxy", "read_capped", "request_id", "retry_after", "select_batch_transport"]


class Endpoint(Protocol):
    """Where a client's calls go and their limits (a provider's `ProviderConfig` is one)."""

    @property
    def provider(self) -> str: ...
    @property
    def base_url(self) -> str: ...
    @property
    def api_key(self) -> str | None: ...
    @property
    def timeout(self) -> float: ...
    @property
    def headers(self) -> Mapping[str, str]: ...
    @property
    def deadline(self) -> float | None: ...
    @property
    def max_response_bytes(self) -> int | None: ...
    @property
    def timeout_hint(self) -> str: ...


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
    BUILD_REQUESTS = True  # False: httpx's own client.stream for every call (the way tests/_http/test_request.py compares)

    def __init__(self, config: Endpoint, *, transport: httpx.AsyncBaseTransport | None = None,
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
        self._clients: dict[tuple[int, str], tuple[asyncio.AbstractEventLoop, list[Pooled]]] = {}
        _remember_secrets(config)
        _all_clients.add(self)

    def client(self) -> httpx.AsyncClient:
        return self._pooled().client

    def _pooled(self) -> Pooled:
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

    def _new_client(self, kind: str) -> Pooled:
        transport = self._transport
        if kind == "aiohttp":
            transport = _aiohttp_transport(env_proxy(self.config.base_url))
        client = httpx.AsyncClient(base_url=self.config.base_url, timeout=self.config.timeout,
                                   headers=dict(self.config.headers), transport=transport, verify=_ssl_context(),
                                   auth=self.auth, params=self.params)
        # Called directly when client.send has nothing to add but its cookie jar: no auth, no URL credentials.
        direct = kind == "aiohttp" and transport is not None and self.auth is None and not client.base_url.userinfo
        return pooled_client(client, transport if direct else None)

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
        block is left), the request built by `request.py` from parts worked out once. A client with query
        parameters (Azure's api-version) or a path that is not absolute takes httpx's own way."""
        chosen = self._pooled()
        chosen.busy += 1
        try:
            client = chosen.client
            if self.params or not path.startswith("/") or not self.BUILD_REQUESTS:
                async with client.stream("POST", path, json=body, headers=dict(headers), timeout=self._timeout()) as response:
                    yield response
                return
            response = await send(chosen, build_post(chosen, self._url_of(client, path), body, headers, self._timeout_parts))
            try:
                yield response
            finally:
                await response.aclose()
        finally:
            chosen.busy -= 1

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


def _busy(pooled: Pooled) -> int:
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


def _remember_secrets(config: Endpoint) -> None:
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
