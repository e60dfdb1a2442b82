"""The bounds of an eval: what a gold row may hold and how much work aligning its lists may take."""

from __future__ import annotations

from typing import Final

__all__ = ["EVAL_MAX_ALIGN_ITEMS", "EVAL_MAX_ALIGN_WORK", "EVAL_MAX_DEPTH", "EVAL_MAX_ROW_BYTES"]

EVAL_MAX_ROW_BYTES: Final = 8 * 1024 * 1024
"""The longest line (JSON lines) or record (CSV) a gold dataset may hold: a longer one is a DatasetError
naming the line, read without ever holding more than this in memory."""

EVAL_MAX_DEPTH: Final = 64
"""How deep the eval compares nested objects and arrays: gold rows nested deeper are a DatasetError, and a
model's output is compared as a whole value below this depth (the comparison recurses, the stack is finite)."""

EVAL_MAX_ALIGN_ITEMS: Final = 200
"""Items per list the eval aligns by best matching (O(n^3)); items past this many pair up by position."""

EVAL_MAX_ALIGN_WORK: Final = 1_000_000
"""Values one gold row may visit while trying pairings of list items, over all its lists (lists inside
lists multiply the work); past it the row's remaining lists pair by position and the report says so.
200 items of 10 fields take about half of it; a second (seconds) in all."""
