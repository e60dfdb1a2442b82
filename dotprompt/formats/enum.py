"""The `enum` format: exactly one of the schema's values, as plain text."""

from __future__ import annotations

import json
from typing import Any, Final

from ..errors import OutputParseError, SchemaError
from ..schema.refs import resolve
from .base import Format, ParsedOutput, Repair
from .reading.limits import STREAM_STRING_COPIES
from .schema import has_type, js_string

__all__ = ["ENUM_FORMAT", "EnumHandler", "EnumStream", "enum_instructions", "enum_member", "enum_values", "strip_quotes"]

_QUOTES: Final = "\"'`"


def enum_values(schema: dict[str, Any] | None) -> list[Any] | None:
    """The allowed values, or None when the schema lists none.

    As in Genkit, a string schema without values is accepted (no instructions are sent; `dotprompt
    check` warns); a schema that is neither a string nor an `enum` list is a SchemaError."""
    if schema is None:
        return None
    node = resolve(schema, schema)
    values = node.get("enum") if isinstance(node, dict) else None
    if values is None or values == []:
        if isinstance(node, dict) and "type" in node and not has_type(node, "string"):
            raise SchemaError(
                "the 'enum' format needs a string schema or an 'enum' list, "
                "e.g. {'type': 'string', 'enum': ['positive', 'negative']}"
            )
        return None
    if not isinstance(values, list):
        raise SchemaError(f"the schema's 'enum' must be a list of values, not {type(values).__name__}")
    if has_type(node, "null") and None not in values:
        values = [*values, None]
    return values


def enum_instructions(values: list[Any] | None) -> str | None:
    """Genkit's text, word for word; a `null` member (which Genkit cannot list) gets a line of its own."""
    if not values:
        return None
    listed = "\n".join(js_string(v) for v in values if v is not None)
    text = ("Output should be ONLY one of the following enum values. Do not output any additional information or "
            f"add quotes.\n\n{listed}")
    if None in values:
        text += "\n\nIf none of them applies, output null."
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
    """The text so far, stripped of whitespace and quote characters at both ends.

    Each output is a copy of the text so far, so the copies are bounded as an open JSON string's
    are: STREAM_STRING_COPIES characters per character read (a reply of tens of thousands of
    characters reaches it; an enum value never does). Past the budget, a chunk's output is the
    last one built, from at most 1/STREAM_STRING_COPIES of the text before."""

    def __init__(self) -> None:
        self._parts: list[str] = []
        self._length = 0
        self._shown = ""
        self._shown_length = 0  # the length of the text `_shown` was built from
        self._copied = 0

    def feed(self, text: str) -> str:
        if text:
            self._parts.append(text)
            self._length += len(text)
        if self._length == self._shown_length or (
                self._shown_length and self._copied + self._length > STREAM_STRING_COPIES * self._length):
            return self._shown
        joined = "".join(self._parts)
        self._parts = [joined]
        self._copied += self._length
        self._shown, self._shown_length = joined.strip().strip(_QUOTES).strip(), self._length
        return self._shown


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
