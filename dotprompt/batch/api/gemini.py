"""Gemini batch mode: the requests go inline in one `models/M:batchGenerateContent` call (the inline
form holds up to 20 MB of requests; larger inputs are split into several jobs by `--batch-size`),
the batch (`batches/ID`) is polled, and its inlined responses read from the finished batch."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

from ...providers.gemini import GeminiModel, from_response, to_body
from ...providers.http_model import HttpModel
from ...types import GenerateRequest
from .base import CANCELLED, ENDED, EXPIRED, FAILED, IN_PROGRESS, Fetched, JobStatus
from .capture import Result
from .ids import FROM_PROVIDER, checked_id
from .transfer import BATCH_RESULTS_MAX_BYTES, call_json, download

__all__ = ["GeminiBatch"]

STATES = {"BATCH_STATE_PENDING": IN_PROGRESS, "BATCH_STATE_RUNNING": IN_PROGRESS, "BATCH_STATE_SUCCEEDED": ENDED,
          "BATCH_STATE_FAILED": FAILED, "BATCH_STATE_CANCELLED": CANCELLED, "BATCH_STATE_EXPIRED": EXPIRED}


class GeminiBatch:
    provider = "googleai"
    max_requests = 10_000
    parse = staticmethod(from_response)

    def line(self, model: HttpModel, custom_id: str, request: GenerateRequest) -> dict[str, Any]:
        return {"request": to_body(request), "metadata": {"key": custom_id}}

    async def submit(self, model: HttpModel, lines: list[dict[str, Any]], label: str) -> str:
        assert isinstance(model, GeminiModel)
        path = model.path(False).replace(":generateContent", ":batchGenerateContent")
        body = {"batch": {"display_name": label[:128], "input_config": {"requests": {"requests": lines}}}}
        job = await call_json(model, "POST", path, model.headers(), body=body)
        name = job.get("name") if isinstance(job, dict) else None
        # The name is `batches/ID`; only the ID is kept (it goes back into `/batches/ID`).
        found = name.removeprefix("batches/") if isinstance(name, str) and name.startswith("batches/") else name
        return checked_id(found, "name", f"the reply of POST {path.split('?')[0]}",
                          "the batch may have been created: find it with the Gemini API's batch list and cancel it "
                          f"(its rows are submitted again next time); {FROM_PROVIDER}")

    async def poll(self, model: HttpModel, job_id: str) -> JobStatus:
        data = await call_json(model, "GET", f"/batches/{job_id}", model.headers())
        state = str((data.get("metadata") or {}).get("state", "BATCH_STATE_PENDING"))
        return JobStatus(STATES.get(state, IN_PROGRESS), state)

    async def fetch(self, model: HttpModel, job_id: str, status: JobStatus, folder: Path) -> AsyncIterator[Fetched]:
        # The results are inside the batch itself: downloaded to a file under the cap, then read.
        target = folder / f"{job_id}.batch.json"
        await download(model, f"/batches/{job_id}", model.headers(), target, BATCH_RESULTS_MAX_BYTES)
        try:
            data = json.loads(target.read_bytes())
        except ValueError:
            yield Fetched(None, None, f"{target.name}: the finished batch is not JSON")
            return
        for item in _inlined(data):
            yield _fetched(item)


def _inlined(data: Any) -> list[Any]:
    for holder in ((data.get("response") if isinstance(data, dict) else None),
                   ((data.get("metadata") or {}).get("output") if isinstance(data, dict) else None)):
        if isinstance(holder, dict):
            found = (holder.get("inlinedResponses") or {})
            found = found.get("inlinedResponses") if isinstance(found, dict) else found
            if isinstance(found, list):
                return found
    return []


def _fetched(item: Any) -> Fetched:
    if not isinstance(item, dict):
        return Fetched(None, None, "an inlined response is not an object")
    key = (item.get("metadata") or {}).get("key") if isinstance(item.get("metadata"), dict) else None
    if isinstance(item.get("response"), dict):
        return Fetched(key, Result(data=item["response"]))
    found = item.get("error")
    error = found if isinstance(found, dict) else {"message": "no response"}
    code = error.get("code")
    status = code if isinstance(code, int) else None
    return Fetched(key, Result(error=str(error.get("message") or json.dumps(error)[:1000]), status=status))
