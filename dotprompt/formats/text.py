"""The `text` format: the reply as it is."""

from __future__ import annotations

from typing import Any

from .base import Format, ParsedOutput

__all__ = ["TEXT_FORMAT", "TextHandler", "TextStream"]


class TextStream:
    """Each chunk's own text, as Genkit's `text` format gives `chunk.output` (not the text so far:
    that is `chunk.accumulated_text`)."""

    def feed(self, text: str) -> str:
        return text


class TextHandler:
    instructions: str | None = None

    def __init__(self, schema: dict[str, Any] | None) -> None:
        self.schema = schema

    def parse_text(self, text: str) -> ParsedOutput:
        return ParsedOutput(text, [])

    def new_stream(self) -> TextStream:
        return TextStream()


TEXT_FORMAT = Format(
    name="text", content_type="text/plain", constrained=False, default_instructions=False, handler=TextHandler,
)
