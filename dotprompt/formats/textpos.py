"""Where an offset is, in the words people and editors use."""

from __future__ import annotations

__all__ = ["LineCursor", "where"]


def where(text: str, offset: int) -> str:
    """`line L, column C (offset N)`, 1-based line and column."""
    line = text.count("\n", 0, offset) + 1
    column = offset - (text.rfind("\n", 0, offset) + 1) + 1
    return f"line {line}, column {column} (offset {offset})"


class LineCursor:
    """`where` for offsets that mostly increase, as a left-to-right reader reports them: each call
    counts only the newlines since the previous one, so a thousand repairs cost one pass, not a
    thousand. An offset before the previous one starts over from the beginning."""

    def __init__(self, text: str) -> None:
        self.text = text
        self._offset = 0
        self._line = 1
        self._line_start = 0

    def where(self, offset: int) -> str:
        if offset < self._offset:
            self._offset, self._line, self._line_start = 0, 1, 0
        newlines = self.text.count("\n", self._offset, offset)
        if newlines:
            self._line += newlines
            self._line_start = self.text.rfind("\n", self._offset, offset) + 1
        self._offset = offset
        return f"line {self._line}, column {offset - self._line_start + 1} (offset {offset})"
