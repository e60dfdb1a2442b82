"""Limits on what the output parsers accept from a model and what a stream may copy: untrusted text must
not exhaust the stack, memory or time."""

from __future__ import annotations

from typing import Any, Final

__all__ = ["MAX_NESTING_DEPTH", "MAX_REPORTED_REPAIRS", "STREAM_STRING_COPIES", "TooDeepError", "deeper_than_limit"]

MAX_NESTING_DEPTH: Final = 512
"""Arrays and objects nested deeper than this in a model's reply are refused: an OutputParseError for a
whole reply (an OutputValidationError from `generate()`), and the stream parser stops reading there. Far
above anything a schema asks for, and well below the interpreter's recursion limit (about 1000 frames),
which json.loads, partial-json-parser and schema validation all recurse against."""

MAX_REPORTED_REPAIRS: Final = 100
"""Repairs reported one by one on a parse result (`ParsedOutput.repairs`), in the order they were made.
Past this many, each further kind of repair is one summary Repair carrying its count and where the first
of them was: a hostile reply with 250,000 trailing commas costs a counter, not 250,000 messages."""

STREAM_STRING_COPIES: Final = 2000
"""How many characters of open-string prefix the `json` stream may copy into partial outputs per
character of reply read, summed over the stream. A string is immutable, so every partial output that
shows an open string holds a copy of its prefix: reading each chunk's output of a 1 MB string value in
8-character chunks would copy 68 GB. Within the budget every partial is exact: with every chunk's
output read, every string up to 4,000 characters per character of chunk size (32,000 in 8-character
chunks). Past it, a partial shows the prefix as it was last copied, at most 1/2000 of its length
behind (500 characters of a 1 MB string), and the copies cost about 0.15 s per MB of reply."""


class TooDeepError(Exception):
    """Nesting past MAX_NESTING_DEPTH at `offset`; the caller turns it into its own typed error."""

    def __init__(self, offset: int | None = None) -> None:
        self.offset = offset
        super().__init__(f"arrays and objects nested deeper than {MAX_NESTING_DEPTH} levels (MAX_NESTING_DEPTH)")


def deeper_than_limit(value: Any) -> bool:
    """True when `value` nests containers past MAX_NESTING_DEPTH; iterative, so any depth is safe."""
    pending = [(value, 1)]
    while pending:
        item, depth = pending.pop()
        if depth > MAX_NESTING_DEPTH:
            return True
        children = item.values() if type(item) is dict else item
        pending.extend((child, depth + 1) for child in children if type(child) in (list, dict))
    return False
