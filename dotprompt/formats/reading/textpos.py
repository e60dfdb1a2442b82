"""Where an offset is, in the words people and editors use."""

from __future__ import annotations

__all__ = ["LineCursor", "where"]


def where(text: str, offset: int) -> str:
    """`line L, column C (offset N)`, 1-based line and column."""
    line = text.count("\n", 0, offset) + 1
    column = offset - (text.rfind("\n", 0, offset) + 1) + 1
    return f"line {line}, column {column} (offset {offset})"


class LineCursor:
    """`where` for offsets read in order, as a left-to-right reader reports them: each call counts
    only the newlines between the previous offset and this one, so a thousand repairs (or a JSONL
    reply's hundred thousand lines) cost one pass over the text, not one each. Stepping back is as
    cheap: the newlines in between are subtracted."""

    def __init__(self, text: str) -> None:
        self.text = text
        self._offset = 0
        self._line = 1
        self._line_start = 0

    def where(self, offset: int) -> str:
        text = self.text
        if offset < self._offset:
            self._line -= text.count("\n", offset, self._offset)
            self._line_start = text.rfind("\n", 0, offset) + 1  # searches back over one line only
        else:
            newlines = text.count("\n", self._offset, offset)
            if newlines:
                self._line += newlines
                self._line_start = text.rfind("\n", self._offset, offset) + 1
        self._offset = offset
        return f"line {self._line}, column {offset - self._line_start + 1} (offset {offset})"
