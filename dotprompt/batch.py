"""Batch runs: one prompt over a JSON-lines file of inputs, with bounded concurrency.

Exactly one final record per input row. A row is known by its key: `id:<id>` when the row is a
mapping with an `id` (string or integer), else `sha256:<hash of its content>` (with `#2`, `#3`...
for repeats of identical rows). Keys do not depend on line numbers, so inserting or reordering rows
never re-runs finished ones.

The output file is only ever appended to whole lines (one write each; fsyncs grouped off the event
loop, and a last one before the run ends) while a run goes on,
and rewritten atomically (temporary file, fsync, rename) before and after: the rewrite keeps one
record per key (a success beats an error; otherwise the newer wins), drops a torn last line left by a
crash and keeps any damaged bytes in `<output>.damaged`, so nothing is lost. A lock file
(`<output>.lock`, flock) refuses a second run on the same output; the OS releases it on any exit.
"""

from __future__ import annotations

import asyncio
import contextlib
import fcntl
import hashlib
import json
import os
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from decimal import Decimal
from pathlib import Path
from typing import Any

from .cost import Cost, price_response
from .errors import BatchInputError, BatchOutputError, DotpromptError, OutputValidationError, UsageError
from .models.registry import default_model_name
from .prompt import Prompt
from .redact import redact, redact_data
from .runrecord import log_source


@dataclass(frozen=True)
class Row:
    number: int  # 1-based line number in the input file
    input: Any
    digest: str
    key: str = ""  # the row's identity across runs: `id:...` or `sha256:...`


class Rows(list):  # type: ignore[type-arg]
    """The rows of one input file; remembers the file so the output can never overwrite it."""

    path: Path | None = None


@dataclass
class BatchReport:
    total: int = 0
    skipped: int = 0
    succeeded: int = 0
    failed: int = 0
    seconds: float = 0.0
    repaired: int = 0  # damaged lines set aside in `<output>.damaged` when the run started
    cost_usd: Decimal | None = Decimal(0)  # the rows run this time; None when a row's cost is unknown
    cost_unknown: str | None = None  # why

    def add_cost(self, cost: Cost | None) -> None:
        if cost is None or self.cost_usd is None:
            return
        if cost.usd is None:
            self.cost_usd, self.cost_unknown = None, cost.reason
        else:
            self.cost_usd += cost.usd


def model_name(prompt: Prompt, override: str | None = None) -> str | None:
    """The name of the model a run of `prompt` uses (None if it names none and no default is set up)."""
    try:
        return override or prompt.metadata.get("model") or prompt.library.default_model or default_model_name()
    except UsageError:
        return None


_BOM = b"\xef\xbb\xbf"


def read_rows(path: Path) -> Rows:
    data = path.read_bytes()
    if data.startswith(_BOM):
        data = data[len(_BOM):]  # editors on Windows write one; it is not part of the first row
    rows = Rows()
    rows.path = path
    ids: dict[str, int] = {}
    repeats: dict[str, int] = {}
    for number, raw in enumerate(data.split(b"\n"), start=1):
        value = _parse_row(path, number, raw)
        if value is _BLANK:
            continue
        digest = _digest(value)
        key = _id_key(value)
        if key is not None:
            if key in ids:
                raise BatchInputError(f"{path}:{number}: the id {value['id']!r} was already used on line {ids[key]} "
                                      "(each row needs its own id; it is how results are matched to rows)")
            ids[key] = number
        else:
            repeats[digest] = repeats.get(digest, 0) + 1
            key = _content_key(digest, repeats[digest])
        rows.append(Row(number, value, digest, key))
    return rows


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


def _digest(value: Any) -> str:
    return hashlib.sha256(json.dumps(value, sort_keys=True).encode()).hexdigest()[:16]


def _id_key(value: Any) -> str | None:
    ident = value.get("id") if isinstance(value, dict) else None
    if isinstance(ident, (str, int)) and not isinstance(ident, bool):
        return "id:" + json.dumps(ident)
    return None


def _content_key(digest: str, occurrence: int) -> str:
    return f"sha256:{digest}" if occurrence == 1 else f"sha256:{digest}#{occurrence}"


def record_key(record: dict[str, Any]) -> str:
    """The key a record belongs to; records written before keys existed get theirs from their input."""
    key = record.get("key")
    if isinstance(key, str):
        return key
    value = record.get("input")
    return _id_key(value) or _content_key(_digest(value), 1)


# -- the output file ------------------------------------------------------------------------------


@dataclass
class _Line:
    record: dict[str, Any]
    raw: bytes  # kept as written: compaction never re-encodes what the model or the user produced


def read_output(path: Path) -> tuple[list[_Line], list[bytes]]:
    """The records of an output file, and the damaged bytes found (a torn tail, torn or glued lines)."""
    if not path.exists():
        return [], []
    lines: list[_Line] = []
    damaged: list[bytes] = []
    for raw in path.read_bytes().split(b"\n"):
        if not raw.strip():
            continue
        record, junk = _parse_line(raw)
        if junk:
            damaged.append(junk)
        if record is not None:
            lines.append(_Line(record, raw[len(junk):]))
    return lines, damaged


def _parse_line(raw: bytes) -> tuple[dict[str, Any] | None, bytes]:
    """(record, damaged prefix). A crash mid-write leaves a torn line, and older versions appended the
    next record right after it, so a whole record may follow the damage on the same line."""
    record = _as_record(raw)
    if record is not None:
        return record, b""
    start = raw.find(b'{"', 1)
    while start != -1:
        record = _as_record(raw[start:])
        if record is not None:
            return record, raw[:start]
        start = raw.find(b'{"', start + 1)
    return None, raw


def _as_record(raw: bytes) -> dict[str, Any] | None:
    try:
        value = json.loads(raw.decode("utf-8"))
    except ValueError:  # UnicodeDecodeError is a ValueError: a line torn inside a character
        return None
    return value if isinstance(value, dict) and "input" in value else None


def compact(lines: list[_Line], rows: list[Row]) -> list[_Line]:
    """One line per key: the current input's rows first, in input order, then records of rows no longer
    in the input (kept: they are results someone paid for). Per key, a record for the row's current
    content beats a stale one, a success beats an error, and a newer line beats an older one."""
    current = {row.key: row.digest for row in rows}
    best: dict[str, tuple[tuple[bool, bool, int], _Line]] = {}
    for position, line in enumerate(lines):
        key = record_key(line.record)
        rank = (line.record.get("digest") == current.get(key), "error" not in line.record, position)
        if key not in best or rank > best[key][0]:
            best[key] = (rank, line)
    ordered = [best.pop(row.key)[1] for row in rows if row.key in best]
    return ordered + [line for _, line in sorted(best.values(), key=lambda item: item[0][2])]


def _write_atomically(path: Path, lines: list[_Line]) -> None:
    temporary = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    with open(temporary, "wb") as handle:
        handle.writelines(line.raw + b"\n" for line in lines)
        handle.flush()
        os.fsync(handle.fileno())
    os.replace(temporary, path)
    _fsync_directory(path.parent)


def _fsync_directory(folder: Path) -> None:
    # The rename itself is only durable once the directory entry is on disk.
    fd = os.open(folder, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def _append(fd: int, data: bytes) -> None:
    """The whole line in one append: a crash leaves at most one torn last line, which the next run repairs."""
    view = memoryview(data)
    while view:
        written = os.write(fd, view)
        view = view[written:]


class _GroupSync:
    """fsync the output off the event loop, one at a time, covering every line written before it began.

    A line is in the OS's hands once written (a killed process loses nothing); fsync makes it survive
    a machine crash too. One fsync per record on the loop thread halved batch throughput, so writes
    that arrive while one runs share the next; the run ends with a last fsync before compacting."""

    def __init__(self, fd: int) -> None:
        self.fd = fd
        self.dirty = False
        self.running: asyncio.Future[None] | None = None

    def written(self) -> None:
        self.dirty = True
        if self.running is None:
            self.running = asyncio.ensure_future(self._drain())

    async def _drain(self) -> None:
        while self.dirty:
            self.dirty = False
            await asyncio.to_thread(os.fsync, self.fd)
        self.running = None

    async def close(self) -> None:
        if self.running is not None:
            await self.running
        await asyncio.to_thread(os.fsync, self.fd)


@contextlib.contextmanager
def output_lock(path: Path) -> Iterator[None]:
    """Hold `<output>.lock` for the run; a second run on the same output is refused, not interleaved."""
    lock_path = path.with_name(path.name + ".lock")
    fd = os.open(lock_path, os.O_RDWR | os.O_CREAT, 0o644)
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            raise BatchOutputError(f"{path} is already being written by another batch run (it holds {lock_path}); "
                                   "wait for that run to finish, or write to another --output") from None
        yield
    finally:
        os.close(fd)  # closing releases the lock; the OS does the same if the process dies


def _check_output(rows: list[Row], output: Path) -> None:
    """The output must be a regular file (or not exist yet) and must not be the input."""
    if output.exists() and not output.is_file():
        kind = "a folder" if output.is_dir() else "not a regular file"
        raise BatchOutputError(f"--output {output} is {kind}: name a .jsonl file to write the results to")
    if output.parent.exists() and not output.parent.is_dir():
        raise BatchOutputError(f"--output {output}: {output.parent} is not a folder")
    source = getattr(rows, "path", None)
    if source is None or not output.exists():
        return
    if os.path.samefile(source, output):
        raise BatchOutputError(f"--output {output} is the input file: the results would overwrite the rows; "
                               "write them to another file")


def _set_aside(output: Path, damaged: list[bytes]) -> None:
    """Damaged bytes go to `<output>.damaged` instead of being dropped: they may hold a model's words."""
    with open(output.with_name(output.name + ".damaged"), "ab") as handle:
        handle.writelines(chunk + b"\n" for chunk in damaged)
        handle.flush()
        os.fsync(handle.fileno())


def _prepare(output: Path, rows: list[Row], report: BatchReport) -> dict[str, dict[str, Any]]:
    """Repair and compact the existing output; the final record of every key."""
    lines, damaged = read_output(output)
    if damaged:
        _set_aside(output, damaged)
        report.repaired = len(damaged)
    kept = compact(lines, rows)
    if output.exists() and (damaged or len(kept) != len(lines) or not output.read_bytes().endswith(b"\n")):
        _write_atomically(output, kept)
    return {record_key(line.record): line.record for line in kept}


def _finished(record: dict[str, Any] | None, row: Row) -> bool:
    return record is not None and "error" not in record and record.get("digest") == row.digest


async def run_batch(prompt: Prompt, rows: list[Row], output: Path, *, concurrency: int = 8, model: str | None = None,
                    on_row: Callable[[dict[str, Any]], Any] | None = None) -> BatchReport:
    _check_output(rows, output)
    rows = [row if row.key else _keyed(row) for row in rows]
    output.parent.mkdir(parents=True, exist_ok=True)
    with output_lock(output):
        report = BatchReport(total=len(rows))
        final = _prepare(output, rows, report)
        todo = [row for row in rows if not _finished(final.get(row.key), row)]
        report.skipped = len(rows) - len(todo)
        started = time.perf_counter()
        await _run_rows(prompt, todo, output, concurrency, model, on_row, report)
        if todo:
            lines, _ = read_output(output)
            _write_atomically(output, compact(lines, rows))
        report.seconds = time.perf_counter() - started
    return report


def _keyed(row: Row) -> Row:
    # Rows built by hand (not by read_rows) get a key from their content.
    return Row(row.number, row.input, row.digest, _id_key(row.input) or _content_key(row.digest, 1))


async def _run_rows(prompt: Prompt, todo: list[Row], output: Path, concurrency: int, model: str | None,
                    on_row: Callable[[dict[str, Any]], Any] | None, report: BatchReport) -> None:
    limit = asyncio.Semaphore(max(1, concurrency))
    fd = os.open(output, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
    sync = _GroupSync(fd)
    try:

        name = model_name(prompt, model) or ""

        async def one(row: Row) -> None:
            async with limit:
                with log_source("batch", output=str(output), key=row.key, row=row.number):
                    record, cost = await _run_row(prompt, row, model, name)
                record = redact_data(record)
            report.add_cost(cost)
            _append(fd, _encode(record))  # no key reaches the file, whatever an error (or a provider echoing one) said
            sync.written()
            if "error" in record:
                report.failed += 1
            else:
                report.succeeded += 1
            if on_row is not None:
                on_row(record)

        await asyncio.gather(*(one(row) for row in todo))
    finally:
        try:
            await sync.close()
        finally:
            os.close(fd)


def _encode(record: dict[str, Any]) -> bytes:
    try:
        return redact(json.dumps(record, ensure_ascii=False, default=str)).encode("utf-8") + b"\n"
    except (TypeError, ValueError) as exc:  # e.g. NaN-free but circular output: keep the row's place
        fallback = {k: record[k] for k in ("key", "row", "digest", "input")}
        fallback["error"] = {"type": type(exc).__name__, "message": f"the result could not be written as JSON: {exc}",
                             "reply": repr(record.get("output"))}
        return json.dumps(fallback, ensure_ascii=False, default=str).encode("utf-8") + b"\n"


async def _run_row(prompt: Prompt, row: Row, model: str | None, name: str) -> tuple[dict[str, Any], Cost | None]:
    """The row's record, and what its model calls cost (None when the run failed before a reply)."""
    record: dict[str, Any] = {"key": row.key, "row": row.number, "digest": row.digest, "input": row.input}
    cost = None
    started = time.perf_counter()
    try:
        response = await prompt.generate(row.input, model=model)
    except OutputValidationError as exc:
        record["error"] = {"type": type(exc).__name__, "message": str(exc), "reply": exc.text}
    except DotpromptError as exc:
        reply = getattr(getattr(exc, "response", None), "text", None)
        record["error"] = {"type": type(exc).__name__, "message": str(exc), **({"reply": reply} if reply else {})}
    except Exception as exc:  # one row's surprise (a malformed reply, a bug) must not stop the batch
        record["error"] = {"type": type(exc).__name__, "message": str(exc)}
    else:
        if response.identity is not None:
            record["prompt"] = response.identity.to_dict()  # the exact text this row's answer came from
        output = response.output
        record["output"] = output.model_dump(mode="json") if hasattr(output, "model_dump") else output
        if response.output_repairs:
            record["repairs"] = [getattr(r, "detail", str(r)) for r in response.output_repairs]
        if response.usage is not None:
            record["usage"] = response.usage.to_dict()
        cost = price_response(name, response)
        if cost.usd is not None:
            record["cost_usd"] = float(cost.usd)
    if "prompt" not in record:
        record["prompt"] = _identity_now(prompt)
    record["latency_ms"] = round((time.perf_counter() - started) * 1000, 1)
    return record, cost


def _identity_now(prompt: Prompt) -> dict[str, Any] | None:
    """The prompt's identity for a row that failed (a file broken since the batch began has none)."""
    try:
        identity = prompt.identity
    except DotpromptError:
        return None
    return identity.to_dict() if identity is not None else None
