"""Schemas given in code: pydantic models or JSON Schema -> JSON Schema; compiled validators."""

from __future__ import annotations

import functools
import json
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel

from .errors import InputProblem, SchemaError
from .fastcheck import compile_check

if TYPE_CHECKING:
    from jsonschema.protocols import Validator

SchemaLike = Any  # a pydantic model class, a JSON Schema mapping, or a Picoschema value
_DRAFT_2020 = ("https://json-schema.org/draft/2020-12/schema", "https://json-schema.org/draft/2020-12/schema#")


def _validator_class(schema: Any) -> Any:
    # jsonschema is imported on first need: prompts whose schemas the fast check covers never load it.
    import jsonschema

    return jsonschema.validators.validator_for(schema, default=jsonschema.Draft202012Validator)


def is_model_class(value: Any) -> bool:
    return isinstance(value, type) and issubclass(value, BaseModel)


def json_schema_of(value: SchemaLike) -> Any:
    """A pydantic model class becomes its JSON Schema; anything else is returned as is."""
    if is_model_class(value):
        return value.model_json_schema()
    return value


class CompiledSchema:
    """A JSON Schema checked once: a fast yes/no path, jsonschema for everything else and for messages."""

    __slots__ = ("_fast", "_validator", "schema")

    def __init__(self, schema: Mapping[str, Any], *, checked: bool = False) -> None:
        if not checked:
            _validator_class(schema).check_schema(schema)
        self.schema = schema
        self._validator: Validator | None = None
        draft_2020 = not isinstance(schema, Mapping) or schema.get("$schema", _DRAFT_2020[0]) in _DRAFT_2020
        self._fast = compile_check(schema) if draft_2020 else None

    @property
    def validator(self) -> Validator:
        """jsonschema's validator, built when first needed (error messages, keywords outside the fast subset)."""
        if self._validator is None:
            cls = _validator_class(self.schema)
            self._validator = cls(self.schema, format_checker=cls.FORMAT_CHECKER)
        return self._validator

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


def compile_validator(schema: Mapping[str, Any], *, checked: bool = False) -> CompiledSchema:
    """`checked=True` when the schema is already known to be valid (built from Picoschema, or checked)."""
    return CompiledSchema(schema, checked=checked)


def check_schema(schema: Any) -> str | None:
    """None when `schema` is valid JSON Schema, else the first reason it is not."""
    if not isinstance(schema, (Mapping, bool)):
        return f"a JSON Schema must be a mapping, got {type(schema).__name__}"
    try:
        key = json.dumps(schema, sort_keys=True)
    except (TypeError, ValueError):
        return _check_schema(schema)
    return _check_cached(key)


@functools.lru_cache(maxsize=1024)
def _check_cached(key: str) -> str | None:
    # Meta-schema validation costs milliseconds; the same schema is checked once per process.
    return _check_schema(json.loads(key))


def _check_schema(schema: Any) -> str | None:
    import jsonschema

    try:
        _validator_class(schema).check_schema(schema)
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
