"""Schemas given in code: pydantic models or JSON Schema -> JSON Schema; compiled validators."""

from __future__ import annotations

import functools
import json
import sys
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ..errors import InputProblem, SchemaError
from .metacheck import surely_valid
from .validator import compile_check

if TYPE_CHECKING:
    from jsonschema.protocols import Validator

__all__ = ["REF_HINT", "BadRef", "CompiledSchema", "SchemaLike", "SchemaRegistry", "check_schema", "compile_validator",
           "is_model_class", "is_model_instance", "json_path", "json_schema_of", "key_step", "offline_registry",
           "unresolvable_ref"]

SchemaLike = Any  # a pydantic model class, a JSON Schema mapping, or a Picoschema value
_DRAFT_2020 = ("https://json-schema.org/draft/2020-12/schema", "https://json-schema.org/draft/2020-12/schema#")


def _validator_class(schema: Any) -> Any:
    # jsonschema is imported on first need: prompts whose schemas the fast check covers never load it.
    import jsonschema

    return jsonschema.validators.validator_for(schema, default=jsonschema.Draft202012Validator)


def is_model_class(value: Any) -> bool:
    # Asked of every schema a prompt names: pydantic is not imported to answer it. A class can only be a
    # model once pydantic is loaded, so a run that never loaded it (`dotprompt check`) has none.
    pydantic_main = sys.modules.get("pydantic.main")
    return isinstance(value, type) and pydantic_main is not None and issubclass(value, pydantic_main.BaseModel)


def is_model_instance(value: Any) -> bool:
    """Whether `value` is a pydantic model instance, answered without importing pydantic."""
    pydantic_main = sys.modules.get("pydantic.main")
    return pydantic_main is not None and isinstance(value, pydantic_main.BaseModel)


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
            problem = check_schema(schema)
            if problem:
                raise SchemaError(f"not a valid JSON Schema: {problem}")
        self.schema = schema
        self._validator: Validator | None = None
        draft_2020 = not isinstance(schema, Mapping) or schema.get("$schema", _DRAFT_2020[0]) in _DRAFT_2020
        self._fast = compile_check(schema) if draft_2020 else None

    @property
    def validator(self) -> Validator:
        """jsonschema's validator, built when first needed (error messages, keywords outside the fast subset)."""
        if self._validator is None:
            cls = _validator_class(self.schema)
            # The offline registry: a `$ref` that slipped past the load-time check still fetches nothing.
            self._validator = cls(self.schema, format_checker=cls.FORMAT_CHECKER, registry=offline_registry())
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
    bad_key = non_string_key(schema)
    if bad_key is not None:  # json.dumps would turn it into a string and the schema would pass
        where, key = bad_key
        return f"the key {key!r} at {where or '(root)'} is not a string (quote it: JSON keys are strings)"
    if surely_valid(schema):  # the common hand-written fragment: jsonschema is not even imported
        return None
    try:
        key = json.dumps(schema, sort_keys=True)
    except (TypeError, ValueError):
        return _check_schema(schema)
    return _check_cached(key)


def non_string_key(value: Any, where: str = "") -> tuple[str, Any] | None:
    """(path, key) of the first mapping key in `value` that is not a string, or None."""
    if isinstance(value, Mapping):
        for key, item in value.items():
            if not isinstance(key, str):
                return where, key
            found = non_string_key(item, f"{where}/{key}" if where else key)
            if found is not None:
                return found
    elif isinstance(value, list):
        for index, item in enumerate(value):
            found = non_string_key(item, f"{where}/{index}" if where else str(index))
            if found is not None:
                return found
    return None


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
    bad = unresolvable_ref(schema)
    return bad.message if bad else None


@dataclass(frozen=True)
class BadRef:
    """A `$ref` that does not resolve inside its own schema: where it is (keys from the root) and why."""

    path: tuple[str | int, ...]
    ref: str
    reason: str

    @property
    def message(self) -> str:
        return f"{self.reason} ({REF_HINT})"


REF_HINT = ("only references inside the schema resolve, like `#/$defs/name`; to reuse a schema registered with "
            "define_schema, write its name as the field's type")


def _refuse_retrieval(uri: str) -> Any:
    # Called by `referencing` for any URI outside the schema document: never fetch (no network, no files).
    raise LookupError(f"{uri!r} is outside the schema document")


def offline_registry() -> Any:
    """A `referencing.Registry` that resolves nothing but the schema document it is given."""
    from referencing import Registry

    return Registry(retrieve=_refuse_retrieval)  # type: ignore[call-arg]


def unresolvable_ref(schema: Any) -> BadRef | None:
    """The first `$ref`/`$dynamicRef` in `schema` that does not resolve within the document, else None."""
    if not isinstance(schema, Mapping) or not _mentions_ref(schema):
        return None  # the common case: no references at all, so nothing to set up
    from referencing.jsonschema import DRAFT202012, specification_with

    spec = specification_with(schema.get("$schema", ""), default=DRAFT202012)
    resolver = offline_registry().resolver_with_root(spec.create_resource(schema))
    return _first_bad_ref(schema, resolver, spec, (), root=True)


def _mentions_ref(schema: Any) -> bool:
    try:
        text = json.dumps(schema)
    except (TypeError, ValueError):
        return True
    return '"$ref"' in text or '"$dynamicRef"' in text


# Keywords whose values are data, not subschemas: a "$ref" key inside them is not a reference.
_DATA_KEYWORDS = frozenset({"enum", "const", "default", "examples"})


def _first_bad_ref(node: Any, resolver: Any, spec: Any, path: tuple[str | int, ...], *, root: bool = False) -> BadRef | None:
    import referencing.exceptions

    if isinstance(node, list):
        for index, item in enumerate(node):
            found = _first_bad_ref(item, resolver, spec, (*path, index))
            if found:
                return found
        return None
    if not isinstance(node, Mapping):
        return None
    if not root and isinstance(node.get("$id"), str):
        resolver = resolver.in_subresource(spec.create_resource(node))  # `#...` now means this subschema
    for keyword in ("$ref", "$dynamicRef"):
        ref = node.get(keyword)
        if isinstance(ref, str):
            try:
                resolver.lookup(ref)
            except (referencing.exceptions.Unresolvable, LookupError) as exc:
                outside = isinstance(exc, (referencing.exceptions.Unretrievable, LookupError))
                why = "is outside the schema document" if outside else "points to nothing in the schema"
                return BadRef((*path, keyword), ref, f"{keyword} {ref!r} {why}")
    for key, value in node.items():
        if key not in _DATA_KEYWORDS:
            found = _first_bad_ref(value, resolver, spec, (*path, key))
            if found:
                return found
    return None


def json_path(parts: Any) -> str:
    """`$.vendor.name`, `$.line_items[0]`, `$['odd key']`: keys and list indexes as one JSONPath."""
    return "$" + "".join(f"[{part}]" if isinstance(part, int) else key_step(str(part)) for part in parts)


def key_step(key: str) -> str:
    """One key of a path: `.name` for a plain name, else quoted, `['odd key']`, so a path reads one way
    (`$['a.b']` is not `$.a.b`) and stays on one line (a newline in a key is written `\\n`)."""
    plain = key.replace("_", "a").replace("-", "a").isalnum() and not key[0].isdigit()
    return f".{key}" if plain else f"[{key!r}]"


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
