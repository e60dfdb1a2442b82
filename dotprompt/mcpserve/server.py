"""The MCP server of one prompt folder: the official SDK's low-level `Server`, its handlers ours.

The low-level `Server` rather than `MCPServer` (FastMCP): MCPServer builds each tool from a Python
function's signature and each prompt from a decorated function, once; our prompts and tools come from
the folder's files, their schemas are already JSON Schema, and the list must follow the files as they
change. The low-level server takes the lists and calls as handlers, which is exactly that.

The folder is read on every list and call (the library recompiles only what changed), so an edited,
added or removed file shows at the client's next request.
"""

from __future__ import annotations

from typing import Any

import mcp_types as mcp
from mcp.server import Server
from mcp.server.context import ServerRequestContext
from mcp.shared.exceptions import MCPError

from .._util.redact import redact
from ..errors import DotpromptError
from ..prompts.library import PromptLibrary
from .arguments import ArgumentError, decode_arguments, prompt_arguments
from .calls import call_check, call_prompt, call_render, error_result, too_large
from .catalog import Catalog, Entry
from .messages import prompt_messages
from .tools import CHECK_TOOL, RENDER_TOOL, prompt_tool

__all__ = ["SERVER_NAME", "create_server"]

SERVER_NAME = "dotprompt"
Context = ServerRequestContext[Any]


def create_server(library: PromptLibrary, *, version: str = "") -> Server[Any]:
    """The server for `library`'s folder (its handlers read the folder at each request)."""
    handlers = Handlers(Catalog(library))
    return Server(SERVER_NAME, version=version, title=f"dotprompt: {library.directory}",
                  instructions=_instructions(library), on_list_prompts=handlers.list_prompts,
                  on_get_prompt=handlers.get_prompt, on_list_tools=handlers.list_tools,
                  on_call_tool=handlers.call_tool)


def _instructions(library: PromptLibrary) -> str:
    return (f"The prompts of the folder {library.directory}, each a prompt (its rendered messages) and a tool "
            "(runs it on its model and returns the validated output). `check` lints the folder without calling "
            "a model; `render` shows exactly what a prompt would send.")


class Handlers:
    def __init__(self, catalog: Catalog) -> None:
        self.catalog = catalog

    async def list_prompts(self, ctx: Context, params: mcp.PaginatedRequestParams | None) -> mcp.ListPromptsResult:
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
