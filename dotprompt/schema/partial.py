"""The partial twin of an output model: every field optional (None until it arrives), nested models
partial too, the shape a streamed chunk's output has; and a snapshot read into it.

`dotprompt types` writes each twin out for the type checker; a model given in code gets one built here."""

from __future__ import annotations

import threading
import types
import typing
from typing import Any, Union

from pydantic import BaseModel, ConfigDict, Field, ValidationError, create_model

__all__ = ["partial_model", "read_partial"]

_BUILT: dict[type[BaseModel], type[BaseModel]] = {}
_LOCK = threading.Lock()


def partial_model(model: type[BaseModel]) -> type[BaseModel]:
    """`model`'s partial twin (`<Name>Partial`), built once per class."""
    with _LOCK:
        found = _BUILT.get(model)
        if found is not None:
            return found
        building: dict[type[BaseModel], str] = {}
        twin = _partial(model, building)
        names = {name: _BUILT[built] for built, name in building.items()}
        for built in building:  # a model that refers to itself (or to one that refers back) resolves now
            _BUILT[built].model_rebuild(force=True, _types_namespace=names)
        return twin


def _partial(model: type[BaseModel], building: dict[type[BaseModel], str]) -> type[BaseModel]:
    found = _BUILT.get(model)
    if found is not None:
        return found
    building[model] = f"{model.__name__}Partial"
    fields: dict[str, Any] = {
        name: (_optional(info.annotation, building) | None,
               Field(default=None, alias=info.alias, description=info.description))
        for name, info in model.model_fields.items()}
    twin: type[BaseModel] = create_model(
        building[model], __module__=model.__module__, __doc__=model.__doc__,
        __config__=ConfigDict(populate_by_name=True, defer_build=True), **fields)
    _BUILT[model] = twin
    return twin


def _optional(annotation: Any, building: dict[type[BaseModel], str]) -> Any:
    """The annotation with every model in it replaced by its twin (a model being built: by its name)."""
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        if annotation in building and annotation not in _BUILT:
            return typing.ForwardRef(building[annotation])
        return _partial(annotation, building)
    args = typing.get_args(annotation)
    origin = typing.get_origin(annotation)
    if not args or origin is None:
        return annotation
    inner = tuple(_optional(arg, building) for arg in args)
    if origin is typing.Annotated:
        return typing.Annotated[(inner[0], *args[1:])]
    if origin in (Union, types.UnionType):
        return Union.__getitem__(inner)  # a union built at run time (X | Y cannot take a ForwardRef)
    if origin is typing.Literal:
        return annotation
    try:
        return origin[inner] if len(inner) > 1 else origin[inner[0]]
    except TypeError:  # an origin that cannot be subscripted at run time (collections.abc views): left whole
        return annotation


def read_partial(partial: type[BaseModel], data: dict[str, Any]) -> BaseModel:
    """A streamed snapshot read into the partial twin. A field whose value so far does not fit its type
    (the model wrote a string where the schema wants a number) is None in the chunk: the final response
    names the problem (OutputValidationError); a chunk's output is never a value of the wrong type."""
    try:
        return partial.model_validate(data)
    except ValidationError as exc:
        bad = {error["loc"][0] for error in exc.errors() if error["loc"]}
        kept = {key: value for key, value in data.items() if key not in bad}
        try:
            return partial.model_validate(kept)
        except ValidationError:
            return partial()
