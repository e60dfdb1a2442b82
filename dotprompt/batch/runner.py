"""Batch runs: one prompt over a JSON-lines file of inputs, with bounded concurrency.

Exactly one final record per input row, the row known by its key (`batch/rows.py`), written to the
crash-safe output journal (`batch/journal.py`), which a second run reads back to skip finished rows.
The key column names the row, it is not input: it is sent to the model only when the prompt's input
schema declares it, or the prompt has no input schema (`model_input`).

Memory does not grow with the input: `InputFile` reads rows lazily (a first pass checks every line and
counts the rows before anything is sent), a fixed pool of `concurrency` workers pulls them, and the
output is read and compacted line by line. What stays in memory per row is one 64-bit hash in a sorted
array (the finished rows of the output; the ids while the input is checked), 8 bytes, and about 40
bytes a row for a moment while each array is sorted.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import time
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass
from decimal import Decimal
from pathlib import Path
from typing import Any

from .._http.client import batch_transport
from .._util.redact import known_secrets, redact_data, redacted_json, unmasked_json
from ..errors import DotpromptError, OutputValidationError, UsageError
from ..observe.cost import Cost, endpoints_fixed, load_prices, price_response
from ..observe.runrecord import log_source, log_summary, pending_interrupts
from ..prompts.prompt import Prompt
from ..providers.registry import default_model_name
from ..settings import BATCH_LOG_ROWS
from .journal import GroupSync, Survey, append_line, check_output, finished, output_lock, read_output, record_key, unfinished
from .rows import Hashes, InputFile, Row, Rows, keyed, read_rows, row_of

# The rows (`rows.py`) and the journal's names (`journal.py`) are still imported from here.
__all__ = ["BatchReport", "Hashes", "InputFile", "Row", "Rows", "finished", "model_input", "model_name", "output_lock",
           "priced_row", "read_output", "read_rows", "record_key", "row_of", "run_batch", "run_row", "unfinished"]


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
    check_output(rows, output)
    if log_rows not in BATCH_LOG_ROWS:
        raise UsageError(f"log_rows must be one of {', '.join(BATCH_LOG_ROWS)}, not {log_rows!r}")
    source = getattr(rows, "path", None)
    if isinstance(rows, InputFile):
        total = rows.count if rows.checked else rows.check()
    else:
        rows = [row if row.key else keyed(row) for row in rows]
        total = len(rows)
    output.parent.mkdir(parents=True, exist_ok=True)
    with output_lock(output):
        report = BatchReport(total=total)
        survey = Survey(output)
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
            after = Survey(output)
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


async def _run_rows(prompt: Prompt, todo: Iterator[Row], output: Path, concurrency: int, row_model: RowModel,
                    on_row: Callable[[dict[str, Any]], Any] | None, report: BatchReport,
                    overrides: dict[str, Any], log_rows: str) -> int:
    """A fixed pool of workers pulls rows from `todo` (never a task per row: a million rows would be a
    million coroutines in memory). Returns the number of rows run."""
    fd = os.open(output, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
    sync = GroupSync(fd)
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
                append_line(fd, line)  # no key reaches the file, whatever an error (or a provider echoing one) said
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
