"""Tool names the providers accept: a request's real names mapped to wire-safe ones and back, once for
every HTTP provider (`HttpModel.generate`).

OpenAI's function names must match `^[a-zA-Z0-9_-]{1,64}$`; Anthropic's tool names the same
character set (no dot, no slash); Gemini's function names must start with a letter or an
underscore and stay within 64 characters (the Gemini SDK's docs say 128 lately, the API said 64).
So one form serves all three: `^[A-Za-z_][A-Za-z0-9_-]{0,63}$`. An MCP tool `SERVER/TOOL` (or a
user's own tool named with a dot or a space) is sent as `SERVER__TOOL` (every other refused
character becomes `_`, a leading digit or dash gets a `_` before it); a name still too long, or one
that would collide with another tool's name in the same request, is cut and ends in `_` and eight
hex digits of the real name's SHA-256. Deterministic: the same tools always get the same wire names,
so a recorded wire body stays stable.

Everything outside the provider's body keeps the real names: the generate loop, recordings, the
run log, traces and the chunks handed to `on_chunk` (the model's tool calls are mapped back here).
A name the model makes up that was never sent is left as it is, for the loop to report.
"""

from __future__ import annotations

import hashlib
import re
from collections import Counter

from ..types import GenerateRequest, Message, ModelChunk, ModelResponse, Part

__all__ = ["MAX_LENGTH", "ToolNames", "wire_names"]

MAX_LENGTH = 64
SAFE = re.compile(r"^[A-Za-z_][A-Za-z0-9_-]{0,63}$")
_REFUSED = re.compile(r"[^A-Za-z0-9_-]")


def _digest(name: str) -> str:
    return hashlib.sha256(name.encode("utf-8")).hexdigest()[:8]


def _sanitized(name: str) -> str:
    safe = _REFUSED.sub("_", name.replace("/", "__"))
    if not safe or not (safe[0].isascii() and (safe[0].isalpha() or safe[0] == "_")):
        safe = "_" + safe
    return safe


def _hashed(name: str, base: str) -> str:
    return f"{base[:MAX_LENGTH - 9]}_{_digest(name)}"


def wire_names(names: list[str]) -> dict[str, str]:
    """real name -> wire name for one request's tools (only names that differ are listed).

    A name already safe is kept; the others are sanitized; a sanitized name that is too long, equal
    to a kept name or shared by two sanitized names carries the hash suffix instead (every one of
    them, so the result does not depend on the tools' order)."""
    unique = list(dict.fromkeys(names))
    kept = {n for n in unique if SAFE.match(n)}
    sanitized = {n: _sanitized(n) for n in unique if n not in kept}
    shared = Counter(sanitized.values())
    mapping: dict[str, str] = {}
    taken = set(kept)
    for name, wire in sorted(sanitized.items()):  # the same names give the same wire names in any order
        if len(wire) > MAX_LENGTH or wire in kept or shared[wire] > 1:
            wire = _hashed(name, wire)
        while wire in taken:  # a hash that collides too (never seen): hash the hash
            wire = _hashed(wire, wire)
        taken.add(wire)
        mapping[name] = wire
    return mapping


class ToolNames:
    """One request's mapping: `outbound` rewrites the request, `inbound` the reply and its chunks."""

    def __init__(self, request: GenerateRequest) -> None:
        self.to_wire = wire_names([t.name for t in request.tools])
        self.to_real = {wire: real for real, wire in self.to_wire.items()}

    def __bool__(self) -> bool:
        return bool(self.to_wire)

    def outbound(self, request: GenerateRequest) -> GenerateRequest:
        if not self.to_wire:
            return request
        tools = [t.model_copy(update={"name": self.to_wire.get(t.name, t.name)}) for t in request.tools]
        messages = [_renamed_message(m, self.to_wire) for m in request.messages]
        return request.model_copy(update={"tools": tools, "messages": messages})

    def inbound(self, response: ModelResponse) -> ModelResponse:
        if not self.to_real:
            return response
        return response.model_copy(update={"message": _renamed_message(response.message, self.to_real)})

    def chunk(self, chunk: ModelChunk) -> ModelChunk:
        if not self.to_real or not any(p.tool_request or p.tool_response for p in chunk.content):
            return chunk
        return chunk.model_copy(update={"content": [_renamed_part(p, self.to_real) for p in chunk.content]})


def _renamed_message(message: Message, names: dict[str, str]) -> Message:
    if not any(p.tool_request or p.tool_response for p in message.content):
        return message
    return message.model_copy(update={"content": [_renamed_part(p, names) for p in message.content]})


def _renamed_part(part: Part, names: dict[str, str]) -> Part:
    if part.tool_request is not None and part.tool_request.name in names:
        renamed = part.tool_request.model_copy(update={"name": names[part.tool_request.name]})
        return part.model_copy(update={"tool_request": renamed})
    if part.tool_response is not None and part.tool_response.name in names:
        renamed_response = part.tool_response.model_copy(update={"name": names[part.tool_response.name]})
        return part.model_copy(update={"tool_response": renamed_response})
    return part
