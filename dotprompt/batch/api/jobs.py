"""Submit a batch of rows to a provider's batch API, and on `--resume` poll and download.

State lives beside the output: `<output>.batch.json` names the prompt, model, provider and every job
(id, rows, last status, whether its results were written), and `<output>.batch/` holds each job's
custom ids (`<job>.ids`, one a line) and its downloaded result files. The state is rewritten
atomically after every submitted job, so a crash mid-submission keeps the ids of the jobs already
paid for. Rows are matched to results by a custom id made from the row's key and content hash, so
a row edited after submission is not given an old answer.

Results are replayed through the ordinary generate loop (capture.py) and written by the batch
runner (batch/runner.py): one final record per row, a row's error kept as its record, resumable. A row
whose job ended without its result (expired, cancelled, a torn or missing line) gets an error record
saying so; submitting again (`--batch-api`) sends only rows without a successful record.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ...errors import BatchJobError, DotpromptError
from ...prompts.prompt import Prompt
from ...providers.anthropic import AnthropicModel
from ...providers.gemini import GeminiModel
from ...providers.http_model import HttpModel
from ...providers.openai import OpenAIModel
from ...providers.registry import resolve_model
from ...settings import BATCH_JOB_MAX_ROWS
from ..journal import output_lock, unfinished
from ..rows import InputFile, Row
from ..runner import BatchReport, model_input, run_batch
from .anthropic import AnthropicBatch
from .base import FINAL, BatchProvider
from .capture import ReplayModel, Result, capture_request
from .gemini import GeminiBatch
from .ids import checked_id
from .openai import OpenAIBatch

__all__ = ["ResumeReport", "SubmitReport", "custom_id", "job_folder", "provider_for", "resume", "state_path", "submit"]

STATE_VERSION = 1


def provider_for(model: Any) -> BatchProvider:
    """The batch API of a model's provider; a model without one is a BatchJobError."""
    if isinstance(model, AnthropicModel):
        return AnthropicBatch()
    if isinstance(model, GeminiModel):
        return GeminiBatch()
    if isinstance(model, OpenAIModel):
        return OpenAIBatch()
    raise BatchJobError(f"the model {getattr(model, 'name', model)!r} has no batch API here (OpenAI, Anthropic and "
                        "Gemini models do); run the batch live, without --batch-api")


def custom_id(row: Row) -> str:
    # [A-Za-z0-9_-]{1,64}: what every provider accepts. Content is part of it: an edited row is a new request.
    return "r" + hashlib.sha256(f"{row.key}\n{row.digest}".encode()).hexdigest()[:40]


def state_path(output: Path) -> Path:
    return output.with_name(output.name + ".batch.json")


def job_folder(output: Path) -> Path:
    return output.with_name(output.name + ".batch")


@dataclass
class SubmitReport:
    jobs: list[str] = field(default_factory=list)
    rows: int = 0
    skipped: int = 0  # rows already finished in the output
    failed: int = 0  # rows that could not be rendered: their error records are written now


@dataclass
class ResumeReport:
    statuses: dict[str, str] = field(default_factory=dict)  # job id -> its status word
    written: BatchReport = field(default_factory=BatchReport)
    pending: int = 0
    problems: list[str] = field(default_factory=list)  # result lines that answered no row


def _load_state(output: Path) -> dict[str, Any] | None:
    path = state_path(output)
    if not path.exists():
        return None
    try:
        state = json.loads(path.read_text(encoding="utf-8"))
    except ValueError as exc:
        raise BatchJobError(f"{path} is not JSON ({exc}); it holds the batch job ids: restore it, or delete it to "
                            "submit again (jobs already submitted are then not downloaded)") from None
    if not isinstance(state, dict) or state.get("version") != STATE_VERSION or not isinstance(state.get("jobs"), list):
        raise BatchJobError(f"{path} is not a dotprompt batch state file (version {STATE_VERSION})")
    for number, job in enumerate(state["jobs"]):
        if not isinstance(job, dict):
            raise BatchJobError(f"{path}: `jobs[{number}]` is not an object; restore the file, or delete it to submit again")
        # Written by an older version, or edited: its ids become file names and URLs, like a provider's.
        checked_id(job.get("id"), f"jobs[{number}].id", str(path),
                   "restore the file, or delete it to submit again (jobs already submitted are then not downloaded)")
    return state


def _save_state(output: Path, state: dict[str, Any]) -> None:
    path = state_path(output)
    temporary = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    with open(temporary, "w", encoding="utf-8") as handle:
        json.dump(state, handle, indent=1)
        handle.flush()
        os.fsync(handle.fileno())
    os.replace(temporary, path)


def _model(prompt: Prompt, name: str | None) -> HttpModel:
    chosen = name or prompt.metadata.get("model")
    model = resolve_model(chosen)
    provider_for(model)
    return model  # type: ignore[return-value]


async def submit(prompt: Prompt, rows: InputFile, output: Path, *, model: str | None = None,
                 first_turn_only: bool = False, batch_size: int = BATCH_JOB_MAX_ROWS,
                 on_job: Callable[[str, int], Any] | None = None) -> SubmitReport:
    """Build and submit the rows not yet finished in `output` as one or more jobs; their ids go to the state."""
    real = _model(prompt, model)
    provider = provider_for(real)
    size = max(1, min(batch_size, provider.max_requests))
    rows.check()
    output.parent.mkdir(parents=True, exist_ok=True)
    with output_lock(output):
        state = _load_state(output)
        if state is not None:
            pending = [job["id"] for job in state["jobs"] if not job.get("written")]
            if pending:
                raise BatchJobError(f"batch jobs {', '.join(pending)} for {output} are not downloaded yet: run with "
                                    f"--resume to poll and download them (or delete {state_path(output)} to forget them)")
        state = state or {"version": STATE_VERSION, "jobs": []}
        state.update(prompt=repr(prompt), model=real.name, provider=provider.provider, first_turn_only=first_turn_only)
        folder = job_folder(output)
        folder.mkdir(exist_ok=True)
        report = SubmitReport(skipped=rows.count)
        lines: list[dict[str, Any]] = []
        ids: list[str] = []
        broken: list[Row] = []

        async def send() -> None:
            label = f"dotprompt {prompt!r} {len(state['jobs']) + 1}"
            job_id = await provider.submit(real, lines, label)
            (folder / f"{job_id}.ids").write_text("".join(i + "\n" for i in ids), encoding="utf-8")
            state["jobs"].append({"id": job_id, "rows": len(ids), "status": "submitted", "written": False})
            _save_state(output, state)
            report.jobs.append(job_id)
            if on_job is not None:
                on_job(job_id, len(ids))
            lines.clear()
            ids.clear()

        for row in unfinished(rows, output):
            report.skipped -= 1
            try:
                request = await capture_request(prompt, model_input(prompt, row), real, first_turn_only=first_turn_only)
            except BatchJobError:
                raise
            except DotpromptError:  # this row's input or render failed: its record says why, below
                broken.append(row)
                continue
            lines.append(provider.line(real, custom_id(row), request))
            ids.append(custom_id(row))
            report.rows += 1
            if len(lines) >= size:
                await send()
        if lines:
            await send()
    if broken:  # the same loop again: each gets the error a live run would have given it
        written = await run_batch(prompt, broken, output, model=ReplayModel(real, None, provider.parse, provider.provider),
                                  overrides={"return_tool_requests": True} if first_turn_only else None)
        report.failed = written.failed
    return report


async def resume(prompt: Prompt, rows: InputFile, output: Path,
                 on_status: Callable[[str, str], Any] | None = None) -> ResumeReport:
    """Poll every job not yet written; write the results of those that ended. Jobs still running stay."""
    state = _load_state(output)
    if state is None:
        raise BatchJobError(f"no batch job to resume for {output}: {state_path(output)} does not exist "
                            "(submit one with --batch-api first)")
    real = resolve_model(state["model"])
    provider = provider_for(real)
    report = ResumeReport()
    folder = job_folder(output)
    for job in state["jobs"]:
        if job.get("written"):
            report.statuses[job["id"]] = job["status"]
            continue
        status = await provider.poll(real, job["id"])  # type: ignore[arg-type]
        job["status"] = status.detail or status.state
        report.statuses[job["id"]] = job["status"]
        if on_status is not None:
            on_status(job["id"], job["status"])
        if status.state not in FINAL:
            report.pending += 1
            continue
        ids_file = folder / f"{job['id']}.ids"
        wanted = set(ids_file.read_text(encoding="utf-8").split()) if ids_file.exists() else set()
        results: dict[str, Result] = {}
        async for fetched in provider.fetch(real, job["id"], status, folder):  # type: ignore[arg-type]
            if fetched.problem is not None:
                report.problems.append(f"job {job['id']}: {fetched.problem}")
            elif fetched.custom_id in wanted and fetched.result is not None:
                results[fetched.custom_id] = fetched.result
            else:
                report.problems.append(f"job {job['id']}: a result for {fetched.custom_id!r}, which is no row of this job")
        job_rows = [row for row in rows if custom_id(row) in wanted]
        first_turn_only = bool(state.get("first_turn_only"))

        def replay(row: Row, results: dict[str, Result] = results) -> ReplayModel:
            return ReplayModel(real, results.get(custom_id(row)), provider.parse, provider.provider)

        written = await run_batch(prompt, job_rows, output, row_model=replay,
                                  overrides={"return_tool_requests": True} if first_turn_only else None)
        for name in ("succeeded", "failed", "skipped", "total"):
            setattr(report.written, name, getattr(report.written, name) + getattr(written, name))
        job["written"] = True
        _save_state(output, state)
    return report
