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
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .._util.escape import json_dumps
from ..settings import MCP_TOOLS_CACHE, project_root
from .config import McpServer

__all__ = ["CachedServer", "cache_path", "cached_servers", "fingerprint", "read_cache", "write_cache"]

MAX_CACHE_BYTES = 32 * 1024 * 1024  # a cache file larger than this is not ours: read as absent


@dataclass(frozen=True)
class CachedServer:
    tools: tuple[str, ...]
    fingerprint: str
    descriptions: tuple[str, ...] = ()


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
            found[str(name)] = CachedServer(names, str(entry.get("fingerprint", "")),
                                            tuple(str(t.get("description") or "") for t in tools if isinstance(t, dict)))
    return found


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
