"""OpenAI Responses API (`POST /responses`): `openai-responses/gpt-5-mini`, and servers that speak it.

`to_body` maps our request to the wire once (system text -> `instructions`, the rest -> input items:
messages, `function_call`, `function_call_output`); `from_response` maps a Response back. Streaming
hands text and tool-argument deltas on as they arrive and takes the final reply from the
`response.completed` (or `response.incomplete`) event, which carries the whole Response; a stream
that ends without one is a ModelError keeping what had arrived.

Function tools are sent with `strict: false`: the API makes `strict` default to true, which refuses
any tool schema that is not written to the strict rules (every property required, no open objects).
An output schema is sent as `text.format` json_schema, strict when providers/dialects/strict.py can make
it so (the nulls strict mode adds for optional properties are removed from the reply), else as is;
`custom["structuredOutput"]` on the response says which.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from .._http.sse import SSEEvent
from ..errors import ModelError, UsageError
from ..types import GenerateRequest, Media, Message, ModelChunk, ModelResponse, Part, ToolRequest, Usage
from .base import ModelInfo, OnChunk
from .config import ProviderSpec
from .dialects.shape import COUNT, STR, By, check, shape_guard
from .dialects.strict import OWN_CONFIG_KEYS, Structured, structured_output
from .events import RETRYABLE_STREAM_ERRORS, sse_json, stream_error
from .http_model import HttpModel
from .media import parse_data_url

__all__ = ["PROVIDERS", "OpenAIResponsesModel", "ResponsesStreamState", "failed", "from_response", "media_part", "to_body",
           "to_input", "usage"]

# Our config names (Genkit's spelling) -> Responses fields; anything else passes through as is.
CONFIG_KEYS = {"maxOutputTokens": "max_output_tokens", "topP": "top_p"}
# Config the Responses API has no field for: refused here, not sent to fail as a 400.
UNSUPPORTED_CONFIG = {"stopSequences": "stop sequences", "stop": "stop sequences", "topK": "top_k",
                      "frequencyPenalty": "frequency_penalty", "presencePenalty": "presence_penalty"}
INCOMPLETE = {"max_output_tokens": "length", "content_filter": "blocked"}
CUSTOM_KEY = "openai-responses"  # Part.custom key holding output items we return verbatim (reasoning, ...)
RESPONSES_INFO = ModelInfo(label="OpenAI Responses", constrained="all", media=True)
OPENAI_RESPONSES = ProviderSpec("openai-responses", "https://api.openai.com/v1", key_vars=("OPENAI_API_KEY",),
                                base_url_var="OPENAI_BASE_URL")

# The fields the mapping below reads, and their types (dialects/shape.py).
USAGE = {"input_tokens": COUNT, "output_tokens": COUNT, "total_tokens": COUNT,
         "input_tokens_details": {"cached_tokens": COUNT, "cache_write_tokens": COUNT},
         "output_tokens_details": {"reasoning_tokens": COUNT}}
CONTENT = By("type", {"output_text": {"text": STR}, "refusal": {"refusal": STR}})
ITEM = By("type", {"message": {"content": [CONTENT]},
                   "function_call": {"call_id": STR, "name": STR, "arguments": STR},
                   "reasoning": {"summary": [{"text": STR}]}})
RESPONSE = {"status": STR, "output": [ITEM], "usage": USAGE, "error": {"message": STR},
            "incomplete_details": {"reason": STR}}
EVENT = {"type": STR, "delta": STR, "output_index": COUNT, "item": ITEM, "response": RESPONSE}


class OpenAIResponsesModel(HttpModel):
    """A model through the Responses API: `openai-responses/gpt-5-mini`, ..."""

    specs = (OPENAI_RESPONSES,)
    default_info = RESPONSES_INFO

    def headers(self) -> dict[str, str]:
        return {"Authorization": f"Bearer {self.config.api_key}"} if self.config.api_key else {}

    def path(self, stream: bool) -> str:
        return "/responses"

    def structured(self, request: GenerateRequest) -> Structured | None:
        return structured_output(request)

    def body(self, request: GenerateRequest, *, stream: bool, structured: Structured | None) -> dict[str, Any]:
        return to_body(request, self.model_id, stream=stream, structured=structured)

    def reply(self, data: Any, request: str | None, structured: Structured | None) -> ModelResponse:
        return from_response(data, self.config.provider, request, structured=structured)

    def stream_state(self, structured: Structured | None) -> ResponsesStreamState:
        return ResponsesStreamState(self.config.provider)


# -- request ---------------------------------------------------------------------------------------

def to_body(request: GenerateRequest, model_id: str, *, stream: bool = False,
            structured: Structured | None = None) -> dict[str, Any]:
    """The Responses body; `structured` is `structured_output(request)`, computed here when not given."""
    body: dict[str, Any] = {"model": model_id, "input": to_input(request.messages)}
    system = "\n\n".join(m.text for m in request.messages if m.role == "system" and m.text)
    if system:
        body["instructions"] = system
    for key, value in request.config.items():
        if key in OWN_CONFIG_KEYS:  # read by other providers, never sent to an API
            continue
        if key in UNSUPPORTED_CONFIG:
            raise UsageError(f"config {key!r}: the OpenAI Responses API has no {UNSUPPORTED_CONFIG[key]} "
                             f"(remove it, or use the chat completions model `openai/{model_id}`)")
        body[CONFIG_KEYS.get(key, key)] = value
    if request.tools:
        body["tools"] = [{"type": "function", "name": t.name, "description": t.description,
                          "parameters": t.input_schema or {"type": "object", "properties": {}}, "strict": False}
                         for t in request.tools]
        if request.tool_choice:
            body["tool_choice"] = request.tool_choice
    structured = structured if structured is not None else structured_output(request)
    if structured is not None and structured.strict is not None:
        strict = structured.strict
        schema, is_strict = (strict.schema, True) if strict.schema is not None else (strict.original, False)
        body["text"] = {"format": {"type": "json_schema", "name": "output", "schema": schema, "strict": is_strict}}
    if stream:
        body["stream"] = True
    return body


def to_input(messages: list[Message]) -> list[dict[str, Any]]:
    """Input items for every message but the system ones (they travel as `instructions`)."""
    items: list[dict[str, Any]] = []
    pending: dict[str, list[str]] = {}  # tool name -> call ids made up for requests without a ref, in order
    for index, message in enumerate(messages):
        if message.role == "tool":
            items += [_call_output(p, pending) for p in message.content if p.tool_response is not None]
        elif message.role == "model":
            items += _model_items(message, index, pending)
        elif message.role != "system":
            items.append({"type": "message", "role": "user", "content": _user_content(message)})
    return items


def _user_content(message: Message) -> str | list[dict[str, Any]]:
    if all(p.text is not None for p in message.content):
        return message.text
    parts: list[dict[str, Any]] = []
    for part in message.content:
        if part.text is not None:
            parts.append({"type": "input_text", "text": part.text})
        elif part.media is not None:
            parts.append(media_part(part.media))
        elif part.data is not None:
            parts.append({"type": "input_text", "text": json.dumps(part.data, ensure_ascii=False)})
    return parts


def media_part(media: Media) -> dict[str, Any]:
    """An image or a file (PDF, ...) as the Responses API takes it; audio, which its input messages cannot
    carry (input_text, input_image and input_file only), is a UsageError."""
    inline = media.url.startswith("data:")
    mime = media.content_type or (parse_data_url(media.url)[0] if inline else None) or ""
    if mime.startswith("image/") or (not mime and not inline):
        return {"type": "input_image", "image_url": media.url, "detail": "auto"}
    if mime.startswith(("audio/", "video/")):
        raise UsageError(f"openai-responses cannot take {mime} input ({media.url[:60]!r}): the Responses API takes "
                         "text, images and files; send audio through chat completions (`openai/gpt-4o-audio-preview`)")
    if inline:
        data_url = f"data:{mime};base64,{parse_data_url(media.url)[1]}"
        return {"type": "input_file", "filename": f"input.{mime.rpartition('/')[2] or 'bin'}", "file_data": data_url}
    return {"type": "input_file", "file_url": media.url}


def _model_items(message: Message, index: int, pending: dict[str, list[str]]) -> list[dict[str, Any]]:
    """The model's turn as output items, in the order they came: a reasoning item must stay before the
    message or call it led to."""
    items: list[dict[str, Any]] = []
    text: dict[str, Any] | None = None
    for position, part in enumerate(message.content):
        if part.custom and isinstance(part.custom.get(CUSTOM_KEY), dict):
            items.append(dict(part.custom[CUSTOM_KEY]))  # reasoning and built-in tool items go back as they came
        elif part.tool_request is not None:
            items.append(_function_call(part.tool_request, f"call_{index}_{position}", pending))
        elif part.text:
            if text is None:
                text = {"type": "message", "role": "assistant", "content": ""}
                items.append(text)
            text["content"] += part.text
    return items


def _function_call(request: ToolRequest, made_up: str, pending: dict[str, list[str]]) -> dict[str, Any]:
    call_id = request.ref or made_up
    if request.ref is None:
        pending.setdefault(request.name, []).append(call_id)
    arguments = request.input if isinstance(request.input, str) else json.dumps(request.input or {}, ensure_ascii=False)
    return {"type": "function_call", "call_id": call_id, "name": request.name, "arguments": arguments}


def _call_output(part: Part, pending: dict[str, list[str]]) -> dict[str, Any]:
    response = part.tool_response
    assert response is not None
    waiting = pending.get(response.name) or []
    call_id = response.ref or (waiting.pop(0) if waiting else response.name)
    output = response.output if isinstance(response.output, str) else json.dumps(response.output, ensure_ascii=False)
    return {"type": "function_call_output", "call_id": call_id, "output": output}


# -- response --------------------------------------------------------------------------------------

def from_response(data: Any, provider: str, request: str | None = None, *,
                  structured: Structured | None = None) -> ModelResponse:
    """Our response for a Response; `structured` (from the request) restores strict-mode nulls and is reported."""
    check(data, RESPONSE, provider, request_id=request)
    if data.get("status") == "failed" or data.get("error"):
        raise failed(data.get("error") or {}, provider, request, data)
    with shape_guard(provider, request_id=request):
        parts = [p for item in data.get("output") or [] for p in _parts(item)]
        if structured is not None:
            parts = [Part(text=structured.restore_text(p.text)) if p.text and not p.metadata else p for p in parts]
        reason = (data.get("incomplete_details") or {}).get("reason")
        finish = INCOMPLETE.get(reason or "", "other") if data.get("status") == "incomplete" else "stop"
        if any((p.metadata or {}).get("refusal") for p in parts):
            finish = "blocked"
        return ModelResponse(message=Message(role="model", content=parts), finish_reason=finish,  # type: ignore[arg-type]
                             finish_message=reason or data.get("status"), usage=usage(data.get("usage")), raw=data,
                             custom=structured.note() if structured is not None else None)


def failed(error: Mapping[str, Any], provider: str, request_id: str | None, partial: Any = None) -> ModelError:
    """The ModelError for a Response whose status is `failed`: the API's own code and message."""
    code = error.get("code") if isinstance(error.get("code"), str) else None
    text = str(error.get("message") or code or "the response failed without a message")
    return ModelError(f"the response failed: {text}" + (f" ({code})" if code and code not in text else ""),
                      provider=provider, request_id=request_id, partial=partial,
                      retryable=code in RETRYABLE_STREAM_ERRORS)


def _parts(item: Mapping[str, Any]) -> list[Part]:
    kind = item.get("type")
    if kind == "message":
        return [p for c in item.get("content") or [] if (p := _content_part(c)) is not None]
    if kind == "function_call":
        return [_tool_part(item)]
    if kind == "reasoning":
        summary = "".join(s.get("text") or "" for s in item.get("summary") or [])
        return [Part(reasoning=summary, custom={CUSTOM_KEY: dict(item)})]
    return [Part(custom={CUSTOM_KEY: dict(item)})]


def _content_part(content: Mapping[str, Any]) -> Part | None:
    if content.get("type") == "output_text":
        return Part(text=content.get("text") or "")
    if content.get("type") == "refusal":
        return Part(text=content.get("refusal") or "", metadata={"refusal": True})
    return None


def _tool_part(item: Mapping[str, Any]) -> Part:
    raw = item.get("arguments") or ""
    name, ref = item.get("name") or "", item.get("call_id")
    try:
        arguments = json.loads(raw) if raw.strip() else {}
    except (ValueError, RecursionError):
        # Never turn bad arguments into {}: keep the raw text, and say so on the part.
        return Part(tool_request=ToolRequest(name=name, ref=ref, input=raw),
                    metadata={"invalidArguments": "the model's tool-call arguments are not valid JSON"})
    return Part(tool_request=ToolRequest(name=name, ref=ref, input=arguments))


def usage(raw: Mapping[str, Any] | None) -> Usage | None:
    if not raw:
        return None
    inputs = raw.get("input_tokens_details") or {}
    return Usage(input_tokens=raw.get("input_tokens"), output_tokens=raw.get("output_tokens"),
                 total_tokens=raw.get("total_tokens"), cached_content_tokens=inputs.get("cached_tokens"),
                 cache_creation_tokens=inputs.get("cache_write_tokens") or None,
                 thoughts_tokens=(raw.get("output_tokens_details") or {}).get("reasoning_tokens"))


# -- streaming -------------------------------------------------------------------------------------

@dataclass
class ResponsesStreamState:
    """Output items built from the events (by output index), and the final Response once it arrives.

    Streamed text and arguments are kept as lists of pieces, joined only for a snapshot: appending to
    a string held in a dict copies it every time, which made a 64 MB stream take minutes."""

    provider: str
    request_id: str | None = None
    items: dict[int, dict[str, Any]] = field(default_factory=dict)
    pieces: dict[int, list[str]] = field(default_factory=dict)  # text or arguments streamed for an item not yet done
    final: dict[str, Any] | None = None
    chars: int = 0
    lengths: dict[int, int] = field(default_factory=dict)  # arguments streamed so far, per item
    shown: dict[int, int] = field(default_factory=dict)  # their length when last handed on, per item

    def parse(self, event: SSEEvent) -> Any:
        """The event's data, checked: an error event or a wrongly shaped one is a ModelError keeping the partial."""
        data = sse_json(event, self.provider, partial=self.snapshot, request=self.request_id)
        if isinstance(data, Mapping) and data.get("type") == "error":  # `{"type": "error", "code", "message"}`
            event, data = SSEEvent("error", event.data), {k: v for k, v in data.items() if k != "type"}
        if (error := stream_error(event, data, self.provider, self.request_id, self.snapshot)) is not None:
            raise error
        check(data, EVENT, self.provider, what="a stream event", request_id=self.request_id, partial=self.snapshot)
        return data

    def add(self, data: Mapping[str, Any], on_chunk: OnChunk) -> None:
        kind = data.get("type") or ""
        if kind in ("response.completed", "response.incomplete"):
            self.final = dict(data.get("response") or {})
        elif kind == "response.failed":
            raise failed((data.get("response") or {}).get("error") or {}, self.provider, self.request_id, self.snapshot())
        elif kind == "response.output_item.added":
            self.items[self._index(data)] = dict(data.get("item") or {})
        elif kind == "response.output_item.done":  # the whole item: what was streamed for it is no longer needed
            self.items[self._index(data)] = dict(data.get("item") or {})
            self.pieces.pop(self._index(data), None)
        elif kind == "response.output_text.delta":
            self._text(data, on_chunk)
        elif kind == "response.function_call_arguments.delta":
            self._arguments(data, on_chunk)

    def _index(self, data: Mapping[str, Any]) -> int:
        return int(data.get("output_index", len(self.items)))

    def _text(self, data: Mapping[str, Any], on_chunk: OnChunk) -> None:
        delta = data.get("delta") or ""
        index = self._index(data)
        self.items.setdefault(index, {"type": "message", "role": "assistant", "content": []})
        self.pieces.setdefault(index, []).append(delta)
        self.chars += len(delta)
        if delta:
            on_chunk(ModelChunk(content=[Part(text=delta)]))

    def _arguments(self, data: Mapping[str, Any], on_chunk: OnChunk) -> None:
        delta = data.get("delta") or ""
        index = self._index(data)
        item = self.items.setdefault(index, {"type": "function_call", "name": "", "arguments": ""})
        self.pieces.setdefault(index, []).append(delta)
        self.chars += len(delta)
        length = self.lengths[index] = self.lengths.get(index, 0) + len(delta)
        # The arguments so far go out with every delta while short, then each time they double: linear in total.
        if length <= 4096 or length >= 2 * self.shown.get(index, 0):
            self.shown[index] = length
            arguments = (item.get("arguments") or "") + "".join(self.pieces[index])
            request = ToolRequest(name=item.get("name") or "", ref=item.get("call_id"), input=arguments, partial=True)
            on_chunk(ModelChunk(content=[Part(tool_request=request)]))

    def snapshot(self) -> dict[str, Any]:
        return {"status": "in_progress", "output": [self._item(i) for i in sorted(self.items)]}

    def _item(self, index: int) -> dict[str, Any]:
        item = dict(self.items[index])
        streamed = "".join(self.pieces.get(index, ()))
        if not streamed:
            return item
        if item.get("type") == "function_call":
            item["arguments"] = (item.get("arguments") or "") + streamed
        else:
            item["content"] = [*(item.get("content") or []), {"type": "output_text", "text": streamed}]
        return item

    @property
    def finished(self) -> bool:
        return self.final is not None

    def incomplete(self) -> str | None:
        return None if self.final is not None else f"the stream ended without response.completed after {self.chars} characters"

    def reply(self) -> dict[str, Any]:
        return self.final_response()

    def final_response(self) -> dict[str, Any]:
        """The Response the last event carried; servers that leave its output empty get the items streamed."""
        final = dict(self.final or {})
        if not final.get("output") and self.items:
            final["output"] = self.snapshot()["output"]
        return final

    def fail(self, message: str, *, retryable: bool = False) -> ModelError:
        return ModelError(message, provider=self.provider, request_id=self.request_id, retryable=retryable,
                          partial=self.snapshot())


# The provider table the registry reads (registry.BUILT_IN_PROVIDERS names this module for its prefix).
PROVIDERS = {"openai-responses": OpenAIResponsesModel}
