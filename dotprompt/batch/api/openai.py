"""OpenAI Batch: a JSON-lines file of Chat Completions requests is uploaded (`/files`, purpose `batch`),
a job made of it (`/batches`, 24 h window), polled, and its output and error files downloaded."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

from ...providers.http_model import HttpModel
from ...providers.openai import from_completion, to_body
from ...types import GenerateRequest
from .base import CANCELLED, ENDED, EXPIRED, FAILED, IN_PROGRESS, Fetched, JobStatus
from .capture import Result
from .ids import FROM_PROVIDER, checked_id
from .transfer import BATCH_RESULTS_MAX_BYTES, call_json, download, result_lines

__all__ = ["OpenAIBatch"]

ENDPOINT = "/v1/chat/completions"
STATES = {"validating": IN_PROGRESS, "in_progress": IN_PROGRESS, "finalizing": IN_PROGRESS, "completed": ENDED,
          "expired": EXPIRED, "failed": FAILED, "cancelling": IN_PROGRESS, "cancelled": CANCELLED}


class OpenAIBatch:
    provider = "openai"
    max_requests = 50_000
    parse = staticmethod(from_completion)

    def line(self, model: HttpModel, custom_id: str, request: GenerateRequest) -> dict[str, Any]:
        return {"custom_id": custom_id, "method": "POST", "url": ENDPOINT, "body": to_body(request, model.model_id)}

    async def submit(self, model: HttpModel, lines: list[dict[str, Any]], label: str) -> str:
        content = b"".join(json.dumps(line, ensure_ascii=False).encode() + b"\n" for line in lines)
        headers = model.headers()
        uploaded = await call_json(model, "POST", "/files", headers, data={"purpose": "batch"},
                                   files={"file": (f"{label}.jsonl", content, "application/jsonl")})
        file_id = checked_id(_get(uploaded, "id"), "id", "the reply of POST /files",
                             f"no job was created; {FROM_PROVIDER}")
        job = await call_json(model, "POST", "/batches", headers, body={
            "input_file_id": file_id, "endpoint": ENDPOINT, "completion_window": "24h",
            "metadata": {"dotprompt": label[:500]}})
        return checked_id(_get(job, "id"), "id", "the reply of POST /batches", _JOB_UNKNOWN)

    async def poll(self, model: HttpModel, job_id: str) -> JobStatus:
        data = await call_json(model, "GET", f"/batches/{job_id}", model.headers())
        status = str(data.get("status"))
        counts = data.get("request_counts") or {}
        detail = f"{status}" + (f" ({counts.get('completed', 0)}/{counts.get('total', 0)} done)" if counts else "")
        files = {key: checked_id(data[key], key, f"the reply of GET /batches/{job_id}",
                                 f"the job's results were not downloaded; {FROM_PROVIDER}")
                 for key in ("output_file_id", "error_file_id") if data.get(key)}
        return JobStatus(STATES.get(status, IN_PROGRESS), detail, files)

    async def fetch(self, model: HttpModel, job_id: str, status: JobStatus, folder: Path) -> AsyncIterator[Fetched]:
        for key in ("output_file_id", "error_file_id"):
            file_id = status.info.get(key)
            if not file_id:
                continue
            target = folder / f"{job_id}.{key}.jsonl"
            await download(model, f"/files/{file_id}/content", model.headers(), target, BATCH_RESULTS_MAX_BYTES)
            for number, data, problem in result_lines(target, model.http.max_response_bytes):
                yield _fetched(data, problem, target.name, number)


# A job the provider may have made, whose id cannot be kept: nobody would ever download it.
_JOB_UNKNOWN = ("the job may have been created: find it in the provider's console and cancel it (its rows are "
                f"submitted again next time); {FROM_PROVIDER}")


def _get(reply: Any, key: str) -> Any:
    return reply.get(key) if isinstance(reply, dict) else None


def _fetched(data: Any, problem: str | None, name: str, number: int) -> Fetched:
    if problem is not None or not isinstance(data, dict):
        return Fetched(None, None, f"{name}: {problem or f'line {number} is not an object'}")
    custom_id = data.get("custom_id")
    response = data.get("response") if isinstance(data.get("response"), dict) else None
    if response is not None and response.get("status_code") == 200:
        return Fetched(custom_id, Result(data=response.get("body")))
    if response is not None:
        body = response.get("body")
        return Fetched(custom_id, Result(error=_message(body), status=response.get("status_code")))
    found = data.get("error")
    error = found if isinstance(found, dict) else {}
    return Fetched(custom_id, Result(error=f"{error.get('code', 'error')}: {error.get('message', 'no response')}"))


def _message(body: Any) -> str:
    error = body.get("error", body) if isinstance(body, dict) else body
    if isinstance(error, dict):
        return str(error.get("message") or json.dumps(error)[:1000])
    return str(error)[:1000]
