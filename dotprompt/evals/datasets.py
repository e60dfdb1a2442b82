"""Gold datasets: rows of `{id, input, expected}` in JSON lines or CSV, read defensively.

    {"id": "inv-001", "input": {"text": "..."}, "expected": {"total": 42.5, ...}}

CSV: a header row with `id`, then `input.NAME` and `expected.PATH` columns (dots nest:
`expected.vendor.name`), or whole `input` / `expected` columns holding JSON. Input cells are text;
expected cells are JSON when they read as JSON (`42.5`, `true`, `[...]`), else text; an empty
expected cell is null: it labels the field absent (the model should not produce it).

A dataset may come from a pull request: a line longer than EVAL_MAX_ROW_BYTES is refused without
being held in memory, nesting deeper than EVAL_MAX_DEPTH is refused, and every problem is a
DatasetError naming the file and line.
"""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .._util import finite
from ..errors import DatasetError
from .limits import EVAL_MAX_DEPTH, EVAL_MAX_ROW_BYTES

__all__ = ["GoldRow", "read_dataset", "too_deep"]

_BOM = b"\xef\xbb\xbf"


@dataclass(frozen=True)
class GoldRow:
    id: str
    input: Any
    expected: Any
    line: int


def read_dataset(path: str | Path) -> list[GoldRow]:
    """Every row of a `.jsonl` / `.json` (lines) or `.csv` file; a DatasetError on the first bad one."""
    path = Path(path)
    if not path.is_file():
        raise DatasetError(f"{path}: no such dataset file (a .jsonl or .csv file of {{id, input, expected}} rows)")
    rows = list(_csv_rows(path) if path.suffix.lower() == ".csv" else _jsonl_rows(path))
    if not rows:
        raise DatasetError(f"{path}: the dataset has no rows")
    seen: dict[str, int] = {}
    for row in rows:
        if row.id in seen:
            raise DatasetError(f"{path}:{row.line}: the id {row.id!r} was already used on line {seen[row.id]} "
                               "(each row needs its own id: scores, recordings and baselines are matched by it)")
        seen[row.id] = row.line
    return rows


def _jsonl_rows(path: Path) -> Iterator[GoldRow]:
    with path.open("rb") as handle:
        for number, raw in enumerate(_bounded_lines(handle, path), start=1):
            if number == 1 and raw.startswith(_BOM):
                raw = raw[len(_BOM):]
            text = _decode(raw, path, number)
            if text.strip():
                yield _row(_parse_json(text, path, number), path, number)


def _bounded_lines(handle: io.BufferedReader, path: Path) -> Iterator[bytes]:
    number = 0
    while True:
        number += 1
        raw = handle.readline(EVAL_MAX_ROW_BYTES + 1)
        if not raw:
            return
        if len(raw) > EVAL_MAX_ROW_BYTES and not raw.endswith(b"\n"):
            raise DatasetError(f"{path}:{number}: the line is longer than {EVAL_MAX_ROW_BYTES:,} bytes "
                               "(EVAL_MAX_ROW_BYTES); a gold row holds one document's input and labels")
        yield raw.rstrip(b"\r\n")


def _decode(raw: bytes, path: Path, number: int) -> str:
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise DatasetError(f"{path}:{number}: not UTF-8 text (byte 0x{raw[exc.start]:02x} at column {exc.start + 1}); "
                           "save the file as UTF-8") from None


def _parse_json(text: str, path: Path, number: int, column: str | None = None) -> Any:
    where = f"{path}:{number}" + (f": column {column!r}" if column else "")
    try:
        value = finite.loads(text)  # NaN or 1e999 in a gold row would score as a value no model can match
    except RecursionError:
        raise DatasetError(f"{where}: nested deeper than {EVAL_MAX_DEPTH} levels (EVAL_MAX_DEPTH)") from None
    except ValueError as exc:
        raise DatasetError(f"{where}: not valid JSON: {exc}") from None
    if too_deep(value):
        raise DatasetError(f"{where}: nested deeper than {EVAL_MAX_DEPTH} levels (EVAL_MAX_DEPTH)")
    return value


def too_deep(value: Any, limit: int = EVAL_MAX_DEPTH) -> bool:
    """True when `value` nests lists and objects past `limit` levels (iterative: any depth is safe)."""
    if not isinstance(value, (dict, list)):
        return False
    pending = [(value, 1)]
    while pending:
        item, depth = pending.pop()
        if depth > limit:
            return True
        children = item.values() if isinstance(item, dict) else item
        pending.extend((child, depth + 1) for child in children if isinstance(child, (dict, list)))
    return False


def _row(value: Any, path: Path, number: int) -> GoldRow:
    where = f"{path}:{number}"
    if not isinstance(value, dict):
        raise DatasetError(f"{where}: a row must be a JSON object {{\"id\", \"input\", \"expected\"}}, "
                           f"got {type(value).__name__}")
    unknown = sorted(set(value) - {"id", "input", "expected"})
    if unknown:
        raise DatasetError(f"{where}: unknown key(s) {', '.join(map(repr, unknown))}; a row has id, input and expected")
    ident = value.get("id")
    if isinstance(ident, bool) or not isinstance(ident, (str, int)) or ident == "":
        raise DatasetError(f"{where}: `id` must be a non-empty string or a whole number, got {json.dumps(ident)}")
    for key in ("input", "expected"):
        if key not in value:
            raise DatasetError(f"{where}: row {ident!r} has no `{key}`")
    if not isinstance(value["input"], dict):
        raise DatasetError(f"{where}: row {ident!r}: `input` must be an object (the prompt's input), "
                           f"got {type(value['input']).__name__}")
    return GoldRow(str(ident), value["input"], value["expected"], number)


def _csv_rows(path: Path) -> Iterator[GoldRow]:
    # Streamed: the file is read a line at a time (a whole-file read and its copies took ten times the
    # file's size), and a record longer than EVAL_MAX_ROW_BYTES is refused without being held.
    csv.field_size_limit(EVAL_MAX_ROW_BYTES)
    with path.open("rb") as raw, io.TextIOWrapper(raw, encoding="utf-8-sig", newline="") as text:
        lines = _CsvLines(text, path)
        reader = csv.reader(lines)
        try:
            header = next(reader, None)
            if header is None:
                return
            columns = _columns(header, path)
            for cells in reader:
                lines.record = 0
                if any(c.strip() for c in cells):
                    yield _csv_row(columns, cells, path, reader.line_num)
        except csv.Error as exc:
            raise DatasetError(f"{path}:{reader.line_num}: bad CSV: {exc}") from None
        except UnicodeDecodeError:
            raise _csv_decode_error(path) from None


class _CsvLines:
    """The lines of a CSV file for csv.reader, line ends kept (a quoted field may hold one); a record
    (one or more lines) longer than EVAL_MAX_ROW_BYTES characters is a DatasetError naming its line."""

    def __init__(self, text: io.TextIOWrapper, path: Path) -> None:
        self.text, self.path = text, path
        self.number = 0
        self.record = 0  # characters of the record being read; the reader's caller resets it per record

    def __iter__(self) -> _CsvLines:
        return self

    def __next__(self) -> str:
        line = self.text.readline(EVAL_MAX_ROW_BYTES + 1)
        if not line:
            raise StopIteration
        self.number += 1
        self.record += len(line)
        if self.record > EVAL_MAX_ROW_BYTES:
            raise DatasetError(f"{self.path}:{self.number}: the record is longer than {EVAL_MAX_ROW_BYTES:,} characters "
                               "(EVAL_MAX_ROW_BYTES); a gold row holds one document's input and labels")
        return line


def _csv_decode_error(path: Path) -> DatasetError:
    """The DatasetError for a CSV that is not UTF-8, naming the first line that is not (read again, in bytes)."""
    with path.open("rb") as handle:
        for number, raw in enumerate(_bounded_lines(handle, path), start=1):
            try:
                _decode(raw, path, number)
            except DatasetError as exc:
                return exc
    return DatasetError(f"{path}: not UTF-8 text; save the file as UTF-8")


def _columns(header: list[str], path: Path) -> list[tuple[str, list[str]]]:
    """Each column as (part, path): ("id", []), ("input", ["text"]), ("expected", ["vendor", "name"])."""
    out = []
    for name in (h.strip() for h in header):
        part, _, rest = name.partition(".")
        if part not in ("id", "input", "expected") or (part == "id" and rest) or any(not p for p in rest.split(".")[:-1]):
            raise DatasetError(f"{path}:1: unknown column {name!r}; columns are id, input.NAME (or input) and "
                               "expected.PATH (or expected)")
        out.append((part, rest.split(".") if rest else []))
    if ("id", []) not in out:
        raise DatasetError(f"{path}:1: no `id` column; every row needs an id")
    return out


def _csv_row(columns: list[tuple[str, list[str]]], cells: list[str], path: Path, number: int) -> GoldRow:
    if len(cells) != len(columns):
        raise DatasetError(f"{path}:{number}: {len(cells)} cells for {len(columns)} columns")
    row: dict[str, Any] = {"input": {}, "expected": {}}
    for (part, keys), cell in zip(columns, cells, strict=True):
        if part == "id":
            row["id"] = cell.strip()
        elif not keys:
            row[part] = _parse_json(cell, path, number, part) if cell.strip() else {}
        else:  # an empty expected cell labels the field absent (null): the model should not produce it
            value = cell if part == "input" else _cell_value(cell, path, number, ".".join(keys)) if cell.strip() else None
            if not _put(row[part], keys, value):
                raise DatasetError(f"{path}:{number}: column {part}.{'.'.join(keys)} nests inside a column that "
                                   "holds a value")
    return _row(row, path, number)


def _cell_value(cell: str, path: Path, number: int, column: str) -> Any:
    try:
        json.loads(cell)
    except ValueError:
        return cell  # text, not JSON
    except RecursionError:
        pass  # JSON nested too deeply: _parse_json says so
    return _parse_json(cell, path, number, f"expected.{column}")


def _put(target: dict[str, Any], keys: list[str], value: Any) -> bool:
    for key in keys[:-1]:
        target = target.setdefault(key, {})
        if not isinstance(target, dict):
            return False
    target[keys[-1]] = value
    return True
