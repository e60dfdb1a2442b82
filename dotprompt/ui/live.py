"""Runs started from the page: each one a list of events that any number of event streams replay and follow.

A run is started by a POST (with the CSRF token) and followed with `GET /api/live/{id}/events`, a
server-sent event stream: every chunk as the model sends it (its text, and the output parsed so far),
the tool results of each turn, then the end (the validated output, usage, cost, interrupts) or the
error. Events are kept, so a stream opened late (or reopened after a dropped connection, with
Last-Event-ID) sees the whole run. An interrupted run is resumed with answers for its interrupts: the
resumed run is a new live run that continues the same conversation.

Runs cost money and hold a provider stream open, so they are bounded: at most UI_MAX_ACTIVE_RUNS run
at once (one more is refused, 429); a run ends early, with a `cancelled` event, when the page asks,
when it is pushed out of the table of UI_KEEP_RUNS runs, when no event stream has followed it for
UI_ORPHAN_GRACE_SECONDS (its tab was closed), and when the server stops. Cancelling the task closes
the provider's stream.
"""

from __future__ import annotations

import asyncio
import json
import secrets
from collections import OrderedDict
from collections.abc import AsyncIterator, Iterator
from contextlib import contextmanager
from typing import Any

from starlette.exceptions import HTTPException

from .._util.redact import known_secrets
from ..batch.runner import model_name
from ..errors import DotpromptError, UsageError
from ..generation.response import Chunk, GenerateResponse
from ..observe.cost import price_response
from ..observe.runrecord import log_source
from ..prompts.library import PromptLibrary
from ..prompts.prompt import Prompt
from .holdback import HeldText
from .limits import UI_HEARTBEAT_SECONDS as HEARTBEAT_SECONDS
from .limits import UI_KEEP_RUNS as KEEP_RUNS
from .limits import UI_MAX_ACTIVE_RUNS as MAX_ACTIVE_RUNS
from .limits import UI_ORPHAN_GRACE_SECONDS as ORPHAN_GRACE_SECONDS
from .safejson import dumps

__all__ = ["HEARTBEAT_SECONDS", "KEEP_RUNS", "MAX_ACTIVE_RUNS", "ORPHAN_GRACE_SECONDS", "LiveRun", "LiveRuns",
           "chunk_event", "done_event", "error_event", "sse"]


class LiveRun:
    def __init__(self, prompt: Prompt, input: Any, context: Any, model: str | None) -> None:
        self.id = secrets.token_urlsafe(16)
        self.prompt, self.input, self.context, self.model = prompt, input, context, model
        self.events: list[dict[str, Any]] = []
        self.response: GenerateResponse | None = None
        self.finished = False
        self._changed = asyncio.Event()
        self.task: asyncio.Task[None] | None = None
        self.followers = 0  # event streams open on this run
        self._secrets: list[str] | None = None
        self._with_output: dict[int, dict[str, Any]] = {}  # message index -> its newest chunk event with an output
        self._held = HeldText()
        self._cancel_reason = "cancelled"
        self._orphan_timer: asyncio.TimerHandle | None = None

    def secrets(self, batch: list[tuple[int, dict[str, Any]]]) -> list[str]:
        """What to redact from `batch`. Reading the environment for every chunk cost more than the rest of
        the stream, so a run's chunks share the list read at its first chunk (the model, and so its key,
        exists by then); tool results, the end and errors read it afresh."""
        if self._secrets is not None and all(event["type"] == "chunk" for _, event in batch):
            return self._secrets
        return known_secrets()

    def add(self, event: dict[str, Any]) -> None:
        for held in self._held.flush():  # a message's held end goes out before whatever follows it
            self._add_chunk(held)
        self.events.append(event)
        self._changed.set()

    def add_chunk(self, event: dict[str, Any]) -> None:
        """A chunk's event, with its message's end held back while it could begin a secret (holdback.py)."""
        for safe in self._held.chunk(event, self._stream_secrets()):
            self._add_chunk(safe)

    def _stream_secrets(self) -> list[str]:
        if self._secrets is None:
            self._secrets = known_secrets()
        return self._secrets

    def _add_chunk(self, event: dict[str, Any]) -> None:
        """A chunk's event; the message's chunk before it drops its output. `sse` sends only the newest
        output of a message in any batch, and a batch always holds the newest events, so no stream
        misses it; kept on every event, a reply's outputs would cost memory quadratic in its length."""
        if "output" in event:
            previous = self._with_output.get(event["index"])
            if previous is not None:
                del previous["output"]
            self._with_output[event["index"]] = event
        self.events.append(event)
        self._changed.set()

    async def run(self, **overrides: Any) -> None:
        name = model_name(self.prompt, self.model)
        self.add({"type": "start", "prompt": self.prompt.name, "variant": self.prompt.variant, "model": name,
                  "resumed": "resume" in overrides})
        try:
            with log_source("ui"):
                async for item in self.prompt.generate_stream(self.input, context=self.context, model=self.model, **overrides):
                    if isinstance(item, Chunk):
                        event = chunk_event(item)
                        if event["type"] == "chunk":
                            self.add_chunk(event)
                        else:
                            self.add(event)
                    else:
                        self.response = item
                        self.add(done_event(item, name, has_schema=bool(self.prompt.metadata.get("output", {}).get("schema"))))
        except DotpromptError as exc:
            self.add(error_event(exc))
        except asyncio.CancelledError:  # cancel(): the provider's stream is closed by now
            self.add({"type": "cancelled", "reason": self._cancel_reason})
        except Exception as exc:  # a tool's own bug: shown, never a dead stream
            self.add(error_event(exc))
        finally:
            self.finished = True
            self.watch(None)
            self._changed.set()

    def cancel(self, reason: str) -> bool:
        """Stop the run (its task, and with it the provider's stream); False when it had ended already."""
        if self.finished or self.task is None or self.task.done():
            return False
        self._cancel_reason = reason
        self.task.cancel(reason)  # the reason reaches the run log's entry
        return True

    def ended(self, task: asyncio.Task[None]) -> None:
        """The task is done: a task cancelled before it began never ran `run`'s own ending."""
        if not self.finished:
            self.add({"type": "cancelled", "reason": self._cancel_reason})
            self.finished = True
            self._changed.set()

    @contextmanager
    def followed(self, grace: float) -> Iterator[None]:
        """An event stream is open on the run while the block runs; when the last one closes, the run has
        `grace` seconds to be followed again before it is cancelled (a reload reconnects well within)."""
        self.followers += 1
        self.watch(None)
        try:
            yield
        finally:
            self.followers -= 1
            if not self.followers:
                self.watch(grace)

    def watch(self, grace: float | None) -> None:
        """Start (seconds) or stop (None) the countdown to cancelling a run nobody follows."""
        if self._orphan_timer is not None:
            self._orphan_timer.cancel()
            self._orphan_timer = None
        if grace is not None and not self.finished:
            reason = f"no page followed the run for {grace:g} s (its tab was closed)"
            self._orphan_timer = asyncio.get_running_loop().call_later(grace, self.cancel, reason)

    async def follow(self, start: int = 0) -> AsyncIterator[list[tuple[int, dict[str, Any]]]]:
        """Batches of (number, event) from `start` on, as they come, until the run has ended."""
        position = start
        while True:
            self._changed.clear()
            if position < len(self.events):
                batch = list(enumerate(self.events[position:], position))
                position += len(batch)
                yield batch
                continue
            if self.finished:
                return
            try:
                await asyncio.wait_for(self._changed.wait(), HEARTBEAT_SECONDS)
            except TimeoutError:
                yield []


def chunk_event(chunk: Chunk) -> dict[str, Any]:
    event: dict[str, Any] = {"type": "tool" if chunk.role == "tool" else "chunk", "index": chunk.index,
                             "role": chunk.role, "text": chunk.text}
    requests = [r.to_dict() for r in chunk.tool_requests]
    if requests:
        event["toolRequests"] = requests
    if chunk.role == "tool":
        event["parts"] = [p.to_dict() for p in chunk.content]
    elif chunk.role == "model":
        output = chunk.output
        if output is not None and not isinstance(output, str):
            event["output"] = output
    return event


def done_event(response: GenerateResponse, model: str | None, *, has_schema: bool) -> dict[str, Any]:
    cost = price_response(model or "", response)
    output = response.output
    return {"type": "done", "finishReason": response.finish_reason, "finishMessage": response.finish_message,
            "text": response.text, "output": output.model_dump(mode="json") if hasattr(output, "model_dump") else output,
            "validated": has_schema and response.finish_reason != "interrupted",  # the loop raises on an invalid one
            "usage": response.usage.to_dict() if response.usage else None, "cost": cost.to_dict(),
            "repairs": [getattr(r, "detail", str(r)) for r in response.output_repairs],
            "interrupts": [p.to_dict() for p in response.interrupts],
            "grounding": response.grounding.to_dict() if response.grounding is not None else None,
            "messages": [m.to_dict() for m in response.messages]}


def error_event(exc: BaseException) -> dict[str, Any]:
    error: dict[str, Any] = {"type": type(exc).__name__, "message": str(exc)}
    for name in ("path", "line", "text"):
        value = getattr(exc, name, None)
        if isinstance(value, str | int) and not isinstance(value, bool):
            error[name] = value
    return {"type": "error", "error": error}


def sse(batch: list[tuple[int, dict[str, Any]]], secrets: list[str] | None = None) -> str:
    """A batch of events as server-sent events. Only the last chunk of each message in a batch keeps
    its parsed output: a reader that fell behind gets the newest partial output, not every one."""
    if not batch:
        return ": keep-alive\n\n"
    last_output = {e["index"]: n for n, e in batch if e.get("type") == "chunk" and "output" in e}
    lines = []
    for number, event in batch:
        if event.get("type") == "chunk" and "output" in event and last_output.get(event["index"]) != number:
            event = {k: v for k, v in event.items() if k != "output"}
        lines.append(f"id: {number}\nevent: {event['type']}\ndata: {dumps(event, secrets)}\n\n")
    return "".join(lines)


class LiveRuns:
    """The runs the page started, newest kept."""

    def __init__(self, library: PromptLibrary, *, keep: int = KEEP_RUNS, max_active: int = MAX_ACTIVE_RUNS,
                 grace: float = ORPHAN_GRACE_SECONDS) -> None:
        self.library = library
        self.keep, self.max_active, self.grace = keep, max_active, grace
        self.runs: OrderedDict[str, LiveRun] = OrderedDict()

    def get(self, run_id: str) -> LiveRun | None:
        return self.runs.get(run_id)

    def running(self) -> list[LiveRun]:
        return [live for live in self.runs.values() if not live.finished]

    def start(self, name: str, variant: str | None, input: Any, context: Any, model: str | None,
              **overrides: Any) -> LiveRun:
        if len(self.running()) >= self.max_active:
            raise HTTPException(429, f"{self.max_active} runs are running already, the most the workbench runs at "
                                     "once: wait for one to end or cancel one")
        prompt = self.library.load(name, variant)
        live = LiveRun(prompt, input, context, model or None)
        self.runs[live.id] = live
        self._forget_oldest()
        live.task = asyncio.get_running_loop().create_task(live.run(**overrides))
        live.task.add_done_callback(live.ended)
        live.watch(self.grace)  # until a page opens its events
        return live

    def _forget_oldest(self) -> None:
        """Keep `keep` runs: the oldest ended ones go first; a running one pushed out is cancelled."""
        while len(self.runs) > self.keep:
            older = list(self.runs.values())[:-1]
            gone = next((live for live in older if live.finished), older[0])
            del self.runs[gone.id]
            gone.cancel(f"pushed out of the workbench's {self.keep} live runs by newer ones")

    def stop(self) -> None:
        """The server is stopping: every run is cancelled, so its stream ends and its provider's closes."""
        for live in self.runs.values():
            live.cancel("the workbench server stopped")

    def resume(self, run_id: str, respond: list[dict[str, Any]], restart: list[dict[str, Any]]) -> LiveRun:
        """A new run continuing `run_id`'s interrupted conversation with these answers and restarts."""
        before = self.runs.get(run_id)
        if before is None or before.response is None or before.response.finish_reason != "interrupted":
            raise UsageError("only a run that ended in an interrupt can be resumed")
        asked = {(p.tool_request.name, p.tool_request.ref): p.tool_request for p in before.response.interrupts
                 if p.tool_request is not None}
        answers = [{"name": r["name"], "ref": r.get("ref"), "output": r.get("output")} for r in respond
                   if _asked(asked, r)]
        again = [asked[(r["name"], r.get("ref"))].to_dict() for r in restart if _asked(asked, r)]
        _each_once(asked, [*respond, *restart])
        prompt = before.prompt
        return self.start(prompt.name or "", prompt.variant, before.input, before.context, before.model,
                          messages=before.response.messages, resume={"respond": answers, "restart": again})


def _asked(asked: dict[tuple[str, str | None], Any], entry: Any) -> bool:
    if not isinstance(entry, dict):
        raise UsageError("each answer or restart is an object {name, ref}")
    key = (entry.get("name"), entry.get("ref"))
    if key not in asked:
        raise UsageError(f"the run has no interrupted tool request {json.dumps(list(key))}")
    return True


def _each_once(asked: dict[tuple[str, str | None], Any], given: list[dict[str, Any]]) -> None:
    """Every interrupted request answered or restarted, and only once: the loop cannot go on otherwise."""
    keys = [(entry.get("name"), entry.get("ref")) for entry in given]
    twice = sorted({key for key in keys if keys.count(key) > 1}, key=str)
    if twice:
        raise UsageError(f"{_named(twice)} is answered or restarted twice: choose one, not both")
    missing = [key for key in asked if key not in keys]
    if missing:
        raise UsageError(f"the run stopped on {len(asked)} tool requests; {_named(missing)} has no answer: "
                         "answer or restart each of them")


def _named(keys: list[tuple[Any, Any]]) -> str:
    return ", ".join(f"{name}({ref})" if ref else str(name) for name, ref in keys)
