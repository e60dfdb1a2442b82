"""OpenAI Chat Completions, and every server that speaks it (Ollama, vLLM, llama.cpp's llama-server).

`to_body` maps our request to the wire once; `from_completion` maps a reply back; the streaming
path accumulates deltas into the same shape and reuses `from_completion`.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from .._http.sse import SSEEvent
from ..errors import ModelError
from ..types import GenerateRequest, Media, Message, ModelChunk, ModelResponse, Part, ToolRequest, Usage
from .base import ModelInfo, OnChunk
from .config import ProviderSpec
from .dialects.shape import COUNT, STR, check, shape_guard
from .dialects.strict import OWN_CONFIG_KEYS, Structured, structured_output
from .events import sse_json, stream_error
from .http_model import HttpModel
from .media import AUDIO, IMAGE, PDF, media_input, unsupported

__all__ = ["OLLAMA", "OPENAI", "PROVIDERS", "OpenAIModel", "from_completion", "media_part", "ollama_host", "response_format",
           "to_body", "to_messages"]

# Our config names (Genkit's spelling) -> Chat Completions fields; anything else passes through as is.
CONFIG_KEYS = {"maxOutputTokens": "max_tokens", "topP": "top_p", "stopSequences": "stop",
               "frequencyPenalty": "frequency_penalty", "presencePenalty": "presence_penalty", "topK": "top_k"}
FINISH = {"stop": "stop", "length": "length", "tool_calls": "stop", "function_call": "stop", "content_filter": "blocked"}
OPENAI_INFO = ModelInfo(label="OpenAI-compatible", constrained="all", media=True)
OLLAMA_INFO = ModelInfo(label="Ollama (OpenAI-compatible)", constrained="all", media=True)


def ollama_host(env: Mapping[str, str]) -> str | None:
    """`$OLLAMA_HOST` (`host:port` or a URL), as Ollama's own tools read it."""
    host = env.get("OLLAMA_HOST")
    if not host:
        return None
    return (host if "://" in host else f"http://{host}").rstrip("/") + "/v1"


OPENAI = ProviderSpec("openai", "https://api.openai.com/v1", key_vars=("OPENAI_API_KEY",), base_url_var="OPENAI_BASE_URL")
OLLAMA = ProviderSpec("ollama", "http://127.0.0.1:11434/v1", key_required=False, base_url_from_env=ollama_host)

# The fields the mapping below reads, and their types (dialects/shape.py).
USAGE = {"prompt_tokens": COUNT, "completion_tokens": COUNT, "total_tokens": COUNT,
         "prompt_tokens_details": {"cached_tokens": COUNT, "cache_write_tokens": COUNT},
         "completion_tokens_details": {"reasoning_tokens": COUNT}}
TOOL_CALL = {"id": STR, "function": {"name": STR, "arguments": STR}}
COMPLETION = {"choices": [{"message": {"content": STR, "tool_calls": [TOOL_CALL]}, "finish_reason": STR}], "usage": USAGE}
CHUNK = {"choices": [{"delta": {"content": STR, "tool_calls": [{**TOOL_CALL, "index": COUNT}]}, "finish_reason": STR}],
         "usage": USAGE}


class OpenAIModel(HttpModel):
    """A Chat Completions model: `openai/gpt-4o-mini`, `ollama/llama3.2`, or any compatible server."""

    specs: tuple[ProviderSpec, ...] = (OPENAI, OLLAMA)
    default_info = OPENAI_INFO

    def headers(self) -> dict[str, str]:
        return {"Authorization": f"Bearer {self.config.api_key}"} if self.config.api_key else {}

    def path(self, stream: bool) -> str:
        return "/chat/completions"

    def structured(self, request: GenerateRequest) -> Structured | None:
        return structured_output(request)

    def body(self, request: GenerateRequest, *, stream: bool, structured: Structured | None) -> dict[str, Any]:
        return to_body(request, self.model_id, stream=stream, structured=structured)

    def reply(self, data: Any, request: str | None, structured: Structured | None) -> ModelResponse:
        return from_completion(data, self.config.provider, structured=structured)

    def stream_state(self, structured: Structured | None) -> _StreamState:
        return _StreamState(self.config.provider)


# -- request ---------------------------------------------------------------------------------------

def to_body(request: GenerateRequest, model_id: str, *, stream: bool = False,
            structured: Structured | None = None) -> dict[str, Any]:
    """The Chat Completions body; `structured` is `structured_output(request)`, computed here when not given."""
    body: dict[str, Any] = {"model": model_id, "messages": to_messages(request.messages)}
    for key, value in request.config.items():
        if key not in OWN_CONFIG_KEYS:
            body[CONFIG_KEYS.get(key, key)] = value
    if request.tools:
        body["tools"] = [{"type": "function", "function": {"name": t.name, "description": t.description,
                                                            "parameters": t.input_schema or {"type": "object"}}}
                         for t in request.tools]
        if request.tool_choice:
            body["tool_choice"] = request.tool_choice
    structured = structured if structured is not None else structured_output(request)
    if structured is not None and (format_ := response_format(structured)) is not None:
        body["response_format"] = format_
    if stream:
        body["stream"] = True
        body["stream_options"] = {"include_usage": True}
    return body


def response_format(structured: Structured) -> dict[str, Any] | None:
    """`response_format` for a constrained output: strict when the schema can be made strict, else the schema as is."""
    if structured.strict is None:
        return None
    if structured.strict.schema is not None:
        return {"type": "json_schema", "json_schema": {"name": "output", "schema": structured.strict.schema, "strict": True}}
    return {"type": "json_schema", "json_schema": {"name": "output", "schema": structured.strict.original, "strict": False}}


def to_messages(messages: list[Message]) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    pending_ids: dict[str, list[str]] = {}  # tool name -> ids of calls without a ref, in order
    for index, message in enumerate(messages):
        if message.role == "tool":
            out.extend(_tool_results(message, pending_ids))
        elif message.role == "model":
            out.append(_assistant(message, index, pending_ids))
        else:
            out.append({"role": message.role, "content": _content(message)})
    return out


def _content(message: Message) -> str | list[dict[str, Any]]:
    if all(p.text is not None for p in message.content):
        return "".join(p.text or "" for p in message.content)
    parts: list[dict[str, Any]] = []
    for part in message.content:
        if part.text is not None:
            parts.append({"type": "text", "text": part.text})
        elif part.media is not None:
            parts.append(media_part(part.media))
        elif part.data is not None:
            parts.append({"type": "text", "text": json.dumps(part.data, ensure_ascii=False)})
    return parts


MEDIA_ACCEPTED = "images (URL or data:), PDF files (data:) and wav/mp3 audio (data:)"
AUDIO_FORMATS = {"audio/wav": "wav", "audio/x-wav": "wav", "audio/wave": "wav", "audio/mpeg": "mp3", "audio/mp3": "mp3"}


def media_part(media: Media) -> dict[str, Any]:
    """An image_url, file (PDF) or input_audio content part; anything else is a UsageError before any call."""
    item = media_input(media)
    if item.kind == IMAGE or not item.content_type:  # an untyped URL: an image is what this part has always meant
        return {"type": "image_url", "image_url": {"url": item.data_url}}
    if item.kind == PDF and item.data is not None:
        return {"type": "file", "file": {"filename": item.filename, "file_data": item.data_url}}
    if item.kind == AUDIO and item.data is not None and item.content_type in AUDIO_FORMATS:
        return {"type": "input_audio", "input_audio": {"data": item.data, "format": AUDIO_FORMATS[item.content_type]}}
    hint = "pass the file inline as a data: URL" if item.kind in (PDF, AUDIO) and item.data is None else ""
    raise unsupported("OpenAI Chat Completions", item, MEDIA_ACCEPTED, hint)


def _assistant(message: Message, index: int, pending_ids: dict[str, list[str]]) -> dict[str, Any]:
    text = "".join(p.text for p in message.content if p.text is not None)
    calls = []
    for position, part in enumerate(message.content):
        request = part.tool_request
        if request is None:
            continue
        call_id = request.ref or f"call_{index}_{position}"
        if request.ref is None:
            pending_ids.setdefault(request.name, []).append(call_id)
        arguments = request.input if isinstance(request.input, str) else json.dumps(request.input or {}, ensure_ascii=False)
        calls.append({"id": call_id, "type": "function", "function": {"name": request.name, "arguments": arguments}})
    out: dict[str, Any] = {"role": "assistant", "content": text or None}
    if calls:
        out["tool_calls"] = calls
    return out


def _tool_results(message: Message, pending_ids: dict[str, list[str]]) -> list[dict[str, Any]]:
    out = []
    for part in message.content:
        response = part.tool_response
        if response is None:
            continue
        waiting = pending_ids.get(response.name) or []
        call_id = response.ref or (waiting.pop(0) if waiting else response.name)
        out.append({"role": "tool", "tool_call_id": call_id, "content": json.dumps(response.output, ensure_ascii=False)})
    return out


# -- response --------------------------------------------------------------------------------------

def from_completion(data: Mapping[str, Any], provider: str, *, structured: Structured | None = None) -> ModelResponse:
    """Our response for a completion; `structured` (from the request) restores strict-mode nulls and is reported
    as `custom["structuredOutput"]`."""
    check(data, COMPLETION, provider)
    try:
        choice = data["choices"][0]
    except (KeyError, IndexError, TypeError):
        raise ModelError(f"the reply has no choices: {json.dumps(data)[:500]}", provider=provider) from None
    with shape_guard(provider):
        response = _response(data, choice, structured)
    if structured is not None:
        response.custom = structured.note()
    return response


def _response(data: Mapping[str, Any], choice: Mapping[str, Any], structured: Structured | None) -> ModelResponse:
    message = choice.get("message") or {}
    parts: list[Part] = []
    if message.get("content"):
        parts.append(Part(text=structured.restore_text(message["content"]) if structured else message["content"]))
    for call in message.get("tool_calls") or []:
        parts.append(_tool_part(call))
    return ModelResponse(message=Message(role="model", content=parts),
                         finish_reason=FINISH.get(choice.get("finish_reason") or "", "other"),  # type: ignore[arg-type]
                         finish_message=choice.get("finish_reason"), usage=_usage(data.get("usage")), raw=data)


def _tool_part(call: Mapping[str, Any]) -> Part:
    function = call.get("function") or {}
    raw = function.get("arguments") or ""
    try:
        arguments = json.loads(raw) if raw.strip() else {}
    except (ValueError, RecursionError):  # not JSON, or nested past what the parser takes
        # Never turn bad arguments into {}: keep the raw text, and say so on the part.
        return Part(tool_request=ToolRequest(name=function.get("name", ""), ref=call.get("id"), input=raw),
                    metadata={"invalidArguments": "the model's tool-call arguments are not valid JSON"})
    return Part(tool_request=ToolRequest(name=function.get("name", ""), ref=call.get("id"), input=arguments))


def _usage(usage: Mapping[str, Any] | None) -> Usage | None:
    if not usage:
        return None
    prompt = usage.get("prompt_tokens_details") or {}
    completion = usage.get("completion_tokens_details") or {}
    return Usage(input_tokens=usage.get("prompt_tokens"), output_tokens=usage.get("completion_tokens"),
                 total_tokens=usage.get("total_tokens"), cached_content_tokens=prompt.get("cached_tokens"),
                 cache_creation_tokens=prompt.get("cache_write_tokens"), thoughts_tokens=completion.get("reasoning_tokens"))


@dataclass
class _StreamState:
    """Deltas accumulated into one completion-shaped dict; tool-call fragments kept per index."""

    provider: str
    request_id: str | None = None
    text: list[str] = field(default_factory=list)
    calls: dict[int, dict[str, Any]] = field(default_factory=dict)
    finish: str | None = None
    usage: Mapping[str, Any] | None = None
    chars: int = 0
    finished: bool = False  # `data: [DONE]` came

    def parse(self, event: SSEEvent) -> Mapping[str, Any]:
        if event.data.strip() == "[DONE]":
            self.finished = True
            return {}
        data = sse_json(event, self.provider, partial=self.snapshot, request=self.request_id)
        if (error := stream_error(event, data, self.provider, self.request_id, self.snapshot)) is not None:
            raise error
        check(data, CHUNK, self.provider, what="a stream event", request_id=self.request_id, partial=self.snapshot)
        return data

    def incomplete(self) -> str | None:
        return None if self.finish is not None else f"the stream ended without a finish reason after {self.chars} characters"

    def reply(self) -> dict[str, Any]:
        return self.snapshot()

    def fail(self, message: str, *, retryable: bool = False) -> ModelError:
        # No request id, as before the call skeleton was shared: the id is on the stream errors `parse` raises.
        return ModelError(message, provider=self.provider, retryable=retryable, partial=self.snapshot())

    def add(self, data: Mapping[str, Any], on_chunk: OnChunk) -> None:
        if data.get("usage"):
            self.usage = data["usage"]
        for choice in data.get("choices") or []:
            delta = choice.get("delta") or {}
            if choice.get("finish_reason"):
                self.finish = choice["finish_reason"]
            if delta.get("content"):
                self.text.append(delta["content"])
                self.chars += len(delta["content"])
                on_chunk(ModelChunk(content=[Part(text=delta["content"])]))
            for fragment in delta.get("tool_calls") or []:
                on_chunk(ModelChunk(content=[self._call_fragment(fragment)]))

    def _call_fragment(self, fragment: Mapping[str, Any]) -> Part:
        call = self.calls.setdefault(fragment.get("index", len(self.calls)), {"id": None, "name": "", "arguments": ""})
        call["id"] = fragment.get("id") or call["id"]
        function = fragment.get("function") or {}
        call["name"] += function.get("name") or ""
        call["arguments"] += function.get("arguments") or ""
        self.chars += len(function.get("arguments") or "")
        return Part(tool_request=ToolRequest(name=call["name"], ref=call["id"], input=call["arguments"], partial=True))

    def snapshot(self) -> dict[str, Any]:
        calls = [{"id": c["id"], "type": "function", "function": {"name": c["name"], "arguments": c["arguments"]}}
                 for _, c in sorted(self.calls.items())]
        message: dict[str, Any] = {"role": "assistant", "content": "".join(self.text) or None}
        if calls:
            message["tool_calls"] = calls
        return {"choices": [{"message": message, "finish_reason": self.finish}], "usage": self.usage}


# The provider table the registry reads (registry.BUILT_IN_PROVIDERS names this module for these prefixes).
PROVIDERS = {"openai": OpenAIModel, "ollama": functools.partial(OpenAIModel, info=OLLAMA_INFO)}
