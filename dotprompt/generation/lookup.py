"""What the generate loop asks of whoever holds the named tools and middleware (a PromptLibrary, say)."""

from __future__ import annotations

from typing import Any, Protocol, runtime_checkable

__all__ = ["ToolLookup"]


@runtime_checkable
class ToolLookup(Protocol):
    def tool(self, name: str) -> Any:
        """The runnable tool registered under `name`, or None."""

    def tool_names(self) -> list[str]: ...

    def middleware(self, name: str, **kwargs: Any) -> Any:
        """The middleware registered under `name` (configured with `kwargs`), or None."""
