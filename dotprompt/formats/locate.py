"""Finding the JSON value in a model's reply: inside a ```json fence if there is one, else at the
first `{` or `[` of the prose."""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass

_FENCE_OPEN = re.compile(r"```[ \t]*([\w+.-]*)[^\n]*\n")
# An untagged fence counts: models often omit the language.
_JSON_TAGS = frozenset({"", "json", "json5", "jsonc"})
_BRACKET = re.compile(r"[{\[]")
_VALUE_HEAD = re.compile(r'[ \t\r\n]*(?P<value>[{\["]|-?[0-9]|(?:true|false|null)\b)')


@dataclass(frozen=True)
class Location:
    """Where the value starts, and the fence it came from."""

    start: int
    fence_at: int | None  # offset of the opening ``` when the value was fenced


def locate_json(text: str) -> Location | None:
    """The first JSON-tagged (or untagged) fence holding a value, else the first bracket."""
    for fence_at, content_at, stop in _fences(text):
        start = _value_start(text, content_at, stop)
        if start is not None:
            return Location(start, fence_at)
    bracket = _BRACKET.search(text)
    return Location(bracket.start(), None) if bracket else None


def _fences(text: str) -> Iterator[tuple[int, int, int]]:
    """(opening ``` offset, content start, content stop) of each fence that may hold JSON.
    An unclosed fence (a truncated reply) runs to the end of the text."""
    pos = 0
    while (opening := _FENCE_OPEN.search(text, pos)) is not None:
        close = text.find("```", opening.end())
        stop = close if close >= 0 else len(text)
        if opening.group(1).lower() in _JSON_TAGS:
            yield opening.start(), opening.end(), stop
        if close < 0:
            return
        pos = close + 3


def _value_start(text: str, start: int, stop: int) -> int | None:
    head = _VALUE_HEAD.match(text, start, stop)
    if head is not None:
        return head.start("value")
    bracket = _BRACKET.search(text, start, stop)
    return bracket.start() if bracket else None
