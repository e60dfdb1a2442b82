"""The cached tool lists of a project's MCP servers, so `dotprompt check` validates MCP tool names
without starting a process or reaching a URL (a prompt file alone never does either).

`dotprompt mcp tools --refresh` writes it (settings.MCP_TOOLS_CACHE, beside pyproject.toml: commit it,
and CI checks names as you do); each server's entry keeps a fingerprint of its configuration, so a
changed `command`, `args` or `url` makes its list stale, which `check` says.
"""

from __future__ import annotations

import hashlib
import json
import os
import tempfile
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .._util.escape import json_dumps
from ..settings import MCP_TOOLS_CACHE, project_root
from ..tools.mcp_names import is_mcp_name, matching, split_mcp_name
from ..types import ToolDefinition
from .config import McpServer

__all__ = ["CachedServer", "CachedTools", "cache_path", "cached_definitions", "cached_servers", "fingerprint", "read_cache",
           "write_cache"]

MAX_CACHE_BYTES = 32 * 1024 * 1024  # a cache file larger than this is not ours: read as absent


@dataclass(frozen=True)
class CachedServer:
    tools: tuple[str, ...]
    fingerprint: str
    descriptions: tuple[str, ...] = ()
    # each tool's inputSchema and outputSchema as listed (None: a cache written before they were kept)
    schemas: tuple[tuple[dict[str, Any] | None, dict[str, Any] | None], ...] = ()


def fingerprint(server: McpServer) -> str:
    """What makes a different server: how it starts, never its secrets (only variable names are in it)."""
    shape = [server.command, list(server.args), server.cwd, server.url, sorted(server.headers)]
    return hashlib.sha256(json.dumps(shape).encode()).hexdigest()[:16]


def read_cache(path: Path) -> dict[str, CachedServer]:
    """The cached servers by name; an absent, unreadable or foreign file is an empty cache."""
    try:
        if path.stat().st_size > MAX_CACHE_BYTES:
            return {}
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    servers = data.get("servers") if isinstance(data, dict) else None
    if not isinstance(servers, dict):
        return {}
    found = {}
    for name, entry in servers.items():
        tools = entry.get("tools") if isinstance(entry, dict) else None
        if isinstance(tools, list):
            names = tuple(str(t.get("name")) for t in tools if isinstance(t, dict))
            listed = [t for t in tools if isinstance(t, dict)]
            found[str(name)] = CachedServer(names, str(entry.get("fingerprint", "")),
                                            tuple(str(t.get("description") or "") for t in listed),
                                            tuple((_schema(t.get("inputSchema")), _schema(t.get("outputSchema")))
                                                  for t in listed))
    return found


def _schema(value: Any) -> dict[str, Any] | None:
    return value if isinstance(value, dict) else None


def write_cache(path: Path, listed: dict[str, tuple[McpServer, list[dict[str, Any]]]]) -> None:
    """Replace the entries of the servers in `listed` (others are kept), atomically."""
    current: dict[str, Any] = {}
    try:
        old = json.loads(path.read_text(encoding="utf-8"))
        current = dict(old.get("servers", {})) if isinstance(old, dict) else {}
    except (OSError, ValueError):
        pass
    for name, (server, tools) in listed.items():
        current[name] = {"fingerprint": fingerprint(server), "tools": tools}
    path.parent.mkdir(parents=True, exist_ok=True)
    text = json_dumps({"version": 1, "servers": dict(sorted(current.items()))}, indent=2) + "\n"
    fd, temporary = tempfile.mkstemp(dir=path.parent, prefix=".mcp-tools.")
    with os.fdopen(fd, "w", encoding="utf-8") as out:
        out.write(text)
    os.replace(temporary, path)


def cache_path() -> Path:
    """Where the project keeps it: settings.MCP_TOOLS_CACHE under the project's root (pyproject.toml's folder)."""
    return project_root() / MCP_TOOLS_CACHE


def cached_servers() -> dict[str, CachedServer]:
    """The project's cache, read once per version of the file (check asks for every prompt)."""
    path = cache_path()
    try:
        stat = path.stat()
    except OSError:
        return {}
    key = (str(path), stat.st_mtime_ns, stat.st_size)
    if _READ.get("key") != key:
        _READ.clear()
        _READ.update(key=key, servers=read_cache(path))
    found: dict[str, CachedServer] = _READ["servers"]
    return found


_READ: dict[str, Any] = {}


REFRESH = "`dotprompt mcp tools --refresh` lists and caches them"


@dataclass(frozen=True)
class CachedTools:
    """The definitions of a prompt's MCP tools as the cached lists give them (what `render` shows: it
    starts no server), and a note for each server whose list is missing or stale."""

    definitions: list[ToolDefinition] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    path: str = ""


def cached_definitions(names: Sequence[str], servers: Mapping[str, McpServer],
                       cache: Mapping[str, CachedServer] | None = None) -> CachedTools:
    """The MCP names among `names` (patterns expanded over the cached lists) as tool definitions, each
    marked `metadata.mcp` (server, tool, `"from": "cache"`), from the cache only: never a server started."""
    wanted = [n for n in names if is_mcp_name(n)]
    if not wanted:
        return CachedTools()
    path = cache_path()
    cache = cached_servers() if cache is None else cache
    definitions: dict[str, ToolDefinition] = {}
    notes: dict[str, str] = {}
    for name in wanted:
        server, tool = split_mcp_name(name)
        cached = cache.get(server)
        if server not in servers:
            notes[server] = f"MCP server `{server}` is not configured: `{name}` has no definition"
            continue
        if cached is None:
            notes[server] = (f"MCP server `{server}` has no cached tool list in {path}, so its tools' definitions "
                             f"are not shown ({REFRESH})")
            continue
        if cached.fingerprint != fingerprint(servers[server]):
            notes.setdefault(server, f"the cached tool list of MCP server `{server}` is from another configuration "
                                     f"of it: the definitions shown may be out of date ({REFRESH})")
        found = matching(tool, list(cached.tools))
        if not found:
            notes.setdefault(name, f"`{name}`: MCP server `{server}`'s cached list has no such tool")
        for listed in found:
            index = cached.tools.index(listed)
            description = cached.descriptions[index] if index < len(cached.descriptions) else ""
            schema, output = cached.schemas[index] if index < len(cached.schemas) else (None, None)
            if schema is None:
                notes.setdefault(server + "/schemas", f"the cached tool list of MCP server `{server}` has no input "
                                                      f"schemas (written by an older dotprompt; {REFRESH})")
            full = f"{server}/{listed}"
            definitions.setdefault(full, ToolDefinition(
                name=full, description=description, input_schema=schema or {"type": "object"}, output_schema=output,
                metadata={"mcp": {"server": server, "tool": listed, "from": "cache"}}))
    return CachedTools(list(definitions.values()), list(notes.values()), str(path))
