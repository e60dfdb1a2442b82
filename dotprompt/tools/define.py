"""Tools: definitions from type hints, execution with input validation, the tool context, interrupts.

`tool` is the public way to build a Tool (from a function's hints, explicitly from a schema, or one
that always interrupts); `make_tool` and `make_interrupt` are the explicit builders it uses (their
`dotprompt.` names are deprecated). `dotprompt.define_tool` (prompts/loader.py) registers a Tool in
the default library.
A tool function may take a `ToolContext` (a parameter annotated with it; in the explicit form, a second
positional parameter): the three things Genkit hands its tools, the caller's `context`, a way to
`interrupt` with metadata, and the `resumed` data of a restart. A tool without a function (a
definition only) interrupts, as in Genkit. A multipart tool returns `{"output", "content", "metadata"}`.
"""

from __future__ import annotations

import dataclasses
import inspect
from collections.abc import Awaitable, Callable, Mapping
from typing import TYPE_CHECKING, Any, NoReturn, get_type_hints

from .._util.finite import non_finite_path
from ..errors import Interrupt, ToolInputError, UsageError
from ..schema.compiled import CompiledSchema, compile_validator, is_model_class, is_model_instance, json_path

if TYPE_CHECKING:
    from pydantic import BaseModel, ValidationError

    from ..types import Part, ToolDefinition, ToolRequest

# pydantic and the message types load when a tool's schemas are built, it runs or answers, not when a
# module of tools is imported: `dotprompt render` of a prompt without tools never loads them.

__all__ = [
    "Tool",
    "ToolContext",
    "make_interrupt",
    "make_tool",
    "respond",
    "restart",
    "to_jsonable",
    "tool",
    "tool_from_definition",
    "tool_from_function",
]


@dataclasses.dataclass(frozen=True)
class ToolContext:
    """What a running tool may know besides its input."""

    context: Mapping[str, Any] = dataclasses.field(default_factory=dict)  # the caller's context (auth, ...)
    resumed: Any = None  # on a restart: what the caller passed (True when nothing); None otherwise
    metadata: dict[str, Any] | None = None  # the metadata of the tool request part

    def interrupt(self, metadata: Any = None) -> NoReturn:
        """Stop the run for a human (exit C); `metadata` is recorded as the part's `interrupt` (True if None)."""
        raise Interrupt(metadata)


class Tool:
    """A callable the model may request, with its JSON Schema signature."""

    def __init__(self, name: str, description: str, input_schema: dict[str, Any], fn: Callable[..., Any] | None,
                 *, output_schema: dict[str, Any] | None = None, input_model: type[BaseModel] | None = None,
                 spread: bool = False, context_param: str | None = None, multipart: bool = False) -> None:
        self.name = name
        self.description = description
        self.fn = fn
        self.spread = spread  # call fn(**fields) rather than fn(model_instance_or_dict)
        self.context_param = context_param  # the keyword the ToolContext goes to ("" = second positional)
        self.multipart = multipart
        self._signature: _Signature | None = _Signature.of(name, description, input_schema, output_schema, input_model)
        self._build_signature: Callable[[], _Signature] | None = None

    @classmethod
    def deferred(cls, name: str, description: str, fn: Callable[..., Any], build: Callable[[], _Signature], *,
                 spread: bool, context_param: str | None, multipart: bool) -> Tool:
        """A tool whose schemas are built on first use (by `build`): a function's type hints become pydantic
        models only when a prompt or a call needs them, so importing a module of tools stays cheap."""
        made = cls.__new__(cls)
        made.name, made.description, made.fn = name, description, fn
        made.spread, made.context_param, made.multipart = spread, context_param, multipart
        made._signature, made._build_signature = None, build
        return made

    @property
    def _built(self) -> _Signature:
        if self._signature is None:
            assert self._build_signature is not None
            self._signature = self._build_signature()  # two threads may both build it: the same value
        return self._signature

    @property
    def input_schema(self) -> dict[str, Any]:
        return self._built.input_schema

    @property
    def output_schema(self) -> dict[str, Any] | None:
        return self._built.output_schema

    @property
    def input_model(self) -> type[BaseModel] | None:
        return self._built.input_model

    @property
    def definition(self) -> ToolDefinition:
        return self._built.definition

    def __repr__(self) -> str:
        return f"<Tool {self.name}>"

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        """Calling the tool object calls the function, so decorated functions stay usable."""
        if self.fn is None:
            raise UsageError(f"tool {self.name!r} has no function")
        return self.fn(*args, **kwargs)

    async def run(self, input: Any, context: ToolContext | None = None) -> Any:
        """Validate `input`, call the function (awaiting it if async) and return its result.
        Without a function the tool interrupts (a definition only: a human or the caller answers)."""
        arguments = self._arguments(input)
        if self.fn is None:
            raise Interrupt()
        context = context if context is not None else ToolContext()
        if self.spread:
            extra = {self.context_param: context} if self.context_param else {}
            result = self.fn(**arguments, **extra)
        elif self.context_param == "":
            result = self.fn(arguments, context)
        elif self.context_param:
            result = self.fn(arguments, **{self.context_param: context})
        else:
            result = self.fn(arguments)
        if inspect.isawaitable(result):
            result = await result
        return result

    def respond(self, interrupt: Part, output: Any, metadata: Any = None) -> Part:
        """The answer to one of this tool's interrupts, for `Resume(respond=[...])`."""
        return respond(interrupt, output, metadata)

    def restart(self, interrupt: Part, resumed: Any = None, replace_input: Any = None) -> Part:
        """Run one of this tool's interrupted requests again, for `Resume(restart=[...])`."""
        return restart(interrupt, resumed, replace_input)

    def _arguments(self, input: Any) -> Any:
        # NaN passes every schema and every `amount > total` check: a tool never sees one.
        where = non_finite_path(input)
        if where is not None:
            raise ToolInputError(f"{where}: not a JSON number (NaN or Infinity); send a finite number")
        signature = self._built
        if signature.input_model is not None:
            from pydantic import ValidationError

            try:
                model = signature.input_model.model_validate(input if input is not None else {})
            except ValidationError as exc:
                raise ToolInputError(_pydantic_problems(exc)) from None
            return {name: getattr(model, name) for name in type(model).model_fields} if self.spread else model
        assert signature.validator is not None
        problems = signature.validator.problems(input)
        if problems:
            raise ToolInputError("; ".join(f"{p.path}: {p.message}" for p in problems))
        return input if not self.spread else dict(input or {})


@dataclasses.dataclass(frozen=True)
class _Signature:
    """What a tool's schemas give: the JSON Schemas, the input model (or the compiled validator of a
    dict schema), and the definition sent to models."""

    input_schema: dict[str, Any]
    output_schema: dict[str, Any] | None
    input_model: type[BaseModel] | None
    validator: CompiledSchema | None
    definition: ToolDefinition

    @classmethod
    def of(cls, name: str, description: str, input_schema: dict[str, Any], output_schema: dict[str, Any] | None,
           input_model: type[BaseModel] | None) -> _Signature:
        from ..types import ToolDefinition

        validator = compile_validator(input_schema) if input_model is None else None
        definition = ToolDefinition(name=name, description=description, input_schema=input_schema,
                                    output_schema=output_schema)
        return cls(input_schema, output_schema, input_model, validator, definition)


def respond(interrupt: Part, output: Any, metadata: Any = None) -> Part:
    """A tool-response part answering `interrupt`, marked `interruptResponse` (the metadata, else True) as Genkit marks it."""
    from ..types import Part, ToolResponse

    request = _request_of(interrupt)
    return Part(tool_response=ToolResponse(name=request.name, ref=request.ref, output=to_jsonable(output)),
                metadata={"interruptResponse": metadata if metadata is not None else True})


def restart(interrupt: Part, resumed: Any = None, replace_input: Any = None) -> Part:
    """A tool-request part that runs `interrupt` again; the tool gets `resumed` (True if None) in its context."""
    from ..types import Part

    request = _request_of(interrupt)
    metadata = {**(interrupt.metadata or {}), "resumed": resumed if resumed is not None else True}
    if replace_input is not None:
        metadata["replacedInput"] = request.input
        request = request.model_copy(update={"input": replace_input})
    return Part(tool_request=request, metadata=metadata)


def _request_of(interrupt: Part) -> ToolRequest:
    if interrupt.tool_request is None:
        raise UsageError("respond/restart take the interrupted tool-request part (an entry of response.interrupts)")
    return interrupt.tool_request


def _pydantic_problems(exc: ValidationError) -> str:
    return "; ".join(f"{json_path(e['loc'])}: {e['msg']}" for e in exc.errors())


def tool(fn: Callable[..., Any] | None = None, *, name: str | None = None, description: str | None = None,
         input_schema: Any = None, output_schema: Any = None, multipart: bool = False, interrupt: bool = False,
         request_metadata: Any = None) -> Any:
    """The one way to build a tool; `define_tool` registers one. Three forms:

    - `@tool` (or `@tool(name=..., description=...)`) on a sync or async function: its name, docstring
      and type hints make the definition; a parameter annotated `ToolContext` gets the context.
    - `tool(fn, name=..., description=..., input_schema=...)`: the explicit form; `fn(input)` or
      `fn(input, ctx)` gets the validated input (a dict, or the pydantic instance for a pydantic schema).
    - `tool(name=..., description=..., input_schema=..., interrupt=True)`: no function; it always
      interrupts for a human to answer (`Resume(respond=[...])`), recording `request_metadata` (a
      mapping, or a function of the validated input returning one) on the request part, else `True`.

    `output_schema` (a pydantic class or JSON Schema) replaces the one read from the return type."""
    if interrupt or request_metadata is not None:
        return _interrupt_tool(fn, name, description, input_schema, interrupt, request_metadata)

    def wrap(func: Callable[..., Any]) -> Tool:
        if input_schema is not None:
            return make_tool(name or func.__name__, description or inspect.getdoc(func) or "", input_schema, func,
                             output_schema=output_schema, multipart=multipart)
        return tool_from_function(func, name=name, description=description, multipart=multipart,
                                  output_schema=output_schema)

    return wrap(fn) if fn is not None else wrap


def _interrupt_tool(fn: Callable[..., Any] | None, name: str | None, description: str | None, input_schema: Any,
                    interrupt: bool, request_metadata: Any) -> Tool:
    if not interrupt:
        raise UsageError("tool(request_metadata=...) is for a tool that interrupts: add interrupt=True")
    if fn is not None:
        raise UsageError(f"tool({getattr(fn, '__name__', 'fn')}, interrupt=True): a tool that interrupts has no "
                         "function; drop the function, or drop interrupt=True and call ctx.interrupt() in it")
    if not name:
        raise UsageError("tool(interrupt=True) needs name=... (and description=...): there is no function to name it")
    return make_interrupt(name, description or "", input_schema, request_metadata=request_metadata)


def _schema_of(schema: Any) -> Any:
    return schema.model_json_schema() if is_model_class(schema) else schema


def tool_from_function(func: Callable[..., Any], *, name: str | None = None, description: str | None = None,
                       multipart: bool = False, output_schema: Any = None) -> Tool:
    """A tool from a function's name, docstring and type hints. The hints are read now (a name they use
    that does not exist fails here); the pydantic models and schemas they make are built on first use."""
    hints = get_type_hints(func)
    params = [p for p in inspect.signature(func).parameters.values() if p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD)]
    context_param = next((p.name for p in params if hints.get(p.name) is ToolContext), None)
    params = [p for p in params if p.name != context_param]
    tool_name = name or func.__name__
    single = params[0] if len(params) == 1 else None
    given_model = hints.get(single.name) if single is not None else None
    spread = not is_model_class(given_model)

    def build() -> _Signature:
        from pydantic import PydanticUserError, create_model

        try:
            if multipart:
                output = None
            elif output_schema is not None:
                output = _schema_of(output_schema)
            else:
                output = _output_schema(hints.get("return", inspect.Signature.empty))
            if given_model is not None and not spread:
                return _Signature.of(tool_name, description_text, given_model.model_json_schema(), output, given_model)
            fields = {p.name: (hints.get(p.name, Any), ... if p.default is p.empty else p.default) for p in params}
            model = create_model(f"{func.__name__}_input", **fields)  # type: ignore[call-overload]
            schema = model.model_json_schema()
            schema.pop("title", None)
            return _Signature.of(tool_name, description_text, schema, output, model)
        except (PydanticUserError, TypeError, ValueError) as exc:
            raise UsageError(f"tool {tool_name!r} ({_where(func)}): its parameters cannot be described as JSON "
                             f"Schema: {str(exc).splitlines()[0]} (annotate them with JSON types, pydantic models "
                             "or dataclasses, or give tool(input_schema=...))") from None

    description_text = description or inspect.getdoc(func) or ""
    return Tool.deferred(tool_name, description_text, func, build, spread=spread, context_param=context_param,
                         multipart=multipart)


def _where(func: Callable[..., Any]) -> str:
    code = getattr(func, "__code__", None)
    return f"{code.co_filename}:{code.co_firstlineno}" if code is not None else getattr(func, "__qualname__", "?")


def _output_schema(annotation: Any) -> dict[str, Any] | None:
    if annotation in (inspect.Signature.empty, None, type(None), Any):
        return None
    try:
        from pydantic import TypeAdapter

        return TypeAdapter(annotation).json_schema()
    except Exception:  # an annotation pydantic cannot describe: the tool still works, without an output schema
        return None


def make_tool(name: str, description: str, input_schema: Any, fn: Callable[..., Any | Awaitable[Any]] | None,
              *, output_schema: Any = None, multipart: bool = False) -> Tool:
    """The explicit form: `fn(input)` or `fn(input, ctx)` receives the validated input (a dict, or the model
    instance for a pydantic schema) and, with a second parameter, the ToolContext. `fn=None`: a definition
    only, which interrupts when the model calls it."""
    output = _schema_of(output_schema) if output_schema is not None else None
    context_param = _second_parameter(fn)
    if is_model_class(input_schema):
        return Tool(name, description, input_schema.model_json_schema(), fn, input_model=input_schema,
                    output_schema=output, context_param=context_param, multipart=multipart)
    schema = dict(input_schema) if input_schema is not None else {"type": "object"}
    return Tool(name, description, schema, fn, output_schema=output, context_param=context_param, multipart=multipart)


def _second_parameter(fn: Callable[..., Any] | None) -> str | None:
    """"" when `fn` takes a second positional parameter (the ToolContext), else None."""
    if fn is None:
        return None
    try:
        params = list(inspect.signature(fn).parameters.values())
    except (TypeError, ValueError):  # a builtin without a signature: called with the input only
        return None
    positional = [p for p in params if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD, p.VAR_POSITIONAL)]
    return "" if len(positional) >= 2 or any(p.kind is p.VAR_POSITIONAL for p in positional) else None


def make_interrupt(name: str, description: str, input_schema: Any = None, *,
                   request_metadata: Any = None) -> Tool:
    """A tool that always interrupts, for a human to answer (`Resume(respond=[...])`).

    Its part records `interrupt: true`, or `request_metadata`: a mapping, or a function of the
    validated input returning one (as Genkit's `requestMetadata`)."""

    async def ask(arguments: Any) -> NoReturn:
        metadata = request_metadata(arguments) if callable(request_metadata) else request_metadata
        if inspect.isawaitable(metadata):
            metadata = await metadata
        raise Interrupt(metadata)

    return make_tool(name, description, input_schema, ask)


def tool_from_definition(definition: ToolDefinition) -> Tool:
    """A tool that is a definition only (registered without a function): it interrupts when called."""
    return Tool(definition.name, definition.description, definition.input_schema or {}, None,
                output_schema=definition.output_schema)


def to_jsonable(value: Any) -> Any:
    """Tool output as plain JSON data (never a Python repr)."""
    if isinstance(value, (str, int, float, bool)) or value is None:
        return value
    if is_model_instance(value):
        return value.model_dump(mode="json", by_alias=True)
    from pydantic import TypeAdapter

    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return TypeAdapter(type(value)).dump_python(value, mode="json")
    try:
        return TypeAdapter(Any).dump_python(value, mode="json")
    except Exception:
        return str(value)
