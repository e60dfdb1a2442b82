"""Schemas given in code: pydantic models or JSON Schema -> JSON Schema; compiled validators."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import jsonschema
from jsonschema.protocols import Validator
from pydantic import BaseModel

from .errors import InputProblem, SchemaError
from .fastcheck import compile_check

SchemaLike = Any  # a pydantic model class, a JSON Schema mapping, or a Picoschema value


def is_model_class(value: Any) -> bool:
    return isinstance(value, type) and issubclass(value, BaseModel)


def json_schema_of(value: SchemaLike) -> Any:
    """A pydantic model class becomes its JSON Schema; anything else is returned as is."""
    if is_model_class(value):
        return value.model_json_schema()
    return value


class CompiledSchema:
    """A JSON Schema checked once: a fast yes/no path, jsonschema for everything else and for messages."""

    __slots__ = ("_fast", "schema", "validator")

    def __init__(self, schema: Mapping[str, Any]) -> None:
        cls = jsonschema.validators.validator_for(schema, default=jsonschema.Draft202012Validator)
        cls.check_schema(schema)
        self.schema = schema
        self.validator: Validator = cls(schema, format_checker=cls.FORMAT_CHECKER)
        draft_2020 = cls is jsonschema.Draft202012Validator
        self._fast = compile_check(schema) if draft_2020 else None

    def is_valid(self, instance: Any) -> bool:
        if self._fast is not None:
            return self._fast(instance)
        return self.validator.is_valid(instance)

    def problems(self, instance: Any) -> list[InputProblem]:
        """Every failing location, sorted by path, in `$.a.b[0]` notation; [] when valid."""
        if self._fast is not None and self._fast(instance):
            return []
        found = [InputProblem(path=json_path(error.absolute_path), message=error.message)
                 for error in self.validator.iter_errors(instance)]
        return sorted(found, key=lambda p: p.path)


def compile_validator(schema: Mapping[str, Any]) -> CompiledSchema:
    return CompiledSchema(schema)


def check_schema(schema: Any) -> str | None:
    """None when `schema` is valid JSON Schema, else the first reason it is not."""
    if not isinstance(schema, (Mapping, bool)):
        return f"a JSON Schema must be a mapping, got {type(schema).__name__}"
    cls = jsonschema.validators.validator_for(schema, default=jsonschema.Draft202012Validator)
    try:
        cls.check_schema(schema)
    except jsonschema.SchemaError as exc:
        where = "/".join(str(p) for p in exc.absolute_path) or "(root)"
        return f"{exc.message} at {where}"
    return None


def json_path(parts: Any) -> str:
    out = "$"
    for part in parts:
        out += f"[{part}]" if isinstance(part, int) else f".{part}"
    return out


class SchemaRegistry:
    """Named schemas (`define_schema`), optionally backed by a resolver callable."""

    def __init__(self, schemas: Mapping[str, SchemaLike] | None = None, resolver: Any = None) -> None:
        self._schemas: dict[str, Any] = {}
        self._resolver = resolver
        for name, schema in (schemas or {}).items():
            self.define(name, schema)

    def define(self, name: str, schema: SchemaLike) -> None:
        converted = json_schema_of(schema)
        problem = check_schema(converted)
        if problem:
            raise SchemaError(f"schema {name!r} is not valid JSON Schema: {problem}")
        self._schemas[name] = converted

    def resolve(self, name: str) -> dict[str, Any] | None:
        if name in self._schemas:
            return self._schemas[name]
        if self._resolver is not None:
            found = self._resolver(name)
            return json_schema_of(found) if found is not None else None
        return None

    def names(self) -> list[str]:
        return sorted(self._schemas)
