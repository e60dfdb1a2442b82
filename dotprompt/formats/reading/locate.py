"""Finding the JSON value in a model's reply: inside a ```json fence if there is one, else at the
first `{` or `[` of the prose.

A fence opens a line (after optional indentation), as Markdown has it. A run of backticks in the
middle of a line is text, most often inside a JSON string (`{"fence": "```"}`, code in a value),
and taking it for a fence would read the wrong value. The one exception is the first backticks
before any bracket (`Sure: ```json`), which cannot be inside a value. Every search here moves
forward only, so a reply of nothing but backticks costs one pass.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass

__all__ = ["Location", "locate_json"]

_LINE_FENCE = re.compile(r"^[ \t]*```", re.MULTILINE)
_TAG = re.compile(r"[ \t]*([\w+.-]*)")
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
    bracket = _BRACKET.search(text)
    for fence_at, content_at, stop in _fences(text, bracket.start() if bracket else len(text)):
        start = _value_start(text, content_at, stop)
        if start is not None:
            return Location(start, fence_at)
    return Location(bracket.start(), None) if bracket else None


def _fences(text: str, first_bracket: int) -> Iterator[tuple[int, int, int]]:
    """(opening ``` offset, content start, content stop) of each fence that may hold JSON.
    An unclosed fence (a truncated reply) runs to the end of the text."""
    pos = 0
    while (opening := _next_opening(text, pos, first_bracket)) is not None:
        line_end = text.find("\n", opening + 3)
        if line_end < 0:
            return  # a fence line with no content after it
        close = text.find("```", line_end + 1)
        stop = close if close >= 0 else len(text)
        tag = _TAG.match(text, opening + 3)  # never None (the pattern matches the empty string): for the checker
        if tag is not None and tag.group(1).lower() in _JSON_TAGS:
            yield opening, line_end + 1, stop
        if close < 0:
            return
        pos = close + 3


def _next_opening(text: str, pos: int, first_bracket: int) -> int | None:
    """The next ``` that opens a fence: at a line's start, or the first one before any bracket."""
    if pos == 0:
        inline = text.find("```", 0, first_bracket)
        if inline >= 0:
            return inline
    match = _LINE_FENCE.search(text, pos)
    return match.end() - 3 if match else None


def _value_start(text: str, start: int, stop: int) -> int | None:
    head = _VALUE_HEAD.match(text, start, stop)
    if head is not None:
        return head.start("value")
    bracket = _BRACKET.search(text, start, stop)
    return bracket.start() if bracket else None
