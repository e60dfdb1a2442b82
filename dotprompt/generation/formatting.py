"""The output plan of a run: which format, native constrained output or injected instructions,
where the instructions go, and how the final text and streamed chunks are parsed."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any, cast

from pydantic import BaseModel

from .._util.cache import LRU
from ..errors import InputProblem, OutputValidationError, UsageError
from ..formats import FormatHandler, OutputParseError, ParsedOutput, UnknownFormatError, get_format
from ..formats.base import LazyValue
from ..formats.builtin import BUILTIN_FORMATS
from ..formats.finite import finite_output
from ..providers.base import ModelInfo
from ..schema.compiled import CompiledSchema, check_schema, compile_validator
from ..schema.partial import read_partial
from ..types import Message, Part, construct
from .options import OutputOptions

__all__ = ["OutputPlan", "partial_instance", "plan_output"]

OUTPUT = "output"


@dataclass(frozen=True)
class OutputPlan:
    format_name: str | None
    handler: FormatHandler | None
    schema: dict[str, Any] | None
    validator: CompiledSchema | None
    native: bool
    instructions: str | None
    content_type: str | None

    def inject(self, messages: list[Message]) -> list[Message]:
        """Put the instructions into the messages, once: a pending `output` section, else the
        system message, else the last user message. Idempotent across turns."""
        if not self.instructions or _has_instructions(messages):
            return messages
        part = Part(text=self.instructions, metadata={"purpose": OUTPUT})
        for i, message in enumerate(messages):
            for j, existing in enumerate(message.content):
                if existing.metadata and existing.metadata.get("purpose") == OUTPUT and existing.metadata.get("pending"):
                    content = [*message.content[:j], part, *message.content[j + 1:]]
                    return _replace(messages, i, message, content)
        target = _target(messages)
        if target is None:
            return [*messages, Message(role="user", content=[part])]
        message = messages[target]
        return _replace(messages, target, message, [*message.content, part])

    def parse(self, text: str, response: Any, streamed: ParsedOutput | None = None) -> ParsedOutput:
        """The final output; `streamed` is the stream's own parse of this very text, when it has one."""
        assert self.handler is not None
        if streamed is not None:
            return finite_output(streamed, text)
        parse_message = getattr(self.handler, "parse_message", None)  # a format of parts, not text (`media`)
        try:
            if parse_message is not None:
                return cast("ParsedOutput", parse_message(response.message))
            return finite_output(self.handler.parse_text(text), text)
        except OutputParseError as exc:
            raise OutputValidationError(f"the model's reply is not valid {self.format_name} output",
                                        [InputProblem("$", str(exc))], text=text, response=response,
                                        messages=response.messages) from None

    def chunk_output(self, parser: Any, text: str, output_type: type[BaseModel] | None,
                     partial_type: type[BaseModel] | None = None) -> Any:
        """The chunk's output; a LazyValue (read by `Chunk.output`) when the stream offers one. With a
        `partial_type` (a typed prompt's partial twin), an object is validated into it; else with an
        `output_type`, it is that model built unvalidated, the fields not yet arrived None."""
        feed_lazy = getattr(parser, "feed_lazy", None)
        snapshot = feed_lazy(text) if feed_lazy is not None else parser.feed(text)
        if output_type is None and partial_type is None:
            return snapshot
        if isinstance(snapshot, LazyValue):
            return snapshot.map(lambda value: _typed(output_type, partial_type, value))
        return _typed(output_type, partial_type, snapshot)


def _typed(output_type: type[BaseModel] | None, partial_type: type[BaseModel] | None, snapshot: Any) -> Any:
    if not isinstance(snapshot, dict):
        return snapshot
    if partial_type is not None:
        return read_partial(partial_type, snapshot)
    assert output_type is not None
    return partial_instance(output_type, snapshot)


def partial_instance(output_type: type[BaseModel], data: dict[str, Any]) -> BaseModel:
    """A not-yet-validated instance: fields that have not arrived are None."""
    return construct(output_type, **{name: data.get(name) for name in output_type.model_fields})


def _has_instructions(messages: list[Message]) -> bool:
    return any(p.metadata and p.metadata.get("purpose") == OUTPUT and not p.metadata.get("pending")
               for m in messages for p in m.content)


def _target(messages: list[Message]) -> int | None:
    for i, message in enumerate(messages):
        if message.role == "system":
            return i
    for i in range(len(messages) - 1, -1, -1):
        if messages[i].role == "user":
            return i
    return None


def _replace(messages: list[Message], index: int, message: Message, content: list[Part]) -> list[Message]:
    changed = message.model_copy(update={"content": content})
    return [*messages[:index], changed, *messages[index + 1:]]


def plan_output(output: OutputOptions, info: ModelInfo, has_tools: bool) -> OutputPlan:
    """Resolve the format before any model call; every misuse is a UsageError here."""
    try:
        return _plan(output, info, has_tools)
    except RecursionError:  # a schema given in code, nested deeper than the JSON and schema tools can go
        raise UsageError("the output schema is nested too deeply to use (thousands of levels); flatten it") from None


def _plan(output: OutputOptions, info: ModelInfo, has_tools: bool) -> OutputPlan:
    schema = output.json_schema
    name = output.format or ("json" if schema is not None else None)
    if name is None:
        return OutputPlan(None, None, None, None, False, None, None)
    key = _plan_key(output, name, info, has_tools)
    found = _PLANS.get(key, "") if key is not None else None
    if found is not None:
        return found
    plan = _new_plan(output, name, info, has_tools)
    if key is not None:
        _PLANS.put(key, "", plan)
    return plan


# Plans of the built-in formats by what they depend on: every row of a batch renders the same output
# options, and checking the schema and writing its instructions again was ~7 % of a batch row (py-spy).
_PLANS: LRU[OutputPlan] = LRU(256)


def _plan_key(output: OutputOptions, name: str, info: ModelInfo, has_tools: bool) -> tuple[Any, ...] | None:
    """What a plan depends on, or None when it should not be cached (a user's format may not be pure)."""
    try:
        if get_format(name) not in BUILTIN_FORMATS:
            return None
        text = json.dumps(output.json_schema, ensure_ascii=False)  # key order kept: it is in the instructions
    except (UnknownFormatError, TypeError, ValueError, RecursionError):
        return None
    return name, text, output.constrained, output.instructions, info.constrained, has_tools


def _new_plan(output: OutputOptions, name: str, info: ModelInfo, has_tools: bool) -> OutputPlan:
    schema = output.json_schema
    if schema is not None:
        problem = check_schema(schema)
        if problem:
            raise UsageError(f"the output schema is not valid JSON Schema: {problem}")
    try:
        fmt = get_format(name)
        handler = fmt.handler(schema)
    except UnknownFormatError as exc:
        raise UsageError(str(exc)) from None
    except ValueError as exc:
        raise UsageError(f"output format {name!r}: {exc}") from None
    native = bool(schema is not None and fmt.constrained and output.constrained is not False and (
        info.constrained == "all" or (info.constrained == "no-tools" and not has_tools)))
    validator = compile_validator(schema, checked=True) if schema is not None else None  # checked just above
    return OutputPlan(name, handler, schema, validator, native,
                      _instructions(output, fmt.default_instructions, handler, native), fmt.content_type)


def _instructions(output: OutputOptions, by_default: bool, handler: FormatHandler, native: bool) -> str | None:
    if output.instructions is False:
        return None
    if isinstance(output.instructions, str):
        return output.instructions
    if output.instructions is True or (by_default and not native):
        return handler.instructions
    return None
