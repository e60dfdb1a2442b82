"""`check` on MCP tool names (`SERVER/TOOL` in `tools:`), without starting a server: the server must be
configured, and the tool (or pattern) must be in its cached tool list (`dotprompt mcp tools --refresh`).
A server whose list is not cached, or was cached for another configuration, is a warning saying so."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Literal

from .._util.suggest import close_matches
from ..mcp.cache import CachedServer, cached_servers, fingerprint
from ..mcp.config import McpServer
from ..tools.mcp_names import is_pattern, matching, split_mcp_name

__all__ = ["REFRESH", "mcp_name_problem"]

REFRESH = "run `dotprompt mcp tools --refresh` to cache the servers' tool lists"
Level = Literal["error", "warning"]


def mcp_name_problem(name: str, servers: Mapping[str, McpServer],
                     cache: Mapping[str, CachedServer] | None = None) -> tuple[Level, str, str] | None:
    """(level, code, message) for an MCP tool name that no configured server provides; None when it is fine."""
    server, tool = split_mcp_name(name)
    cache = cached_servers() if cache is None else cache
    if server not in servers:
        known = [f"{s}/{t}" for s in servers if s in cache for t in cache[s].tools]
        close = close_matches(name, known, n=1) or [f"{s}/{tool}" for s in close_matches(server, list(servers), n=1)]
        hint = f"did you mean {close[0]}?" if close else (
            f"configured: {', '.join(servers)}" if servers else "no MCP server is configured")
        return "error", "unknown-mcp-server", (
            f"tool `{name}` names MCP server `{server}`, which is not configured ({hint}); a prompt "
            f"file cannot start one: add [tool.dotprompt.mcp.servers.{server}] to pyproject.toml")
    cached = cache.get(server)
    if cached is None:
        return "warning", "unchecked-mcp-tool", (
            f"tool `{name}` is unchecked: MCP server `{server}` has no cached tool list ({REFRESH})")
    if cached.fingerprint != fingerprint(servers[server]):
        return "warning", "unchecked-mcp-tool", (
            f"tool `{name}` is unchecked: the cached tool list of MCP server `{server}` is from "
            f"another configuration of it ({REFRESH})")
    if matching(tool, list(cached.tools)):
        return None
    if is_pattern(tool):
        return "error", "unknown-mcp-tool", f"tool pattern `{name}` matches none of the tools of MCP server `{server}`"
    close = close_matches(tool, list(cached.tools), n=3)
    hint = f"did you mean {', '.join(f'{server}/{c}' for c in close)}?" if close else (
        f"it offers {len(cached.tools)} tools: `dotprompt mcp tools` lists them")
    return "error", "unknown-mcp-tool", f"MCP server `{server}` has no tool `{tool}` ({hint})"
