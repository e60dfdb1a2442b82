"""What every provider's batch API module provides, and the status names jobs are reduced to."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from ...providers.http_model import HttpModel
from ...types import GenerateRequest, ModelResponse
from .capture import Result

__all__ = ["CANCELLED", "ENDED", "EXPIRED", "FAILED", "FINAL", "IN_PROGRESS", "BatchProvider", "Fetched", "JobStatus"]

# A job is one of these, whatever the provider calls it.
IN_PROGRESS, ENDED, EXPIRED, FAILED, CANCELLED = "in_progress", "ended", "expired", "failed", "cancelled"
FINAL = frozenset({ENDED, EXPIRED, FAILED, CANCELLED})


@dataclass
class JobStatus:
    state: str
    detail: str = ""  # the provider's own status word and counts, for the person waiting
    info: dict[str, Any] = field(default_factory=dict)  # what the download needs (file ids, a results URL)


@dataclass
class Fetched:
    """One line of a downloaded result: a row's result, or a problem with the line itself."""

    custom_id: str | None
    result: Result | None
    problem: str | None = None


class BatchProvider(Protocol):
    provider: str
    max_requests: int  # the provider's limit of requests per job

    # Read-only, not a plain attribute: a settable one would have to match each provider's reader
    # exactly, and those also take an optional `structured=` that the replay does not pass.
    @property
    def parse(self) -> Callable[[Mapping[str, Any], str], ModelResponse]:
        """The live provider's reader of a reply (a downloaded result holds the same reply)."""
        ...

    def line(self, model: HttpModel, custom_id: str, request: GenerateRequest) -> dict[str, Any]: ...

    async def submit(self, model: HttpModel, lines: list[dict[str, Any]], label: str) -> str: ...

    async def poll(self, model: HttpModel, job_id: str) -> JobStatus: ...

    def fetch(self, model: HttpModel, job_id: str, status: JobStatus, folder: Path) -> AsyncIterator[Fetched]: ...
