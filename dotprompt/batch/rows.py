"""The rows of a batch's input: a JSON-lines file read lazily, each row with its key.

A row is known by its key: `id:<id>` when the row is a mapping with an `id` (string or integer), else
`sha256:<hash of its content>` (with `#2`, `#3`... for repeats of identical rows); `InputFile(path,
key="invoice")` keys every row by another column (`invoice:<value>`, which each row must then have).
Keys do not depend on line numbers, so inserting or reordering rows never re-runs finished ones.

Memory does not grow with the input: `InputFile` reads rows lazily (a first pass checks every line and
counts the rows before anything is sent). `Hashes` keeps a set of 64-bit hashes as a sorted array, 8
bytes each.
"""

from __future__ import annotations

import bisect
import hashlib
import json
from array import array
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..errors import BatchInputError
from ..settings import BATCH_KEY_COLUMN

__all__ = ["Hashes", "InputFile", "Row", "Rows", "column_key", "content_digest", "content_key", "keyed", "read_rows",
           "row_of"]


@dataclass(frozen=True)
class Row:
    number: int  # 1-based line number in the input file
    input: Any  # the row as written in the file (key column included)
    digest: str
    key: str = ""  # the row's identity across runs: `id:...` (`<column>:...`) or `sha256:...`
    key_column: str | None = None  # the column the key came from; None when keyed by content


class Rows(list[Row]):
    """The rows of one input file; remembers the file so the output can never overwrite it."""

    path: Path | None = None


_BOM = b"\xef\xbb\xbf"


def read_rows(path: Path, key: str | None = None) -> Rows:
    """Every row of the file in a list (small inputs, tests); `InputFile` streams instead."""
    rows = Rows(InputFile(path, key))
    rows.path = path
    return rows


class Hashes:
    """A set of 64-bit hashes kept as a sorted array: 8 bytes each, where a set of Python ints takes
    about 64 (a million rows: 8 MB instead of 64). `add` them all, `freeze`, then ask."""

    def __init__(self) -> None:
        self.items = array("q")

    def add(self, value: int) -> None:
        self.items.append(value)

    def freeze(self) -> Hashes:
        self.items = array("q", sorted(self.items))  # the sort's list is the only moment of ~40 bytes a row
        return self

    def __contains__(self, value: int) -> bool:
        at = bisect.bisect_left(self.items, value)
        return at < len(self.items) and self.items[at] == value

    def __len__(self) -> int:
        return len(self.items)

    def repeated(self) -> set[int]:
        """The hashes added more than once (a frozen array has them side by side)."""
        items = self.items
        return {items[i] for i in range(1, len(items)) if items[i] == items[i - 1]}


class InputFile:
    """The rows of a JSON-lines file, read lazily: iterating reads the file again, one line at a time.

    `check()` reads it once first, so a bad line (not UTF-8, not JSON, a repeated id) is an error
    before any row is sent; it counts the rows, and notes which contents repeat (only those are
    counted while iterating, so identical rows get `#2`, `#3`... without a dict of every row).

    `key` names the column that keys the rows: every row must have it (a string or a whole number).
    Without it rows are keyed by their `id` when they have one, else by content."""

    def __init__(self, path: Path, key: str | None = None) -> None:
        self.path = path
        self.column = key or BATCH_KEY_COLUMN
        self.required = key is not None
        self._repeated: set[int] | None = None
        self.count = 0

    @property
    def checked(self) -> bool:
        """Whether `check()` has read the file (then `count` holds its rows)."""
        return self._repeated is not None

    def check(self) -> int:
        ids, contents = Hashes(), Hashes()
        count = 0
        for number, value in self._values():
            key = column_key(value, self.column)
            if self.required and key is None:
                self._refuse_missing_key(number, value)
            if key is not None:
                ids.add(hash(key))
            else:
                contents.add(hash(content_digest(value)))
            count += 1
        twice = ids.freeze().repeated()
        if twice:
            self._refuse_repeated_id(twice)
        self._repeated, self.count = contents.freeze().repeated(), count
        return count

    def _refuse_repeated_id(self, twice: set[int]) -> None:
        """Read again to name the lines of the first repeated id (only then: keeping every line costs memory)."""
        first: dict[int, int] = {}
        for number, value in self._values():
            key = column_key(value, self.column)
            marker = hash(key) if key is not None else None
            if marker in twice:
                if marker in first:
                    raise BatchInputError(f"{self.path}:{number}: the {self.column} {value[self.column]!r} was already "
                                          f"used on line {first[marker]} (each row needs its own {self.column}; it is "
                                          "how results are matched to rows)")
                first[marker] = number

    def _refuse_missing_key(self, number: int, value: Any) -> None:
        column = self.column
        if not isinstance(value, dict) or value.get(column) is None:
            raise BatchInputError(f"{self.path}:{number}: no `{column}` (the --key column): give every row one, or "
                                  "leave --key out to key rows by their `id`, else by content")
        raise BatchInputError(f"{self.path}:{number}: the {column} {value[column]!r} is not a string or a whole number "
                              f"(the --key column names each row; write it as one)"[:500])

    def __iter__(self) -> Iterator[Row]:
        if self._repeated is None:
            self.check()
        repeated = self._repeated or set()
        occurrences: dict[int, int] = {}
        for number, value in self._values():
            digest = content_digest(value)
            key = column_key(value, self.column)
            if key is not None:
                yield Row(number, value, digest, key, self.column)
                continue
            marker = hash(digest)
            occurrence = 1
            if marker in repeated:
                occurrence = occurrences[marker] = occurrences.get(marker, 0) + 1
            yield Row(number, value, digest, content_key(digest, occurrence))

    def _values(self) -> Iterator[tuple[int, Any]]:
        with open(self.path, "rb") as handle:
            for number, raw in enumerate(handle, start=1):
                if number == 1 and raw.startswith(_BOM):
                    raw = raw[len(_BOM):]  # editors on Windows write one; it is not part of the first row
                value = _parse_row(self.path, number, raw.rstrip(b"\n"))
                if value is not _BLANK:
                    yield number, value


_BLANK = object()


def _parse_row(path: Path, number: int, raw: bytes) -> Any:
    try:
        line = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise BatchInputError(f"{path}:{number}: not UTF-8 text (byte 0x{raw[exc.start]:02x} at column "
                              f"{exc.start + 1}); save the file as UTF-8") from None
    if not line.strip():
        return _BLANK
    try:
        return json.loads(line)
    except ValueError as exc:
        raise BatchInputError(f"{path}:{number}: not a JSON value: {exc}") from None


def content_digest(value: Any) -> str:
    return hashlib.sha256(json.dumps(value, sort_keys=True).encode()).hexdigest()[:16]


def column_key(value: Any, column: str = BATCH_KEY_COLUMN) -> str | None:
    """`<column>:<value as JSON>` when the row has that column as a string or integer, else None."""
    ident = value.get(column) if isinstance(value, dict) else None
    if isinstance(ident, (str, int)) and not isinstance(ident, bool):
        return f"{column}:{json.dumps(ident)}"
    return None


def content_key(digest: str, occurrence: int) -> str:
    return f"sha256:{digest}" if occurrence == 1 else f"sha256:{digest}#{occurrence}"


def row_of(value: Any, number: int = 0) -> Row:
    """A row made from its value alone (no file): keyed by its `id`, else by its content."""
    digest = content_digest(value)
    key = column_key(value)
    return Row(number, value, digest, key or content_key(digest, 1), BATCH_KEY_COLUMN if key else None)


def keyed(row: Row) -> Row:
    # Rows built by hand (not by read_rows) get a key from their `id`, else from their content.
    key = column_key(row.input)
    return Row(row.number, row.input, row.digest, key or content_key(row.digest, 1), BATCH_KEY_COLUMN if key else None)
