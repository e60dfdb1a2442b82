"""MCP tool names in `tools:`, as Genkit's MCP plugin writes them: `SERVER/TOOL`, a whole server
`SERVER/*`, or a pattern `SERVER/read_*` (`*` and `?`, as in a shell).

Names only: which servers exist and what they offer are the MCP client's (dotprompt/mcp/), so the
library and `check` can tell an MCP name from a local tool's without loading the SDK.
"""

from __future__ import annotations

import fnmatch
import re

__all__ = ["is_mcp_name", "is_pattern", "matching", "split_mcp_name"]

_NAME = re.compile(r"^(?P<server>[A-Za-z0-9_.-]{1,64})/(?P<tool>.+)$")


def is_mcp_name(name: object) -> bool:
    """`SERVER/TOOL` (or a pattern): a tool an MCP server provides, never one defined in code."""
    return isinstance(name, str) and _NAME.match(name) is not None


def split_mcp_name(name: str) -> tuple[str, str]:
    """(server, tool or pattern) of an MCP name."""
    found = _NAME.match(name)
    if found is None:
        raise ValueError(f"{name!r} is not an MCP tool name (SERVER/TOOL)")
    return found["server"], found["tool"]


def is_pattern(tool: str) -> bool:
    return any(c in tool for c in "*?[")


def matching(pattern: str, tools: list[str]) -> list[str]:
    """The tool names `pattern` names, in the server's order (case-sensitive, as tool names are)."""
    if not is_pattern(pattern):
        return [pattern] if pattern in tools else []
    return [t for t in tools if fnmatch.fnmatchcase(t, pattern)]
