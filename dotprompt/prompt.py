"""Prompt: one compiled prompt of a library; `render` gives exactly what would be sent."""

from __future__ import annotations

import functools
import json
import threading
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from jinja2.exceptions import SecurityError, TemplateError
from pydantic import BaseModel

from .compiler import CompiledPrompt, file_stamp
from .errors import DotpromptError, InputValidationError, PromptNotFoundError, RenderError
from .metadata import merge, options_metadata, render_fields
from .rendered import RenderedPrompt
from .schemas import CompiledSchema, compile_validator
from .template import Markers, to_messages
from .types import Message, construct

if TYPE_CHECKING:
    from .library import PromptLibrary


class Prompt:
    """A prompt loaded from a library. Recompiles itself when its file changes on disk."""

    def __init__(self, library: PromptLibrary, name: str | None, variant: str | None,
                 path: str | None, compiled: CompiledPrompt, source_text: str | None = None) -> None:
        self.library = library
        self.name = name
        self.variant = variant
        self.path = path
        self._compiled = compiled
        self._source_text = source_text  # for prompts made from a string: recompiled when the library changes
        self._lock = threading.Lock()

    def __repr__(self) -> str:
        label = f"{self.name}.{self.variant}" if self.variant else self.name
        return f"<Prompt {label or '(from source)'} {self.path or ''}>".replace(" >", ">")

    @property
    def compiled(self) -> CompiledPrompt:
        """The current compiled form, recompiled first if the file or the library changed."""
        current = self._compiled
        if self._is_stale(current):
            with self._lock:
                current = self._compiled
                if self._is_stale(current):
                    current = self._compiled = self.library._recompile(self)
        return current

    def _is_stale(self, compiled: CompiledPrompt) -> bool:
        if compiled.generation != self.library._generation:
            return True
        if self.path is None:
            return False
        try:
            return file_stamp(self.path) != compiled.stamp
        except FileNotFoundError:
            raise PromptNotFoundError(self.name or self.path, self.variant, [], f"{self.path} (deleted)") from None

    @property
    def metadata(self) -> dict[str, Any]:
        """Frontmatter-shaped metadata with schemas as JSON Schema."""
        return self.compiled.meta

    def render(self, input: Any = None, *, context: Mapping[str, Any] | None = None,
               history: Sequence[Message | Mapping[str, Any]] | None = None,
               options: Mapping[str, Any] | None = None) -> RenderedPrompt:
        """Messages, model, config, tools and output schema exactly as they would be sent."""
        compiled = self.compiled
        fields, validator, default = compiled.fields, compiled.validator, _default_of(compiled.meta)
        if options:
            meta = merge(compiled.meta, options_metadata(options, self.library._registry))
            fields = render_fields(meta, self.library._defaults)
            default = _default_of(meta)
            validator = _validator_for(meta) if "input" in options else validator
        data = _with_default(input, default)
        if validator is not None and not _absent_scalar_input(data, validator):
            problems = validator.problems(data)
            if problems:
                raise InputValidationError(self._label(), problems)
        messages = self._render_messages(compiled, data, context, _messages(history))
        fields = {**fields, "config": dict(fields["config"]), "metadata": dict(fields["metadata"])}
        return construct(RenderedPrompt, messages=messages, **fields)

    def _render_messages(self, compiled: CompiledPrompt, data: Any, context: Mapping[str, Any] | None,
                         history: list[Message]) -> list[Message]:
        markers = Markers()
        variables = dict(data) if isinstance(data, Mapping) else {"input": data}
        variables["ctx"] = context or {}
        variables.update(markers.variables())
        try:
            text = compiled.template.render(variables)
        except DotpromptError:
            raise
        except SecurityError as exc:
            raise RenderError(f"blocked by the template sandbox: {exc}", path=self._where(),
                              line=_template_line(exc, compiled)) from None
        except (TemplateError, RecursionError, TypeError, ValueError, AttributeError, LookupError,
                ArithmeticError) as exc:
            raise RenderError(f"{type(exc).__name__}: {exc}", path=self._where(),
                              line=_template_line(exc, compiled)) from exc
        return to_messages(text, markers, history)

    def _label(self) -> str:
        if self.name is None:
            return "(from source)"
        return f"{self.name}.{self.variant}" if self.variant else self.name

    def _where(self) -> str:
        return self.path or f"<prompt {self._label()}>"


def _default_of(meta: Mapping[str, Any]) -> dict[str, Any] | None:
    block = meta.get("input")
    return block.get("default") if isinstance(block, Mapping) else None


def _with_default(input: Any, default: Mapping[str, Any] | None) -> Any:
    if isinstance(input, BaseModel):
        input = input.model_dump(mode="json")
    if input is None:
        input = {}
    if default and isinstance(input, Mapping):
        return {**default, **input}
    return input


def _absent_scalar_input(data: Any, validator: CompiledSchema) -> bool:
    # No input at all (None or {}) is only checked against an object schema: a prompt whose
    # input schema is a scalar, rendered without input, has nothing to validate.
    return data == {} and validator.schema.get("type", "object") != "object"


def _validator_for(meta: Mapping[str, Any]) -> CompiledSchema | None:
    schema = (meta.get("input") or {}).get("schema")
    return _cached_validator(json.dumps(schema, sort_keys=True)) if isinstance(schema, dict) else None


@functools.lru_cache(maxsize=256)
def _cached_validator(schema_json: str) -> CompiledSchema:
    # Render options may carry their own input schema; compile each distinct one once.
    return compile_validator(json.loads(schema_json))


def _messages(history: Sequence[Message | Mapping[str, Any]] | None) -> list[Message]:
    return [m if isinstance(m, Message) else Message.model_validate(m) for m in history or ()]


def _template_line(exc: BaseException, compiled: CompiledPrompt) -> int | None:
    """The template line jinja reports in the traceback (the file's own numbering)."""
    line = None
    tb = exc.__traceback__
    while tb is not None:
        filename = tb.tb_frame.f_code.co_filename
        if filename == compiled.template.filename or filename.endswith(".prompt"):
            line = tb.tb_lineno
        tb = tb.tb_next
    return line
