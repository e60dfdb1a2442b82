"""Which MCP servers a project or a library names, and how each starts: checked, never run here.

A server is a `[tool.dotprompt.mcp.servers.NAME]` table or an entry of `PromptLibrary(mcp_servers=...)`:
a process spoken to over stdio (`command`, `args`, `cwd`, `env`: the names of the variables it may see)
or a streamable HTTP endpoint (`url`, `headers`: values that may name variables as `${NAME}`). Secrets
never sit in a settings file: they come from the environment, by name, and are redacted from then on.
"""

from __future__ import annotations

import dataclasses
import math
import os
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .._util.redact import remember_secret
from .._util.suggest import close_matches
from ..errors import UsageError
from ..settings import (
    MCP_CALL_TIMEOUT,
    MCP_STARTUP_TIMEOUT,
    environment,
    mcp_server_sections,
    project_root,
    project_settings,
)

__all__ = ["SERVER_KEYS", "McpServer", "configured_servers", "server_from_settings"]

SERVER_KEYS = ("command", "args", "env", "cwd", "url", "headers", "timeout", "startup_timeout", "approve")
_NAME = re.compile(r"^[A-Za-z0-9_.-]{1,64}$")  # a server's name starts its tools' names: no `/`, no pattern characters
_VARIABLE = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)\}")


@dataclass(frozen=True)
class McpServer:
    """One configured MCP server: stdio (`command`) or streamable HTTP (`url`)."""

    name: str
    command: str | None = None
    args: tuple[str, ...] = ()
    env: tuple[str, ...] = ()  # the variables passed through, by name, over the SDK's safe few (PATH, HOME, ...)
    cwd: str | None = None
    url: str | None = None
    headers: Mapping[str, str] = field(default_factory=dict)  # values may name variables: "Bearer ${TOKEN}"
    timeout: float = MCP_CALL_TIMEOUT
    startup_timeout: float = MCP_STARTUP_TIMEOUT
    approve: tuple[str, ...] = ()  # tool names (or patterns) that stop the run for a person's approval
    where: str = ""  # where it was configured, for errors
    # the folder a relative `cwd` is taken from: the configuring pyproject.toml's, or the library's project
    # root (None: the process's working folder when it starts). Not part of the fingerprint: `cwd` as written is.
    base: str | None = None

    @property
    def transport(self) -> str:
        return "stdio" if self.command else "http"

    @property
    def working_folder(self) -> str | None:
        """The folder a stdio server starts in: `cwd` (`~` expanded) taken from `base` when relative; None:
        the process's own."""
        if self.cwd is None:
            return None
        folder = os.path.expanduser(self.cwd)
        return folder if os.path.isabs(folder) else os.path.normpath(os.path.join(self.base or os.getcwd(), folder))

    def child_environment(self) -> dict[str, str]:
        """The allowed variables' values (the SDK adds PATH, HOME and its other safe few); each remembered
        as a secret, so a server that prints its environment cannot put a key in a log."""
        env = environment()
        found = {name: env[name] for name in self.env if name in env}
        for value in found.values():
            remember_secret(value)
        return found

    def resolved_headers(self) -> dict[str, str]:
        """The headers with each `${NAME}` replaced by that variable; a variable unset is a UsageError."""
        return {key: _expand(value, f"{self.where} headers.{key}") for key, value in self.headers.items()}


def _expand(value: str, where: str) -> str:
    env = environment()

    def one(match: re.Match[str]) -> str:
        name = match.group(1)
        if name not in env:
            raise UsageError(f"{where} names ${{{name}}}, which is not set: set {name} in the environment")
        remember_secret(env[name])
        return env[name]

    return _VARIABLE.sub(one, value)


def configured_servers(given: Mapping[str, Any] | None = None, project: Mapping[str, Any] | None = None, *,
                       base: str | os.PathLike[str] | None = None) -> dict[str, McpServer]:
    """The servers of `PromptLibrary(mcp_servers=...)` (`given`: McpServer objects or tables), else the
    project's `[tool.dotprompt.mcp.servers]` (`project`: that table already read, found from `base`).

    A relative `cwd` is taken from the folder of the pyproject.toml that configured the server; for
    `given` servers, from `base` (the library's project root; default: the working folder's project)."""
    if given is not None:
        folder = str(base if base is not None else project_root())
        return {name: _based(value, folder) if isinstance(value, McpServer) else server_from_settings(
            name, value, f"PromptLibrary(mcp_servers={{{name!r}: ...}})", base=folder) for name, value in given.items()}
    root: Any = base
    if project is None:
        project, found = project_settings(None if base is None else Path(base))
        root = found or root
    return {name: server_from_settings(name, table, f"[tool.dotprompt.mcp.servers.{name}] in pyproject.toml",
                                       base=None if root is None else str(root))
            for name, table in mcp_server_sections(project).items()}


def _based(server: McpServer, folder: str) -> McpServer:
    return server if server.base is not None else dataclasses.replace(server, base=folder)


def server_from_settings(name: str, table: Any, where: str, *, base: str | None = None) -> McpServer:
    """One server's table checked: unknown keys (with a did-you-mean), wrong types, neither or both transports."""
    if not isinstance(name, str) or not _NAME.match(name):
        raise UsageError(f"{where}: a server's name is letters, digits, `_`, `-` or `.` (it starts its tools' "
                         f"names, `{name}/tool`), got {name!r}"[:300])
    if not isinstance(table, Mapping):
        raise UsageError(f"{where} must be a table (command = ..., args = [...] or url = ...), got {table!r}"[:300])
    for key, value in table.items():
        if key not in SERVER_KEYS:
            close = close_matches(str(key), SERVER_KEYS)
            hint = f"did you mean `{close[0]}`?" if close else f"known keys: {', '.join(SERVER_KEYS)}"
            raise UsageError(f"{where}: unknown key {key!r} ({hint})"[:300])
        problem = _value_problem(key, value)
        if problem:
            raise UsageError(f"{where}: `{key}` must be {problem}, got {value!r}"[:300])
    if bool(table.get("command")) == bool(table.get("url")):
        raise UsageError(f"{where}: give `command` (a server started over stdio) or `url` (streamable HTTP), one of the two")
    if table.get("url") and any(k in table for k in ("args", "env", "cwd")):
        raise UsageError(f"{where}: `args`, `env` and `cwd` are for a `command`; a `url` server takes `headers`")
    if table.get("command") and "headers" in table:
        raise UsageError(f"{where}: `headers` are for a `url` server; pass a stdio server's secrets by name in `env`")
    return McpServer(name, table.get("command"), tuple(table.get("args", ())), tuple(table.get("env", ())),
                     table.get("cwd"), table.get("url"), dict(table.get("headers", {})),
                     float(table.get("timeout", MCP_CALL_TIMEOUT)),
                     float(table.get("startup_timeout", MCP_STARTUP_TIMEOUT)), tuple(table.get("approve", ())), where,
                     base)


def _value_problem(key: str, value: Any) -> str | None:
    if key in ("timeout", "startup_timeout"):
        ok = isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value) and value > 0
        return None if ok else "a number of seconds above 0"
    if key in ("args", "env", "approve"):
        ok = isinstance(value, (list, tuple)) and all(isinstance(v, str) for v in value)
        return None if ok else "a list of strings"
    if key == "headers":
        ok = isinstance(value, Mapping) and all(isinstance(k, str) and isinstance(v, str) for k, v in value.items())
        return None if ok else 'a table of header names to values (secrets by name: "Bearer ${TOKEN}")'
    if key == "url":
        ok = isinstance(value, str) and value.startswith(("http://", "https://"))
        return None if ok else "an http:// or https:// URL"
    return None if isinstance(value, str) and value else "a non-empty string"
