"""OpenTelemetry spans of generate runs, after the OpenTelemetry GenAI semantic conventions.

    invoke_agent {prompt}        the whole run (INTERNAL); `invoke_agent` for a run without a prompt
     ├── chat {model}            one per model call (CLIENT); a retry or a fallback is a call of its own
     ├── execute_tool {name}     one per tool run (INTERNAL), concurrent ones side by side
     └── chat {model}            ...

Standard attributes: gen_ai.operation.name, gen_ai.provider.name, gen_ai.agent.name,
gen_ai.request.model (and the request's temperature, max_tokens, top_p, ...), gen_ai.response.model,
gen_ai.response.id, gen_ai.response.finish_reasons, gen_ai.usage.input_tokens / output_tokens (and
the cache counts), gen_ai.output.type, gen_ai.tool.name / call.id / type / description, error.type.
Ours, under `dotprompt.`: prompt.name, prompt.variant, prompt.hash, output.format, turn (0-based),
turns, max_turns, output.repairs, stream, tool.interrupted.

Message content (gen_ai.input.messages, gen_ai.output.messages, gen_ai.system_instructions,
gen_ai.tool.call.arguments / result) is recorded only when the user opts in (DOTPROMPT_TRACE_CONTENT=1
or the conventions' OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT=true), and always through
`redact`: never a key or URL credential. error.type is the HTTP status of a failed model call, else
the exception's class name (`OutputValidationError`, `ToolExecutionError`, `TimeoutError`, ...).

The OpenTelemetry API (`dotprompt[otel]`) is never imported here. Spans start once the application
has imported `opentelemetry.trace` (it must, to install an SDK) and set a tracer provider; until then,
with DOTPROMPT_TRACING=0, or without the package, a run gets NO_TRACING, whose context managers do nothing.
"""

from __future__ import annotations

import sys
from typing import Any

from .. import __version__
from .._util.redact import known_secrets, redact, redacted_json
from ..errors import Interrupt, ModelError
from ..identity import PromptIdentity
from ..settings import trace_content, tracing_enabled
from ..types import GenerateRequest, Message, ModelResponse, Part, ToolRequest, Usage

__all__ = ["NO_TRACING", "RunTracing", "error_type", "provider_and_model", "tracing"]

# Prefixes whose provider the conventions name otherwise; any other prefix is its own name.
_PROVIDER_NAMES = {"googleai": "gcp.gemini", "vertexai": "gcp.vertex_ai"}
# Genkit's config keys -> the conventions' request attributes.
_REQUEST_ATTRIBUTES = {"temperature": "temperature", "maxOutputTokens": "max_tokens", "topP": "top_p",
                       "topK": "top_k", "stopSequences": "stop_sequences", "seed": "seed",
                       "presencePenalty": "presence_penalty", "frequencyPenalty": "frequency_penalty"}
_OUTPUT_TYPES = {"text": "text", "json": "json", "jsonl": "json", "array": "json", "enum": "json"}
_ROLES = {"model": "assistant", "user": "user", "tool": "tool", "system": "system"}
_STATUS_CHARS = 500


class _NoTracing:
    """The tracing of a run that records nothing: one shared object, each of its context managers itself."""

    turn = 0  # written by the loop, read by nobody

    def run(self, options: Any) -> _NoTracing:
        return self

    def chat(self, request: GenerateRequest, model: Any) -> _NoTracing:
        return self

    def tool(self, request: ToolRequest, tool: Any) -> _NoTracing:
        return self

    def __enter__(self) -> _NoTracing:
        return self

    def __exit__(self, *exc: object) -> None:
        return None

    def ended(self, value: Any) -> Any:
        return value


NO_TRACING = _NoTracing()

_cached: tuple[Any, Any] | None = None  # (tracer provider, our tracer from it)


def tracing(identity: PromptIdentity | None, model: str, *, stream: bool = False,
            output_format: str | None = None) -> RunTracing | _NoTracing:
    """The tracing of one run: real spans when an SDK is installed and tracing is not turned off."""
    tracer = _tracer()
    if tracer is None:
        return NO_TRACING
    return RunTracing(tracer, identity, model, stream, output_format, trace_content())


def _tracer() -> Any:
    global _cached
    api = sys.modules.get("opentelemetry.trace")  # not imported by the application: no SDK can be installed
    if api is None or not tracing_enabled():
        return None
    provider = api.get_tracer_provider()
    if isinstance(provider, (api.ProxyTracerProvider, api.NoOpTracerProvider)):
        return None  # the API alone: every span would be a no-op, so make none
    if _cached is None or _cached[0] is not provider:
        _cached = (provider, provider.get_tracer("dotprompt", __version__))
    return _cached[1]


def provider_and_model(name: str) -> tuple[str, str]:
    """`openai/gpt-4o-mini` -> ("openai", "gpt-4o-mini"); a name without a provider is `_OTHER`'s."""
    prefix, slash, rest = name.partition("/")
    if not slash:
        return "_OTHER", name
    return _PROVIDER_NAMES.get(prefix, prefix), rest


def error_type(exc: BaseException) -> str:
    """The conventions' error.type: a failed model call's HTTP status, else the exception's class name."""
    if isinstance(exc, ModelError) and exc.status:
        return str(exc.status)
    return type(exc).__qualname__


class RunTracing:
    """Spans of one run. `run`, `chat` and `tool` each give a context manager; `ended(value)` records
    the result on its span and returns the value; an exception leaving it is recorded as the error."""

    def __init__(self, tracer: Any, identity: PromptIdentity | None, model: str, stream: bool,
                 output_format: str | None, content: bool) -> None:
        self.tracer = tracer
        self.identity = identity
        self.provider, self.model = provider_and_model(model)
        self.stream = stream
        self.output_format = output_format
        self.content = content
        self.secrets = known_secrets() if content else []  # read the environment once per run, not per message
        self.turn = 0  # the loop sets it as each turn starts
        self.usages: list[Usage | None] = []
        self.response_model: str | None = None

    def run(self, options: Any) -> _Span:
        identity = self.identity
        attributes: dict[str, Any] = {"gen_ai.operation.name": "invoke_agent", "gen_ai.provider.name": self.provider,
                                      "gen_ai.request.model": self.model, "dotprompt.stream": self.stream,
                                      "dotprompt.max_turns": options.max_turns}
        if identity is not None:
            attributes.update(_identity_attributes(identity))
        if self.output_format is not None:
            attributes["dotprompt.output.format"] = self.output_format
            if self.output_format in _OUTPUT_TYPES:
                attributes["gen_ai.output.type"] = _OUTPUT_TYPES[self.output_format]
        if self.content:
            attributes.update(_input_content(options.messages, self.secrets))
        name = f"invoke_agent {identity.name}" if identity is not None and identity.name else "invoke_agent"
        return _Span(self, name, "INTERNAL", attributes, self._run_ended)

    def chat(self, request: GenerateRequest, model: Any) -> _Span:
        provider, name = provider_and_model(model.name)
        attributes: dict[str, Any] = {"gen_ai.operation.name": "chat", "gen_ai.provider.name": provider,
                                      "gen_ai.request.model": name, "dotprompt.turn": self.turn,
                                      "dotprompt.stream": self.stream}
        attributes.update(_request_attributes(request.config))
        if self.content:
            attributes.update(_input_content(request.messages, self.secrets))
        return _Span(self, f"chat {name}", "CLIENT", attributes, lambda span, reply: self._chat_ended(span, reply, name))

    def tool(self, request: ToolRequest, tool: Any) -> _Span:
        attributes: dict[str, Any] = {"gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": request.name,
                                      "gen_ai.tool.type": "function", "dotprompt.turn": self.turn}
        if request.ref is not None:
            attributes["gen_ai.tool.call.id"] = request.ref
        description = getattr(getattr(tool, "definition", None), "description", None)
        if description:
            attributes["gen_ai.tool.description"] = description
        if self.content:
            attributes["gen_ai.tool.call.arguments"] = _json(request.input, self.secrets)
        return _Span(self, f"execute_tool {request.name}", "INTERNAL", attributes, self._tool_ended)

    # -- results ---------------------------------------------------------------------------------

    def _chat_ended(self, span: Any, reply: ModelResponse, requested: str) -> None:
        self.usages.append(reply.usage)
        raw = reply.raw if isinstance(reply.raw, dict) else {}
        answered = raw.get("model") or raw.get("modelVersion")
        self.response_model = answered if isinstance(answered, str) else requested
        span.set_attribute("gen_ai.response.model", self.response_model)
        response_id = raw.get("id") or raw.get("responseId")
        if isinstance(response_id, str):
            span.set_attribute("gen_ai.response.id", response_id)
        if reply.finish_reason:  # Genkit leaves it out when the model gave none
            span.set_attribute("gen_ai.response.finish_reasons", [reply.finish_reason])
        _set_usage(span, reply.usage)
        if self.content:
            span.set_attribute("gen_ai.output.messages", _output_messages(reply.message, reply.finish_reason, self.secrets))

    def _run_ended(self, span: Any, response: Any) -> None:
        if response.finish_reason:
            span.set_attribute("gen_ai.response.finish_reasons", [response.finish_reason])
        span.set_attribute("dotprompt.turns", self.turn + 1)
        span.set_attribute("dotprompt.output.repairs", len(response.output_repairs))
        if self.response_model is not None:
            span.set_attribute("gen_ai.response.model", self.response_model)
        _set_usage(span, Usage.total(self.usages))
        if self.content:
            span.set_attribute("gen_ai.output.messages",
                               _output_messages(response.message, response.finish_reason, self.secrets))

    def _tool_ended(self, span: Any, output: Any) -> None:
        if self.content:
            span.set_attribute("gen_ai.tool.call.result", _json(output, self.secrets))


class _Span:
    """One span, current while its block runs (so spans started inside it are its children)."""

    __slots__ = ("_attributes", "_kind", "_name", "_on_result", "_span", "_token", "_tracing")

    def __init__(self, tracing: RunTracing, name: str, kind: str, attributes: dict[str, Any], on_result: Any) -> None:
        self._tracing, self._name, self._kind, self._attributes, self._on_result = tracing, name, kind, attributes, on_result

    def __enter__(self) -> _Span:
        api = sys.modules["opentelemetry.trace"]
        context = sys.modules["opentelemetry.context"]
        self._span = self._tracing.tracer.start_span(self._name, kind=getattr(api.SpanKind, self._kind),
                                                     attributes=self._attributes)
        self._token = context.attach(api.set_span_in_context(self._span))
        return self

    def ended(self, value: Any) -> Any:
        self._on_result(self._span, value)
        return value

    def __exit__(self, kind: Any, exc: BaseException | None, tb: Any) -> None:
        try:
            if exc is not None:
                _record_error(self._span, exc)
        finally:
            sys.modules["opentelemetry.context"].detach(self._token)
            self._span.end()


def _record_error(span: Any, exc: BaseException) -> None:
    if isinstance(exc, Interrupt):  # a tool handing the run to a human: not a failure
        span.set_attribute("dotprompt.tool.interrupted", True)
        return
    api = sys.modules["opentelemetry.trace"]
    span.set_attribute("error.type", error_type(exc))
    span.set_status(api.Status(api.StatusCode.ERROR, redact(str(exc))[:_STATUS_CHARS]))


def _identity_attributes(identity: PromptIdentity) -> dict[str, Any]:
    out: dict[str, Any] = {"dotprompt.prompt.hash": identity.hash}
    if identity.name:
        out["gen_ai.agent.name"] = out["dotprompt.prompt.name"] = identity.name
    if identity.variant:
        out["dotprompt.prompt.variant"] = identity.variant
    return out


def _request_attributes(config: dict[str, Any]) -> dict[str, Any]:
    out = {}
    for key, attribute in _REQUEST_ATTRIBUTES.items():
        value = config.get(key)
        number = isinstance(value, (int, float)) and not isinstance(value, bool)
        words = key == "stopSequences" and isinstance(value, list) and all(isinstance(v, str) for v in value)
        if number or words:
            out[f"gen_ai.request.{attribute}"] = value
    return out


def _set_usage(span: Any, usage: Usage | None) -> None:
    if usage is None:
        return
    for attribute, value in (("input_tokens", usage.input_tokens), ("output_tokens", usage.output_tokens),
                             ("cache_read.input_tokens", usage.cached_content_tokens),
                             ("cache_creation.input_tokens", usage.cache_creation_tokens)):
        if value is not None:
            span.set_attribute(f"gen_ai.usage.{attribute}", value)


# -- content, in the conventions' message shape (opt-in only) ------------------------------------

def _json(value: Any, secrets: list[str]) -> str:
    # Masked before encoding: JSON writes a key holding `"` or `\` escaped, and it would match no more.
    return redacted_json(value, secrets)


def _input_content(messages: list[Message], secrets: list[str]) -> dict[str, str]:
    system = [_part(p) for m in messages if m.role == "system" for p in m.content]
    others = [{"role": _ROLES[m.role], "parts": [_part(p) for p in m.content]} for m in messages if m.role != "system"]
    out = {"gen_ai.input.messages": _json(others, secrets)}
    if system:
        out["gen_ai.system_instructions"] = _json(system, secrets)
    return out


def _output_messages(message: Message, finish_reason: str | None, secrets: list[str]) -> str:
    out: dict[str, Any] = {"role": _ROLES[message.role], "parts": [_part(p) for p in message.content]}
    if finish_reason:
        out["finish_reason"] = finish_reason
    return _json([out], secrets)


def _part(part: Part) -> dict[str, Any]:
    if part.text is not None:
        return {"type": "text", "content": part.text}
    if part.tool_request is not None:
        return {"type": "tool_call", "id": part.tool_request.ref, "name": part.tool_request.name,
                "arguments": part.tool_request.input}
    if part.tool_response is not None:
        return {"type": "tool_call_response", "id": part.tool_response.ref, "response": part.tool_response.output}
    if part.media is not None:
        return {"type": "uri", "uri": part.media.url, "mime_type": part.media.content_type}
    if part.reasoning is not None:
        return {"type": "reasoning", "content": part.reasoning}
    return {"type": "data", "content": part.data if part.data is not None else part.custom}
