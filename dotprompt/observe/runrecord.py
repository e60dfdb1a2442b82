"""One prompt run as the run log records it: what was sent, then the response or the error.

`Prompt.generate` wraps each run in `logged_run(...)`: the entry is queued when the run ends,
however it ends. What started the run (`source`: api, run, batch, test, and details such as a
batch row's key or a test case's name) comes from `log_source`, set by the command or batch that
runs the prompt. A run's cost is stored when it can be priced (`cost.price_response`), and its
project (`settings.project_root`: the folder of the nearest pyproject.toml, else the working folder).
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import time
import uuid
from collections.abc import Iterator
from typing import Any

from ..errors import DotpromptError
from ..identity import PromptIdentity
from ..providers.registry import default_model_name
from ..settings import project_root
from .cost import price_response
from .runlog import RunLog

__all__ = ["NOT_LOGGED", "LoggedRun", "log_source", "log_summary", "logged_run", "pending_interrupts", "pending_summary"]

_source: contextvars.ContextVar[tuple[str, dict[str, Any] | None, str]] = contextvars.ContextVar(
    "dotprompt_log_source", default=("api", None, "all"))


@contextlib.contextmanager
def log_source(source: str, *, keep: str = "all", **context: Any) -> Iterator[None]:
    """Runs started inside this block are logged as coming from `source` (with `context` beside it);
    `keep` says which: "all", "failed" (a batch's successful rows are in its output file) or "none"."""
    token = _source.set((source, context or None, keep))
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
    """Filled as the run goes; queued to the log when its block ends (with the error, if one left it).

    The entry is built then, and only if it is kept: a batch that logs only its failures pays next to
    nothing for a row that succeeds (logging every row cost a batch a twentieth of its rate)."""

    def __init__(self, run_log: RunLog, identity: PromptIdentity | None, input: Any, action: Any, model: Any) -> None:
        self.run_log = run_log
        self.identity, self.input, self.action, self.model = identity, input, action, model
        self.source = _source.get()
        self.started = time.time()
        self.clock = time.perf_counter()
        self.response: Any = None

    def __enter__(self) -> LoggedRun:
        return self

    def ended(self, response: Any) -> Any:
        self.response = response
        return response

    def __exit__(self, kind: Any, exc: BaseException | None, tb: Any) -> None:
        latency = round((time.perf_counter() - self.clock) * 1000, 1)
        source, context, keep = self.source
        pending = pending_interrupts(self.response) if exc is None else []
        if keep == "none" or (keep == "failed" and exc is None and not pending):
            return
        interrupted = isinstance(exc, (asyncio.CancelledError, KeyboardInterrupt))
        if interrupted and source == "batch":
            return  # not a failure: the row runs again on resume, and the batch's own entry says it was interrupted
        identity, action = self.identity, self.action
        entry: dict[str, Any] = {
            "run_id": uuid.uuid4().hex, "started": self.started, "source": source, "context": context,
            "model": _model_name(self.model, action.model), "input": _plain(self.input), "request": action.to_dict(),
            "status": "ok", "latency_ms": latency, "project": _project()}
        if identity is not None:
            entry.update(prompt=identity.name, variant=identity.variant, prompt_hash=identity.hash,
                         partials=dict(identity.partials) or None)
        if self.response is not None:
            self._answered(entry, self.response)
        if pending:  # not a success: the run waits for answers (resume=), its output is not there yet
            entry.update(status="interrupted", error=f"waiting for {pending_summary(pending)}")
        if interrupted:
            entry.update(status="error", error_type="Interrupted", error=_why_interrupted(exc))
        elif exc is not None:
            self._failed(entry, exc)
        self.run_log.add(entry)

    def _answered(self, entry: dict[str, Any], response: Any) -> None:
        entry["response"] = self._conversation(len(self.action.messages), response.messages, response)
        if getattr(response, "grounding", None) is not None:  # where each output value is in the input
            entry["response"]["grounding"] = response.grounding.to_dict()
        entry["output"] = _plain(response.output)
        entry["repairs"] = len(response.output_repairs)
        entry["repair_details"] = [getattr(r, "detail", str(r)) for r in response.output_repairs] or None
        _usage(entry, response)

    def _failed(self, entry: dict[str, Any], exc: BaseException) -> None:
        entry.update(status="error", error_type=type(exc).__name__, error=str(exc))
        failed = getattr(exc, "response", None)
        messages = getattr(exc, "messages", None) or getattr(failed, "messages", None) or []
        if messages or getattr(exc, "text", None):  # never lose what the model said before it failed
            entry["response"] = self._conversation(len(self.action.messages), messages, failed,
                                                   getattr(exc, "text", None))
        if failed is not None and self.response is None:  # what the calls cost, and why the reply ended (a token cap?)
            _usage(entry, failed)

    @staticmethod
    def _conversation(sent: int, messages: list[Any], response: Any, text: str | None = None) -> dict[str, Any]:
        """The messages the run added to the `sent` ones (model replies, tool calls and results)."""
        out: dict[str, Any] = {"messages": [m.to_dict() for m in messages[sent:]]}
        if response is not None:
            out["finishReason"] = response.finish_reason
            if response.finish_message:
                out["finishMessage"] = response.finish_message
        if text is not None:
            out["text"] = text
        return out


def _why_interrupted(exc: BaseException | None) -> str:
    """A cancelled run's reason when its canceller gave one (`task.cancel("cancelled from the page")`)."""
    reason = exc.args[0] if isinstance(exc, asyncio.CancelledError) and exc.args else None
    if isinstance(reason, str) and reason:
        return f"interrupted before the run ended: {reason}"
    return "interrupted before the run ended (Ctrl-C, or its task was cancelled)"


def pending_interrupts(response: Any) -> list[dict[str, Any]]:
    """The tool requests a run stopped on (exit C), as plain data: name, ref, input, and the interrupt's
    metadata; empty for a run that finished."""
    if response is None or getattr(response, "finish_reason", None) != "interrupted":
        return []
    pending = []
    for part in response.interrupts:
        request = part.tool_request
        marker = (part.metadata or {}).get("interrupt")
        pending.append({"name": request.name, "ref": request.ref, "input": _plain(request.input),
                        **({"metadata": marker} if isinstance(marker, dict) else {})})
    return pending


def pending_summary(pending: list[dict[str, Any]]) -> str:
    """`approve (ref a1), approve (ref a2)`: the requests a run waits on, on one line."""
    return ", ".join(f"{p['name']}" + (f" (ref {p['ref']})" if p.get("ref") else "") for p in pending)


def _usage(entry: dict[str, Any], response: Any) -> None:
    """The finish reason, usage and cost of a run's response (a failed run's too: its calls were paid for)."""
    entry["finish_reason"] = getattr(response, "finish_reason", None)
    usage = getattr(response, "usage", None)
    if usage is None:
        return
    entry.update(usage=usage.to_dict(), input_tokens=usage.input_tokens, output_tokens=usage.output_tokens)
    cost = price_response(entry["model"] or "", response)
    if cost.usd is not None:
        entry["cost"] = float(cost.usd)


def log_summary(run_log: RunLog | None, source: str, identity: PromptIdentity | None, model: str | None, *,
                input: Any, output: Any, seconds: float, error: str | None = None, cost: float | None = None,
                error_type: str = "BatchRowsFailed") -> None:
    """One entry for a whole job (a batch): what it ran on, what it made, and how it ended."""
    if run_log is None:
        return
    entry: dict[str, Any] = {"run_id": uuid.uuid4().hex, "started": time.time() - seconds, "source": source,
                             "model": model, "input": input, "output": output, "latency_ms": round(seconds * 1000, 1),
                             "status": "error" if error else "ok", "cost": cost, "project": _project()}
    if error:
        entry.update(error_type=error_type, error=error)
    if identity is not None:
        entry.update(prompt=identity.name, variant=identity.variant, prompt_hash=identity.hash,
                     partials=dict(identity.partials) or None)
    run_log.add(entry)


def _project() -> str | None:
    """The project the run belongs to (`dotprompt logs` lists the current project's runs); None if the
    working folder is gone."""
    try:
        return str(project_root())
    except OSError:
        return None


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
