"""The run log: every run, kept in a SQLite file in the user's data folder (like `llm logs`).

One table, `runs`, one row per run (columns: `COLUMNS`; those in `JSON_COLUMNS` hold JSON), and
`runs_fts`, an FTS5 index of each run's words (every string in its prompt name, model, input,
messages, output and error) when this SQLite has FTS5; `dotprompt logs --search` falls back to
LIKE over the stored text without it. The file
is in WAL mode, so any number of processes write and read it at once; a write waits at most
`RUNLOG_BUSY_SECONDS` for another writer.

Writes never slow or fail the run that makes them: `RunLog.add` queues the entry and returns; one
thread per log file writes what is queued in one transaction, and the queue is flushed when the
process exits. A file that is not a database, a folder that cannot be written, a lock held too long:
the entries are dropped and one warning says why (logger `dotprompt.runlog`, shown on stderr when
logging is not configured). What is stored passes through `redact` (no key, no URL credential);
each text field is cut at `RUNLOG_MAX_FIELD_CHARS`; runs beyond `keep_runs` or older than
`keep_days` are deleted as new ones arrive.
"""

from __future__ import annotations

import atexit
import contextlib
import json
import logging
import os
import queue
import sqlite3
import threading
import time
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

from .._util.redact import known_secrets, redact, redacted_json
from ..errors import RunLogError
from ..settings import RunLogSettings

__all__ = [
    "COLUMNS",
    "JSON_COLUMNS",
    "RUNLOG_BUSY_SECONDS",
    "RUNLOG_MAX_FIELD_CHARS",
    "TEXT_COLUMNS",
    "LogQuery",
    "RunLog",
    "get_run",
    "has_fts",
    "list_runs",
    "open_run_log",
    "search_runs",
]

RUNLOG_MAX_FIELD_CHARS: Final = 1_000_000
"""Characters one stored field (rendered request, response, output) may have; the rest is cut, with a note."""

RUNLOG_BUSY_SECONDS: Final = 2.0
"""How long a write waits for another process's lock on the run log before that batch of entries is dropped."""

log = logging.getLogger("dotprompt.runlog")

# name -> SQL type. `run_id` makes a write exactly-once even if a transaction is retried.
COLUMNS: dict[str, str] = {
    "run_id": "TEXT NOT NULL UNIQUE", "started": "REAL NOT NULL", "source": "TEXT NOT NULL", "context": "TEXT",
    "prompt": "TEXT", "variant": "TEXT", "prompt_hash": "TEXT", "partials": "TEXT", "model": "TEXT",
    "status": "TEXT NOT NULL", "error_type": "TEXT", "error": "TEXT", "input": "TEXT", "request": "TEXT",
    "response": "TEXT", "output": "TEXT", "repairs": "INTEGER", "repair_details": "TEXT", "finish_reason": "TEXT",
    "input_tokens": "INTEGER", "output_tokens": "INTEGER", "usage": "TEXT",
    "cost": "REAL",  # filled when the run's cost is known (see runrecord.py); NULL otherwise
    "latency_ms": "REAL",
    "project": "TEXT",  # the folder of the project the run belongs to (settings.project_root); NULL before version 2
}
JSON_COLUMNS = ("context", "partials", "input", "request", "response", "output", "repair_details", "usage")
TEXT_COLUMNS = ("prompt", "model", "input", "request", "response", "output", "error")  # what search looks through
_SCHEMA_VERSION = 2  # 2: the project column
_PRUNE_EVERY = 100  # inserts between two retention passes
_BATCH = 500  # entries written per transaction at most
# After an entry arrives the writer waits this long for more (unless a flush is waiting): one wake-up and
# one transaction per burst. Woken per entry, it fought the runs for the GIL: a batch lost 15% of its rate.
_LINGER = 0.1


def _schema(fts: bool) -> list[str]:
    columns = ", ".join(f"{name} {kind}" for name, kind in COLUMNS.items())
    statements = [f"CREATE TABLE IF NOT EXISTS runs (id INTEGER PRIMARY KEY, {columns})",
                  "CREATE INDEX IF NOT EXISTS runs_started ON runs (started)",
                  "CREATE INDEX IF NOT EXISTS runs_prompt ON runs (prompt, started)"]
    if fts:
        # Its own copy of the words, not the JSON: in JSON a line break is `\n`, which the tokenizer
        # would glue to the next word ("\nTotal" -> "nTotal"), and then "Total" would not be found.
        statements += [
            "CREATE VIRTUAL TABLE IF NOT EXISTS runs_fts USING fts5(text)",
            "CREATE TRIGGER IF NOT EXISTS runs_ad AFTER DELETE ON runs BEGIN "
            "DELETE FROM runs_fts WHERE rowid = old.id; END"]
    return statements


def has_fts() -> bool:
    """Whether this Python's SQLite was built with FTS5."""
    with contextlib.closing(sqlite3.connect(":memory:")) as db:
        try:
            db.execute("CREATE VIRTUAL TABLE probe USING fts5(x)")
        except sqlite3.OperationalError:
            return False
    return True


def _connect(path: Path, busy: float = RUNLOG_BUSY_SECONDS) -> sqlite3.Connection:
    """The log file, created (only its owner may read it: it holds prompts and replies) and migrated."""
    path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    if not path.exists():
        os.close(os.open(path, os.O_WRONLY | os.O_CREAT, 0o600))
    db = sqlite3.connect(path, timeout=busy, isolation_level=None, check_same_thread=False)
    try:
        db.execute("PRAGMA journal_mode=WAL")
        db.execute("PRAGMA synchronous=NORMAL")  # WAL + NORMAL: a crash may lose the last entries, never the file
        if db.execute("PRAGMA user_version").fetchone()[0] != _SCHEMA_VERSION:
            fts = has_fts()
            db.execute("BEGIN IMMEDIATE")
            for statement in _schema(fts):
                db.execute(statement)
            _add_missing_columns(db)
            db.execute("CREATE INDEX IF NOT EXISTS runs_project ON runs (project, id)")
            db.execute(f"PRAGMA user_version={_SCHEMA_VERSION}")
            db.execute("COMMIT")
    except BaseException:
        db.close()
        raise
    return db


def _add_missing_columns(db: sqlite3.Connection) -> None:
    """Columns added since a log file was made (`project`, version 2): its runs stay, the new column NULL.
    Checked by name, not by version: an older dotprompt that opens the file sets the version back."""
    have = {row[1] for row in db.execute("PRAGMA table_info(runs)")}
    for name, kind in COLUMNS.items():
        if name not in have:
            db.execute(f"ALTER TABLE runs ADD COLUMN {name} {kind.replace(' NOT NULL', '').replace(' UNIQUE', '')}")


# -- writing ------------------------------------------------------------------------------------

class RunLog:
    """One log file; `add` queues an entry (a dict of COLUMNS) for the writer thread."""

    def __init__(self, settings: RunLogSettings) -> None:
        assert settings.path is not None
        self.path = settings.path.expanduser().absolute()  # a later chdir must not move the log
        self.keep_runs = settings.keep_runs
        self.keep_days = settings.keep_days
        self._queue: queue.SimpleQueue[dict[str, Any]] = queue.SimpleQueue()
        self._pending = 0  # queued or being written
        self._idle = threading.Condition()
        self._flushing = threading.Event()  # set while a flush waits: the writer stops lingering
        self._thread: threading.Thread | None = None
        self._db: sqlite3.Connection | None = None
        self._using = threading.Lock()  # held while the connection writes, so `close` never cuts a write
        self._broken = False  # the file cannot be used: drop entries without trying again
        self._warned = False
        self._since_prune = _PRUNE_EVERY  # prune on the first write

    def add(self, entry: Mapping[str, Any]) -> None:
        """Queue an entry; never raises, never waits (the run that logs must not notice the log)."""
        if self._broken:
            return
        with self._idle:
            self._pending += 1
            if self._thread is None:
                self._thread = threading.Thread(target=self._write_forever, name="dotprompt-runlog", daemon=True)
                self._thread.start()
        self._queue.put(dict(entry))

    def flush(self, timeout: float | None = 10.0) -> bool:
        """Wait until every queued entry is written (or dropped); False if `timeout` passed first."""
        deadline = None if timeout is None else time.monotonic() + timeout
        self._flushing.set()
        with self._idle:
            while self._pending:
                left = None if deadline is None else deadline - time.monotonic()
                if left is not None and left <= 0:
                    return False
                self._idle.wait(left)
        return True

    def close(self) -> None:
        """Close the file (its WAL is folded back into it); a later `add` opens it again."""
        with self._using:
            if self._db is not None:
                self._db.close()
                self._db = None

    def _write_forever(self) -> None:
        while True:
            batch = [self._queue.get()]
            self._flushing.wait(_LINGER)
            while len(batch) < _BATCH:
                try:
                    batch.append(self._queue.get_nowait())
                except queue.Empty:
                    break
            try:
                with self._using:
                    try:
                        self._write(batch)
                    except Exception as exc:
                        self._failed(exc)
            finally:
                with self._idle:
                    self._pending -= len(batch)
                    if not self._pending:
                        self._flushing.clear()
                    self._idle.notify_all()

    def _write(self, batch: list[dict[str, Any]]) -> None:
        if self._broken:
            return
        if self._db is None:
            self._db = _connect(self.path)
        secrets = known_secrets()  # read the environment once per batch, not per field
        db = self._db
        fts = _has_table(db, "runs_fts")
        db.execute("BEGIN IMMEDIATE")
        try:
            for entry in batch:
                row = _stored(entry, secrets)
                cursor = db.execute(_INSERT, [row.get(c) for c in COLUMNS])
                if fts and cursor.rowcount:
                    db.execute("INSERT INTO runs_fts (rowid, text) VALUES (?, ?)",
                               (cursor.lastrowid, _cut(redact(_words(entry), secrets))))
            self._since_prune += len(batch)
            if self._since_prune >= _PRUNE_EVERY:
                self._prune(db)
            db.execute("COMMIT")
        except BaseException:
            db.execute("ROLLBACK")
            raise

    def _prune(self, db: sqlite3.Connection) -> None:
        self._since_prune = 0
        db.execute("DELETE FROM runs WHERE started < ?", (time.time() - self.keep_days * 86400,))
        db.execute("DELETE FROM runs WHERE id <= (SELECT id FROM runs ORDER BY id DESC LIMIT 1 OFFSET ?)",
                   (self.keep_runs,))

    def _failed(self, exc: Exception) -> None:
        locked = isinstance(exc, sqlite3.OperationalError) and "locked" in str(exc)
        if not locked:  # a lock passes; a file that is not a database, or cannot be written, does not
            self._broken = True
            if self._db is not None:
                self._db.close()
                self._db = None
        if not self._warned:
            self._warned = True
            what = "is locked by another process" if locked else f"cannot be used ({type(exc).__name__}: {exc})"
            log.warning("the run log %s %s; runs are not being logged (the runs themselves go on). "
                        "Move the file away, set DOTPROMPT_LOG_PATH to another file, or DOTPROMPT_LOG=0 "
                        "to stop logging.", self.path, what)


_INSERT = f"INSERT OR IGNORE INTO runs ({', '.join(COLUMNS)}) VALUES ({', '.join('?' for _ in COLUMNS)})"


def _stored(entry: Mapping[str, Any], secrets: list[str]) -> dict[str, Any]:
    """The entry as columns: JSON where JSON_COLUMNS say, every text redacted and cut to size."""
    out = {}
    for name, value in entry.items():
        if name not in COLUMNS:
            continue
        if value is not None and name in JSON_COLUMNS:
            value = _cut(redacted_json(value, secrets))
        elif isinstance(value, str):
            value = _cut(redact(value, secrets))
        out[name] = value
    return out


def _words(entry: Mapping[str, Any]) -> str:
    """Every string of the entry's searchable columns, one per line: what full-text search indexes."""
    found: list[str] = []
    stack = [entry.get(name) for name in reversed(TEXT_COLUMNS)]
    while stack:
        value = stack.pop()
        if isinstance(value, str):
            found.append(value)
        elif isinstance(value, Mapping):
            stack.extend(reversed(list(value.values())))
        elif isinstance(value, (list, tuple)):
            stack.extend(reversed(value))
    return "\n".join(found)


def _cut(text: str) -> str:
    if len(text) <= RUNLOG_MAX_FIELD_CHARS:
        return text
    return f"{text[:RUNLOG_MAX_FIELD_CHARS]}... [{len(text) - RUNLOG_MAX_FIELD_CHARS:,} more characters not logged]"


_logs: dict[Path, RunLog] = {}
_logs_lock = threading.Lock()


def open_run_log(settings: RunLogSettings) -> RunLog | None:
    """The log for these settings (one per file in a process, shared by every library), or None when off."""
    if settings.path is None:
        return None
    key = settings.path.expanduser().absolute()  # one writer per file, however the path was spelled
    with _logs_lock:
        found = _logs.get(key)
        if found is None:
            found = _logs[key] = RunLog(settings)
        return found


@atexit.register
def _flush_all() -> None:
    for run_log in list(_logs.values()):
        if run_log.flush(timeout=10.0):
            run_log.close()


# -- reading ------------------------------------------------------------------------------------

@dataclass(frozen=True)
class LogQuery:
    """Filters of `dotprompt logs`; None means any."""

    prompt: str | None = None
    model: str | None = None
    status: str | None = None
    source: str | None = None
    project: str | None = None  # runs of this project only (runs logged before projects were recorded have none)
    since: float | None = None  # unix seconds
    until: float | None = None
    limit: int | None = 20

    def where(self, table: str = "runs") -> tuple[str, list[Any]]:
        clauses: list[str] = []
        values: list[Any] = []
        for column, value in (("prompt", self.prompt), ("model", self.model), ("status", self.status),
                              ("source", self.source), ("project", self.project)):
            if value is not None:
                clauses.append(f"{table}.{column} = ?")
                values.append(value)
        if self.since is not None:
            clauses.append(f"{table}.started >= ?")
            values.append(self.since)
        if self.until is not None:
            clauses.append(f"{table}.started < ?")
            values.append(self.until)
        return (" AND ".join(clauses) or "1"), values


@contextlib.contextmanager
def _reading(path: Path) -> Iterator[sqlite3.Connection | None]:
    """The log file for reading, None if nothing was logged yet; an unreadable file is a RunLogError."""
    if not path.exists():
        yield None
        return
    try:
        db = _connect(path)
    except (sqlite3.Error, OSError) as exc:
        raise _unreadable(path, exc) from None
    db.row_factory = sqlite3.Row
    try:
        yield db
    except sqlite3.DatabaseError as exc:
        raise _unreadable(path, exc) from None
    finally:
        db.close()


def _unreadable(path: Path, exc: BaseException) -> RunLogError:
    return RunLogError(f"{path}: cannot read the run log ({type(exc).__name__}: {exc}); move the file away "
                       "(a new log starts) or point DOTPROMPT_LOG_PATH at another file")


def list_runs(path: Path, query: LogQuery = LogQuery()) -> list[dict[str, Any]]:
    """The runs matching `query`, newest first."""
    where, values = query.where()
    with _reading(path) as db:
        if db is None:
            return []
        rows = db.execute(f"SELECT * FROM runs WHERE {where} ORDER BY id DESC{_limit(query)}", values).fetchall()
        return [_decoded(row) for row in rows]


SQLITE_MAX_INT = 2**63 - 1  # SQLite's integers are 64-bit: a larger number overflows before any query runs


def get_run(path: Path, run: int) -> dict[str, Any] | None:
    with _reading(path) as db:
        if db is None or not 0 <= run <= SQLITE_MAX_INT:
            return None  # no id is outside the range
        row = db.execute("SELECT * FROM runs WHERE id = ?", (run,)).fetchone()
        return _decoded(row) if row is not None else None


def search_runs(path: Path, text: str, query: LogQuery = LogQuery()) -> tuple[list[dict[str, Any]], bool]:
    """Runs whose text holds every word of `text`, best match first; and whether FTS5 did the search
    (without it, every word is looked for with LIKE: slower, in date order)."""
    words = text.split()
    if not words:
        return list_runs(path, query), has_fts()
    where, values = query.where()
    with _reading(path) as db:
        if db is None:
            return [], has_fts()
        if _has_table(db, "runs_fts"):
            phrase = " ".join('"' + word.replace('"', '""') + '"' for word in words)  # words, never FTS syntax
            try:
                rows = db.execute(f"SELECT runs.* FROM runs_fts JOIN runs ON runs.id = runs_fts.rowid "
                                  f"WHERE runs_fts MATCH ? AND {where} ORDER BY runs_fts.rank{_limit(query)}",
                                  [phrase, *values]).fetchall()
                return [_decoded(row) for row in rows], True
            except sqlite3.OperationalError as exc:
                if "fts5" not in str(exc):
                    raise
        likes = [_LIKE_ANY for _ in words]
        patterns = [_like(word) for word in words for _ in TEXT_COLUMNS]
        rows = db.execute(f"SELECT * FROM runs WHERE {' AND '.join([*likes, where])} ORDER BY id DESC{_limit(query)}",
                          [*patterns, *values]).fetchall()
        return [_decoded(row) for row in rows], False


_LIKE_ANY = "(" + " OR ".join(f"{c} LIKE ? ESCAPE '\\'" for c in TEXT_COLUMNS) + ")"


def _decoded(row: sqlite3.Row) -> dict[str, Any]:
    """A stored run as a dict, its JSON columns parsed (a field cut to size stays the text it was)."""
    out = dict(row)
    for name in JSON_COLUMNS:
        if isinstance(out.get(name), str):
            with contextlib.suppress(ValueError):
                out[name] = json.loads(out[name])
    return out


def _has_table(db: sqlite3.Connection, name: str) -> bool:
    return db.execute("SELECT 1 FROM sqlite_master WHERE name = ?", (name,)).fetchone() is not None


def _like(word: str) -> str:
    escaped = word.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
    return f"%{escaped}%"


def _limit(query: LogQuery) -> str:
    return f" LIMIT {min(int(query.limit), SQLITE_MAX_INT)}" if query.limit is not None else ""
