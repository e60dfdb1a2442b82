"""The runtime registry: tools and middleware by name, for `tools:` and `use:` in prompt files.

A `PromptLibrary` owns one and answers for it; the generate loop looks names up through the
`ToolLookup` protocol (generation/lookup.py), so it never depends on the library itself.
"""

from __future__ import annotations

import threading
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from ..errors import UsageError

if TYPE_CHECKING:
    from ..types import ToolDefinition

__all__ = ["RuntimeRegistry", "tool_definition_of"]


class RuntimeRegistry:
    """Tools (runnable, or definitions only) and middleware (objects or factories) by name."""

    def __init__(self) -> None:
        self._tools: dict[str, Any] = {}
        self._middleware: dict[str, Any] = {}
        self._lock = threading.Lock()

    def __bool__(self) -> bool:
        return bool(self._tools or self._middleware)

    def define_tool(self, tool: Any) -> None:
        """Register a tool (a ToolDefinition, its dict form, or an object with `.definition`). A tool object
        is registered by its name: its definition (its schemas) is built when a prompt or call needs it."""
        name = getattr(tool, "name", None)
        # (asked of the class: reading `definition` on the object would build it)
        if not (isinstance(name, str) and hasattr(type(tool), "definition") and hasattr(tool, "run")):
            name = tool_definition_of(tool).name
        with self._lock:
            self._tools[name] = tool

    def tool_definition(self, name: str) -> ToolDefinition | None:
        tool = self._tools.get(name)
        return tool_definition_of(tool) if tool is not None else None

    def tool(self, name: str) -> Any:
        """The registered tool: a runnable tool object, or a ToolDefinition when only the definition was
        registered (the generate loop makes it a tool that interrupts, as Genkit does); None if unknown."""
        found = self._tools.get(name)
        if found is None or hasattr(found, "run"):
            return found
        return tool_definition_of(found)

    def tool_names(self) -> list[str]:
        return sorted(self._tools)

    def define_middleware(self, name: str, middleware: Any) -> None:
        """Register middleware for `use: [name]` (an object, or a factory taking keyword args)."""
        with self._lock:
            self._middleware[name] = middleware

    def middleware(self, name: str, **kwargs: Any) -> Any:
        found = self._middleware.get(name)
        if found is None:
            return None
        return found(**kwargs) if isinstance(found, type) or kwargs else found


def tool_definition_of(tool: Any) -> ToolDefinition:
    from ..types import ToolDefinition  # pydantic loads when a tool is registered, not with the library

    if isinstance(tool, ToolDefinition):
        return tool
    if isinstance(tool, Mapping):
        return ToolDefinition.model_validate(tool)
    definition = getattr(tool, "definition", None)
    if isinstance(definition, ToolDefinition):
        return definition
    raise UsageError(f"cannot register {tool!r} as a tool: pass a ToolDefinition, a dict or a tool object")
