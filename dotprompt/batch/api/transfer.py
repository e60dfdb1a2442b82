"""The HTTP calls of the batch APIs, through the provider model's own client (settings, key, redaction):
JSON in and out, a multipart upload, and downloads streamed to a file under a size cap."""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any, Final

import httpx

from ..._http.errors import ERROR_BODY_BYTES, read_capped, request_id
from ...errors import ModelError
from ...providers.http_model import HttpModel

__all__ = ["BATCH_RESULTS_MAX_BYTES", "call_json", "download", "result_lines"]

# A provider batch job's downloaded results, all lines together (one line is capped like a live reply).
BATCH_RESULTS_MAX_BYTES: Final = 4 * 1024 * 1024 * 1024

# A batch job's status reply is small; its results may be large, and are written to a file as they arrive.
STATUS_BYTES = 16 * 1024 * 1024


async def call_json(model: HttpModel, method: str, path: str, headers: Mapping[str, str], *,
                    body: Any = None, files: Any = None, data: Any = None) -> Any:
    """One request; the JSON reply, or a ModelError with the provider's explanation."""
    kwargs: dict[str, Any] = {"json": body} if body is not None else {"files": files, "data": data}
    try:
        async with model.http.client().stream(method, path, headers=dict(headers), **kwargs) as response:
            if response.status_code >= 400:
                raise model.http.status_error(response, await read_capped(response, ERROR_BODY_BYTES))
            raw = await read_capped(response, STATUS_BYTES + 1)
    except httpx.HTTPError as exc:
        raise _transport_error(model, path, exc) from exc
    if len(raw) > STATUS_BYTES:
        raise ModelError(f"the reply of {path} is larger than {STATUS_BYTES} bytes", provider=model.config.provider)
    try:
        return json.loads(raw)
    except ValueError:
        raise ModelError(f"the reply of {path} is not JSON: {raw[:300]!r}", provider=model.config.provider,
                         status=response.status_code, request_id=request_id(response)) from None


async def download(model: HttpModel, path: str, headers: Mapping[str, str], target: Path, cap: int) -> int:
    """Stream a result file to `target`; more than `cap` bytes is a ModelError (the partial file is kept)."""
    size = 0
    try:
        async with model.http.client().stream("GET", path, headers=dict(headers)) as response:
            if response.status_code >= 400:
                raise model.http.status_error(response, await read_capped(response, ERROR_BODY_BYTES))
            with open(target, "wb") as handle:
                async for chunk in response.aiter_bytes():
                    size += len(chunk)
                    if size > cap:
                        raise ModelError(f"the batch results at {path} are larger than {cap} bytes (raise "
                                         "max_response_bytes for this provider if that is expected)",
                                         provider=model.config.provider)
                    handle.write(chunk)
    except httpx.HTTPError as exc:
        raise _transport_error(model, path, exc) from exc
    return size


def _transport_error(model: HttpModel, path: str, exc: httpx.HTTPError) -> ModelError:
    return ModelError(f"calling {model.config.base_url}{path} failed: {type(exc).__name__}: {exc}",
                      provider=model.config.provider, retryable=True)


def result_lines(path: Path, line_cap: int) -> Iterator[tuple[int, Any, str | None]]:
    """(line number, parsed JSON or None, problem) per non-blank line of a downloaded JSON-lines file.

    A line longer than `line_cap` is skipped without being held in memory; a torn or non-JSON line
    is reported, not fatal: the rows it would have answered get a 'no result' error instead."""
    with open(path, "rb") as handle:
        number = 0
        while True:
            raw = handle.readline(line_cap + 1)
            if not raw:
                return
            number += 1
            if len(raw) > line_cap and not raw.endswith(b"\n"):
                while (rest := handle.readline(1024 * 1024)) and not rest.endswith(b"\n"):
                    pass
                yield number, None, f"line {number} is longer than {line_cap} bytes; skipped"
                continue
            if not raw.strip():
                continue
            try:
                yield number, json.loads(raw), None
            except (ValueError, RecursionError):  # RecursionError: nesting deeper than the parser goes
                yield number, None, f"line {number} is not JSON (torn or damaged): {raw[:120]!r}"
