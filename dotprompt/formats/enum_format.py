"""The `enum` format: exactly one of the schema's values, as plain text."""

from __future__ import annotations

import json
from typing import Any, Final

from ..errors import OutputParseError, SchemaError
from .schema import has_type, resolve
from .types import Format, ParsedOutput, Repair

_QUOTES: Final = "\"'`"


def enum_values(schema: dict[str, Any] | None) -> list[Any] | None:
    """The allowed values; SchemaError when the schema has no non-empty `enum` list."""
    if schema is None:
        return None
    node = resolve(schema, schema)
    values = node.get("enum") if isinstance(node, dict) else None
    if not isinstance(values, list) or not values:
        raise SchemaError(
            "the 'enum' format needs a schema with a non-empty 'enum' list, "
            "e.g. {'type': 'string', 'enum': ['positive', 'negative']}"
        )
    if has_type(node, "null") and None not in values:
        values = [*values, None]
    return values


def enum_instructions(values: list[Any] | None) -> str | None:
    if not values:
        return None
    listed = "\n".join(str(v) for v in values if v is not None)
    text = f"Output should be ONLY one of these values, exactly as written, with no quotes and no other text:\n\n{listed}\n"
    if None in values:
        text += "\nIf none of them applies, output null.\n"
    return text


def strip_quotes(text: str) -> tuple[str, str]:
    """The text without surrounding whitespace and matching quotes/backticks, and what was removed."""
    value, removed = text.strip(), ""
    while len(value) >= 2 and value[0] == value[-1] and value[0] in _QUOTES:
        removed += value[0]
        value = value[1:-1].strip()
    return value, removed


def enum_member(text: str, values: list[Any] | None) -> Any:
    """The schema's own value for `text`: `null` gives None when allowed, `2` gives the int 2.
    Text matching no member is returned as is; schema validation reports it."""
    for value in values or ():
        if value == text or (not isinstance(value, str) and json.dumps(value) == text):
            return value
    return text


class EnumStream:
    """The text so far, stripped of whitespace and quote characters at both ends."""

    def __init__(self) -> None:
        self._text = ""

    def feed(self, text: str) -> str:
        self._text += text
        return self._text.strip().strip(_QUOTES).strip()


class EnumHandler:
    def __init__(self, schema: dict[str, Any] | None) -> None:
        self.schema = schema
        self.values = enum_values(schema)
        self.instructions = enum_instructions(self.values)

    def parse_text(self, text: str) -> ParsedOutput:
        value, removed = strip_quotes(text)
        if not value:
            raise OutputParseError("the reply holds no value", text=text, format_name="enum")
        repairs = [Repair("stripped_quotes", f"removed {removed!r} around {value!r}")] if removed else []
        return ParsedOutput(enum_member(value, self.values), repairs)

    def new_stream(self) -> EnumStream:
        return EnumStream()


ENUM_FORMAT = Format(
    name="enum", content_type="text/enum", constrained=True, default_instructions=True, handler=EnumHandler,
)
