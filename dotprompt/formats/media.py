"""The `media` format (Genkit's, for models that reply with an image, audio or video): the reply's media part.

The output is the first part of the reply holding `media`, as `{url, contentType?}`; a reply with
none is an output error. Nothing is added to the prompt: no instructions, no constrained output.
"""

from __future__ import annotations

from typing import Any

from ..errors import OutputParseError
from .base import Format, ParsedOutput

__all__ = ["MEDIA_FORMAT", "MediaHandler", "MediaStream"]

_NO_MEDIA = "the reply holds no media part (format `media` expects a model that replies with an image, audio or video)"


class MediaStream:
    """Text chunks carry no media: a chunk's output is None (the media part arrives whole)."""

    def feed(self, text: str) -> None:
        return None


class MediaHandler:
    instructions: str | None = None

    def __init__(self, schema: dict[str, Any] | None) -> None:
        self.schema = schema

    def parse_message(self, message: Any) -> ParsedOutput:
        """The first media part of the model's message (a `types.Message`)."""
        for part in getattr(message, "content", None) or ():
            media = getattr(part, "media", None)
            if media is not None:
                return ParsedOutput(media.model_dump(by_alias=True, exclude_none=True) if hasattr(media, "model_dump")
                                    else dict(media), [])
        return self.parse_text("".join(getattr(part, "text", None) or "" for part in getattr(message, "content", ())))

    def parse_text(self, text: str) -> ParsedOutput:
        raise OutputParseError(_NO_MEDIA, text=text, format_name="media")

    def new_stream(self) -> MediaStream:
        return MediaStream()


MEDIA_FORMAT = Format(
    name="media", content_type=None, constrained=False, default_instructions=False, handler=MediaHandler,
)
