"""A row's model request without a model call, and a downloaded result replayed as the model's reply.

Both run the ordinary generate loop (`Prompt.generate`), so a batch row is rendered, instructed and,
when its result comes back, parsed and validated exactly as a live call would be: the model given
to the loop is only swapped for one that records the request (`CaptureModel`) or answers with the
downloaded result (`ReplayModel`).
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from ...errors import BatchJobError, ModelError
from ...prompts.prompt import Prompt
from ...providers.base import ModelInfo
from ...types import GenerateRequest, ModelResponse

__all__ = ["CaptureModel", "ReplayModel", "Result", "capture_request"]


class _Captured(Exception):  # noqa: N818 - a signal, not an error: the request is what we came for
    """Stops the loop at its first model call; never leaves this module."""


class CaptureModel:
    """Stands in for `real`: records the first request and stops the run there."""

    def __init__(self, real: Any) -> None:
        self.name: str = real.name
        self.info: ModelInfo = real.info
        self.request: GenerateRequest | None = None

    async def generate(self, request: GenerateRequest, on_chunk: Any = None) -> ModelResponse:
        self.request = request
        raise _Captured


async def capture_request(prompt: Prompt, row_input: Any, real: Any, *, first_turn_only: bool) -> GenerateRequest:
    """The request the prompt sends for `row_input`; a prompt with tools is refused unless `first_turn_only`
    (then its results keep the model's tool requests, run with return_tool_requests)."""
    capture = CaptureModel(real)
    # An input that fails its schema, or a render error, raises before any call: that error is the row's.
    with contextlib.suppress(_Captured):
        await prompt.generate(row_input, model=capture, return_tool_requests=first_turn_only)
    assert capture.request is not None  # a run that ends without raising has called the model
    if capture.request.tools and not first_turn_only:
        names = ", ".join(tool.name for tool in capture.request.tools)
        raise BatchJobError(f"{prompt!r} uses tools ({names}): a batch request is one model call, so the tool loop "
                            "cannot run in a batch job; run it live (without --batch-api), or add "
                            "--return-tool-requests to send only the first turn and keep the model's tool requests")
    return capture.request


@dataclass
class Result:
    """One row's downloaded result: the provider's reply body, or an error in the provider's words."""

    data: Any = None
    error: str | None = None
    status: int | None = None


class ReplayModel:
    """Answers the loop's first call with a downloaded result (`parse` turns the provider's body into a
    ModelResponse, as the live provider does); a second call means the loop wanted another turn."""

    def __init__(self, real: Any, result: Result | None, parse: Callable[[Any, str], ModelResponse],
                 provider: str) -> None:
        self.name: str = real.name
        self.info: ModelInfo = real.info
        self.result = result
        self.parse = parse
        self.provider = provider
        self.calls = 0

    async def generate(self, request: GenerateRequest, on_chunk: Any = None) -> ModelResponse:
        self.calls += 1
        if self.calls > 1:
            raise ModelError("the batch result is one model call; the model asked for tools, and a batch job "
                             "cannot run them (run the row live)", provider=self.provider)
        if self.result is None:
            raise ModelError("no result for this row in the batch job (it expired or was cancelled before the row "
                             "ran); run --batch-api again to submit the rows that have none", provider=self.provider)
        if self.result.error is not None:
            raise ModelError(f"the batch job reported an error for this row: {self.result.error}",
                             status=self.result.status, provider=self.provider)
        return self.parse(self.result.data, self.provider)
