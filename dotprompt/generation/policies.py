"""The built-in middleware: `retry`, `fallback` and `validate_and_retry`, usable by name in `use:`."""

from __future__ import annotations

import asyncio
import random
from collections.abc import Awaitable, Callable
from typing import Any

from .._http.errors import RETRYABLE_STATUSES
from ..errors import ModelError, OutputValidationError, UsageError
from ..providers.base import Model
from ..providers.registry import resolve_model
from ..types import GenerateRequest, Message, ModelResponse, Part, Usage
from .middleware import GenerateNext, ModelNext, TurnEnvelope, model_override
from .options import GenerateActionOptions
from .response import Attempt, GenerateResponse

__all__ = ["BUILT_IN", "fallback", "retry", "validate_and_retry"]


def _whole(value: Any, least: int) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value >= least


def _number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool) and 0 <= value < float("inf")


class retry:  # noqa: N801 - used like a function: use=[retry(max_retries=2)]
    """Retry failed model calls: exponential backoff with jitter, honouring the provider's retry-after."""

    def __init__(self, max_retries: int = 3, initial_delay: float = 1.0, max_delay: float = 30.0, backoff: float = 2.0,
                 jitter: float = 0.25, statuses: frozenset[int] = RETRYABLE_STATUSES,
                 sleep: Callable[[float], Awaitable[Any]] = asyncio.sleep) -> None:
        # Checked here, so a `use:` entry fails at load: a negative count would end in no attempt at all.
        if not _whole(max_retries, 0):
            raise UsageError(f"retry(): max_retries must be a whole number of 0 or more, got {max_retries!r}")
        for name, value in (("initial_delay", initial_delay), ("max_delay", max_delay), ("backoff", backoff),
                            ("jitter", jitter)):
            if not _number(value):
                raise UsageError(f"retry(): {name} must be a number of 0 or more, got {value!r}")
        self.max_retries = max_retries
        self.initial_delay = initial_delay
        self.max_delay = max_delay
        self.backoff = backoff
        self.jitter = jitter
        self.statuses = statuses
        self.sleep = sleep
        self.delays: list[float] = []  # what it waited, for logs and tests

    async def model(self, request: GenerateRequest, next_: ModelNext) -> ModelResponse:
        for attempt in range(self.max_retries + 1):
            try:
                return await next_(request)
            except ModelError as exc:
                if attempt == self.max_retries or not self._retryable(exc):
                    raise
                delay = self.delay(attempt, exc.retry_after)
                self.delays.append(delay)
                await self.sleep(delay)
        raise AssertionError("unreachable")

    def _retryable(self, exc: ModelError) -> bool:
        return exc.retryable or (exc.status is not None and exc.status in self.statuses)

    def delay(self, attempt: int, retry_after: float | None) -> float:
        if retry_after is not None:
            return min(max(retry_after, 0.0), self.max_delay)
        base = min(self.initial_delay * self.backoff**attempt, self.max_delay)
        return base * (1 + self.jitter * random.random())


class fallback:  # noqa: N801
    """On a model failure, try the next model in order; the last failure is raised."""

    def __init__(self, *models: str | Model, on: Callable[[ModelError], bool] = lambda exc: True) -> None:
        if not models:
            raise UsageError("fallback() needs at least one model to fall back to")
        self.models = models
        self.on = on
        self.used: list[str] = []

    async def model(self, request: GenerateRequest, next_: ModelNext) -> ModelResponse:
        try:
            return await next_(request)
        except ModelError as exc:
            if not self.on(exc):
                raise
            error: ModelError = exc
        for candidate in self.models:
            model = resolve_model(candidate)
            token = model_override.set(model)
            try:
                response = await next_(request)
                self.used.append(model.name)
                return response
            except ModelError as exc:
                error = exc
            finally:
                model_override.reset(token)
        raise error


class validate_and_retry:  # noqa: N801
    """When the final output fails its schema, show the model the errors and ask again.

    Bounded twice over: at most `max_attempts` re-asks, and the context never grows with them —
    each re-ask sends the original conversation plus only the LAST failed attempt and its errors.
    The failed attempts (text, problems, usage) are reported on `response.attempts`.
    """

    def __init__(self, max_attempts: int = 2) -> None:
        if not _whole(max_attempts, 1):
            raise UsageError(f"validate_and_retry(max_attempts) must be a whole number of at least 1, got {max_attempts!r}")
        self.max_attempts = max_attempts

    async def generate(self, envelope: TurnEnvelope, next_: GenerateNext) -> GenerateResponse:
        if envelope.current_turn != 0:
            return await next_(envelope)
        original = envelope.request.messages
        attempts: list[Attempt] = []
        current = envelope
        calls = 0  # model calls the earlier attempts made: the run's usage list holds them all
        while True:
            try:
                response = await next_(current)
            except OutputValidationError as exc:
                own = exc.response.usage_per_call[calls:] if exc.response is not None else []
                calls += len(own)
                attempts.append(Attempt(exc.text, [f"{p.path}: {p.message}" for p in exc.problems], Usage.total(own)))
                if len(attempts) > self.max_attempts:
                    exc.attempts = attempts  # type: ignore[attr-defined]
                    raise
                tail = exc.messages[len(current.request.messages):]  # this attempt's own turns only
                current = TurnEnvelope(_with_feedback(envelope.request, original, tail, exc), 0, envelope.message_index)
                continue
            response.attempts = attempts
            return response


def _with_feedback(request: GenerateActionOptions, original: list[Message], tail: list[Message],
                   exc: OutputValidationError) -> GenerateActionOptions:
    problems = "\n".join(f"- {p.path}: {p.message}" for p in exc.problems)
    feedback = Message(role="user", content=[Part(
        text=f"Your previous reply did not match the required output:\n{problems}\n"
             "Reply again with only the corrected output.",
        metadata={"purpose": "validation-feedback"})])
    return request.model_copy(update={"messages": [*original, *tail, feedback]})


BUILT_IN: dict[str, Callable[..., Any]] = {"retry": retry, "fallback": fallback, "validate_and_retry": validate_and_retry}
