"""Anthropic Messages API (`POST /messages`).

`to_body` maps our request to the wire once; `from_message` maps a reply back; the streaming path
accumulates events into the same Message shape and reuses `from_message`.

Structured output: the API's own structured outputs (`output_config.format`, constrained decoding)
when the schema fits their rules (`strict_schema.ANTHROPIC_STRICT`), reported as `native-strict`;
otherwise -- or with `structuredOutput: tool` in the config, for models without structured outputs --
a forced call of a tool named OUTPUT_TOOL whose input schema is the output schema (`tool`); its
input comes back as the reply's text, so the loop never sees that tool.

Prompt caching: `cacheControl` in the config (`true`, `"5m"`, `"1h"`, or `{ttl, breakpoints}`)
puts `cache_control` markers on the last tool, the last system block and/or the last message
(`breakpoints`, default `[tools, system]`); cache reads and writes come back as
`Usage.cached_content_tokens` and `Usage.cache_creation_tokens` (both also inside `input_tokens`).
"""

from __future__ import annotations

import base64
import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Final

from ..errors import ModelError, UsageError
from ..types import GenerateRequest, Media, Message, ModelChunk, ModelResponse, Part, ToolRequest, Usage
from .base import ModelInfo, OnChunk
from .config import ProviderSpec
from .dialects.shape import COUNT, OBJECT, STR, AnyOf, By, check, shape_guard
from .dialects.strict import (
    ANTHROPIC_STRICT,
    NATIVE_STRICT,
    OWN_CONFIG_KEYS,
    TOOL,
    Structured,
    structured_output,
)
from .events import RETRYABLE_STREAM_ERRORS, sse_json, stream_error
from .http_model import HttpModel
from .media import IMAGE, PDF, TEXT, MediaInput, media_input, unsupported

__all__ = ["PROVIDERS", "AnthropicModel", "anthropic_structured", "cache_markers", "from_message", "to_body", "to_messages",
           "tool_input"]

# Our config names (Genkit's spelling) -> Messages API fields; anything else passes through as is.
ANTHROPIC_VERSION: Final = "2023-06-01"
"""The `anthropic-version` header every Messages API request carries."""

ANTHROPIC_DEFAULT_MAX_TOKENS: Final = 4096
"""`max_tokens` of an Anthropic request whose config names none (the API refuses a request without it)."""

CONFIG_KEYS = {"maxOutputTokens": "max_tokens", "topP": "top_p", "topK": "top_k", "stopSequences": "stop_sequences"}
FINISH = {"end_turn": "stop", "stop_sequence": "stop", "tool_use": "stop", "max_tokens": "length",
          "model_context_window_exceeded": "length", "refusal": "blocked", "pause_turn": "other"}
TOOL_CHOICE = {"auto": {"type": "auto"}, "required": {"type": "any"}, "none": {"type": "none"}}
INVALID_ARGUMENTS = {"invalidArguments": "the model's tool-call arguments are not valid JSON"}
ANTHROPIC_INFO = ModelInfo(label="Anthropic", constrained="all", media=True)
# The tool that carries the output schema when structured outputs are not used; never run, never shown.
OUTPUT_TOOL = "dotprompt_output"
WRAPPED = "value"  # a tool's input must be an object: any other output schema goes inside this property
# Config keys of ours, read here and never sent.
CACHE_KEY, STRUCTURED_KEY = "cacheControl", "structuredOutput"
CACHE_BREAKPOINTS = ("tools", "system", "messages")
IMAGE_TYPES = frozenset({"image/jpeg", "image/png", "image/gif", "image/webp"})
MEDIA_ACCEPTED = "JPEG/PNG/GIF/WebP images, PDF and text/plain documents (data: or URL; text only as data:)"
ANTHROPIC = ProviderSpec("anthropic", "https://api.anthropic.com/v1", key_vars=("ANTHROPIC_API_KEY",),
                         base_url_var="ANTHROPIC_BASE_URL")

# The fields the mapping below reads, and their types (dialects/shape.py). Unknown block types pass whole.
USAGE = {k: COUNT for k in ("input_tokens", "output_tokens", "cache_creation_input_tokens", "cache_read_input_tokens")}
BLOCK = By("type", {"text": {"text": STR}, "thinking": {"thinking": STR, "signature": STR},
                    "tool_use": {"id": STR, "name": STR, "input": AnyOf(OBJECT, STR)}})
MESSAGE = {"content": [BLOCK], "stop_reason": STR, "usage": USAGE}
EVENT = {"type": STR, "index": COUNT, "message": {"stop_reason": STR, "usage": USAGE}, "content_block": BLOCK,
         "delta": {"type": STR, "text": STR, "partial_json": STR, "thinking": STR, "signature": STR, "stop_reason": STR},
         "usage": USAGE}


class AnthropicModel(HttpModel):
    """A Claude model through the Messages API: `anthropic/claude-sonnet-4-5`, ..."""

    specs = (ANTHROPIC,)
    default_info = ANTHROPIC_INFO

    def headers(self) -> dict[str, str]:
        headers = {"anthropic-version": ANTHROPIC_VERSION}
        if self.config.api_key:
            headers["x-api-key"] = self.config.api_key
        return headers

    def path(self, stream: bool) -> str:
        return "/messages"

    def structured(self, request: GenerateRequest) -> Structured | None:
        return anthropic_structured(request)

    def body(self, request: GenerateRequest, *, stream: bool, structured: Structured | None) -> dict[str, Any]:
        return to_body(request, self.model_id, stream=stream, structured=structured)

    def reply(self, data: Any, request: str | None, structured: Structured | None) -> ModelResponse:
        return from_message(data, self.config.provider, structured=structured)

    def stream_state(self, structured: Structured | None) -> _StreamState:
        return _StreamState(self.config.provider, structured=structured)


# -- request ---------------------------------------------------------------------------------------

def to_body(request: GenerateRequest, model_id: str, *, stream: bool = False,
            structured: Structured | None = None) -> dict[str, Any]:
    """The Messages API body; `structured` is `anthropic_structured(request)`, computed here when not given."""
    body: dict[str, Any] = {"model": model_id, "max_tokens": ANTHROPIC_DEFAULT_MAX_TOKENS}
    system = _system(request.messages)
    if system:
        body["system"] = system
    body["messages"] = to_messages(request.messages)
    for key, value in request.config.items():
        if key not in OWN_CONFIG_KEYS:
            body[CONFIG_KEYS.get(key, key)] = value
    if request.tools:
        body["tools"] = [_tool(t.name, t.description, t.input_schema) for t in request.tools]
        if request.tool_choice:
            body["tool_choice"] = TOOL_CHOICE[request.tool_choice]
    structured = structured if structured is not None else anthropic_structured(request)
    if structured is not None:
        _structured(body, structured, request)
    if request.config.get(CACHE_KEY):
        cache_markers(body, request.config[CACHE_KEY])
    if stream:
        body["stream"] = True
    return body


def anthropic_structured(request: GenerateRequest) -> Structured | None:
    """How this request's output schema is enforced: structured outputs if the schema fits, else a forced tool."""
    found = structured_output(request, ANTHROPIC_STRICT, fallback=TOOL)
    if found is not None and found.mechanism == NATIVE_STRICT and request.config.get(STRUCTURED_KEY) == TOOL:
        return Structured(TOOL, found.strict)
    return found


def _structured(body: dict[str, Any], structured: Structured, request: GenerateRequest) -> None:
    strict = structured.strict
    if strict is None:
        return  # instructions only: the loop put them into the prompt
    if structured.mechanism == NATIVE_STRICT:
        assert strict.schema is not None
        body["output_config"] = {**(body.get("output_config") or {}), "format": {"type": "json_schema", "schema": strict.schema}}
        return
    schema = strict.original
    if schema.get("type") != "object":
        schema = {"type": "object", "properties": {WRAPPED: schema}, "required": [WRAPPED]}
    tool = _tool(OUTPUT_TOOL, "Give your final answer by calling this tool with it as the input.", schema)
    body["tools"] = [*body.get("tools", []), tool]
    thinking = request.config.get("thinking")
    if isinstance(thinking, Mapping) and thinking.get("type") in ("enabled", "adaptive"):
        body.setdefault("tool_choice", {"type": "auto"})  # the API refuses a forced tool call while thinking
    elif request.tools and request.tool_choice != "none":
        body["tool_choice"] = {"type": "any"}  # some tool each turn: the author's, or the answer
    else:
        body["tool_choice"] = {"type": "tool", "name": OUTPUT_TOOL}


def cache_markers(body: dict[str, Any], setting: Any) -> None:
    """`cache_control` on the last block of each breakpoint the `cacheControl` config names."""
    marker: dict[str, Any] = {"type": "ephemeral"}
    breakpoints: Any = ("tools", "system")
    if isinstance(setting, str):
        marker["ttl"] = setting
    elif isinstance(setting, Mapping):
        if setting.get("ttl"):
            marker["ttl"] = setting["ttl"]
        breakpoints = setting.get("breakpoints", breakpoints)
    elif setting is not True:
        raise UsageError(f"config {CACHE_KEY}: expected true, \"5m\", \"1h\" or {{ttl, breakpoints}}, got {setting!r}")
    if marker.get("ttl") not in (None, "5m", "1h"):
        raise UsageError(f"config {CACHE_KEY}: ttl must be \"5m\" or \"1h\", got {marker['ttl']!r}")
    if not isinstance(breakpoints, (list, tuple)):
        raise UsageError(f"config {CACHE_KEY}: breakpoints must be a list of {', '.join(CACHE_BREAKPOINTS)}, "
                         f"got {breakpoints!r}")
    unknown = [b for b in breakpoints if b not in CACHE_BREAKPOINTS]
    if unknown:
        raise UsageError(f"config {CACHE_KEY}: unknown breakpoints {unknown!r}; use any of {', '.join(CACHE_BREAKPOINTS)}")
    targets = {"tools": body.get("tools") or [], "system": body.get("system") or [],
               "messages": (body["messages"][-1]["content"] if body.get("messages") else [])}
    for name in breakpoints:
        if targets[name]:
            targets[name][-1] = {**targets[name][-1], "cache_control": dict(marker)}


def _tool(name: str, description: str, schema: dict[str, Any]) -> dict[str, Any]:
    tool: dict[str, Any] = {"name": name, "input_schema": schema or {"type": "object"}}
    if description:
        tool["description"] = description
    return tool


def _system(messages: list[Message]) -> list[dict[str, Any]]:
    # One text block per part: the output instructions arrive as their own part and must not be
    # glued onto the end of the author's last sentence.
    return [{"type": "text", "text": p.text} for m in messages if m.role == "system" for p in m.content if p.text]


def to_messages(messages: list[Message]) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    pending_ids: dict[str, list[str]] = {}  # tool name -> ids of calls without a ref, in order
    for index, message in enumerate(messages):
        if message.role == "system":
            continue
        blocks = [b for position, part in enumerate(message.content)
                  if (b := _block(part, index, position, pending_ids)) is not None]
        if blocks:
            _append(out, "assistant" if message.role == "model" else "user", blocks)
    return out


def _append(out: list[dict[str, Any]], role: str, blocks: list[dict[str, Any]]) -> None:
    """Turns must alternate user/assistant: a tool message followed by a user message is one turn."""
    if not out or out[-1]["role"] != role:
        out.append({"role": role, "content": blocks})
        return
    merged = out[-1]["content"] + blocks
    # The API wants tool_result blocks before any other content of the user turn.
    out[-1]["content"] = sorted(merged, key=lambda b: b["type"] != "tool_result") if role == "user" else merged


def _block(part: Part, index: int, position: int, pending_ids: dict[str, list[str]]) -> dict[str, Any] | None:
    if part.text:  # the API rejects empty text blocks
        return {"type": "text", "text": part.text}
    if part.media is not None:
        return _media(part.media)
    if part.tool_request is not None:
        return _tool_use(part.tool_request, f"toolu_{index}_{position}", pending_ids)
    if part.tool_response is not None:
        response = part.tool_response
        waiting = pending_ids.get(response.name) or []
        block: dict[str, Any] = {"type": "tool_result",
                                 "tool_use_id": response.ref or (waiting.pop(0) if waiting else response.name),
                                 "content": json.dumps(response.output, ensure_ascii=False)}
        if (part.metadata or {}).get("toolError"):
            block["is_error"] = True
        return block
    if part.data is not None:
        return {"type": "text", "text": json.dumps(part.data, ensure_ascii=False)}
    return _echoed(part)


def _tool_use(request: ToolRequest, synthesized: str, pending_ids: dict[str, list[str]]) -> dict[str, Any]:
    if request.ref is None:
        pending_ids.setdefault(request.name, []).append(synthesized)
    return {"type": "tool_use", "id": request.ref or synthesized, "name": request.name, "input": tool_input(request.input)}


def tool_input(value: Any) -> dict[str, Any]:
    """tool_use.input must be an object: invalid arguments kept raw go back wrapped, never as {}."""
    if isinstance(value, dict):
        return value
    return {} if value is None else {"rawInput": value}


def _echoed(part: Part) -> dict[str, Any] | None:
    # With extended thinking on, the API requires earlier thinking blocks back, signature intact;
    # unsigned reasoning (from another provider, say) would be refused, so it is left out.
    signature = (part.metadata or {}).get("signature")
    if part.reasoning is not None and signature:
        return {"type": "thinking", "thinking": part.reasoning, "signature": signature}
    if part.custom and isinstance(part.custom.get("anthropic"), dict):
        return part.custom["anthropic"]  # redacted thinking, server tool blocks: returned verbatim
    return None


def _media(media: Media) -> dict[str, Any]:
    """An image or document block; a type the API cannot take is a UsageError before any call."""
    item = media_input(media)
    if item.kind == PDF:
        source: dict[str, Any] = ({"type": "base64", "media_type": "application/pdf", "data": item.data}
                                  if item.data is not None else {"type": "url", "url": item.url})
        return {"type": "document", "source": source}
    if item.kind == TEXT and item.data is not None:
        return {"type": "document", "source": {"type": "text", "media_type": "text/plain", "data": _text(item)}}
    if item.data is None and (item.kind == IMAGE or not item.content_type):
        return {"type": "image", "source": {"type": "url", "url": item.url}}
    if item.content_type in IMAGE_TYPES:
        return {"type": "image", "source": {"type": "base64", "media_type": item.content_type, "data": item.data}}
    raise unsupported("Anthropic", item, MEDIA_ACCEPTED)


def _text(item: MediaInput) -> str:
    try:
        return base64.b64decode(item.data or "", validate=False).decode("utf-8")
    except ValueError as exc:
        raise UsageError(f"the text/plain media part is not UTF-8 text: {exc}") from None


# -- response --------------------------------------------------------------------------------------

def from_message(data: Mapping[str, Any], provider: str, *, structured: Structured | None = None) -> ModelResponse:
    """Our response for a Message; with `structured` (from the request) the output tool's input becomes the
    reply's text, and the mechanism is reported as `custom["structuredOutput"]`."""
    check(data, MESSAGE, provider)
    content = data.get("content") if isinstance(data, Mapping) else None
    if not isinstance(content, list):
        raise ModelError(f"the reply has no content: {json.dumps(data)[:500]}", provider=provider)
    with shape_guard(provider):
        response = _response(data, content, structured)
    if structured is not None:
        response.custom = structured.note()
    return response


def _response(data: Mapping[str, Any], content: list[Any], structured: Structured | None) -> ModelResponse:
    stop = data.get("stop_reason")
    wrapped = structured is not None and structured.strict is not None and structured.strict.original.get("type") != "object"
    parts = [_output_part(b, wrapped) if b.get("type") == "tool_use" and b.get("name") == OUTPUT_TOOL else _part(b)
             for b in content]
    return ModelResponse(message=Message(role="model", content=parts),
                         finish_reason=FINISH.get(stop, "other") if stop else "unknown",  # type: ignore[arg-type]
                         finish_message=stop, usage=_usage(data.get("usage")), raw=data)


def _part(block: Mapping[str, Any]) -> Part:
    kind = block.get("type")
    if kind == "text":
        return Part(text=block.get("text", ""))
    if kind == "tool_use":
        return _tool_part(block)
    if kind == "thinking":
        return Part(reasoning=block.get("thinking", ""),
                    metadata={"signature": block["signature"]} if block.get("signature") else None)
    return Part(custom={"anthropic": dict(block)})  # kept whole so it can be sent back


def _output_part(block: Mapping[str, Any], wrapped: bool) -> Part:
    """The output tool's input, as the text reply it stands for (kept raw when it is not JSON)."""
    value = block.get("input")
    if isinstance(value, str):
        text = value
        try:
            value = json.loads(text) if text.strip() else {}
        except (ValueError, RecursionError):
            return Part(text=text)
    if wrapped and isinstance(value, Mapping) and WRAPPED in value:
        value = value[WRAPPED]
    return Part(text=json.dumps(value, ensure_ascii=False))


def _tool_part(block: Mapping[str, Any]) -> Part:
    name, ref, value = block.get("name", ""), block.get("id"), block.get("input")
    if isinstance(value, str):  # streamed input arrives as JSON text
        try:
            value = json.loads(value) if value.strip() else {}
        except (ValueError, RecursionError):  # not JSON, or nested past what the parser takes
            # Never turn bad arguments into {}: keep the raw text, and say so on the part.
            return Part(tool_request=ToolRequest(name=name, ref=ref, input=value), metadata=dict(INVALID_ARGUMENTS))
    return Part(tool_request=ToolRequest(name=name, ref=ref, input=value))


def _usage(usage: Mapping[str, Any] | None) -> Usage | None:
    if not usage:
        return None
    # input_tokens counts only the uncached part of the prompt; cache reads and writes are prompt tokens too.
    counts = [usage.get(k) for k in ("input_tokens", "cache_creation_input_tokens", "cache_read_input_tokens")]
    inputs = sum(c for c in counts if c) if any(c is not None for c in counts) else None
    outputs = usage.get("output_tokens")
    total = inputs + outputs if inputs is not None and outputs is not None else None
    return Usage(input_tokens=inputs, output_tokens=outputs, total_tokens=total,
                 cached_content_tokens=usage.get("cache_read_input_tokens"),
                 cache_creation_tokens=usage.get("cache_creation_input_tokens"))


# -- streaming -------------------------------------------------------------------------------------

@dataclass
class _StreamState:
    """Events accumulated into one Message-shaped dict; content blocks kept per index."""

    provider: str
    request_id: str | None = None
    structured: Structured | None = None
    message: dict[str, Any] = field(default_factory=dict)
    blocks: dict[int, dict[str, Any]] = field(default_factory=dict)
    usage: dict[str, Any] = field(default_factory=dict)
    done: bool = False
    chars: int = 0

    def parse(self, event: Any) -> Any:
        """The event's data, checked: an error event or a wrongly shaped one is a ModelError keeping the partial."""
        data = sse_json(event, self.provider, partial=self.snapshot, request=self.request_id)
        if (error := stream_error(event, data, self.provider, self.request_id, self.snapshot)) is not None:
            raise error
        check(data, EVENT, self.provider, what="a stream event", request_id=self.request_id, partial=self.snapshot)
        return data

    def add(self, data: Mapping[str, Any], on_chunk: OnChunk) -> None:
        handler = _HANDLERS.get(data.get("type", "") if isinstance(data, Mapping) else "")
        if handler is not None:  # ping and event types added after this was written are ignored
            handler(self, data, on_chunk)

    def _start(self, data: Mapping[str, Any], on_chunk: OnChunk) -> None:
        self.message = dict(data.get("message") or {})
        self.usage.update(self.message.get("usage") or {})

    def _block_start(self, data: Mapping[str, Any], on_chunk: OnChunk) -> None:
        block = self.blocks[data.get("index", len(self.blocks))] = dict(data.get("content_block") or {})
        if "input" in block:
            block["input"] = ""  # tool_use, server_tool_use: the start carries `{}`, the input follows as JSON text
        if block.get("type") == "tool_use" and block.get("name") != OUTPUT_TOOL:
            on_chunk(ModelChunk(content=[self._partial_call(block)]))
        elif block.get("type") == "text" and block.get("text"):
            on_chunk(ModelChunk(content=[Part(text=block["text"])]))

    def _block_delta(self, data: Mapping[str, Any], on_chunk: OnChunk) -> None:
        block = self.blocks.setdefault(data.get("index", 0), {"type": "text", "text": ""})
        delta = data.get("delta") or {}
        kind = delta.get("type")
        if kind == "text_delta":
            self._grow(block, "text", delta.get("text", ""))
            on_chunk(ModelChunk(content=[Part(text=delta.get("text", ""))]))
        elif kind == "input_json_delta":
            self._grow(block, "input", delta.get("partial_json", ""))
            if block.get("type") != "tool_use":  # server tools run at Anthropic: nothing for the loop to run
                return
            if block.get("name") != OUTPUT_TOOL:
                on_chunk(ModelChunk(content=[self._partial_call(block)]))
            elif self._unwrapped() and delta.get("partial_json"):  # the answer, streamed as the text it stands for
                on_chunk(ModelChunk(content=[Part(text=delta["partial_json"])]))
        elif kind == "thinking_delta":
            self._grow(block, "thinking", delta.get("thinking", ""))
            on_chunk(ModelChunk(content=[Part(reasoning=delta.get("thinking", ""))]))
        elif kind == "signature_delta":
            block["signature"] = block.get("signature", "") + delta.get("signature", "")

    def _unwrapped(self) -> bool:
        strict = self.structured.strict if self.structured is not None else None
        return strict is not None and strict.original.get("type") == "object"

    def _grow(self, block: dict[str, Any], key: str, text: str) -> None:
        block[key] = (block.get(key) or "") + text
        self.chars += len(text)

    def _message_delta(self, data: Mapping[str, Any], on_chunk: OnChunk) -> None:
        self.message.update({k: v for k, v in (data.get("delta") or {}).items() if v is not None})
        self.usage.update(data.get("usage") or {})  # output_tokens here is the running total, not an increment

    def _stop(self, data: Mapping[str, Any], on_chunk: OnChunk) -> None:
        self.done = True

    def _error(self, data: Mapping[str, Any], on_chunk: OnChunk) -> None:
        error = data.get("error") or {}
        kind = error.get("type", "error")
        raise self.fail(f"{error.get('message') or kind} ({kind})", retryable=kind in RETRYABLE_STREAM_ERRORS)

    @staticmethod
    def _partial_call(block: Mapping[str, Any]) -> Part:
        return Part(tool_request=ToolRequest(name=block.get("name", ""), ref=block.get("id"), input=block.get("input", ""),
                                             partial=True))

    def fail(self, message: str, *, retryable: bool = False) -> ModelError:
        return ModelError(message, provider=self.provider, request_id=self.request_id, retryable=retryable,
                          partial=self.snapshot())

    @property
    def finished(self) -> bool:
        return self.done

    def incomplete(self) -> str | None:
        return None if self.done else "the stream ended before message_stop (the reply is incomplete)"

    def reply(self) -> dict[str, Any]:
        return self.snapshot()

    def snapshot(self) -> dict[str, Any]:
        content = [_settled(block) for _, block in sorted(self.blocks.items())]
        return {**self.message, "type": "message", "role": "assistant", "content": content, "usage": dict(self.usage)}


def _settled(block: Mapping[str, Any]) -> dict[str, Any]:
    """A streamed block as the non-streaming reply would hold it. tool_use input stays JSON text so
    `_tool_part` can keep invalid arguments raw; server tool blocks go back verbatim, so theirs is parsed."""
    raw = block.get("input")
    if block.get("type") == "tool_use" or not isinstance(raw, str):
        return dict(block)
    try:
        return {**block, "input": json.loads(raw) if raw.strip() else {}}
    except (ValueError, RecursionError):
        return dict(block)


_HANDLERS: dict[str, Callable[[_StreamState, Mapping[str, Any], OnChunk], None]] = {
    "message_start": _StreamState._start, "content_block_start": _StreamState._block_start,
    "content_block_delta": _StreamState._block_delta, "message_delta": _StreamState._message_delta,
    "message_stop": _StreamState._stop, "error": _StreamState._error,
}


# The provider table the registry reads (registry.BUILT_IN_PROVIDERS names this module for `anthropic/`).
PROVIDERS = {"anthropic": AnthropicModel}
