"""Anthropic Message Batches: the requests go in one POST (`/messages/batches`), the job is polled, and
its results (JSON lines at `results_url`) downloaded; each line says succeeded, errored, expired or
canceled for its row."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import httpx

from ...providers.anthropic import from_message, to_body
from ...providers.http_model import HttpModel
from ...types import GenerateRequest
from .base import ENDED, IN_PROGRESS, Fetched, JobStatus
from .capture import Result
from .ids import FROM_PROVIDER, checked_id
from .transfer import BATCH_RESULTS_MAX_BYTES, call_json, download, result_lines

__all__ = ["AnthropicBatch"]


class AnthropicBatch:
    provider = "anthropic"
    max_requests = 100_000
    parse = staticmethod(from_message)

    def line(self, model: HttpModel, custom_id: str, request: GenerateRequest) -> dict[str, Any]:
        return {"custom_id": custom_id, "params": to_body(request, model.model_id)}

    async def submit(self, model: HttpModel, lines: list[dict[str, Any]], label: str) -> str:
        job = await call_json(model, "POST", "/messages/batches", model.headers(),
                              body={"requests": lines})
        return checked_id(job.get("id") if isinstance(job, dict) else None, "id", "the reply of POST /messages/batches",
                          "the job may have been created: find it in the Anthropic console and cancel it (its rows "
                          f"are submitted again next time); {FROM_PROVIDER}")

    async def poll(self, model: HttpModel, job_id: str) -> JobStatus:
        data = await call_json(model, "GET", f"/messages/batches/{job_id}", model.headers())
        status = str(data.get("processing_status"))
        counts = data.get("request_counts") or {}
        detail = status + (" (" + ", ".join(f"{v} {k}" for k, v in counts.items() if v) + ")" if counts else "")
        # "ended" covers expired and cancelled jobs too: each result line says what happened to its row.
        return JobStatus(ENDED if status == "ended" else IN_PROGRESS, detail, {"results_url": data.get("results_url")})

    async def fetch(self, model: HttpModel, job_id: str, status: JobStatus, folder: Path) -> AsyncIterator[Fetched]:
        url = _same_origin(status.info.get("results_url"), model.config.base_url) \
            or f"/messages/batches/{job_id}/results"
        target = folder / f"{job_id}.results.jsonl"
        await download(model, str(url), model.headers(), target, BATCH_RESULTS_MAX_BYTES)
        for number, data, problem in result_lines(target, model.http.max_response_bytes):
            yield _fetched(data, problem, target.name, number)


def _same_origin(url: Any, base_url: str) -> str | None:
    """The `results_url` a status reply names, only when it is on the configured API's origin: the download
    carries the API key, and a reply (or whatever answers for the provider) must not send it elsewhere.
    Any other URL gives way to the documented results path on the configured base URL."""
    if not isinstance(url, str) or not url:
        return None
    try:
        named, base = httpx.URL(url), httpx.URL(base_url)
    except (httpx.InvalidURL, TypeError, ValueError):
        return None
    same = (named.scheme, named.host, named.port) == (base.scheme, base.host, base.port)
    return url if same and not named.userinfo else None


def _fetched(data: Any, problem: str | None, name: str, number: int) -> Fetched:
    if problem is not None or not isinstance(data, dict) or not isinstance(data.get("result"), dict):
        return Fetched(None, None, f"{name}: {problem or f'line {number} is not a result object'}")
    result = data["result"]
    kind = result.get("type")
    if kind == "succeeded":
        return Fetched(data.get("custom_id"), Result(data=result.get("message")))
    if kind == "errored":
        found = result.get("error")
        error = found if isinstance(found, dict) else {}
        nested = error.get("error")
        inner = nested if isinstance(nested, dict) else error
        return Fetched(data.get("custom_id"), Result(error=str(inner.get("message") or json.dumps(inner)[:1000])))
    return Fetched(data.get("custom_id"), Result(error=f"the request {kind} before it ran"))
