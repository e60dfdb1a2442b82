"""Where a `check` diagnostic sits in the text, as a range of characters (code points) on one line.

`check` gives a line and, mostly, a column; an editor wants a range. The range covers the word at the
column (the key, the name, the value `check` pointed at), else the name the message quotes in
backticks when the line holds it, else the line's text. The server turns code points into the
encoding the client negotiated (UTF-16 by default), so a line with emoji before the error still
points at the right character.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from ..lint.check import Diagnostic

__all__ = ["Span", "span_of"]

_WORD = re.compile(r"[\w.$/-]+|\S")
_QUOTED = re.compile(r"`([^`\n]+)`")


@dataclass(frozen=True)
class Span:
    """A zero-based line and the start and end of a range on it, in code points."""

    line: int
    start: int
    end: int


def span_of(diagnostic: Diagnostic, lines: list[str]) -> Span:
    if not diagnostic.line or diagnostic.line > len(lines):
        first = lines[0] if lines else ""
        return Span(0, 0, len(first.rstrip("\r\n")))
    index = diagnostic.line - 1
    text = lines[index].rstrip("\r\n")
    if diagnostic.column:
        start = min(diagnostic.column - 1, len(text))
        word = _WORD.match(text, start)
        return Span(index, start, word.end() if word else start)
    for quoted in _QUOTED.findall(diagnostic.message):
        at = _whole_word(text, quoted)
        if at >= 0:
            return Span(index, at, at + len(quoted))
    stripped = len(text) - len(text.lstrip())
    return Span(index, stripped, len(text.rstrip()))


def _whole_word(text: str, word: str) -> int:
    found = re.search(rf"(?<![\w.]){re.escape(word)}(?!\w)", text)
    return found.start() if found else -1
