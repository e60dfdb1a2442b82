"""The `jsonl` format: one JSON object per line; streams the objects each chunk completes.

Lines are judged one by one. Blank lines are ignored. A ``` fence line is skipped with one
`extracted_from_fence` repair. A line that does not start with `{` (prose) is skipped with a
`skipped_line` repair; so is an object line that cannot be repaired. An object line is parsed like
`json` output, with the same repairs (a truncated last line is completed, a NaN or an infinity
is null). The parse fails only
when the text is not blank and no object at all could be read: losing good lines to one bad
line would be worse, and every skipped line is reported.

The reading itself (`JsonlStream`, `parse_jsonl`) is in `reading/jsonl_lines.py`, loaded with the
first reply read; both names are still importable from here.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ..errors import SchemaError
from ..schema.refs import resolve
from .base import Format, ParsedOutput
from .schema import has_type, js_json, with_definitions

if TYPE_CHECKING:
    from .reading.jsonl_lines import JsonlStream, parse_jsonl

__all__ = ["JSONL_FORMAT", "JsonlHandler", "JsonlStream", "item_schema", "jsonl_instructions", "parse_jsonl"]


def item_schema(schema: dict[str, Any] | None) -> dict[str, Any] | None:
    """The object schema of each line; SchemaError unless `schema` is an array of objects."""
    if schema is None:
        return None
    root = resolve(schema, schema)
    items = resolve(schema, root.get("items")) if isinstance(root, dict) else None
    if not has_type(root, "array") or not has_type(items, "object"):
        raise SchemaError(
            "the 'jsonl' format needs an array-of-objects schema, "
            "{'type': 'array', 'items': {'type': 'object', ...}}; one object per line is what it parses"
        )
    assert isinstance(items, dict)  # has_type() checked it
    return with_definitions(schema, items)


def jsonl_instructions(items: dict[str, Any] | None) -> str | None:
    """Genkit's text, word for word: "`\\n`" is a backslash and an n, and the four trailing spaces are its own."""
    if items is None:
        return None
    return ("Output should be JSONL format, a sequence of JSON objects (one per line) separated by a newline `\\n` "
            "character. Each line should be a JSON object conforming to the following schema:\n\n"
            f"```\n{js_json(items)}\n```\n    ")


class JsonlHandler:
    def __init__(self, schema: dict[str, Any] | None) -> None:
        items = item_schema(schema)
        self.schema = schema
        self.instructions = jsonl_instructions(items)

    def parse_text(self, text: str) -> ParsedOutput:
        from .reading.jsonl_lines import parse_jsonl  # the readers load with the first reply read

        return parse_jsonl(text)

    def new_stream(self) -> JsonlStream:
        from .reading.jsonl_lines import JsonlStream  # the readers load with the first reply read

        return JsonlStream()


JSONL_FORMAT = Format(
    name="jsonl", content_type="application/jsonl", constrained=False, default_instructions=True, handler=JsonlHandler,
)


def __getattr__(name: str) -> Any:
    if name in ("JsonlStream", "parse_jsonl"):  # where they were: loaded on first use
        from .reading import jsonl_lines

        return getattr(jsonl_lines, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
