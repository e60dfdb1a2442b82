"""The `text` format: the reply as it is."""

from __future__ import annotations

from typing import Any

from .types import Format, LazyValue, ParsedOutput


class TextStream:
    """The accumulated text."""

    def __init__(self) -> None:
        self._text = ""
        self._pieces: list[str] = []

    def feed(self, text: str) -> str:
        self._text += text
        return self._text

    def feed_lazy(self, text: str) -> LazyValue:
        """The accumulated text, joined only when read: keeping every chunk's output stays linear."""
        if text:
            self._pieces.append(text)
        return _TextSoFar(self._pieces, len(self._pieces))


class _TextSoFar(LazyValue):
    __slots__ = ("_count", "_pieces")

    def __init__(self, pieces: list[str], count: int) -> None:
        self._pieces = pieces
        self._count = count

    @property
    def value(self) -> str:
        return "".join(self._pieces[: self._count])


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
