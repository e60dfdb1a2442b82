"""The `json` format: one JSON value; streams a snapshot of the value so far."""

from __future__ import annotations

from typing import Any

from .base import Format, ParsedOutput
from .schema import js_json

__all__ = ["JSON_FORMAT", "JsonHandler", "JsonStream", "json_instructions"]


def json_instructions(schema: dict[str, Any] | None) -> str | None:
    """Genkit's text, word for word (its json formatter and its constrained-output simulation)."""
    if not schema:
        return None
    return f"Output should be in JSON format and conform to the following schema:\n\n```\n{js_json(schema)}\n```\n"


class JsonStream:
    """Snapshots of the value so far; each one is independent of later chunks."""

    def __init__(self) -> None:
        from .reading.incremental import IncrementalJsonParser  # the readers load with the first reply read

        self._parser = IncrementalJsonParser()

    def feed(self, text: str) -> Any:
        self._parser.advance(text)  # the live tree's open string is not published: the copy shows it
        # A copy of the open spine only, so a chunk's output never changes under a caller that kept it
        # (extended from the last copy when the caller no longer holds that one).
        return self._parser.snapshot_copy()

    def feed_lazy(self, text: str) -> Any:
        """The same snapshot, built only when read: O(1) per chunk for a run that keeps every chunk."""
        return self._parser.feed_lazy(text)

    def whole_output(self) -> ParsedOutput | None:
        """The final parse of the text fed, without reading it again, when that text was strict JSON
        (`IncrementalJsonParser.strict`): the value json.loads gives, no repairs. None otherwise. The
        value is the stream's own, the very object the last chunk's output is."""
        parser = self._parser
        return ParsedOutput(parser.value, []) if parser.done and parser.strict else None


class JsonHandler:
    def __init__(self, schema: dict[str, Any] | None) -> None:
        self.schema = schema
        self.instructions = json_instructions(schema)

    def parse_text(self, text: str) -> ParsedOutput:
        from .reading.extract import extract_json  # the readers load with the first reply read

        return extract_json(text, format_name="json")

    def new_stream(self) -> JsonStream:
        return JsonStream()


JSON_FORMAT = Format(
    name="json", content_type="application/json", constrained=True, default_instructions=True, handler=JsonHandler,
)
