"""The crash-safe output journal of a batch run: one JSON record per line, appended, read back on resume.

The output file is only ever appended to whole lines (one write each: `append_line`; fsyncs grouped off
the event loop by `GroupSync`, and a last one before the run ends) while a run goes on, and rewritten
atomically (temporary file, fsync, rename) before and after when needed (`Survey.rewrite`): the rewrite
keeps one record per key (a success beats an error; otherwise the newer wins), drops a torn last line
left by a crash and keeps any damaged bytes in `<output>.damaged`, so nothing is lost. A lock file
(`<output>.lock`, flock) refuses a second run on the same output; the OS releases it on any exit.

Resuming reads the journal back in one streamed pass (`Survey`): the finished rows are kept as 64-bit
hashes of (key, digest) in a sorted array, 8 bytes a row.
"""

from __future__ import annotations

import asyncio
import contextlib
import fcntl
import json
import os
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..errors import BatchOutputError
from .rows import Hashes, Row, column_key, content_digest, content_key

__all__ = ["GroupSync", "Survey", "append_line", "check_output", "finished", "output_lock", "read_output", "record_key",
           "unfinished"]


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
    return column_key(value) or content_key(content_digest(value), 1)


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


class Survey:
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


def append_line(fd: int, data: bytes) -> None:
    """The whole line in one append: a crash leaves at most one torn last line, which the next run repairs."""
    view = memoryview(data)
    while view:
        written = os.write(fd, view)
        view = view[written:]


class GroupSync:
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


def check_output(rows: Iterable[Row], output: Path) -> None:
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


def unfinished(rows: Iterable[Row], output: Path) -> Iterator[Row]:
    """The rows without a successful record of their current content in `output` (read once, streamed)."""
    finished = Survey(output).finished
    return (row for row in rows if hash((row.key, row.digest)) not in finished)
