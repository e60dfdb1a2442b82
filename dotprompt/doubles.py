"""Test doubles at the model seam, public so users can test their prompts without a network.

- `EchoModel` ("echo"): replies with the conversation it was sent, as text.
- `ScriptedModel`: replies from a list (or a function of the request), optionally streamed in chunks,
  recording every request it saw. A reply may be an exception, raised in place of a reply.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable, Iterator, Sequence
from typing import Any

from .errors import UsageError
from .providers.base import ModelInfo, OnChunk
from .types import GenerateRequest, Message, ModelChunk, ModelResponse, Part, ToolRequest, Usage

__all__ = ["MODELS", "EchoModel", "Reply", "ScriptedModel", "as_response", "response_chunks", "stream_response", "tool_call"]

Reply = Any  # str | Part | list[Part] | Message | ModelResponse | dict (wire shape) | BaseException


def tool_call(name: str, input: Any = None, ref: str | None = None) -> Part:
    """A toolRequest part, for scripting a model that calls a tool."""
    return Part(tool_request=ToolRequest(name=name, input=input, ref=ref))


def as_response(reply: Reply) -> ModelResponse:
    if isinstance(reply, ModelResponse):
        return reply
    if isinstance(reply, Message):
        return ModelResponse(message=reply)
    if isinstance(reply, str):
        return ModelResponse(message=Message(role="model", content=[Part(text=reply)]))
    if isinstance(reply, Part):
        reply = [reply]
    if isinstance(reply, list):
        return ModelResponse(message=Message(role="model", content=[_part(p) for p in reply]))
    if isinstance(reply, dict):
        return ModelResponse.model_validate(reply) if "message" in reply else ModelResponse(message=Message.model_validate(reply))
    raise UsageError(f"cannot use {reply!r} as a scripted reply")


def _part(value: Any) -> Part:
    if isinstance(value, Part):
        return value
    if isinstance(value, str):
        return Part(text=value)
    return Part.model_validate(value)


def stream_response(response: ModelResponse, on_chunk: OnChunk, chunk_size: int) -> None:
    """Emit a response as chunks: text in `chunk_size` pieces, every other part whole."""
    for chunk in response_chunks(response, chunk_size):
        on_chunk(chunk)


def response_chunks(response: ModelResponse, chunk_size: int) -> Iterator[ModelChunk]:
    """A response as chunks: text in `chunk_size` pieces, every other part whole."""
    for part in response.message.content:
        if part.text is not None and chunk_size > 0:
            for start in range(0, len(part.text), chunk_size):
                yield ModelChunk(role=response.message.role, content=[Part(text=part.text[start:start + chunk_size])])
        else:
            yield ModelChunk(role=response.message.role, content=[part])


class ScriptedModel:
    """Replies in order from `replies`, or from `replies(request)` when it is a function."""

    def __init__(self, replies: Sequence[Reply] | Callable[[GenerateRequest], Reply], *, name: str = "scripted",
                 chunk_size: int = 0, info: ModelInfo | None = None, usage: Usage | None = None) -> None:
        self.name = name
        self.info = info or ModelInfo(label="Scripted test model", constrained="none")
        self.chunk_size = chunk_size
        self.requests: list[GenerateRequest] = []
        self._script = replies if callable(replies) else list(replies)
        self._usage = usage

    @property
    def calls(self) -> int:
        return len(self.requests)

    async def generate(self, request: GenerateRequest, on_chunk: OnChunk | None = None) -> ModelResponse:
        self.requests.append(request)
        reply = self._next(request)
        if isinstance(reply, BaseException):
            raise reply
        response = as_response(reply)
        if self._usage is not None and response.usage is None:
            response = response.model_copy(update={"usage": self._usage})
        if on_chunk is not None:
            # As a network model does, give the event loop a turn between chunks: a consumer of
            # generate_stream then takes each chunk as it comes instead of finding them all queued.
            for chunk in response_chunks(response, self.chunk_size or 1 << 30):
                on_chunk(chunk)
                await asyncio.sleep(0)
        return response

    def _next(self, request: GenerateRequest) -> Reply:
        if callable(self._script):
            return self._script(request)
        if len(self.requests) > len(self._script):
            raise UsageError(f"scripted model {self.name!r} has only {len(self._script)} replies; "
                             f"call {len(self.requests)} asked for another")
        return self._script[len(self.requests) - 1]


class EchoModel:
    """Replies with the text of every message it was sent (`role: text` lines) — no network, no key."""

    name = "echo"
    info = ModelInfo(label="Echo test model", constrained="none")

    async def generate(self, request: GenerateRequest, on_chunk: OnChunk | None = None) -> ModelResponse:
        lines = [f"{m.role}: {_message_text(m)}" for m in request.messages]
        response = ModelResponse(message=Message(role="model", content=[Part(text="\n".join(lines))]),
                                 usage=Usage(input_tokens=0, output_tokens=0, total_tokens=0))
        if on_chunk is not None:
            stream_response(response, on_chunk, 16)
        return response


def _message_text(message: Message) -> str:
    out = []
    for part in message.content:
        if part.text is not None:
            out.append(part.text.strip())
        elif part.tool_response is not None:
            out.append(json.dumps(part.tool_response.output, ensure_ascii=False))
    return " ".join(out)


# The registry makes these on first use of their names (see registry.BUILT_IN_MODELS).
MODELS = {"echo": EchoModel}
