"""Our wire formats checked against the vendors' own definitions (the official SDKs, test-only dependencies).

Requests: the SDKs describe request bodies as TypedDicts. pydantic validates those, with two gaps
this module closes:
- `Iterable[...]` fields (messages, content parts, tools, ...) come back as lazy iterators that
  validate nothing until consumed: `consume` walks the result and drains them, so a message with
  role "usr" fails here as it would at the API.
- TypedDicts ignore unknown keys by default, so a misspelt field would pass: `forbid_extra` marks
  every TypedDict reachable from the request type `extra="forbid"` (only in this test process;
  the SDKs themselves never validate their params with pydantic).
Gemini's SDK types are pydantic models with `extra="forbid"` already; the REST request envelope
around them (contents, systemInstruction, generationConfig, ...) is spelled out here from them.

Responses and stream events: parsed with the SDK's own response models.
"""

from __future__ import annotations

import collections.abc
import json
import typing
import warnings
from typing import Any

import pydantic
from anthropic.types import Message as AnthropicMessage
from anthropic.types import RawMessageStreamEvent
from anthropic.types.message_create_params import MessageCreateParamsNonStreaming, MessageCreateParamsStreaming
from anthropic.types.shared import ErrorResponse as AnthropicErrorResponse
from google.genai import types as genai
from openai.types.chat import ChatCompletion, ChatCompletionChunk
from openai.types.chat.completion_create_params import (
    CompletionCreateParamsNonStreaming,
    CompletionCreateParamsStreaming,
)
from openai.types.responses.response_create_params import (
    ResponseCreateParamsNonStreaming,
    ResponseCreateParamsStreaming,
)
from openai.types.shared import ErrorObject as OpenAIErrorObject
from pydantic.alias_generators import to_camel
from typing_extensions import get_type_hints, is_typeddict


def forbid_extra(tp: Any, seen: set[Any] | None = None) -> Any:
    """Mark every TypedDict reachable from `tp` as refusing unknown keys; returns `tp`."""
    seen = set() if seen is None else seen
    if is_typeddict(tp):
        if tp in seen:
            return tp
        seen.add(tp)
        # arbitrary types: a few upload params are typed IO[bytes], which no JSON body holds anyway
        tp.__pydantic_config__ = pydantic.ConfigDict(extra="forbid", arbitrary_types_allowed=True)
        for hint in get_type_hints(tp, include_extras=True).values():
            forbid_extra(hint, seen)
        return tp
    for arg in typing.get_args(tp):
        forbid_extra(arg, seen)
    return tp


def consume(value: Any) -> Any:
    """The validated value with every lazy iterator drained (which is when pydantic validates its items)."""
    if isinstance(value, dict):
        return {k: consume(v) for k, v in value.items()}
    if isinstance(value, (list, tuple, collections.abc.Iterator)):
        return [consume(v) for v in value]
    return value


class _RequestType:
    def __init__(self, non_streaming: Any, streaming: Any) -> None:
        self.adapters = {False: pydantic.TypeAdapter(forbid_extra(non_streaming)),
                         True: pydantic.TypeAdapter(forbid_extra(streaming))}

    def check(self, body: dict[str, Any]) -> Any:
        # The JSON round trip is what goes on the wire: tuples become lists, and so on.
        wire = json.loads(json.dumps(body))
        return consume(self.adapters[bool(wire.get("stream"))].validate_python(wire))


OPENAI_REQUEST = _RequestType(CompletionCreateParamsNonStreaming, CompletionCreateParamsStreaming)
ANTHROPIC_REQUEST = _RequestType(MessageCreateParamsNonStreaming, MessageCreateParamsStreaming)
RESPONSES_REQUEST = _RequestType(ResponseCreateParamsNonStreaming, ResponseCreateParamsStreaming)


class GeminiRequest(pydantic.BaseModel):
    """The generateContent REST body, made of the SDK's own types (the SDK has no type for the envelope)."""

    model_config = pydantic.ConfigDict(alias_generator=to_camel, populate_by_name=True, extra="forbid")

    contents: list[genai.Content]
    system_instruction: genai.Content | None = None
    tools: list[genai.Tool] | None = None
    tool_config: genai.ToolConfig | None = None
    safety_settings: list[genai.SafetySetting] | None = None
    generation_config: genai.GenerationConfig | None = None
    cached_content: str | None = None


def check_openai_request(body: dict[str, Any]) -> Any:
    return OPENAI_REQUEST.check(body)


def check_anthropic_request(body: dict[str, Any]) -> Any:
    return ANTHROPIC_REQUEST.check(body)


def check_responses_request(body: dict[str, Any]) -> Any:
    """An OpenAI Responses API body (`POST /v1/responses`)."""
    return RESPONSES_REQUEST.check(body)


class VendorTypeError(ValueError):
    """google-genai only warns about a value outside one of its enums (a Type, a HarmCategory): here it fails."""


def _strict_genai(validate: Any) -> Any:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        result = validate()
    problems = [str(w.message) for w in caught if "is not a valid" in str(w.message)]
    if problems:
        raise VendorTypeError("; ".join(problems))
    return result


def check_gemini_request(body: dict[str, Any]) -> GeminiRequest:
    # JSON mode: bytes fields (inline data, thought signatures) are base64 on the wire and checked as such.
    request = _strict_genai(lambda: GeminiRequest.model_validate_json(json.dumps(body)))
    # The SDK types `role` as any string; the API documents these two (function responses go in a user turn).
    roles = {c.role for c in request.contents} | ({request.system_instruction.role} if request.system_instruction else set())
    if not roles <= {"user", "model", None}:
        raise VendorTypeError(f"Content.role must be 'user' or 'model', not {sorted(roles - {'user', 'model', None})}")
    return request


def check_request(path: str, body: dict[str, Any]) -> Any:
    """Check a body by the endpoint it was sent to."""
    if path.endswith("/chat/completions"):
        return check_openai_request(body)
    if path.endswith("/messages"):
        return check_anthropic_request(body)
    if path.endswith("/responses"):
        return check_responses_request(body)
    if ":generateContent" in path or ":streamGenerateContent" in path:
        return check_gemini_request(body)
    raise AssertionError(f"no vendor type known for a request to {path}")


# -- responses -------------------------------------------------------------------------------------

def check_openai_response(data: Any) -> ChatCompletion:
    return ChatCompletion.model_validate(data)


def check_openai_event(data: Any) -> Any:
    if isinstance(data, dict) and "error" in data:
        return OpenAIErrorObject.model_validate(data["error"])
    return ChatCompletionChunk.model_validate(data)


def check_openai_error(data: Any) -> OpenAIErrorObject:
    return OpenAIErrorObject.model_validate(data["error"])


def check_anthropic_response(data: Any) -> AnthropicMessage:
    return AnthropicMessage.model_validate(data)


_ANTHROPIC_EVENT = pydantic.TypeAdapter(RawMessageStreamEvent)


def check_anthropic_event(data: Any) -> Any:
    kind = data.get("type") if isinstance(data, dict) else None
    if kind == "error":
        return AnthropicErrorResponse.model_validate(data)
    if kind == "ping":  # a keep-alive the SDK skips without a type of its own
        assert data == {"type": "ping"}, data
        return data
    return _ANTHROPIC_EVENT.validate_python(data)


def check_anthropic_error(data: Any) -> AnthropicErrorResponse:
    return AnthropicErrorResponse.model_validate(data)


def check_gemini_response(data: Any) -> genai.GenerateContentResponse:
    return _strict_genai(lambda: genai.GenerateContentResponse.model_validate_json(json.dumps(data)))


def check_gemini_event(data: Any) -> Any:
    if isinstance(data, dict) and "error" in data:
        return check_gemini_error(data)
    return check_gemini_response(data)


class _GeminiError(pydantic.BaseModel):
    # google.rpc.Status as the REST API sends it: GoogleRpcStatus (code, message, details) plus the
    # status name, which the SDK's APIError reads from the same object.
    model_config = pydantic.ConfigDict(extra="forbid")
    error: dict[str, Any]


def check_gemini_error(data: Any) -> genai.GoogleRpcStatus:
    error = _GeminiError.model_validate(data).error
    status = error.get("status")
    assert status is None or isinstance(status, str), f"error.status must be a string, not {status!r}"
    return genai.GoogleRpcStatus.model_validate({k: v for k, v in error.items() if k != "status"})


def sse_data(text: str) -> list[Any]:
    """The JSON data of every event in an SSE fixture ([DONE] left out)."""
    events, lines = [], []
    for line in [*text.splitlines(), ""]:
        if line.startswith("data:"):
            lines.append(line[5:].lstrip())
        elif not line and lines:
            joined = "\n".join(lines)
            lines = []
            if joined.strip() != "[DONE]":
                events.append(json.loads(joined))
    return events
