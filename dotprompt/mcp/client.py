"""The connections of one library to its MCP servers, through the official `mcp` SDK.

Each server starts on first use (a stdio process, or a streamable HTTP session) and is kept for every
later run, batch row and workbench run of the library; `close()`, the end of the process, Ctrl-C and
SIGTERM stop them all. The sessions live on one thread of their own with its own event loop, so a
session outlives the event loop of any one run (the sync API keeps one loop per thread, `asyncio.run`
makes one per call): a run's loop waits on the session's thread, never shares its objects.

Every wait is bounded: starting (`startup_timeout`), each call (`timeout`), listing (at most
`MAX_TOOLS` tools), a result (at most `MAX_RESULT_CHARS` of text). A server that stops mid-run is an
error naming it and the last lines it wrote to stderr; the next use starts it again.
"""

from __future__ import annotations

import asyncio
import atexit
import concurrent.futures
import contextlib
import logging
import os
import tempfile
import threading
import weakref
from collections.abc import Awaitable, Callable, Mapping
from typing import Any, TextIO, TypeVar

import mcp_types
from mcp import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client
from mcp.shared.exceptions import MCPError
from mcp_types import CONNECTION_CLOSED
from pydantic import ValidationError

from .._util.redact import redact
from ..errors import McpServerError
from .config import McpServer

__all__ = ["MAX_RESULT_CHARS", "MAX_TOOLS", "McpConnections"]

# The SDK logs a server's protocol errors with tracebacks; we report them in our errors, once, instead.
# A NullHandler keeps Python's last-resort handler from printing them; an application's handlers still see them.
logging.getLogger("mcp").addHandler(logging.NullHandler())

MAX_TOOLS = 1000  # tools one server may list: past any model's tool limit (OpenAI's is 128), far short of a flood
MAX_PAGES = 100  # tools/list pages followed: a server that pages forever is bounded too
MAX_RESULT_CHARS = 1_000_000  # the text of one tool result (its parts summed): more would swamp any context
STOP_SECONDS = 5.0  # closing a session: the SDK closes stdin, waits, then kills the process tree
STDERR_TAIL = 600  # characters of a server's stderr quoted in an error

T = TypeVar("T")


class _Thread:
    """The one event loop of the process that MCP sessions live on (a daemon thread, started on first use)."""

    _lock = threading.Lock()
    _loop: asyncio.AbstractEventLoop | None = None

    @classmethod
    def loop(cls) -> asyncio.AbstractEventLoop:
        with cls._lock:
            if cls._loop is None or cls._loop.is_closed():
                loop = asyncio.new_event_loop()
                threading.Thread(target=loop.run_forever, name="dotprompt-mcp", daemon=True).start()
                cls._loop = loop
            return cls._loop


def _submit(coro: Awaitable[T]) -> concurrent.futures.Future[T]:
    return asyncio.run_coroutine_threadsafe(coro, _Thread.loop())  # type: ignore[arg-type]


class _Connection:
    """One server's session, held open by a task on the MCP thread until stopped."""

    def __init__(self, server: McpServer, on_list_changed: Callable[[], object]) -> None:
        self.server = server
        self.session: ClientSession | None = None
        self.failure: BaseException | None = None
        self._stop = asyncio.Event()
        self._task: asyncio.Task[None] | None = None
        # its stderr, kept for errors (a file: the child writes to it directly); closed with the connection
        self._stderr: TextIO = tempfile.TemporaryFile("w+", encoding="utf-8", errors="replace")  # noqa: SIM115
        self._on_list_changed = on_list_changed
        self.noise: str | None = None  # the first thing it wrote to stdout that was not a JSON-RPC message

    @property
    def alive(self) -> bool:
        return self.session is not None and self._task is not None and not self._task.done()

    async def start(self) -> None:
        ready: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._task = asyncio.create_task(self._hold(ready))
        try:
            await asyncio.wait_for(asyncio.shield(ready), self.server.startup_timeout)
        except TimeoutError:
            said = self.stderr_tail()
            await self.stop()
            raise McpServerError(f"MCP server {self.server.name!r} did not answer `initialize` within "
                                 f"{self.server.startup_timeout:g}s{said}; check its command "
                                 f"(or raise `startup_timeout` in {self.server.where})") from None
        except Exception as exc:
            said = self.stderr_tail()
            await self.stop()
            raise McpServerError(f"MCP server {self.server.name!r} could not start: {_reason(exc)}"
                                 f"{said}; check {self.server.where}") from None

    async def _hold(self, ready: asyncio.Future[None]) -> None:
        try:
            async with self._transport() as streams, ClientSession(
                    streams[0], streams[1], message_handler=self._on_message) as session:
                await session.initialize()
                self.session = session
                ready.set_result(None)
                await self._stop.wait()
        except BaseException as exc:
            self.failure = exc
            if not ready.done():  # a start that was given up on (a timeout) awaits it no more: cancel, never log
                ready.set_exception(exc) if isinstance(exc, Exception) else ready.cancel()
        finally:
            self.session = None

    def _transport(self) -> contextlib.AbstractAsyncContextManager[Any]:
        server = self.server
        if server.command:
            folder = server.working_folder
            if folder is not None and not os.path.isdir(folder):
                raise McpServerError(f"its `cwd` {server.cwd!r} is {folder}, which is not a folder: create it, or "
                                     f"fix `cwd` in {server.where} (a relative one is taken from the folder of the "
                                     "pyproject.toml that configures it, or the library's project root)")
            params = StdioServerParameters(command=server.command, args=list(server.args), cwd=folder,
                                           env=server.child_environment(), encoding_error_handler="replace")
            return stdio_client(params, errlog=self._stderr)
        assert server.url is not None
        client = create_mcp_http_client(headers=server.resolved_headers())
        return streamable_http_client(server.url, http_client=client)

    async def _on_message(self, message: Any) -> None:
        if isinstance(message, mcp_types.ToolListChangedNotification):  # listed again on next use
            self._on_list_changed()
        elif isinstance(message, Exception) and self.noise is None:  # a line on stdout that is no JSON-RPC
            self.noise = _reason(message)

    async def stop(self) -> None:
        self._stop.set()
        if self._task is not None and not self._task.done():
            try:
                await asyncio.wait_for(asyncio.shield(self._task), STOP_SECONDS)
            except (TimeoutError, Exception):
                self._task.cancel()
                with contextlib.suppress(BaseException):
                    await asyncio.wait_for(self._task, STOP_SECONDS)
        self.session = None
        self._stderr.close()

    def stderr_tail(self) -> str:
        """What the server said besides JSON-RPC, redacted: the first non-protocol line on its stdout, the
        end of its stderr (empty when it said nothing)."""
        noise = f" (it wrote what is not JSON-RPC to stdout, {self.noise[:300]})" if self.noise else ""
        return noise + self._stderr_end()

    def _stderr_end(self) -> str:
        with contextlib.suppress(OSError, ValueError):
            self._stderr.flush()
            size = self._stderr.seek(0, 2)
            self._stderr.seek(max(0, size - 4 * STDERR_TAIL))
            text = self._stderr.read()[-STDERR_TAIL:].strip()
            if text:
                return f" (its stderr ends: {redact(text)!r})"
        return ""


def _reason(exc: BaseException) -> str:
    """One redacted line: a pydantic error as its first problems (where, what), the rest as type: message."""
    while isinstance(exc, BaseExceptionGroup) and exc.exceptions:
        exc = exc.exceptions[0]
    if isinstance(exc, ValidationError):
        problems = [f"{'.'.join(map(str, e['loc'])) or 'the message'}: {e['msg']}"
                    + (f" (got {str(e['input'])[:80]!r})" if e["type"] == "json_invalid" else "")
                    for e in exc.errors()[:3]]
        return redact("out of shape: " + "; ".join(problems))[:500]
    if isinstance(exc, McpServerError):  # ours: already says what to do
        return redact(str(exc))[:500]
    return redact(f"{type(exc).__name__}: {exc}")[:500]


def _closed(exc: BaseException) -> bool:
    """The SDK's word for a connection that ended (the server exited, its stdout closed)."""
    return isinstance(exc, MCPError) and exc.error.code == CONNECTION_CLOSED


class McpConnections:
    """The servers of one library: started on first use, kept, listed once (again after `list_changed`)."""

    def __init__(self, servers: Mapping[str, McpServer]) -> None:
        self.servers = dict(servers)
        self._connections: dict[str, _Connection] = {}
        self._tools: dict[str, list[mcp_types.Tool]] = {}
        self._guards: dict[str, asyncio.Lock] = {}  # one start at a time per server, made on the MCP thread
        _OPEN.add(self)

    # -- what the library and its tools ask (from any thread, any loop) --------------------------------

    def list_tools(self, name: str) -> list[mcp_types.Tool]:
        """The tools server `name` offers (started if need be; listed again after it said the list changed)."""
        found = self._tools.get(name)
        if found is not None:
            return found
        server = self.servers[name]
        return _submit(self._list(name)).result(server.startup_timeout * 2 + STOP_SECONDS)

    async def call_tool(self, name: str, tool: str, arguments: Any) -> mcp_types.CallToolResult:
        """Call `tool` of server `name`; the waiting is done on the MCP thread, bounded by the server's timeout."""
        return await asyncio.wrap_future(_submit(self._call(name, tool, arguments)))

    def close(self) -> None:
        """Stop every server (bounded); the next use starts them again."""
        connections, self._connections = list(self._connections.values()), {}
        self._tools.clear()
        if connections and _Thread._loop is not None and _Thread._loop.is_running():
            with contextlib.suppress(Exception):
                _submit(_stop_all(connections)).result(STOP_SECONDS * 2 + 1)

    # -- on the MCP thread ---------------------------------------------------------------------------

    def _guard(self, name: str) -> asyncio.Lock:
        return self._guards.setdefault(name, asyncio.Lock())

    async def _session(self, name: str) -> ClientSession:
        async with self._guard(name):
            connection = self._connections.get(name)
            if connection is None or not connection.alive:
                if connection is not None:
                    await connection.stop()
                self._tools.pop(name, None)
                connection = _Connection(self.servers[name], lambda: self._tools.pop(name, None))
                self._connections[name] = connection
                await connection.start()
            assert connection.session is not None
            return connection.session

    async def _list(self, name: str) -> list[mcp_types.Tool]:
        server = self.servers[name]
        session = await self._session(name)
        tools: list[mcp_types.Tool] = []
        cursor: str | None = None
        for _ in range(MAX_PAGES):
            params = mcp_types.PaginatedRequestParams(cursor=cursor) if cursor else None
            page = await self._bounded(name, session.list_tools(params=params), server.startup_timeout, "tools/list")
            tools += page.tools
            if len(tools) > MAX_TOOLS:
                raise McpServerError(f"MCP server {name!r} lists more than {MAX_TOOLS} tools; a model is sent a "
                                     "handful: give it a narrower configuration (most servers take options "
                                     "choosing their tools)")
            cursor = page.next_cursor
            if not cursor:
                break
        self._tools[name] = tools
        return tools

    async def _call(self, name: str, tool: str, arguments: Any) -> mcp_types.CallToolResult:
        server = self.servers[name]
        session = await self._session(name)
        return await self._bounded(name, session.call_tool(tool, arguments), server.timeout, f"tool {tool!r}")

    async def _bounded(self, name: str, call: Awaitable[T], seconds: float, what: str) -> T:
        connection = self._connections.get(name)
        try:
            return await asyncio.wait_for(call, seconds)
        except McpServerError:
            raise
        except Exception as exc:
            tail = connection.stderr_tail() if connection else ""
            if isinstance(exc, TimeoutError):
                await self._drop(name)  # a session with a lost request may be wedged: the next use starts afresh
                raise McpServerError(f"MCP server {name!r} did not answer {what} within {seconds:g}s{tail}; raise "
                                     f"`timeout` in {self.servers[name].where} if it is just slow") from None
            if _closed(exc) or (connection is not None and not connection.alive):
                await self._drop(name)
                raise McpServerError(f"MCP server {name!r} stopped during {what}{tail}; it starts again on the "
                                     "next call") from None
            raise McpServerError(f"MCP server {name!r} failed {what}: {_reason(exc)}{tail}") from None

    async def _drop(self, name: str) -> None:
        connection = self._connections.pop(name, None)
        self._tools.pop(name, None)
        if connection is not None:
            await connection.stop()


async def _stop_all(connections: list[_Connection]) -> None:
    await asyncio.gather(*(c.stop() for c in connections), return_exceptions=True)


_OPEN: weakref.WeakSet[McpConnections] = weakref.WeakSet()


@atexit.register
def _close_all() -> None:
    """At exit (Ctrl-C and SIGTERM end the process through here too): no server outlives us."""
    for connections in list(_OPEN):
        connections.close()
