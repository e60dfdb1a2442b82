"""Runs started from the page: each one a list of events that any number of event streams replay and follow.

A run is started by a POST (with the CSRF token) and followed with `GET /api/live/{id}/events`, a
server-sent event stream: every chunk as the model sends it (its text, and the output parsed so far),
the tool results of each turn, then the end (the validated output, usage, cost, interrupts) or the
error. Events are kept, so a stream opened late (or reopened after a dropped connection, with
Last-Event-ID) sees the whole run. An interrupted run is resumed with answers for its interrupts: the
resumed run is a new live run that continues the same conversation.
"""

from __future__ import annotations

import asyncio
import json
import secrets
from collections import OrderedDict
from collections.abc import AsyncIterator
from typing import Any

from .._util.redact import known_secrets
from ..batch.runner import model_name
from ..errors import DotpromptError, UsageError
from ..generation.response import Chunk, GenerateResponse
from ..observe.cost import price_response
from ..observe.runrecord import log_source
from ..prompts.library import PromptLibrary
from ..prompts.prompt import Prompt
from ..settings import UI_HEARTBEAT_SECONDS as HEARTBEAT_SECONDS
from ..settings import UI_KEEP_RUNS as KEEP_RUNS
from .safejson import dumps

__all__ = ["HEARTBEAT_SECONDS", "KEEP_RUNS", "LiveRun", "LiveRuns", "chunk_event", "done_event", "error_event", "sse"]


class LiveRun:
    def __init__(self, prompt: Prompt, input: Any, context: Any, model: str | None) -> None:
        self.id = secrets.token_urlsafe(16)
        self.prompt, self.input, self.context, self.model = prompt, input, context, model
        self.events: list[dict[str, Any]] = []
        self.response: GenerateResponse | None = None
        self.finished = False
        self._changed = asyncio.Event()
        self.task: asyncio.Task[None] | None = None
        self._secrets: list[str] | None = None
        self._with_output: dict[int, dict[str, Any]] = {}  # message index -> its newest chunk event with an output

    def secrets(self, batch: list[tuple[int, dict[str, Any]]]) -> list[str]:
        """What to redact from `batch`. Reading the environment for every chunk cost more than the rest of
        the stream, so a run's chunks share the list read at its first chunk (the model, and so its key,
        exists by then); tool results, the end and errors read it afresh."""
        if self._secrets is None or any(event["type"] != "chunk" for _, event in batch):
            self._secrets = known_secrets()
        return self._secrets

    def add(self, event: dict[str, Any]) -> None:
        self.events.append(event)
        self._changed.set()

    def add_chunk(self, event: dict[str, Any]) -> None:
        """A chunk's event; the message's chunk before it drops its output. `sse` sends only the newest
        output of a message in any batch, and a batch always holds the newest events, so no stream
        misses it; kept on every event, a reply's outputs would cost memory quadratic in its length."""
        if "output" in event:
            previous = self._with_output.get(event["index"])
            if previous is not None:
                del previous["output"]
            self._with_output[event["index"]] = event
        self.add(event)

    async def run(self, **overrides: Any) -> None:
        name = model_name(self.prompt, self.model)
        self.add({"type": "start", "prompt": self.prompt.name, "variant": self.prompt.variant, "model": name,
                  "resumed": "resume" in overrides})
        try:
            with log_source("ui"):
                async for item in self.prompt.stream(self.input, context=self.context, model=self.model, **overrides):
                    if isinstance(item, Chunk):
                        self.add_chunk(chunk_event(item))
                    else:
                        self.response = item
                        self.add(done_event(item, name, has_schema=bool(self.prompt.metadata.get("output", {}).get("schema"))))
        except DotpromptError as exc:
            self.add(error_event(exc))
        except Exception as exc:  # a tool's own bug: shown, never a dead stream
            self.add(error_event(exc))
        finally:
            self.finished = True
            self._changed.set()

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

    def __init__(self, library: PromptLibrary) -> None:
        self.library = library
        self.runs: OrderedDict[str, LiveRun] = OrderedDict()

    def get(self, run_id: str) -> LiveRun | None:
        return self.runs.get(run_id)

    def start(self, name: str, variant: str | None, input: Any, context: Any, model: str | None,
              **overrides: Any) -> LiveRun:
        prompt = self.library.load(name, variant)
        live = LiveRun(prompt, input, context, model or None)
        self.runs[live.id] = live
        while len(self.runs) > KEEP_RUNS:
            self.runs.popitem(last=False)
        live.task = asyncio.get_running_loop().create_task(live.run(**overrides))
        return live

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
        prompt = before.prompt
        return self.start(prompt.name or "", prompt.variant, before.input, before.context, before.model,
                          messages=before.response.messages, resume={"respond": answers, "restart": again})


def _asked(asked: dict[tuple[str, str | None], Any], entry: dict[str, Any]) -> bool:
    key = (entry.get("name"), entry.get("ref"))
    if key not in asked:
        raise UsageError(f"the run has no interrupted tool request {json.dumps(list(key))}")
    return True
