"""The MCP server of one prompt folder: the official SDK's low-level `Server`, its handlers ours.

The low-level `Server` rather than `MCPServer` (FastMCP): MCPServer builds each tool from a Python
function's signature and each prompt from a decorated function, once; our prompts and tools come from
the folder's files, their schemas are already JSON Schema, and the list must follow the files as they
change. The low-level server takes the lists and calls as handlers, which is exactly that.

The folder is read on every list and call (the library recompiles only what changed), so an edited,
added or removed file shows at the client's next request. A watcher started with the server (its
lifespan) looks at the folder's files every `WATCH_SECONDS` and, when they changed, tells every session
that has listed (handshake-era sessions: stdio clients, the Inspector, Claude Desktop) with
`notifications/prompts/list_changed` and `notifications/tools/list_changed`. Sessions of the 2026
protocol get those only through `subscriptions/listen`, which this server does not offer: they list again.
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator
from typing import Any, Final

import anyio
import anyio.abc
import anyio.to_thread
import mcp_types as mcp
from mcp.server import NotificationOptions, Server
from mcp.server.context import ServerRequestContext
from mcp.server.models import InitializationOptions
from mcp.shared.exceptions import MCPError

from .._util.redact import redact
from ..errors import DotpromptError
from ..prompts.library import PromptLibrary
from .arguments import ArgumentError, decode_arguments, prompt_arguments
from .calls import call_check, call_prompt, call_render, error_result, too_large
from .catalog import Catalog, Entry
from .messages import prompt_messages
from .tools import CHECK_TOOL, RENDER_TOOL, prompt_tool

__all__ = ["MAX_WATCHED_SESSIONS", "SERVER_NAME", "WATCH_SECONDS", "FolderServer", "Watcher", "create_server"]

SERVER_NAME = "dotprompt"
WATCH_SECONDS: Final = 1.0  # how often the watcher looks at the folder's files (a stat each)
MAX_WATCHED_SESSIONS: Final = 256  # sessions told of changes; the oldest beyond are forgotten (they can list again)
Context = ServerRequestContext[Any]


class FolderServer(Server[Any]):
    """The low-level Server, saying in every transport's handshake that its lists change."""

    def create_initialization_options(self, notification_options: NotificationOptions | None = None,
                                      *args: Any, **kwargs: Any) -> InitializationOptions:
        changes = notification_options or NotificationOptions(prompts_changed=True, tools_changed=True)
        return super().create_initialization_options(changes, *args, **kwargs)


def create_server(library: PromptLibrary, *, version: str = "", watch_seconds: float = WATCH_SECONDS) -> Server[Any]:
    """The server for `library`'s folder (its handlers read the folder at each request)."""
    catalog = Catalog(library)
    watcher = Watcher(catalog, watch_seconds)
    handlers = Handlers(catalog, watcher)

    @contextlib.asynccontextmanager
    async def lifespan(_: Server[Any]) -> AsyncIterator[dict[str, Any]]:
        async with anyio.create_task_group() as group:
            await group.start(watcher.run)  # the folder as it is now is read before the first request
            yield {}
            group.cancel_scope.cancel()

    return FolderServer(SERVER_NAME, version=version, title=f"dotprompt: {library.directory}",
                        instructions=_instructions(library), lifespan=lifespan, on_list_prompts=handlers.list_prompts,
                        on_get_prompt=handlers.get_prompt, on_list_tools=handlers.list_tools,
                        on_call_tool=handlers.call_tool)


class Watcher:
    """Tells the sessions that listed when the folder's files change (see the module's docstring)."""

    def __init__(self, catalog: Catalog, seconds: float) -> None:
        self.catalog = catalog
        self.seconds = seconds
        # The SDK makes a session object per request; its connection's `initialize` params are one object
        # per connection, so they key the connection (kept with them, so the key stays theirs).
        self.sessions: dict[int, tuple[Any, Any]] = {}

    def seen(self, ctx: Context) -> None:
        params = ctx.session.client_params
        if params is None:  # a 2026-protocol request: no handshake, no change notifications
            return
        self.sessions.pop(id(params), None)
        self.sessions[id(params)] = (params, ctx.session)
        while len(self.sessions) > MAX_WATCHED_SESSIONS:
            self.sessions.pop(next(iter(self.sessions)))

    async def run(self, *, task_status: anyio.abc.TaskStatus[None] = anyio.TASK_STATUS_IGNORED) -> None:
        last = await anyio.to_thread.run_sync(self.catalog.signature)
        task_status.started()
        while True:
            await anyio.sleep(self.seconds)
            now = await anyio.to_thread.run_sync(self.catalog.signature)
            if now != last:
                last = now
                await self.notify()

    async def notify(self) -> None:
        for key, (_, session) in list(self.sessions.items()):
            try:
                await session.send_prompt_list_changed()
                await session.send_tool_list_changed()
            except (anyio.ClosedResourceError, anyio.BrokenResourceError, MCPError):
                self.sessions.pop(key, None)  # the client has gone


def _instructions(library: PromptLibrary) -> str:
    return (f"The prompts of the folder {library.directory}, each a prompt (its rendered messages) and a tool "
            "(runs it on its model and returns the validated output). `check` lints the folder without calling "
            "a model; `render` shows exactly what a prompt would send.")


class Handlers:
    def __init__(self, catalog: Catalog, watcher: Watcher) -> None:
        self.catalog = catalog
        self.watcher = watcher

    async def list_prompts(self, ctx: Context, params: mcp.PaginatedRequestParams | None) -> mcp.ListPromptsResult:
        self.watcher.seen(ctx)
        return mcp.ListPromptsResult(prompts=[_prompt(entry) for entry in self.catalog.entries()])

    async def get_prompt(self, ctx: Context, params: mcp.GetPromptRequestParams) -> mcp.GetPromptResult:
        entry = self._entry(params.name)
        try:
            data = decode_arguments(entry.meta, params.arguments, entry.label)
            rendered = entry.prompt.render(data)
        except ArgumentError as exc:
            raise MCPError(mcp.INVALID_PARAMS, str(exc)) from None
        except DotpromptError as exc:
            raise MCPError(mcp.INVALID_PARAMS, redact(f"prompt {entry.label!r} does not render: {exc}")) from None
        return mcp.GetPromptResult(description=_description(entry), messages=prompt_messages(rendered.messages,
                                                                                               entry.label))

    def _entry(self, label: str) -> Entry:
        try:
            entry = self.catalog.by_label(label)
        except DotpromptError as exc:  # the file is there and broken
            raise MCPError(mcp.INVALID_PARAMS, redact(f"prompt {label!r} does not load: {exc}")) from None
        if entry is None:
            raise MCPError(mcp.INVALID_PARAMS, f"no prompt named {label!r} (prompts/list names them)")
        return entry

    async def list_tools(self, ctx: Context, params: mcp.PaginatedRequestParams | None) -> mcp.ListToolsResult:
        self.watcher.seen(ctx)
        return mcp.ListToolsResult(tools=[*(prompt_tool(entry) for entry in self.catalog.entries()),
                                          CHECK_TOOL, RENDER_TOOL])

    async def call_tool(self, ctx: Context, params: mcp.CallToolRequestParams) -> mcp.CallToolResult:
        problem = too_large(params.arguments)
        if problem is not None:
            return error_result(f"{params.name}: {problem}")
        if params.name == CHECK_TOOL.name:
            return await call_check(self.catalog, params.arguments)
        if params.name == RENDER_TOOL.name:
            return await call_render(self.catalog, params.arguments)
        try:
            entry = self.catalog.by_tool(params.name)
        except DotpromptError as exc:
            return error_result(f"tool {params.name!r}: its prompt does not load: {exc}")
        if entry is None:
            raise MCPError(mcp.INVALID_PARAMS, f"no tool named {params.name!r} (tools/list names them)")
        return await call_prompt(entry, params.arguments)


def _description(entry: Entry) -> str | None:
    said = entry.meta.get("description")
    return said if isinstance(said, str) else None


def _prompt(entry: Entry) -> mcp.Prompt:
    arguments = [mcp.PromptArgument(name=name, description=description, required=required)
                 for name, description, required in prompt_arguments(entry.meta)]
    return mcp.Prompt(name=entry.label, title=entry.label, description=_description(entry), arguments=arguments)
