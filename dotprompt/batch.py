"""Batch runs: one prompt over a JSON-lines file of inputs, with bounded concurrency.

Every row ends as one line in the output file — its output, or its error with whatever the model
said — written as soon as it finishes, so a crash loses nothing finished. A restart skips the rows
that already succeeded (rows are matched by line number and input) and runs the rest again.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .errors import DotpromptError, OutputValidationError
from .prompt import Prompt
from .redact import redact, redact_data


@dataclass(frozen=True)
class Row:
    number: int  # 1-based line number in the input file
    input: Any
    digest: str


@dataclass
class BatchReport:
    total: int = 0
    skipped: int = 0
    succeeded: int = 0
    failed: int = 0
    seconds: float = 0.0


class BatchInputError(DotpromptError, ValueError):
    """A line of the input file is not JSON: names the file and line."""


def read_rows(path: Path) -> list[Row]:
    rows = []
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        if not line.strip():
            continue
        try:
            value = json.loads(line)
        except ValueError as exc:
            raise BatchInputError(f"{path}:{number}: not a JSON value: {exc}") from None
        rows.append(Row(number, value, _digest(value)))
    return rows


def _digest(value: Any) -> str:
    return hashlib.sha256(json.dumps(value, sort_keys=True).encode()).hexdigest()[:16]


def finished_rows(path: Path) -> set[tuple[int, str]]:
    """(line, input digest) of rows that already succeeded in an earlier run."""
    if not path.exists():
        return set()
    done = set()
    for line in path.read_text(encoding="utf-8").splitlines():
        try:
            record = json.loads(line)
        except ValueError:
            continue  # a line cut short by a crash: that row runs again
        if isinstance(record, dict) and "error" not in record and "row" in record:
            done.add((record["row"], record.get("digest", "")))
    return done


async def run_batch(prompt: Prompt, rows: list[Row], output: Path, *, concurrency: int = 8, model: str | None = None,
                    on_row: Callable[[dict[str, Any]], Any] | None = None) -> BatchReport:
    done = finished_rows(output)
    todo = [row for row in rows if (row.number, row.digest) not in done]
    report = BatchReport(total=len(rows), skipped=len(rows) - len(todo))
    limit = asyncio.Semaphore(max(1, concurrency))
    started = time.perf_counter()
    output.parent.mkdir(parents=True, exist_ok=True)
    with output.open("a", encoding="utf-8") as sink:

        async def one(row: Row) -> None:
            async with limit:
                record = redact_data(await _run_row(prompt, row, model))
            # No key reaches the file, whatever an error (or a provider echoing one) said.
            sink.write(redact(json.dumps(record, ensure_ascii=False, default=str)) + "\n")
            sink.flush()
            if "error" in record:
                report.failed += 1
            else:
                report.succeeded += 1
            if on_row is not None:
                on_row(record)

        await asyncio.gather(*(one(row) for row in todo))
    report.seconds = time.perf_counter() - started
    return report


async def _run_row(prompt: Prompt, row: Row, model: str | None) -> dict[str, Any]:
    record: dict[str, Any] = {"row": row.number, "digest": row.digest, "input": row.input}
    started = time.perf_counter()
    try:
        response = await prompt.generate(row.input, model=model)
    except OutputValidationError as exc:
        record["error"] = {"type": type(exc).__name__, "message": str(exc), "reply": exc.text}
    except DotpromptError as exc:
        reply = getattr(getattr(exc, "response", None), "text", None)
        record["error"] = {"type": type(exc).__name__, "message": str(exc), **({"reply": reply} if reply else {})}
    else:
        output = response.output
        record["output"] = output.model_dump(mode="json") if hasattr(output, "model_dump") else output
        if response.output_repairs:
            record["repairs"] = [getattr(r, "detail", str(r)) for r in response.output_repairs]
        if response.usage is not None:
            record["usage"] = response.usage.to_dict()
    record["latency_ms"] = round((time.perf_counter() - started) * 1000, 1)
    return record
