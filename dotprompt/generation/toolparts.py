"""The tool parts the loop writes, with the markers Genkit gives them: interrupts, pending outputs,
resolved interrupts, answers to interrupts, tool errors, multipart tool responses."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from .._util.redact import redact
from ..errors import UsageError
from ..tools.define import Tool, to_jsonable
from ..types import Message, Part, ToolRequest, ToolResponse

__all__ = ["ToolOutcome", "answer_part", "error_part", "interrupt_part", "label", "mark_interrupts",
           "part_key", "resolved", "response_part", "restart_part"]


@dataclass
class ToolOutcome:
    """One tool request, run: its tool-response part, or the interrupt it raised."""

    request: Part
    response: Part | None = None
    interrupt: Any = None
    interrupted: bool = False


def label(name: str, ref: str | None) -> str:
    return f"{name}({ref})" if ref else name


def part_key(part: Part) -> tuple[str, str | None]:
    named = part.tool_request or part.tool_response
    assert named is not None
    return named.name, named.ref


def answer_part(answer: ToolResponse | Part) -> Part:
    """A respond entry as a part; a bare answer is marked as Genkit's `tool.respond` marks it."""
    if isinstance(answer, Part):
        if answer.tool_response is None:
            raise UsageError("a Resume(respond=[...]) part must hold a toolResponse")
        return answer
    return Part(tool_response=answer, metadata={"interruptResponse": True})


def restart_part(entry: ToolRequest | Part, last: Message) -> Part:
    """A restart entry as a part; a bare request takes the interrupted part's metadata and `resumed: true`."""
    if isinstance(entry, Part):
        if entry.tool_request is None:
            raise UsageError("a Resume(restart=[...]) part must hold a toolRequest")
        return entry
    original = next((p for p in last.content if p.tool_request is not None and part_key(p) == (entry.name, entry.ref)), None)
    metadata = dict(original.metadata or {}) if original is not None else {}
    return Part(tool_request=entry, metadata={**metadata, "resumed": True})


def response_part(tool: Tool, request: ToolRequest, result: Any) -> Part:
    """The tool's result as a tool-response part; a multipart tool's `{output, content, metadata}` as Genkit sends it."""
    if not tool.multipart:
        return Part(tool_response=ToolResponse(name=request.name, ref=request.ref, output=to_jsonable(result)))
    if not isinstance(result, Mapping) or set(result) - {"output", "content", "metadata"}:
        raise TypeError(f"multipart tool {tool.name!r} must return a mapping of output, content and metadata")
    content = [p if isinstance(p, Part) else Part.model_validate(p) for p in result.get("content") or ()] or None
    return Part(tool_response=ToolResponse(name=request.name, ref=request.ref, output=to_jsonable(result.get("output")),
                                           content=content),
                metadata=result.get("metadata"))


def error_part(request: ToolRequest, exc: Exception) -> Part:
    """The tool's error as the model is told it: redacted, since a tool's exception may quote a key it used
    (this text goes to the provider, into the response's messages and from there to logs and the terminal)."""
    text = redact(f"{type(exc).__name__}: {exc}")
    return Part(tool_response=ToolResponse(name=request.name, ref=request.ref, output={"error": text}),
                metadata={"toolError": True})


def interrupt_part(outcome: ToolOutcome) -> Part:
    """The request part marked `interrupt`: the tool's metadata, True when it gave none (as Genkit)."""
    marker = outcome.interrupt if outcome.interrupt is not None else True
    return outcome.request.model_copy(update={"metadata": {**(outcome.request.metadata or {}), "interrupt": marker}})


def mark_interrupts(message: Message, outcomes: list[ToolOutcome]) -> Message:
    """Interrupted requests carry `interrupt`; finished ones keep their output as `pendingOutput`."""
    by_part = {id(o.request): o for o in outcomes}
    parts = []
    for part in message.content:
        outcome = by_part.get(id(part))
        if outcome is None:
            parts.append(part)
        elif outcome.interrupted:
            parts.append(interrupt_part(outcome))
        else:
            assert outcome.response is not None and outcome.response.tool_response is not None
            pending = {**(part.metadata or {}), "pendingOutput": outcome.response.tool_response.output}
            parts.append(part.model_copy(update={"metadata": pending}))
    return message.model_copy(update={"content": parts})


def resolved(part: Part) -> Part:
    """The request part once answered: `interrupt` becomes `resolvedInterrupt`."""
    metadata = dict(part.metadata or {})
    if "interrupt" in metadata:
        metadata["resolvedInterrupt"] = metadata.pop("interrupt")
    return part.model_copy(update={"metadata": metadata})
