"""Where an offset is, in the words people and editors use."""

from __future__ import annotations


def where(text: str, offset: int) -> str:
    """`line L, column C (offset N)`, 1-based line and column."""
    line = text.count("\n", 0, offset) + 1
    column = offset - (text.rfind("\n", 0, offset) + 1) + 1
    return f"line {line}, column {column} (offset {offset})"
