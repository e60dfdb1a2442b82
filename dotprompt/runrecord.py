"""One prompt run as the run log records it: what was sent, then the response or the error.

`Prompt.generate` wraps each run in `logged_run(...)`: the entry is queued when the run ends,
however it ends. What started the run (`source`: api, run, batch, test, and details such as a
batch row's key or a test case's name) comes from `log_source`, set by the command or batch that
runs the prompt. A run's cost is stored when it can be priced (`cost.price_response`).
"""

from __future__ import annotations

import contextlib
import contextvars
import time
import uuid
from collections.abc import Iterator
from typing import Any

from .cost import price_response
from .errors import DotpromptError
from .identity import PromptIdentity
from .models.registry import default_model_name
from .runlog import RunLog

__all__ = ["NOT_LOGGED", "LoggedRun", "log_source", "logged_run"]

_source: contextvars.ContextVar[tuple[str, dict[str, Any] | None]] = contextvars.ContextVar(
    "dotprompt_log_source", default=("api", None))


@contextlib.contextmanager
def log_source(source: str, **context: Any) -> Iterator[None]:
    """Runs started inside this block are logged as coming from `source` (with `context` beside it)."""
    token = _source.set((source, context or None))
    try:
        yield
    finally:
        _source.reset(token)


class _NotLogged:
    """The record of a run when logging is off: shared, does nothing."""

    def __enter__(self) -> _NotLogged:
        return self

    def __exit__(self, *exc: object) -> None:
        return None

    def ended(self, response: Any) -> Any:
        return response


NOT_LOGGED = _NotLogged()


def logged_run(run_log: RunLog | None, identity: PromptIdentity | None, input: Any, action: Any,
               model: Any) -> LoggedRun | _NotLogged:
    """The record of one run about to start, or NOT_LOGGED when the library does not log."""
    if run_log is None:
        return NOT_LOGGED
    return LoggedRun(run_log, identity, input, action, model)


class LoggedRun:
    """Filled as the run goes; queued to the log when its block ends (with the error, if one left it)."""

    def __init__(self, run_log: RunLog, identity: PromptIdentity | None, input: Any, action: Any, model: Any) -> None:
        self.run_log = run_log
        self.sent = len(action.messages)
        source, context = _source.get()
        self.entry: dict[str, Any] = {
            "run_id": uuid.uuid4().hex, "started": time.time(), "source": source, "context": context,
            "model": _model_name(model, action.model), "input": _plain(input), "request": action.to_dict(),
            "status": "ok"}
        if identity is not None:
            self.entry.update(prompt=identity.name, variant=identity.variant, prompt_hash=identity.hash,
                              partials=dict(identity.partials) or None)
        self.clock = time.perf_counter()

    def __enter__(self) -> LoggedRun:
        return self

    def ended(self, response: Any) -> Any:
        entry = self.entry
        entry["response"] = self._conversation(response.messages, response)
        entry["output"] = _plain(response.output)
        entry["repairs"] = len(response.output_repairs)
        entry["repair_details"] = [getattr(r, "detail", str(r)) for r in response.output_repairs] or None
        entry["finish_reason"] = response.finish_reason
        usage = response.usage
        if usage is not None:
            entry.update(usage=usage.to_dict(), input_tokens=usage.input_tokens, output_tokens=usage.output_tokens)
        cost = price_response(entry["model"] or "", response) if usage is not None else None
        if cost is not None and cost.usd is not None:
            entry["cost"] = float(cost.usd)
        return response

    def __exit__(self, kind: Any, exc: BaseException | None, tb: Any) -> None:
        entry = self.entry
        entry["latency_ms"] = round((time.perf_counter() - self.clock) * 1000, 1)
        if exc is not None:
            entry.update(status="error", error_type=type(exc).__name__, error=str(exc))
            response = getattr(exc, "response", None)
            messages = getattr(exc, "messages", None) or getattr(response, "messages", None) or []
            if messages or getattr(exc, "text", None):  # never lose what the model said before it failed
                entry["response"] = self._conversation(messages, response, getattr(exc, "text", None))
        self.run_log.add(entry)

    def _conversation(self, messages: list[Any], response: Any, text: str | None = None) -> dict[str, Any]:
        """The messages the run added to what was sent (model replies, tool calls and results)."""
        out: dict[str, Any] = {"messages": [m.to_dict() for m in messages[self.sent:]]}
        if response is not None:
            out["finishReason"] = response.finish_reason
            if response.finish_message:
                out["finishMessage"] = response.finish_message
        if text is not None:
            out["text"] = text
        return out


def _model_name(model: Any, named: str | None) -> str | None:
    if model is None and named is None:
        try:
            return default_model_name()
        except DotpromptError:
            return None  # the run fails the same way; its error is logged
    if model is None:
        return named
    return model if isinstance(model, str) else getattr(model, "name", None)


def _plain(value: Any) -> Any:
    return value.model_dump(mode="json") if hasattr(value, "model_dump") else value
