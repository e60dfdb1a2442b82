"""Batch runs: one prompt over a JSON-lines file of inputs, with bounded concurrency.

Exactly one final record per input row. A row is known by its key: `id:<id>` when the row is a
mapping with an `id` (string or integer), else `sha256:<hash of its content>` (with `#2`, `#3`...
for repeats of identical rows); `InputFile(path, key="invoice")` keys every row by another column
(`invoice:<value>`, which each row must then have). Keys do not depend on line numbers, so inserting
or reordering rows never re-runs finished ones. The key column names the row, it is not input: it is
sent to the model only when the prompt's input schema declares it, or the prompt has no input
schema (`model_input`).

The output file is only ever appended to whole lines (one write each; fsyncs grouped off the event
loop, and a last one before the run ends) while a run goes on,
and rewritten atomically (temporary file, fsync, rename) before and after when needed: the rewrite
keeps one record per key (a success beats an error; otherwise the newer wins), drops a torn last line
left by a crash and keeps any damaged bytes in `<output>.damaged`, so nothing is lost. A lock file
(`<output>.lock`, flock) refuses a second run on the same output; the OS releases it on any exit.

Memory does not grow with the input: `InputFile` reads rows lazily (a first pass checks every line and
counts the rows before anything is sent), a fixed pool of `concurrency` workers pulls them, and the
output is read and compacted line by line. What stays in memory per row is one 64-bit hash in a sorted
array (the finished rows of the output; the ids while the input is checked), 8 bytes, and about 40
bytes a row for a moment while each array is sorted.
"""

from __future__ import annotations

import asyncio
import bisect
import contextlib
import fcntl
import hashlib
import json
import os
import time
from array import array
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass
from decimal import Decimal
from pathlib import Path
from typing import Any

from .._http.client import batch_transport
from .._util.redact import known_secrets, redact_data, redacted_json, unmasked_json
from ..errors import BatchInputError, BatchOutputError, DotpromptError, OutputValidationError, UsageError
from ..observe.cost import Cost, endpoints_fixed, load_prices, price_response
from ..observe.runrecord import log_source, log_summary, pending_interrupts
from ..prompts.prompt import Prompt
from ..providers.registry import default_model_name
from ..settings import BATCH_KEY_COLUMN, BATCH_LOG_ROWS

__all__ = ["BatchReport", "Hashes", "InputFile", "Row", "Rows", "finished", "model_input", "model_name", "output_lock",
           "priced_row", "read_output", "read_rows", "record_key", "row_of", "run_batch", "run_row", "unfinished"]


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


@dataclass
class BatchReport:
    total: int = 0
    skipped: int = 0
    succeeded: int = 0
    failed: int = 0
    interrupted: int = 0  # rows that stopped on tool requests waiting for a human: not done, run again next time
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

    def check(self) -> int:
        ids, contents = Hashes(), Hashes()
        count = 0
        for number, value in self._values():
            key = _column_key(value, self.column)
            if self.required and key is None:
                self._refuse_missing_key(number, value)
            if key is not None:
                ids.add(hash(key))
            else:
                contents.add(hash(_digest(value)))
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
            key = _column_key(value, self.column)
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
            digest = _digest(value)
            key = _column_key(value, self.column)
            if key is not None:
                yield Row(number, value, digest, key, self.column)
                continue
            marker = hash(digest)
            occurrence = 1
            if marker in repeated:
                occurrence = occurrences[marker] = occurrences.get(marker, 0) + 1
            yield Row(number, value, digest, _content_key(digest, occurrence))

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


def _digest(value: Any) -> str:
    return hashlib.sha256(json.dumps(value, sort_keys=True).encode()).hexdigest()[:16]


def _column_key(value: Any, column: str = BATCH_KEY_COLUMN) -> str | None:
    """`<column>:<value as JSON>` when the row has that column as a string or integer, else None."""
    ident = value.get(column) if isinstance(value, dict) else None
    if isinstance(ident, (str, int)) and not isinstance(ident, bool):
        return f"{column}:{json.dumps(ident)}"
    return None


def model_input(prompt: Prompt, row: Row) -> Any:
    """What the model is sent for `row`: the row without its key column, unless the prompt's input
    schema declares that column or the prompt has no input schema (then the row goes as written).
    The key names the row; a closed input schema would refuse it as an unknown field."""
    column, value = row.key_column, row.input
    if column is None or not isinstance(value, dict):
        return value
    schema = (prompt.metadata.get("input") or {}).get("schema")
    if not isinstance(schema, dict):
        return value
    properties = schema.get("properties")
    if isinstance(properties, Mapping) and column in properties:
        return value
    return {name: item for name, item in value.items() if name != column}


def _content_key(digest: str, occurrence: int) -> str:
    return f"sha256:{digest}" if occurrence == 1 else f"sha256:{digest}#{occurrence}"


def finished(record: dict[str, Any]) -> bool:
    """Whether a record is a row's result: not an error, and not a run stopped on interrupts (its
    `interrupted` requests wait for a human; the next run of the batch runs the row again)."""
    return "error" not in record and "interrupted" not in record


def record_key(record: dict[str, Any]) -> str:
    """The key a record belongs to; records written before keys existed get theirs from their input."""
    key = record.get("key")
    if isinstance(key, str):
        return key
    value = record.get("input")
    return _column_key(value) or _content_key(_digest(value), 1)


# -- the output file ------------------------------------------------------------------------------


@dataclass
class _Line:
    record: dict[str, Any]
    raw: bytes  # kept as written: compaction never re-encodes what the model or the user produced


def read_output(path: Path) -> tuple[list[_Line], list[bytes]]:
    """The records of an output file, and the damaged bytes found (a torn tail, torn or glued lines)."""
    lines: list[_Line] = []
    damaged: list[bytes] = []
    for record, raw, junk in _output_lines(path):
        if junk:
            damaged.append(junk)
        if record is not None:
            lines.append(_Line(record, raw))
    return lines, damaged


def _output_lines(path: Path) -> Iterator[tuple[dict[str, Any] | None, bytes, bytes]]:
    """(record or None, the record's bytes, damaged bytes before it) for each non-blank line, streamed."""
    if not path.exists():
        return
    with open(path, "rb") as handle:
        for raw in handle:
            raw = raw.rstrip(b"\n")
            if not raw.strip():
                continue
            record, junk = _parse_line(raw)
            yield record, (raw[len(junk):] if record is not None else b""), junk


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


class _Survey:
    """One streamed pass over the output: which rows are finished, which keys have several records,
    whether anything is damaged. Keys and (key, digest) pairs are kept as 64-bit hashes.

    When a key has several records, one is kept: a record for the row's current content beats a stale
    one, a success beats an error, and a newer line beats an older one. Records of rows no longer in
    the input are kept (they are results someone paid for). Lines keep their order in the file."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.finished = Hashes()
        keys = Hashes()
        self.damaged: list[bytes] = []
        self.records = 0
        for record, _, junk in _output_lines(path):
            if junk:
                self.damaged.append(junk)
            if record is None:
                continue
            self.records += 1
            key = record_key(record)
            keys.add(hash(key))
            if finished(record):
                self.finished.add(hash((key, record.get("digest"))))
        self.finished.freeze()
        self.repeated = keys.freeze().repeated()
        del keys
        self.torn_tail = path.exists() and path.stat().st_size > 0 and not _ends_with_newline(path)

    def done(self, row: Row) -> bool:
        return hash((row.key, row.digest)) in self.finished

    def needs_rewrite(self) -> bool:
        return bool(self.damaged or self.repeated or self.torn_tail)

    def rewrite(self, rows: Iterable[Row]) -> None:
        """Write the output again with one record per key, atomically; damaged bytes go to `.damaged`."""
        if self.damaged:
            _set_aside(self.path, self.damaged)
        current = {hash(row.key): row.digest for row in rows if hash(row.key) in self.repeated}
        best: dict[int, tuple[tuple[bool, bool, int], int]] = {}
        for position, (record, _) in enumerate(self._records()):
            marker = hash(record_key(record))
            if marker in self.repeated:
                rank = (record.get("digest") == current.get(marker), finished(record), position)
                if marker not in best or rank > best[marker][0]:
                    best[marker] = (rank, position)
        keep = {position for _, position in best.values()}
        temporary = self.path.with_name(f".{self.path.name}.{os.getpid()}.tmp")
        with open(temporary, "wb") as handle:
            for position, (record, raw) in enumerate(self._records()):
                if hash(record_key(record)) not in self.repeated or position in keep:
                    handle.write(raw + b"\n")
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(temporary, self.path)
        _fsync_directory(self.path.parent)

    def _records(self) -> Iterator[tuple[dict[str, Any], bytes]]:
        for record, raw, _ in _output_lines(self.path):
            if record is not None:
                yield record, raw


def _ends_with_newline(path: Path) -> bool:
    with open(path, "rb") as handle:
        handle.seek(-1, os.SEEK_END)
        return handle.read(1) == b"\n"


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
    a machine crash too, within INTERVAL of being written. One fsync per record on the loop thread
    halved batch throughput, and one per burst still meant ~160 thread round trips a second at 32
    calls in flight, so the lines written within INTERVAL of an fsync share the next one; the run ends
    with a last fsync before compacting."""

    INTERVAL = 0.05

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
            await asyncio.sleep(self.INTERVAL)
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


def _check_output(rows: Iterable[Row], output: Path) -> None:
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


RowModel = Callable[[Row], Any]


async def run_batch(prompt: Prompt, rows: Iterable[Row], output: Path, *, concurrency: int = 8, model: Any = None,
                    on_row: Callable[[dict[str, Any]], Any] | None = None,
                    row_model: RowModel | None = None, overrides: Mapping[str, Any] | None = None,
                    log_rows: str = BATCH_LOG_ROWS[0]) -> BatchReport:
    """Run `prompt` once per row not finished in `output`; `rows` is a list or an `InputFile` (streamed).

    When the prompt's library keeps a run log, the batch is one entry in it (rows, outcome, cost,
    output file) and, by `log_rows`, so is each failed row ("failed", the default: a successful
    row's record is in the output file, and a big batch would push every other run out of the
    log), every row ("all") or none ("none").

    `row_model(row)`, when given, chooses each row's model (the provider batch APIs replay each row's
    downloaded result through it); otherwise every row uses `model`. `overrides` go to every
    `Prompt.generate` (e.g. return_tool_requests)."""
    _check_output(rows, output)
    if log_rows not in BATCH_LOG_ROWS:
        raise UsageError(f"log_rows must be one of {', '.join(BATCH_LOG_ROWS)}, not {log_rows!r}")
    source = getattr(rows, "path", None)
    if isinstance(rows, InputFile):
        total = rows.count if rows._repeated is not None else rows.check()
    else:
        rows = [row if row.key else _keyed(row) for row in rows]
        total = len(rows)
    output.parent.mkdir(parents=True, exist_ok=True)
    with output_lock(output):
        report = BatchReport(total=total)
        survey = _Survey(output)
        if survey.needs_rewrite():
            report.repaired = len(survey.damaged)
            survey.rewrite(rows)
        started = time.perf_counter()
        todo = _todo(rows, survey.finished, report)
        del survey  # its other sets are not needed while rows run
        with endpoints_fixed():
            async with batch_transport():
                if row_model is None:
                    with contextlib.suppress(DotpromptError):  # a broken prompt or setting fails its rows, as before
                        load_prices(_priced_name(prompt, model))
                try:
                    ran = await _run_rows(prompt, todo, output, concurrency, row_model or (lambda _row: model), on_row,
                                          report, dict(overrides or {}), log_rows)
                except (asyncio.CancelledError, KeyboardInterrupt):  # Ctrl-C: the rows in flight did not fail
                    report.seconds = time.perf_counter() - started
                    _log_batch(prompt, source, output, model, report, interrupted=True)
                    raise
        if ran:
            after = _Survey(output)
            if after.needs_rewrite():
                after.rewrite(rows)
        report.seconds = time.perf_counter() - started
    if ran:
        _log_batch(prompt, source, output, model, report)
    return report


def _log_batch(prompt: Prompt, source: Path | None, output: Path, model: Any, report: BatchReport, *,
               interrupted: bool = False) -> None:
    """The batch's own run-log entry (none for a prompt broken since the batch began: its rows say why)."""
    try:
        identity, name = prompt.identity, _priced_name(prompt, model) or None
    except DotpromptError:
        return
    ran = report.succeeded + report.failed + report.interrupted
    problems = [f"{report.failed} of {ran} rows failed"] if report.failed else []
    if report.interrupted:  # not failures, not successes: their records keep the pending tool requests
        problems.append(f"{report.interrupted} of {ran} rows stopped on tool requests waiting for an answer "
                        "(their records keep them)")
    error_type = "BatchRowsFailed" if report.failed else "BatchRowsInterrupted"
    if interrupted:
        done = ran + report.skipped
        problems, error_type = [f"interrupted after {done} of {report.total} rows (run the same command again to go on)"], \
            "BatchInterrupted"
    counts = {"succeeded": report.succeeded, "failed": report.failed, "skipped": report.skipped}
    if report.interrupted:
        counts["interrupted"] = report.interrupted
    log_summary(prompt.library.run_log, "batch", identity, name,
                input={"input_file": str(source.absolute()) if source else None, "rows": report.total},
                output={"output": str(output.absolute()), **counts}, seconds=report.seconds,
                error="; ".join(problems) or None, cost=float(report.cost_usd) if report.cost_usd is not None else None,
                error_type=error_type)


def _todo(rows: Iterable[Row], finished: Hashes, report: BatchReport) -> Iterator[Row]:
    for row in rows:
        if hash((row.key, row.digest)) in finished:
            report.skipped += 1
        else:
            yield row


def unfinished(rows: Iterable[Row], output: Path) -> Iterator[Row]:
    """The rows without a successful record of their current content in `output` (read once, streamed)."""
    finished = _Survey(output).finished
    return (row for row in rows if hash((row.key, row.digest)) not in finished)


def row_of(value: Any, number: int = 0) -> Row:
    """A row made from its value alone (no file): keyed by its `id`, else by its content."""
    digest = _digest(value)
    key = _column_key(value)
    return Row(number, value, digest, key or _content_key(digest, 1), BATCH_KEY_COLUMN if key else None)


def _keyed(row: Row) -> Row:
    # Rows built by hand (not by read_rows) get a key from their `id`, else from their content.
    key = _column_key(row.input)
    return Row(row.number, row.input, row.digest, key or _content_key(row.digest, 1), BATCH_KEY_COLUMN if key else None)


async def _run_rows(prompt: Prompt, todo: Iterator[Row], output: Path, concurrency: int, row_model: RowModel,
                    on_row: Callable[[dict[str, Any]], Any] | None, report: BatchReport,
                    overrides: dict[str, Any], log_rows: str) -> int:
    """A fixed pool of workers pulls rows from `todo` (never a task per row: a million rows would be a
    million coroutines in memory). Returns the number of rows run."""
    fd = os.open(output, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
    sync = _GroupSync(fd)
    ran = 0
    where = str(output.absolute())  # as the run log names the output: wherever `dotprompt logs` is run from
    try:
        secrets = _Secrets()

        async def worker() -> None:
            nonlocal ran
            for row in todo:  # a generator shared by the workers: each next() hands out one row
                with log_source("batch", keep=log_rows, output=where, key=row.key, row=row.number):
                    record, cost = await priced_row(prompt, row, row_model(row), **overrides)
                report.add_cost(cost)
                known = secrets.now()
                clean = unmasked_json(record, known)  # the usual row: nothing to mask, encoded once
                if clean is not None:
                    line = clean.encode("utf-8") + b"\n"
                else:
                    record = redact_data(record, known)
                    line = _encode(record, known)
                _append(fd, line)  # no key reaches the file, whatever an error (or a provider echoing one) said
                sync.written()
                ran += 1
                if "error" in record:
                    report.failed += 1
                elif "interrupted" in record:
                    report.interrupted += 1
                else:
                    report.succeeded += 1
                if on_row is not None:
                    on_row(record)

        await asyncio.gather(*(worker() for _ in range(max(1, concurrency))))
    finally:
        try:
            await sync.close()
        finally:
            os.close(fd)
    return ran


class _Secrets:
    """`known_secrets()` at most every REFRESH seconds: it scans the environment, which took a third of
    a batch row's CPU when done twice per row. A model remembers its key when it is built, before its
    first reply, so a record is never written with a list older than the model that produced it by
    more than REFRESH; the environment's key variables do not change during a run."""

    REFRESH = 0.25

    def __init__(self) -> None:
        self.at = -1.0
        self.found: list[str] = []

    def now(self) -> list[str]:
        clock = time.monotonic()
        if clock - self.at > self.REFRESH:
            self.found, self.at = known_secrets(), clock
        return self.found


def _encode(record: dict[str, Any], secrets: list[str] | None = None) -> bytes:
    try:
        return redacted_json(record, secrets).encode("utf-8") + b"\n"
    except (TypeError, ValueError) as exc:  # e.g. circular output: keep the row's place
        fallback = {k: record[k] for k in ("key", "row", "digest", "input")}
        fallback["error"] = {"type": type(exc).__name__, "message": f"the result could not be written as JSON: {exc}",
                             "reply": repr(record.get("output"))}
        return redacted_json(fallback, secrets).encode("utf-8") + b"\n"


async def run_row(prompt: Prompt, row: Row, model: Any, **overrides: Any) -> dict[str, Any]:
    """One row's final record: its output, usage, cost, repairs and prompt identity, or its error."""
    record, _cost = await priced_row(prompt, row, model, **overrides)
    return record


def _grounding(record: dict[str, Any], response: Any) -> None:
    """The row's grounding (where each output value is in its input), when the run grounded it."""
    grounding = getattr(response, "grounding", None)
    if grounding is not None:
        record["grounding"] = grounding.to_dict()


async def priced_row(prompt: Prompt, row: Row, model: Any, **overrides: Any) -> tuple[dict[str, Any], Cost | None]:
    """`run_row`, and what the row's model calls cost (None when the run failed before a reply)."""
    record: dict[str, Any] = {"key": row.key, "row": row.number, "digest": row.digest, "input": row.input}
    cost = None
    started = time.perf_counter()
    try:
        response = await prompt.generate(model_input(prompt, row), model=model, **overrides)
    except OutputValidationError as exc:
        record["error"] = {"type": type(exc).__name__, "message": str(exc), "reply": exc.text}
        _grounding(record, exc.response)  # output.grounding: require names what it did not find
    except DotpromptError as exc:
        reply = getattr(getattr(exc, "response", None), "text", None)
        record["error"] = {"type": type(exc).__name__, "message": str(exc), **({"reply": reply} if reply else {})}
    except Exception as exc:  # one row's surprise (a malformed reply, a bug) must not stop the batch
        record["error"] = {"type": type(exc).__name__, "message": str(exc)}
    else:
        if response.identity is not None:
            record["prompt"] = response.identity.to_dict()  # the exact text this row's answer came from
        pending = pending_interrupts(response)
        if pending:  # no output yet: what it waits on, and the conversation to resume (generate(resume=...))
            record["interrupted"] = pending
            record["messages"] = [message.to_dict() for message in response.messages]
        else:
            output = response.output
            record["output"] = output.model_dump(mode="json") if hasattr(output, "model_dump") else output
        if response.output_repairs:
            record["repairs"] = [getattr(r, "detail", str(r)) for r in response.output_repairs]
        _grounding(record, response)
        if response.usage is not None:
            record["usage"] = response.usage.to_dict()
        cost = price_response(_priced_name(prompt, model), response)
        if cost.usd is not None:
            record["cost_usd"] = float(cost.usd)
    if "prompt" not in record:
        record["prompt"] = _identity_now(prompt)
    record["latency_ms"] = round((time.perf_counter() - started) * 1000, 1)
    return record, cost


def _priced_name(prompt: Prompt, model: Any) -> str:
    """The model name a row's calls are priced as: the model object's own name, else the one the run uses."""
    if model is not None and not isinstance(model, str):
        return str(getattr(model, "name", "") or "")
    return model_name(prompt, model) or ""


def _identity_now(prompt: Prompt) -> dict[str, Any] | None:
    """The prompt's identity for a row that failed (a file broken since the batch began has none)."""
    try:
        identity = prompt.identity
    except DotpromptError:
        return None
    return identity.to_dict() if identity is not None else None
