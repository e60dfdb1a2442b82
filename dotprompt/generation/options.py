"""The option layers: what a person passes (GenerateOptions) -> plain, serialisable action options.

GenerateOptions holds live objects (tool functions, pydantic classes, callbacks, middleware);
GenerateActionOptions holds only names and JSON (it can be logged, stored, replayed); a
GenerateRequest is built from it fresh for every turn (loop.py).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from pydantic import BaseModel, Field

from ..document.rendered import RenderedPrompt
from ..schema.compiled import is_model_class, json_schema_of
from ..settings import DEFAULT_MAX_TURNS, check_max_tool_calls, check_max_turns
from ..types import Message, Part, ToolRequest, ToolResponse, WireModel, construct
from .response import ChunkCallback

__all__ = ["GenerateActionOptions", "GenerateOptions", "OutputOptions", "Resume", "messages_from", "output_type_of",
           "rendered_options", "to_action_options"]

ToolErrors = Literal["return", "raise"]


class OutputOptions(WireModel):
    format: str | None = None
    json_schema: dict[str, Any] | None = Field(default=None, alias="schema")
    constrained: bool | None = None
    instructions: bool | str | None = None
    content_type: str | None = None
    grounding: Literal["off", "report", "require"] | None = None  # None: report for JSON with a schema


class Resume(WireModel):
    """Continue after an interrupt: answers for interrupted tool requests, or requests to run again.

    Entries are parts, as in Genkit (`tool.respond(part, output)` / `tool.restart(part, resumed)` build
    them), or the short forms: a bare ToolResponse answer is marked `interruptResponse: true` as
    `respond` marks it, a bare ToolRequest restarts with `resumed: true`. `metadata` goes on the tool
    message as `resumed` (True when none)."""

    respond: list[ToolResponse | Part] = Field(default_factory=list)
    restart: list[ToolRequest | Part] = Field(default_factory=list)
    metadata: dict[str, Any] | None = None


class GenerateActionOptions(WireModel):
    """Plain, JSON-serialisable options of one generate run."""

    model: str | None = None
    messages: list[Message] = Field(default_factory=list)
    tools: list[str] = Field(default_factory=list)
    tool_choice: Literal["auto", "required", "none"] | None = None
    config: dict[str, Any] = Field(default_factory=dict)
    output: OutputOptions = Field(default_factory=OutputOptions)
    max_turns: int = DEFAULT_MAX_TURNS
    max_tool_calls: int | None = None  # per model reply; None: DEFAULT_MAX_TOOL_CALLS
    return_tool_requests: bool = False
    tool_errors: ToolErrors = "return"
    resume: Resume | None = None
    use: list[str | dict[str, Any]] = Field(default_factory=list)  # names and {name: {arguments}}, in order


@dataclass
class GenerateOptions:
    """What a person passes to `generate()`: live objects allowed."""

    model: Any = None  # a name or a Model object
    prompt: str | Sequence[Part | dict[str, Any]] | None = None
    system: str | Sequence[Part | dict[str, Any]] | None = None
    messages: Sequence[Message | dict[str, Any]] = ()
    tools: Sequence[Any] = ()  # Tool objects or names
    tool_choice: Literal["auto", "required", "none"] | None = None
    config: dict[str, Any] | None = None
    output_schema: Any = None  # a pydantic class or JSON Schema
    output_format: str | None = None
    output_constrained: bool | None = None
    output_instructions: bool | str | None = None
    output_grounding: Literal["off", "report", "require"] | None = None  # applies to a prompt's runs (grounded in its input)
    max_turns: int | None = None
    max_tool_calls: int | None = None  # tool calls one model reply may ask for
    return_tool_requests: bool = False
    tool_errors: ToolErrors = "return"
    resume: Resume | dict[str, Any] | None = None
    use: Sequence[Any] = ()  # middleware objects, callables, names or {name: {arguments}}, outermost first
    on_chunk: ChunkCallback | None = None
    context: Mapping[str, Any] | None = None  # the caller's context (auth, ...), handed to tools; never sent


def output_type_of(schema: Any) -> type[BaseModel] | None:
    return schema if is_model_class(schema) else None


def to_action_options(opts: GenerateOptions) -> GenerateActionOptions:
    """Live options -> plain options: tool names, JSON Schema, one messages list."""
    if opts.max_turns is not None:
        check_max_turns(opts.max_turns)
    if opts.max_tool_calls is not None:
        check_max_tool_calls(opts.max_tool_calls)
    schema = json_schema_of(opts.output_schema) if opts.output_schema is not None else None
    output = OutputOptions(format=opts.output_format or ("json" if schema is not None else None), schema=schema,
                           constrained=opts.output_constrained, instructions=opts.output_instructions,
                           grounding=opts.output_grounding)
    resume = Resume.model_validate(opts.resume) if isinstance(opts.resume, dict) else opts.resume
    return GenerateActionOptions(
        model=opts.model if isinstance(opts.model, str) or opts.model is None else getattr(opts.model, "name", None),
        messages=messages_from(opts.system, opts.messages, opts.prompt),
        tools=[t if isinstance(t, str) else t.name for t in opts.tools],
        tool_choice=opts.tool_choice, config=dict(opts.config or {}), output=output,
        max_turns=opts.max_turns if opts.max_turns is not None else DEFAULT_MAX_TURNS,
        max_tool_calls=opts.max_tool_calls, return_tool_requests=opts.return_tool_requests,
        tool_errors=opts.tool_errors, resume=resume,
        use=[u if isinstance(u, str) else dict(u) for u in opts.use if isinstance(u, (str, Mapping))],
    )


def messages_from(system: Any, history: Sequence[Message | dict[str, Any]], prompt: Any) -> list[Message]:
    """system + history + prompt, in that order, as one list."""
    out: list[Message] = []
    if system:
        out.append(Message(role="system", content=_parts(system)))
    out.extend(m if isinstance(m, Message) else Message.model_validate(m) for m in history)
    if prompt:
        out.append(Message(role="user", content=_parts(prompt)))
    return out


def _parts(value: Any) -> list[Part]:
    if isinstance(value, str):
        return [Part(text=value)]
    return [p if isinstance(p, Part) else Part(text=p) if isinstance(p, str) else Part.model_validate(p) for p in value]


def rendered_options(rendered: RenderedPrompt) -> GenerateActionOptions:
    """RenderedPrompt -> GenerateActionOptions; a schema without a format means `json`."""
    output = rendered.output
    # Built without validation: a rendered prompt's fields were checked when its file compiled, and
    # validating them again cost ~12 µs a row.
    return construct(
        GenerateActionOptions,
        model=rendered.model, messages=rendered.messages, tools=rendered.tools, tool_choice=rendered.tool_choice,
        config=rendered.config, max_turns=rendered.max_turns or DEFAULT_MAX_TURNS, max_tool_calls=rendered.max_tool_calls,
        return_tool_requests=bool(rendered.return_tool_requests),
        output=construct(OutputOptions, format=output.format or ("json" if output.schema is not None else None),
                         json_schema=output.schema, constrained=output.constrained, instructions=output.instructions,
                         grounding=output.grounding),
        use=list(rendered.use))
