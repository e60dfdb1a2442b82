"""The `array` format: a JSON array; streams the items each chunk completes."""

from __future__ import annotations

from typing import Any

from ..errors import OutputParseError, SchemaError
from ..schema.refs import resolve
from .base import Format, ParsedOutput
from .schema import has_type, js_json

__all__ = ["ARRAY_FORMAT", "ArrayHandler", "ArrayStream", "array_instructions", "check_array_schema"]


def check_array_schema(schema: dict[str, Any] | None) -> None:
    if schema is not None and not has_type(resolve(schema, schema), "array"):
        raise SchemaError(
            f"the 'array' format needs a schema of type 'array' (got type {schema.get('type')!r}); "
            "wrap the item schema: {'type': 'array', 'items': {...}}"
        )


def array_instructions(schema: dict[str, Any] | None) -> str | None:
    """Genkit's text, word for word (the blank line after "schema:" and the trailing spaces are its own)."""
    if not schema:
        return None
    return f"Output should be a JSON array conforming to the following schema:\n    \n```\n{js_json(schema)}\n```\n    "


class ArrayStream:
    """Each feed returns the items it completed: a list, often empty."""

    def __init__(self) -> None:
        from .reading.incremental import IncrementalJsonParser  # the readers load with the first reply read

        self._parser = IncrementalJsonParser()
        self._emitted = 0

    def feed(self, text: str) -> list[Any]:
        self._parser.advance(text)  # the open last item is never handed out: no need to publish it
        root = self._parser.value
        if not isinstance(root, list):  # nothing yet, or an object where an array belongs
            return []
        settled = self._parser.settled
        fresh = root[self._emitted : settled]  # complete items are never mutated again: safe to hand out
        self._emitted = settled
        return fresh

    def whole_output(self) -> ParsedOutput | None:
        """The final parse of the text fed, without reading it again, when that text was one strict JSON
        array (`IncrementalJsonParser.strict`): the value json.loads gives, no repairs; None otherwise
        (the final text is parsed then). Its items are the very objects the chunks handed out."""
        parser = self._parser
        if parser.done and parser.strict and isinstance(parser.value, list):
            return ParsedOutput(parser.value, [])
        return None


class ArrayHandler:
    def __init__(self, schema: dict[str, Any] | None) -> None:
        check_array_schema(schema)
        self.schema = schema
        self.instructions = array_instructions(schema)

    def parse_text(self, text: str) -> ParsedOutput:
        from .reading.extract import extract_json  # the readers load with the first reply read

        parsed = extract_json(text, format_name="array")
        if not isinstance(parsed.value, list):
            raise OutputParseError(f"expected a JSON array, found {type(parsed.value).__name__}", text=text, format_name="array")
        return parsed

    def new_stream(self) -> ArrayStream:
        return ArrayStream()


ARRAY_FORMAT = Format(
    name="array", content_type="application/json", constrained=True, default_instructions=True, handler=ArrayHandler,
)
