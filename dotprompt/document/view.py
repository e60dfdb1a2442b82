"""What `dotprompt render` prints, made without the message types.

`Prompt.render` returns a `RenderedPrompt` of pydantic messages; the command only prints one, and
importing pydantic would be most of its start-up. These plain classes carry the same attributes the
printout reads (`readable` in cli/render.py takes either), built by the same render path
(`prompts.prompt.render_view`, `engines.markers.to_messages(view=True)`).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

__all__ = ["OutputView", "RenderView", "ViewMedia", "ViewMessage", "ViewPart"]


@dataclass(frozen=True, slots=True)
class ViewMedia:
    url: str
    content_type: str | None = None


@dataclass(frozen=True, slots=True)
class ViewPart:
    """A rendered part: text, media or a section's placeholder (metadata), as markers make them."""

    text: str | None = None
    media: ViewMedia | None = None
    metadata: dict[str, Any] | None = None

    def to_dict(self) -> dict[str, Any]:
        """`Part.to_dict()`'s shape (camelCase, unset fields left out): JSON data only."""
        out: dict[str, Any] = {}
        if self.text is not None:
            out["text"] = self.text
        if self.media is not None:
            media = {"url": self.media.url}
            if self.media.content_type is not None:
                media["contentType"] = self.media.content_type
            out["media"] = media
        if self.metadata is not None:
            out["metadata"] = dict(self.metadata)
        return out


@dataclass(frozen=True, slots=True)
class ViewMessage:
    role: str
    content: list[ViewPart]
    metadata: dict[str, Any] | None = None


@dataclass(frozen=True, slots=True)
class OutputView:
    format: str | None = None
    schema: Any = None


@dataclass(frozen=True, slots=True)
class RenderView:
    """The fields of a `RenderedPrompt` the printout shows, for a render without options or history."""

    messages: list[ViewMessage]
    model: str | None = None
    config: dict[str, Any] = field(default_factory=dict)
    tools: list[str] = field(default_factory=list)
    max_turns: int | None = None
    output: OutputView = field(default_factory=OutputView)
