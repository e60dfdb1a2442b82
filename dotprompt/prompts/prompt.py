"""Prompt: one compiled prompt of a library; `render` gives exactly what would be sent."""

from __future__ import annotations

import functools
import json
import threading
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Generic

from jinja2 import Template
from jinja2.exceptions import SecurityError, TemplateError
from typing_extensions import TypeVar

from ..document.metadata import input_schema_of, plain_fields
from ..document.view import OutputView, RenderView
from ..documents.inputs import document_fields, loggable, media_document, read_documents
from ..documents.pdf import PdfReadError
from ..engines.budget import HINT, BudgetExceededError, metering
from ..engines.deferred import jinja_template
from ..engines.jinja import render_metered
from ..engines.markers import Markers, to_messages
from ..errors import DotpromptError, InputValidationError, RenderError, UsageError
from ..identity import PromptIdentity
from ..schema.compiled import CompiledSchema, compile_validator, is_model_class, is_model_instance
from .compiler import CompiledPrompt

if TYPE_CHECKING:
    from pydantic import BaseModel

    from ..document.rendered import RenderedPrompt
    from ..generation.api import GenerateStream
    from ..generation.options import GenerateActionOptions
    from ..generation.response import ChunkCallback, GenerateResponse
    from ..types import Message
    from .library import PromptLibrary

__all__ = ["Prompt", "render_record", "render_view"]

# A typed prompt's input (a TypedDict), output (a pydantic model) and streamed chunk output (the model's
# partial twin): `Prompt[ExtractInput, ExtractOutput, ExtractOutputPartial]`, as `dotprompt types`
# writes. Untyped, each is Any: the input any mapping, the output JSON data, as it always was.
InputT = TypeVar("InputT", default=Any)
OutputT = TypeVar("OutputT", default=Any)
PartialT = TypeVar("PartialT", default=Any)
_NO_INPUT: Any = None  # the default input, typed Any: a typed prompt's parameter is its TypedDict, not Optional,
# so that a type checker names the missing or unknown key (a union with None hides which one)
_Model = TypeVar("_Model", bound="BaseModel")
_Twin = TypeVar("_Twin", bound="BaseModel")


class Prompt(Generic[InputT, OutputT, PartialT]):
    """A prompt loaded from a library. Recompiles itself when its file changes on disk.

    Generic in its input, output and streamed output; `typed(Model)` (or `load_prompt(name,
    output_type=Model)`) is the same prompt with its output validated into `Model`."""

    output_type: type[BaseModel] | None = None  # the model the output is validated into (None: JSON data)
    partial_type: type[BaseModel] | None = None  # the model streamed chunks' object outputs are read into

    def __init__(self, library: PromptLibrary, name: str | None, variant: str | None,
                 path: str | None, compiled: CompiledPrompt, source: str | None = None) -> None:
        self.library = library
        self.name = name
        self.variant = variant
        self.path = path
        self._compiled = compiled
        self.source = source  # for prompts made from a string: recompiled when the library changes
        self._lock = threading.Lock()

    def typed(self, output_type: type[_Model], partial_type: type[_Twin] | None = None) -> Prompt[Any, _Model, _Twin]:
        """This prompt with its output validated into `output_type` (`response.output.total` is a float at
        run time too) and streamed object outputs read into `partial_type` (default: the model's partial
        twin, every field optional). A new object: the library's own prompt stays untyped for other callers."""
        for what, given in (("output_type", output_type), ("partial_type", partial_type)):
            if given is not None and not is_model_class(given):
                raise UsageError(f"prompt {self._label()}: {what} must be a pydantic model class, got "
                                 f"{type(given).__name__} {given!r}"[:300] + " (write class Output(BaseModel): ...)")
        if partial_type is None:
            from ..schema.partial import partial_model

            partial_type = partial_model(output_type)  # type: ignore[assignment]  # the twin of _Model
        twin: Prompt[Any, _Model, _Twin] = Prompt(self.library, self.name, self.variant, self.path, self._compiled,
                                                  self.source)
        twin._lock = self._lock  # one refresh at a time for both views of the file
        twin.output_type, twin.partial_type = output_type, partial_type
        return twin

    def __repr__(self) -> str:
        label = f"{self.name}.{self.variant}" if self.variant else self.name
        return f"<Prompt {label or '(from source)'} {self.path or ''}>".replace(" >", ">")

    @property
    def compiled(self) -> CompiledPrompt:
        """The current compiled form, refreshed first if the file, a partial or the library changed.

        One thread refreshes; a render on another thread meanwhile uses the version it has (a whole
        one), so a slow save never stalls or tears renders."""
        current = self._compiled
        if not self.library.needs_refresh(self, current):
            return current
        if not self._lock.acquire(blocking=current.revision != self.library.revision):
            return current
        try:
            current = self._compiled
            if self.library.needs_refresh(self, current):
                current = self._compiled = self.library.refresh(self, current)
        finally:
            self._lock.release()
        return current

    @property
    def identity(self) -> PromptIdentity | None:
        """Name, variant and content hash of the prompt's current text and partials (see `PromptIdentity`)."""
        return self.compiled.identity

    @property
    def metadata(self) -> dict[str, Any]:
        """Frontmatter-shaped metadata with schemas as JSON Schema."""
        return self.compiled.meta

    def render(self, input: InputT = _NO_INPUT, *, context: Mapping[str, Any] | None = None,
               history: Sequence[Message | Mapping[str, Any]] | None = None,
               options: Mapping[str, Any] | None = None) -> RenderedPrompt:
        """Messages, model, config, tools and output schema exactly as they would be sent."""
        return self._render(self.compiled, input, context, history, options)[0]

    def _render(self, compiled: CompiledPrompt, input: Any, context: Mapping[str, Any] | None,
                history: Sequence[Message | Mapping[str, Any]] | None,
                options: Mapping[str, Any] | None) -> tuple[RenderedPrompt, Any]:
        """The rendered prompt, and the data it rendered (the input with the defaults filled in)."""
        fields, data, messages = self._render_parts(compiled, input, context, history, options)
        construct, rendered_prompt = _render_types if _render_types is not None else _load_render_types()
        fields = compiled.fields if fields is None else fields
        fields = {**fields, "config": dict(fields["config"]), "metadata": dict(fields["metadata"])}
        return construct(rendered_prompt, messages=messages, identity=compiled.identity, **fields), data

    def _render_parts(self, compiled: CompiledPrompt, input: Any, context: Mapping[str, Any] | None,
                      history: Sequence[Message | Mapping[str, Any]] | None, options: Mapping[str, Any] | None,
                      *, view: bool = False) -> tuple[dict[str, Any] | None, Any, list[Any]]:
        """The input checked and rendered: (the fields with `options` merged in, None without options; the
        data; the messages, as document/view.py's plain classes with `view`)."""
        if compiled.unresolved:  # a schema or helper the application has not defined (yet): see `unresolved`
            raise compiled.unresolved[0].error()
        fields, validator, default, meta = None, compiled.validator, _default_of(compiled.meta), compiled.meta
        if options:
            meta, fields = self.library.with_options(compiled.meta, options)
            default = _default_of(meta)
            validator = _validator_for(meta) if "input" in options else validator
        documents = compiled.document_fields if meta is compiled.meta else document_fields(input_schema_of(meta))
        data = _with_default(input, default)
        if documents:
            data = read_documents(data, documents, self._label())
        if validator is not None and not _absent_scalar_input(data, validator):
            problems = validator.problems(checked_part(data, input, default, validator))
            if problems:
                raise InputValidationError(self._label(), problems)
        return fields, data, self._render_messages(compiled, data, context, _messages(history), view=view)

    def _render_messages(self, compiled: CompiledPrompt, data: Any, context: Mapping[str, Any] | None,
                         history: list[Message], *, view: bool = False) -> list[Message]:
        markers = Markers()
        variables = dict(data) if isinstance(data, Mapping) else {"input": data}
        try:
            template = jinja_template(compiled.template)  # a template deferred at load compiles on its first render
            with metering(self.library.render_budget):
                if isinstance(template, Template):
                    variables["ctx"] = context or {}
                    variables.update(markers.variables())
                    text = render_metered(template, variables)
                else:  # Handlebars: the input is the data; context keys are @-variables (@state, @auth, ...)
                    text = template.render(variables, context, markers)
        except DotpromptError:
            raise
        except BudgetExceededError as exc:
            raise RenderError(f"{exc} ({HINT})", path=self._where(),
                              line=exc.line or _template_line(exc, compiled)) from None
        except SecurityError as exc:
            raise RenderError(f"blocked by the template sandbox: {exc}", path=self._where(),
                              line=_template_line(exc, compiled)) from None
        except (TemplateError, RecursionError, TypeError, ValueError, AttributeError, LookupError,
                ArithmeticError, MemoryError) as exc:
            raise RenderError(f"{type(exc).__name__}: {exc}", path=self._where(),
                              line=_template_line(exc, compiled)) from exc
        return to_messages(text, markers, history, view=view)

    # -- running ----------------------------------------------------------------------------

    def to_options(self, input: InputT = _NO_INPUT, *, context: Mapping[str, Any] | None = None,
                history: Sequence[Message | Mapping[str, Any]] | None = None,
                options: Mapping[str, Any] | None = None) -> GenerateActionOptions:
        """The rendered prompt as plain, serialisable generate options."""
        from ..generation.options import rendered_options

        return rendered_options(self.render(input, context=context, history=history, options=options))

    async def generate(self, input: InputT = _NO_INPUT, *, context: Mapping[str, Any] | None = None,
                       history: Sequence[Message | Mapping[str, Any]] | None = None,
                       options: Mapping[str, Any] | None = None, model: Any = None, tools: Sequence[Any] = (),
                       use: Sequence[Any] = (), output_type: Any = None, on_chunk: ChunkCallback | None = None,
                       **overrides: Any) -> GenerateResponse[OutputT]:
        """Render, then run the model <-> tool loop to a validated result.

        `overrides` replace fields of the compiled options: max_turns, tool_errors, resume,
        return_tool_requests, messages (e.g. to resume after an interrupt)."""
        call = self._call(input, context, history, options, tools, use, overrides)
        return await self._run(call, model, output_type, on_chunk)

    def generate_sync(self, input: InputT = _NO_INPUT, **kwargs: Any) -> GenerateResponse[OutputT]:
        """`generate` for sync code (also works inside a running event loop), as `dotprompt.generate_sync`."""
        from ..generation.api import run_sync

        return run_sync(self.generate(input, **kwargs))

    def generate_stream(self, input: InputT = _NO_INPUT, *, context: Mapping[str, Any] | None = None,
                        history: Sequence[Message | Mapping[str, Any]] | None = None,
                        options: Mapping[str, Any] | None = None, model: Any = None, tools: Sequence[Any] = (),
                        use: Sequence[Any] = (), output_type: Any = None,
                        **overrides: Any) -> GenerateStream[OutputT, PartialT]:
        """`async for item in prompt.generate_stream(...)`: chunks across all turns, then the final response
        (or `.stream` and `await .response`), as `dotprompt.generate_stream`."""
        from ..generation.api import GenerateStream

        call = self._call(input, context, history, options, tools, use, overrides)
        return GenerateStream(lambda push: self._run(call, model, output_type, push))

    def __call__(self, input: InputT = _NO_INPUT, **kwargs: Any) -> GenerateResponse[OutputT]:
        """`prompt(input)`: the short form of `prompt.generate_sync(input, ...)`."""
        return self.generate_sync(input, **kwargs)

    def stream(self, input: InputT = _NO_INPUT, **kwargs: Any) -> GenerateStream[OutputT, PartialT]:
        """`prompt.stream(input)`: the short form of `prompt.generate_stream(input, ...)`."""
        return self.generate_stream(input, **kwargs)

    def _call(self, input: Any, context: Any, history: Any, options: Any, tools: Sequence[Any],
              use: Sequence[Any], overrides: dict[str, Any]) -> _Call:
        """Everything a run needs from this prompt, from one version of it (one look at the file)."""
        from ..generation.options import GenerateActionOptions, Resume, rendered_options

        compiled = self.compiled
        rendered, data = self._render(compiled, input, context, history, options)
        unknown = set(overrides) - GenerateActionOptions.model_fields.keys() if overrides else None
        if unknown:
            raise UsageError(f"unknown generate option(s): {', '.join(sorted(unknown))}")
        if "resume" in overrides and isinstance(overrides["resume"], Mapping):
            overrides["resume"] = Resume.model_validate(overrides["resume"])
        action = rendered_options(rendered).model_copy(update=overrides)  # its `use:` entries, still plain
        logged_input = loggable(input, compiled.document_fields)  # a PDF as its size and hash
        return _Call(action, rendered.identity, logged_input, self._grounding_input(data, action), context,
                     self._with_declared(compiled, tools), list(use))

    async def _run(self, call: _Call, model: Any, output_type: Any, on_chunk: ChunkCallback | None) -> GenerateResponse:
        from ..generation.api import RunSource, generate_run
        from ..observe.runrecord import logged_run

        # A call's own output_type wins over the prompt's (and then its chunks are that model, unvalidated, as before).
        partial_type = self.partial_type if output_type is None else None
        output_type = output_type or self.output_type
        source = RunSource(library=self.library, identity=call.identity, grounding_input=call.grounding_input)
        with logged_run(self.library.run_log, call.identity, call.input, call.action, model) as logged:
            return logged.ended(await generate_run(call.action, source, model=model, tools=call.tools, use=call.use,
                                                   output_type=output_type, on_chunk=on_chunk, context=call.context,
                                                   partial_type=partial_type))

    def _grounding_input(self, data: Any, action: GenerateActionOptions) -> Any:
        """The input variables the output is grounded in: the data as rendered (defaults filled in, PDF
        documents as their text, which knows each character's page and box), and each PDF the messages
        carry inline as a media part (named by the variable that holds its URL, else `mediaN`)."""
        from ..generation.grounded import mode_of

        if mode_of(action.output) == "off" or not isinstance(data, Mapping):
            return data
        return self._with_media_documents(dict(data), action.messages)

    def _with_media_documents(self, data: dict[str, Any], messages: Sequence[Message]) -> dict[str, Any]:
        media = [p.media for m in messages if m.metadata is None or m.metadata.get("purpose") != "history"
                 for p in m.content if p.media is not None]
        for number, part in enumerate(media, 1):
            holder = next((k for k, v in data.items() if isinstance(v, str) and v == part.url), None)
            name = holder or next(f"media{n}" for n in range(number, number + len(data) + 1) if f"media{n}" not in data)
            try:
                found = media_document(part.url, part.content_type, name)
            except PdfReadError as exc:
                raise UsageError(f"{exc} (prompt {self._label()})") from None
            if found is not None:
                data[name] = found
        return data

    def _with_declared(self, compiled: CompiledPrompt, tools: Sequence[Any]) -> list[Any]:
        """`tools` plus a declared-only tool (no function: it interrupts, as Genkit's are) for each of the
        prompt's `toolDefs` that nothing else defines; `check` accepts them, so the run must too."""
        from ..tools.define import Tool

        given = {getattr(t, "name", t) for t in tools}
        listed = set(compiled.fields.get("tools", ()))  # a definition the prompt does not list is not offered
        declared = [Tool(d.name, d.description, d.input_schema, None, output_schema=d.output_schema)
                    for d in compiled.fields.get("tool_defs", ())
                    if d.name in listed and d.name not in given and self.library.tool(d.name) is None]
        return [*tools, *declared] if declared else list(tools)

    def _label(self) -> str:
        if self.name is None:
            return "(from source)"
        return f"{self.name}.{self.variant}" if self.variant else self.name

    def _where(self) -> str:
        return self.path or f"<prompt {self._label()}>"


@dataclass(frozen=True)
class _Call:
    """One call of a prompt, read from one version: what it rendered to and what runs it."""

    action: GenerateActionOptions  # the rendered prompt as plain options, `use:` entries included
    identity: PromptIdentity | None
    input: Any  # as the caller gave it (the run log keeps it)
    grounding_input: Any  # as rendered: that version's defaults filled in
    context: Any
    tools: list[Any]  # the caller's, plus the prompt's declared-only tools
    use: list[Any]  # the caller's layers, after the prompt's entries


# `types.construct` and RenderedPrompt (pydantic), imported on the first render rather than with the
# library: `check` renders nothing. Kept here once loaded: an import statement on every render cost a few µs.
_render_types: tuple[Any, Any] | None = None


def _load_render_types() -> tuple[Any, Any]:
    global _render_types
    from ..document.rendered import RenderedPrompt
    from ..types import construct

    _render_types = (construct, RenderedPrompt)
    return _render_types


def _default_of(meta: Mapping[str, Any]) -> dict[str, Any] | None:
    block = meta.get("input")
    return block.get("default") if isinstance(block, Mapping) else None


def _with_default(input: Any, default: Mapping[str, Any] | None) -> Any:
    if input is None:
        input = {}
    elif not isinstance(input, Mapping) and is_model_instance(input):
        input = input.model_dump(mode="json")
    if default and isinstance(input, Mapping):
        return {**default, **input}
    return input


def checked_part(data: Any, input: Any, default: Mapping[str, Any] | None, validator: CompiledSchema) -> Any:
    """What the input schema checks: the data without the defaults for keys the schema does not declare.

    Genkit validates the caller's input, then merges the defaults: a default the schema does not
    declare still reaches the template (`dotprompt check` warns about it)."""
    properties = validator.schema.get("properties")
    if not default or not isinstance(data, Mapping) or not isinstance(properties, Mapping):
        return data
    given = input.keys() if isinstance(input, Mapping) else ()
    return {key: value for key, value in data.items() if key in properties or key in given or key not in default}


def _absent_scalar_input(data: Any, validator: CompiledSchema) -> bool:
    # No input at all (None or {}) is only checked against an object schema: a prompt whose
    # input schema is a scalar, rendered without input, has nothing to validate.
    return data == {} and validator.schema.get("type", "object") != "object"


def _validator_for(meta: Mapping[str, Any]) -> CompiledSchema | None:
    schema = input_schema_of(meta)
    return _cached_validator(json.dumps(schema, sort_keys=True)) if isinstance(schema, dict) else None


@functools.lru_cache(maxsize=256)
def _cached_validator(schema_json: str) -> CompiledSchema:
    # Render options may carry their own input schema; compile each distinct one once.
    return compile_validator(json.loads(schema_json))


def _messages(history: Sequence[Message | Mapping[str, Any]] | None) -> list[Message]:
    if not history:
        return []
    from ..types import Message

    return [m if isinstance(m, Message) else Message.model_validate(m) for m in history]


def _template_line(exc: BaseException, compiled: CompiledPrompt) -> int | None:
    """The template line jinja reports in the traceback (the file's own numbering): the innermost line
    of the prompt's own file, which the error names (for an error inside a partial, the line that
    includes it); the innermost line of any other `.prompt` file when the prompt's own is not there."""
    own = other = None
    tb = exc.__traceback__
    while tb is not None:
        filename = tb.tb_frame.f_code.co_filename
        if filename == compiled.template.filename:
            own = tb.tb_lineno
        elif filename.endswith(".prompt"):
            other = tb.tb_lineno
        tb = tb.tb_next
    return own if own is not None else other


def render_view(prompt: Prompt, input: Any = None, context: Mapping[str, Any] | None = None) -> RenderView:
    """What `dotprompt render` prints: `prompt.render(input, context=context)`'s messages, model, config,
    tools, turns and output as the plain classes of document/view.py, by the same render, without
    loading the message types (pydantic) the returned RenderedPrompt is made of."""
    compiled = prompt.compiled
    _, _, messages = prompt._render_parts(compiled, input, context, None, None, view=True)
    fields = plain_fields(compiled.meta, compiled.defaults)
    output = compiled.meta.get("output") or {}
    return RenderView(messages, model=fields.get("model"), config=fields["config"], tools=list(fields.get("tools", ())),
                      max_turns=fields.get("max_turns"), output=OutputView(output.get("format"), output.get("schema")))


def render_record(prompt: Prompt, rendered: RenderedPrompt) -> dict[str, Any]:
    """What `render --json` prints (and the workbench shows): the Dotprompt JSON shape of `rendered`,
    plus the engine the file renders with and why."""
    engine = prompt.compiled.engine
    return {**rendered.to_dict(), "engine": engine.to_dict() if engine else None}
