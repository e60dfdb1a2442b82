"""An MCP server's tools as our `Tool`s: the definition from its listing, the call through its session,
the result (text, structured content, images, resources, `isError`) as the tool's response.

A tool is named `SERVER/TOOL` (dotprompt/tools/mcp_names.py). A tool the project marks with `approve`
interrupts before it runs: the caller approves it with `Resume(restart=[...])` (the tool then runs)
or answers it with `Resume(respond=[...])` (it never runs), as any interrupt.
"""

from __future__ import annotations

import fnmatch
from pathlib import Path
from typing import Any

import mcp_types

from .._util.redact import redact, redact_data
from .._util.suggest import close_matches
from ..errors import Interrupt, McpServerError, SchemaError, UsageError
from ..tools.define import Tool, ToolContext
from ..tools.mcp_names import is_pattern, matching, split_mcp_name
from .cache import write_cache
from .client import MAX_RESULT_CHARS, McpConnections
from .config import McpServer

__all__ = ["McpTools", "mcp_tool", "refresh_tool_cache", "tool_response"]


def mcp_tool(connections: McpConnections, server: str, listed: mcp_types.Tool) -> Tool:
    """The Tool for one listed tool of `server`: input checked against its schema, then called on the server."""
    name = f"{server}/{listed.name}"
    needs_approval = any(fnmatch.fnmatchcase(listed.name, p) for p in connections.servers[server].approve)

    async def call(arguments: Any, context: ToolContext) -> dict[str, Any]:
        if needs_approval and not context.resumed:
            raise Interrupt({"mcpApproval": {"server": server, "tool": listed.name}})
        result = await connections.call_tool(server, listed.name, arguments or {})
        return tool_response(name, result)

    schema = listed.input_schema if isinstance(listed.input_schema, dict) else {"type": "object"}
    output = listed.output_schema if isinstance(listed.output_schema, dict) else None
    try:
        return Tool(name, listed.description or listed.title or "", schema, call, output_schema=output,
                    context_param="", multipart=True)
    except SchemaError as exc:
        raise McpServerError(f"MCP tool {name!r}: its input schema is not a JSON Schema we can check ({exc})") from None


def tool_response(name: str, result: Any) -> dict[str, Any]:
    """A CallToolResult as a multipart tool's {output, content}: the structured content (else the text)
    as the output; images and resources as parts beside it. `isError` raises a RuntimeError with the
    server's text, which goes back to the model as the tool's error."""
    if not isinstance(result, mcp_types.CallToolResult):
        raise McpServerError(f"MCP tool {name!r} answered with {type(result).__name__}, not a tool result")
    texts: list[str] = []
    parts: list[dict[str, Any]] = []
    for block in result.content or ():
        _add_block(block, texts, parts)
    size = sum(map(len, texts)) + sum(len(str(p)) for p in parts)
    if size > MAX_RESULT_CHARS:
        raise McpServerError(f"MCP tool {name!r} returned {size:,} characters; the most one result may hold is "
                             f"{MAX_RESULT_CHARS:,}: ask it for less (a narrower query, a page)")
    text = "\n".join(texts)
    if result.is_error:
        raise RuntimeError(redact(f"MCP tool {name!r} reported an error: {text[:2000] or '(no text)'}"))
    output = result.structured_content if result.structured_content is not None else text
    # The server was handed secrets by name (env, headers): none goes on to the model, the log or the spans.
    return {"output": redact_data(output), "content": parts or None}


def _add_block(block: Any, texts: list[str], parts: list[dict[str, Any]]) -> None:
    if isinstance(block, mcp_types.TextContent):
        texts.append(block.text)
    elif isinstance(block, (mcp_types.ImageContent, mcp_types.AudioContent)):
        parts.append({"media": {"url": f"data:{block.mime_type};base64,{block.data}", "contentType": block.mime_type}})
    elif isinstance(block, mcp_types.EmbeddedResource):
        resource = block.resource
        text = getattr(resource, "text", None)
        if text is not None:
            texts.append(text)
        else:
            mime = resource.mime_type or "application/octet-stream"
            parts.append({"media": {"url": f"data:{mime};base64,{getattr(resource, 'blob', '')}", "contentType": mime}})
    elif isinstance(block, mcp_types.ResourceLink):
        texts.append(f"[{block.name}]({block.uri})")


class McpTools:
    """A library's MCP tools by `SERVER/TOOL` name: its servers' connections, their listings as Tools."""

    def __init__(self, servers: dict[str, McpServer]) -> None:
        self.connections = McpConnections(servers)
        self._built: dict[str, tuple[list[mcp_types.Tool], dict[str, Tool]]] = {}

    def expand(self, name: str) -> list[str]:
        """The tool names `name` stands for: itself, or every tool its pattern matches (at least one)."""
        server, pattern = self._server_of(name)
        if not is_pattern(pattern):
            return [name]
        listed = list(self._tools_of(server))
        found = matching(pattern, listed)
        if not found:
            raise UsageError(f"`tools:` entry {name!r} matches none of the tools of MCP server {server!r} "
                             f"({_listing(listed)})")
        return [f"{server}/{tool}" for tool in found]

    def tool(self, name: str) -> Tool:
        server, tool = self._server_of(name)
        tools = self._tools_of(server)
        if tool not in tools:
            close = close_matches(tool, list(tools), n=3)
            hint = f"did you mean {', '.join(f'{server}/{c}' for c in close)}?" if close else _listing(list(tools))
            raise UsageError(f"MCP server {server!r} has no tool {tool!r} ({hint})")
        return tools[tool]

    def close(self) -> None:
        self.connections.close()
        self._built.clear()

    def _server_of(self, name: str) -> tuple[str, str]:
        server, tool = split_mcp_name(name)
        if server not in self.connections.servers:
            known = list(self.connections.servers)
            close = close_matches(server, known, n=1)
            hint = f"did you mean {close[0]!r}?" if close else (
                f"configured: {', '.join(known)}" if known else "none is configured")
            raise UsageError(f"tool {name!r} names MCP server {server!r}, which is not configured ({hint}): add "
                             f"[tool.dotprompt.mcp.servers.{server}] to pyproject.toml, or pass it in "
                             "PromptLibrary(mcp_servers=...)")
        return server, tool

    def _tools_of(self, server: str) -> dict[str, Tool]:
        listed = self.connections.list_tools(server)
        built = self._built.get(server)
        if built is None or built[0] is not listed:  # listed again (list_changed, a restart): built again
            built = (listed, {t.name: mcp_tool(self.connections, server, t) for t in listed})
            self._built[server] = built
        return built[1]


def _listing(tools: list[str]) -> str:
    shown = ", ".join(tools[:20]) + (f", ... ({len(tools)} in all)" if len(tools) > 20 else "")
    return f"it offers: {shown}" if tools else "it offers none"


def _cached(listed: mcp_types.Tool) -> dict[str, Any]:
    """One tool as the cache keeps it: what `check` and `render` need (name, description, schemas)."""
    entry: dict[str, Any] = {"name": listed.name, "description": listed.description or listed.title or ""}
    if isinstance(listed.input_schema, dict):
        entry["inputSchema"] = listed.input_schema
    if isinstance(listed.output_schema, dict):
        entry["outputSchema"] = listed.output_schema
    return entry


def refresh_tool_cache(servers: dict[str, McpServer], path: Path) -> dict[str, str]:
    """Start each server, list its tools, write them to the cache at `path`; the servers that failed, with why."""
    connections = McpConnections(servers)
    listed: dict[str, tuple[McpServer, list[dict[str, Any]]]] = {}
    failed: dict[str, str] = {}
    try:
        for name, server in servers.items():
            try:
                tools = connections.list_tools(name)
            except (McpServerError, UsageError) as exc:
                failed[name] = str(exc)
                continue
            listed[name] = (server, [_cached(t) for t in tools])
    finally:
        connections.close()
    if listed:
        write_cache(path, listed)
    return failed
