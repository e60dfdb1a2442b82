"""Tools: definitions from type hints, execution with input validation, and interrupts."""

from __future__ import annotations

import dataclasses
import inspect
from collections.abc import Awaitable, Callable
from typing import Any, get_type_hints

from pydantic import BaseModel, TypeAdapter, ValidationError, create_model

from .errors import Interrupt, ToolInputError, UsageError
from .schemas import CompiledSchema, compile_validator, json_path
from .types import ToolDefinition


class Tool:
    """A callable the model may request, with its JSON Schema signature."""

    def __init__(self, name: str, description: str, input_schema: dict[str, Any], fn: Callable[..., Any] | None,
                 *, output_schema: dict[str, Any] | None = None, input_model: type[BaseModel] | None = None,
                 spread: bool = False, interrupt: bool = False) -> None:
        self.name = name
        self.description = description
        self.input_schema = input_schema
        self.output_schema = output_schema
        self.fn = fn
        self.input_model = input_model
        self.spread = spread  # call fn(**fields) rather than fn(model_instance_or_dict)
        self.interrupt = interrupt
        self._validator: CompiledSchema | None = compile_validator(input_schema) if input_model is None else None
        self.definition = ToolDefinition(name=name, description=description, input_schema=input_schema,
                                         output_schema=output_schema)

    def __repr__(self) -> str:
        return f"<Tool {self.name}>"

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        """Calling the tool object calls the function, so decorated functions stay usable."""
        if self.fn is None:
            raise UsageError(f"tool {self.name!r} has no function")
        return self.fn(*args, **kwargs)

    async def run(self, input: Any) -> Any:
        """Validate `input`, call the function (awaiting it if async) and return its result."""
        if self.interrupt:
            raise Interrupt(input)
        arguments = self._arguments(input)
        if self.fn is None:
            raise UsageError(f"tool {self.name!r} has no function")
        result = self.fn(**arguments) if self.spread else self.fn(arguments)
        if inspect.isawaitable(result):
            result = await result
        return result

    def _arguments(self, input: Any) -> Any:
        if self.input_model is not None:
            try:
                model = self.input_model.model_validate(input if input is not None else {})
            except ValidationError as exc:
                raise ToolInputError(_pydantic_problems(exc)) from None
            return {name: getattr(model, name) for name in type(model).model_fields} if self.spread else model
        assert self._validator is not None
        problems = self._validator.problems(input)
        if problems:
            raise ToolInputError("; ".join(f"{p.path}: {p.message}" for p in problems))
        return input if not self.spread else dict(input or {})


def _pydantic_problems(exc: ValidationError) -> str:
    return "; ".join(f"{json_path(e['loc'])}: {e['msg']}" for e in exc.errors())


def tool(fn: Callable[..., Any] | None = None, *, name: str | None = None, description: str | None = None) -> Any:
    """`@tool` on a sync or async function: the name, docstring and type hints make the definition."""

    def wrap(func: Callable[..., Any]) -> Tool:
        return tool_from_function(func, name=name, description=description)

    return wrap(fn) if fn is not None else wrap


def tool_from_function(func: Callable[..., Any], *, name: str | None = None, description: str | None = None) -> Tool:
    hints = get_type_hints(func)
    params = [p for p in inspect.signature(func).parameters.values() if p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD)]
    doc = inspect.getdoc(func) or ""
    output_schema = _output_schema(hints.get("return", inspect.Signature.empty))
    single = params[0] if len(params) == 1 else None
    if single is not None and _is_model(hints.get(single.name)):
        model: type[BaseModel] = hints[single.name]
        return Tool(name or func.__name__, description or doc, model.model_json_schema(), func,
                    output_schema=output_schema, input_model=model, spread=False)
    fields = {p.name: (hints.get(p.name, Any), ... if p.default is p.empty else p.default) for p in params}
    model = create_model(f"{func.__name__}_input", **fields)  # type: ignore[call-overload]
    schema = model.model_json_schema()
    schema.pop("title", None)
    return Tool(name or func.__name__, description or doc, schema, func, output_schema=output_schema,
                input_model=model, spread=True)


def _is_model(value: Any) -> bool:
    return isinstance(value, type) and issubclass(value, BaseModel)


def _output_schema(annotation: Any) -> dict[str, Any] | None:
    if annotation in (inspect.Signature.empty, None, type(None), Any):
        return None
    try:
        return TypeAdapter(annotation).json_schema()
    except Exception:  # an annotation pydantic cannot describe: the tool still works, without an output schema
        return None


def define_tool(name: str, description: str, input_schema: Any, fn: Callable[[Any], Any | Awaitable[Any]]) -> Tool:
    """The explicit form: `fn` receives the validated input (a dict, or the model instance for a pydantic schema)."""
    if _is_model(input_schema):
        return Tool(name, description, input_schema.model_json_schema(), fn, input_model=input_schema)
    return Tool(name, description, dict(input_schema or {"type": "object"}), fn)


def define_interrupt(name: str, description: str, input_schema: Any = None) -> Tool:
    """A tool that always interrupts: its input becomes the interrupt's metadata, for a human to answer."""
    schema = input_schema.model_json_schema() if _is_model(input_schema) else dict(input_schema or {"type": "object"})
    return Tool(name, description, schema, None, interrupt=True)


def to_jsonable(value: Any) -> Any:
    """Tool output as plain JSON data (never a Python repr)."""
    if isinstance(value, BaseModel):
        return value.model_dump(mode="json", by_alias=True)
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return TypeAdapter(type(value)).dump_python(value, mode="json")
    if isinstance(value, (str, int, float, bool)) or value is None:
        return value
    try:
        return TypeAdapter(Any).dump_python(value, mode="json")
    except Exception:
        return str(value)
