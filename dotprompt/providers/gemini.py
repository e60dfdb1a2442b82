"""Google Gemini API (`models/{model}:generateContent`, `:streamGenerateContent?alt=sse`).

`to_body` maps our request to the wire once; `from_response` maps a reply back; the streaming path
accumulates the incremental GenerateContentResponse events into one and reuses `from_response`.

Constrained output is native (`responseMimeType` + `responseSchema`) but declared `"no-tools"`:
Gemini 2.x refuses a JSON response MIME type together with function declarations ("Function
calling with a response mime type: 'application/json' is unsupported"). Gemini 3 accepts both, so a
`gemini-3*` model is declared `"all"` (pass `info=` to say otherwise). The mechanism is reported as
`custom["structuredOutput"] == "native"` (the schema goes through `gemini_schema`, a subset).
Media: images, audio, video, PDF and text go as `inlineData` (data: URLs) or `fileData` (URLs).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from ..errors import ModelError
from ..types import GenerateRequest, Media, Message, ModelChunk, ModelResponse, Part, ToolRequest, Usage
from .base import ModelInfo, OnChunk
from .config import ProviderSpec
from .dialects.gemini import gemini_schema
from .dialects.shape import COUNT, OBJECT, STR, check, shape_guard
from .dialects.strict import OWN_CONFIG_KEYS, Structured, structured_output
from .events import sse_json, stream_error
from .http_model import HttpModel
from .media import OTHER, media_input, unsupported

__all__ = ["GEMINI3_INFO", "GEMINI_INFO", "GOOGLEAI", "PROVIDERS", "GeminiModel", "from_response", "gemini_info",
           "gemini_structured", "to_body", "to_contents", "tool_args"]

FINISH = {"STOP": "stop", "MAX_TOKENS": "length", "SAFETY": "blocked", "RECITATION": "blocked", "BLOCKLIST": "blocked",
          "PROHIBITED_CONTENT": "blocked", "SPII": "blocked", "IMAGE_SAFETY": "blocked"}
TOOL_MODES = {"auto": "AUTO", "required": "ANY", "none": "NONE"}
# Config keys that are fields of the request itself; every other key goes into generationConfig.
REQUEST_KEYS = frozenset({"safetySettings", "cachedContent"})
# Gemini gives function calls no id (or not always): refs we make up carry this prefix and are not sent back.
SYNTHETIC_REF = "gemini-call-"
GEMINI_INFO = ModelInfo(label="Gemini", constrained="no-tools", media=True)
GEMINI3_INFO = ModelInfo(label="Gemini 3", constrained="all", media=True)  # JSON output and function calling together
MEDIA_ACCEPTED = "images, audio, video, PDF and text/* (data: URLs inline, other URLs as fileData)"
GOOGLEAI = ProviderSpec("googleai", "https://generativelanguage.googleapis.com/v1beta",
                        key_vars=("GEMINI_API_KEY", "GOOGLE_API_KEY"), base_url_var="GEMINI_BASE_URL")

# The fields the mapping below reads, and their types (dialects/shape.py).
PART = {"text": STR, "thoughtSignature": STR, "functionCall": {"name": STR, "id": STR, "args": OBJECT},
        "inlineData": {"mimeType": STR, "data": STR}, "fileData": {"fileUri": STR, "mimeType": STR}}
CANDIDATE = {"content": {"parts": [PART]}, "finishReason": STR, "finishMessage": STR, "index": COUNT}
USAGE = {k: COUNT for k in ("promptTokenCount", "candidatesTokenCount", "thoughtsTokenCount", "totalTokenCount",
                            "cachedContentTokenCount")}
RESPONSE = {"candidates": [CANDIDATE], "usageMetadata": USAGE,
            "promptFeedback": {"blockReason": STR, "blockReasonMessage": STR}}


class GeminiModel(HttpModel):
    """A Gemini model through the Gemini Developer API: `googleai/gemini-2.5-flash`, ..."""

    specs = (GOOGLEAI,)
    default_info = GEMINI_INFO

    def __init__(self, name: str, **options: Any) -> None:
        super().__init__(name, **options)
        if options.get("info") is None and gemini_info(self.model_id) is not None:
            self.info = GEMINI3_INFO

    def headers(self) -> dict[str, str]:
        # The key goes in a header, never in `?key=`: URLs end up in error messages and logs.
        return {"x-goog-api-key": self.config.api_key} if self.config.api_key else {}

    def path(self, stream: bool) -> str:
        model = self.model_id if self.model_id.startswith(("models/", "tunedModels/")) else f"models/{self.model_id}"
        return f"/{model}:streamGenerateContent?alt=sse" if stream else f"/{model}:generateContent"

    def structured(self, request: GenerateRequest) -> Structured | None:
        return gemini_structured(request)  # never strict, so log_fallback has nothing to say

    def body(self, request: GenerateRequest, *, stream: bool, structured: Structured | None) -> dict[str, Any]:
        return to_body(request)  # the same body either way: streaming is in the path

    def reply(self, data: Any, request: str | None, structured: Structured | None) -> ModelResponse:
        return from_response(data, self.config.provider, structured=structured)

    def stream_state(self, structured: Structured | None) -> _StreamState:
        return _StreamState(self.config.provider)


def gemini_info(model_id: str) -> ModelInfo | None:
    """The capabilities a model id implies when they differ from GEMINI_INFO: Gemini 3 takes a schema with tools."""
    name = model_id.rsplit("/", 1)[-1]
    return GEMINI3_INFO if name.startswith("gemini-3") else None


def gemini_structured(request: GenerateRequest) -> Structured | None:
    """responseSchema is the API's own JSON mode (not a strict grammar over the full schema): `native`."""
    return structured_output(request, None)


# -- request ---------------------------------------------------------------------------------------

def to_body(request: GenerateRequest) -> dict[str, Any]:
    body: dict[str, Any] = {"contents": to_contents(request.messages)}
    system = [{"text": p.text} for m in request.messages if m.role == "system" for p in m.content if p.text]
    if system:
        body["systemInstruction"] = {"parts": system}
    if request.tools:
        body["tools"] = [{"functionDeclarations": [_declaration(t.name, t.description, t.input_schema)
                                                   for t in request.tools]}]
        if request.tool_choice:
            body["toolConfig"] = {"functionCallingConfig": {"mode": TOOL_MODES[request.tool_choice]}}
    generation = {k: v for k, v in request.config.items() if k not in REQUEST_KEYS and k not in OWN_CONFIG_KEYS}
    body.update({k: v for k, v in request.config.items() if k in REQUEST_KEYS})
    output = request.output
    if output is not None and output.constrained and output.json_schema is not None:
        generation["responseMimeType"] = "application/json"
        generation["responseSchema"] = gemini_schema(output.json_schema)
    if generation:
        body["generationConfig"] = generation
    return body


def _declaration(name: str, description: str, schema: dict[str, Any]) -> dict[str, Any]:
    declaration: dict[str, Any] = {"name": name, "description": description}
    if schema.get("properties"):  # the API refuses an OBJECT without properties: a tool with no input has none
        declaration["parameters"] = gemini_schema(schema)
    return declaration


def to_contents(messages: list[Message]) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for message in messages:
        if message.role == "system":
            continue
        parts = [p for part in message.content if (p := _wire_part(part)) is not None]
        if not parts:
            continue
        # Function responses travel in a `user` turn (the API knows only `user` and `model`);
        # consecutive same-role turns are merged so the roles alternate.
        role = "model" if message.role == "model" else "user"
        if out and out[-1]["role"] == role:
            out[-1]["parts"].extend(parts)
        else:
            out.append({"role": role, "parts": parts})
    return out


def _wire_part(part: Part) -> dict[str, Any] | None:
    out = _content(part)
    signature = (part.metadata or {}).get("thoughtSignature")
    if signature and out is not None:
        out["thoughtSignature"] = signature  # Gemini 3 refuses a function call sent back without it
    return out


def _content(part: Part) -> dict[str, Any] | None:
    if part.text is not None:
        return {"text": part.text} if part.text or (part.metadata or {}).get("thoughtSignature") else None
    if part.media is not None:
        return _media(part.media)
    if part.tool_request is not None:
        call = {"name": part.tool_request.name, "args": tool_args(part.tool_request.input)}
        return {"functionCall": _with_id(call, part.tool_request.ref)}
    if part.tool_response is not None:
        output = part.tool_response.output
        response = {"name": part.tool_response.name, "response": output if isinstance(output, dict) else {"output": output}}
        return {"functionResponse": _with_id(response, part.tool_response.ref)}
    if part.data is not None:
        return {"text": json.dumps(part.data, ensure_ascii=False)}
    return _echoed(part)


def _with_id(value: dict[str, Any], ref: str | None) -> dict[str, Any]:
    if ref and not ref.startswith(SYNTHETIC_REF):
        value["id"] = ref
    return value


def tool_args(value: Any) -> dict[str, Any]:
    """functionCall.args must be an object: anything else kept raw goes back wrapped, never as {}."""
    if isinstance(value, dict):
        return value
    return {} if value is None else {"rawInput": value}


def _echoed(part: Part) -> dict[str, Any] | None:
    if part.reasoning is not None and (part.metadata or {}).get("thoughtSignature"):
        return {"text": part.reasoning, "thought": True}  # only signed thoughts carry anything the API reads
    if part.custom and isinstance(part.custom.get("gemini"), dict):
        return dict(part.custom["gemini"])  # executable code, code results, ...: returned verbatim
    return None


def _media(media: Media) -> dict[str, Any]:
    item = media_input(media)
    if item.content_type and item.kind == OTHER:
        raise unsupported("Gemini", item, MEDIA_ACCEPTED)
    if item.data is not None:
        return {"inlineData": {"mimeType": item.content_type, "data": item.data}}
    file: dict[str, Any] = {"fileUri": media.url}
    if item.content_type:
        file["mimeType"] = item.content_type
    return {"fileData": file}


# -- response --------------------------------------------------------------------------------------

def from_response(data: Mapping[str, Any], provider: str, *, structured: Structured | None = None) -> ModelResponse:
    """Our response for a GenerateContentResponse; `structured` (from the request) is reported as
    `custom["structuredOutput"]`."""
    check(data, RESPONSE, provider)
    with shape_guard(provider):
        response = _response(data, provider)
    if structured is not None:
        response.custom = structured.note()
    return response


def _response(data: Mapping[str, Any], provider: str) -> ModelResponse:
    candidates = data.get("candidates") if isinstance(data, Mapping) else None
    if not candidates:
        return _blocked(data, provider)
    candidate = candidates[0]
    parts = [_part(raw, i) for i, raw in enumerate((candidate.get("content") or {}).get("parts") or [])]
    reason = candidate.get("finishReason")
    return ModelResponse(message=Message(role="model", content=[p for p in parts if p is not None]),
                         finish_reason=FINISH.get(reason, "other") if reason else "unknown",  # type: ignore[arg-type]
                         finish_message=candidate.get("finishMessage") or reason,
                         usage=_usage(data.get("usageMetadata")), raw=data)


def _blocked(data: Any, provider: str) -> ModelResponse:
    """No candidates: the prompt itself was blocked (promptFeedback says why), else a broken reply."""
    feedback = (data.get("promptFeedback") if isinstance(data, Mapping) else None) or {}
    reason = feedback.get("blockReason")
    if not reason:
        raise ModelError(f"the reply has no candidates: {json.dumps(data)[:500]}", provider=provider)
    message = f"the prompt was blocked: {reason}"
    if feedback.get("blockReasonMessage"):
        message += f" ({feedback['blockReasonMessage']})"
    return ModelResponse(message=Message(role="model", content=[]), finish_reason="blocked", finish_message=message,
                         usage=_usage(data.get("usageMetadata")), raw=data)


def _part(raw: Mapping[str, Any], position: int) -> Part | None:
    part = _part_content(raw, position)
    if part is not None and raw.get("thoughtSignature"):
        part.metadata = {**(part.metadata or {}), "thoughtSignature": raw["thoughtSignature"]}
    return part


def _part_content(raw: Mapping[str, Any], position: int) -> Part | None:
    if "text" in raw:
        return Part(reasoning=raw["text"]) if raw.get("thought") else Part(text=raw["text"])
    if "functionCall" in raw:
        call = raw["functionCall"] or {}
        return Part(tool_request=ToolRequest(name=call.get("name", ""), ref=call.get("id") or f"{SYNTHETIC_REF}{position}",
                                             input=call.get("args", {})))
    if "inlineData" in raw:
        inline = raw["inlineData"] or {}
        mime = inline.get("mimeType", "application/octet-stream")
        return Part(media=Media(url=f"data:{mime};base64,{inline.get('data', '')}", content_type=mime))
    if "fileData" in raw:
        file = raw["fileData"] or {}
        return Part(media=Media(url=file.get("fileUri", ""), content_type=file.get("mimeType")))
    keep = {k: v for k, v in raw.items() if k != "thoughtSignature"}
    return Part(custom={"gemini": keep}) if keep else None


def _usage(usage: Mapping[str, Any] | None) -> Usage | None:
    if not usage:
        return None
    # Thinking tokens are billed as output but counted apart from the candidates.
    counts = [usage.get("candidatesTokenCount"), usage.get("thoughtsTokenCount")]
    outputs = sum(c for c in counts if c) if any(c is not None for c in counts) else None
    return Usage(input_tokens=usage.get("promptTokenCount"), output_tokens=outputs, total_tokens=usage.get("totalTokenCount"),
                 cached_content_tokens=usage.get("cachedContentTokenCount"), thoughts_tokens=usage.get("thoughtsTokenCount"))


# -- streaming -------------------------------------------------------------------------------------

@dataclass
class _StreamState:
    """Streamed responses accumulated into one; consecutive text pieces merged into one part."""

    provider: str
    request_id: str | None = None
    parts: list[dict[str, Any]] = field(default_factory=list)
    finish: str | None = None
    finish_message: str | None = None
    usage: Mapping[str, Any] | None = None
    feedback: Mapping[str, Any] = field(default_factory=dict)
    extra: dict[str, Any] = field(default_factory=dict)
    chars: int = 0

    def parse(self, event: Any) -> Any:
        """The event's data, checked: an error event or a wrongly shaped one is a ModelError keeping the partial."""
        data = sse_json(event, self.provider, partial=self.snapshot, request=self.request_id)
        if (error := stream_error(event, data, self.provider, self.request_id, self.snapshot)) is not None:
            raise error
        check(data, RESPONSE, self.provider, what="a stream event", request_id=self.request_id, partial=self.snapshot)
        return data

    def add(self, data: Mapping[str, Any], on_chunk: OnChunk) -> None:
        self.usage = data.get("usageMetadata") or self.usage  # each event carries the running totals
        self.feedback = data.get("promptFeedback") or self.feedback
        self.extra.update({k: data[k] for k in ("modelVersion", "responseId") if k in data})
        for candidate in data.get("candidates") or []:
            if candidate.get("index", 0) != 0:  # with candidateCount > 1 each event may hold any of them
                continue
            for raw in (candidate.get("content") or {}).get("parts") or []:
                self._add_part(raw, on_chunk)
            self.finish = candidate.get("finishReason") or self.finish
            self.finish_message = candidate.get("finishMessage") or self.finish_message

    def _add_part(self, raw: Mapping[str, Any], on_chunk: OnChunk) -> None:
        last = self.parts[-1] if self.parts else None
        text = raw.get("text")
        if isinstance(text, str):
            self.chars += len(text)
        if isinstance(text, str) and last is not None and _continues(last, raw):
            last["text"] += text
            if raw.get("thoughtSignature"):  # Gemini may send the signature alone, after the text it signs
                last["thoughtSignature"] = raw["thoughtSignature"]
        else:
            self.parts.append(dict(raw))
        part = _part(raw, len(self.parts) - 1)  # the same position (and so ref) the final reply gives it
        if part is not None and (text is None or text):
            on_chunk(ModelChunk(content=[part]))

    def fail(self, message: str, *, retryable: bool = False) -> ModelError:
        return ModelError(message, provider=self.provider, request_id=self.request_id, retryable=retryable,
                          partial=self.snapshot())

    finished = False  # the stream just ends: read it to the end

    def incomplete(self) -> str | None:
        if self.finish is None and not self.feedback.get("blockReason"):
            return "the stream ended without a finishReason (the reply is incomplete)"
        return None

    def reply(self) -> dict[str, Any]:
        return self.snapshot()

    def snapshot(self) -> dict[str, Any]:
        candidate: dict[str, Any] = {"content": {"role": "model", "parts": [dict(p) for p in self.parts]}, "index": 0}
        if self.finish:
            candidate["finishReason"] = self.finish
        if self.finish_message:
            candidate["finishMessage"] = self.finish_message
        out: dict[str, Any] = {**self.extra, "candidates": [candidate] if self.parts or self.finish else []}
        if self.usage:
            out["usageMetadata"] = dict(self.usage)
        if self.feedback:
            out["promptFeedback"] = dict(self.feedback)
        return out


def _continues(last: Mapping[str, Any], raw: Mapping[str, Any]) -> bool:
    """A text piece continues the previous part if both are text of the same kind and the previous is unsigned."""
    return ("text" in last and bool(last.get("thought")) == bool(raw.get("thought"))
            and not last.get("thoughtSignature") and set(raw) <= {"text", "thought", "thoughtSignature"})


# The provider table the registry reads (registry.BUILT_IN_PROVIDERS names this module for `googleai/`).
PROVIDERS = {"googleai": GeminiModel}
