"""Errors raised by output formats.

    DotpromptError
     ├── UsageError
     │    └── UnknownFormatError   get_format() with a name nobody defined (also a KeyError)
     └── OutputParseError          no value could be found in the model's text (also a ValueError)
"""

from __future__ import annotations

import difflib
from collections.abc import Sequence

from ..errors import DotpromptError, UsageError

_PREVIEW = 80


class OutputParseError(DotpromptError, ValueError):
    """No output value could be found. `.text` is the whole text, never lost; `.format_name` the format."""

    def __init__(self, message: str, *, text: str, format_name: str) -> None:
        self.text = text
        self.format_name = format_name
        preview = text if len(text) <= _PREVIEW else text[:_PREVIEW] + "..."
        super().__init__(f"{format_name} output: {message} (text: {preview!r}, {len(text)} characters)")


class UnknownFormatError(UsageError, KeyError):
    """No format by that name; the message lists the known names and the closest one."""

    def __init__(self, name: str, known: Sequence[str]) -> None:
        self.name = name
        self.known = sorted(known)
        hint = f"did you mean {close!r}? " if (close := closest(name, self.known)) else ""
        self.message = f"unknown output format {name!r}: {hint}known formats: {', '.join(self.known)}"
        super().__init__(self.message)

    def __str__(self) -> str:  # KeyError would print the message inside quotes
        return self.message


def closest(name: str, known: Sequence[str]) -> str | None:
    """The known name nearest to `name`, ignoring case (`JSONL` -> `jsonl`), or None."""
    by_lower = {k.lower(): k for k in known}
    match = difflib.get_close_matches(name.lower(), list(by_lower), n=1, cutoff=0.5)
    return by_lower[match[0]] if match else None
