"""What the generate loop asks of whoever holds the named tools and middleware (a PromptLibrary, say)."""

from __future__ import annotations

from typing import Any, Protocol, runtime_checkable

__all__ = ["ToolLookup"]


@runtime_checkable
class ToolLookup(Protocol):
    def tool(self, name: str) -> Any:
        """The tool registered under `name` (a runnable tool, or a ToolDefinition: a definition only), or None."""

    def tool_names(self) -> list[str]: ...

    def middleware(self, name: str, **kwargs: Any) -> Any:
        """The middleware registered under `name` (configured with `kwargs`), or None."""
