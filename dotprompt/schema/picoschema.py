"""Picoschema -> JSON Schema, exactly as the Dotprompt format defines it.

Errors are raised as `PicoschemaError` carrying the key path inside the schema, so the
caller can turn the path into a file line.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from typing import Any

from .._util.suggest import did_you_mean, near_miss
from ..errors import PicoschemaError

__all__ = ["convert", "to_json_schema"]

SCALARS = ("string", "number", "integer", "boolean", "null", "any")
_JSON_SCHEMA_TYPES = (*SCALARS, "object", "array")
_FIELD = re.compile(r"^(?P<name>[^?(]+)(?P<optional>\?)?(?:\((?P<kind>[^,)]*)(?:,\s*(?P<desc>.*))?\))?$")
_KINDS = ("array", "object", "enum", "derived", "pdf")
# Our extension: `total(derived): number` is a field computed by the model, not read from the input
# (grounding does not look for it); JSON Schema spells it `"x-derived": true`.
DERIVED = "x-derived"
# Ours too: `report(pdf): string` is an input read from a PDF (a path, bytes or data: URL) into its text,
# whose spans grounding places on pages and boxes (dotprompt/documents); JSON Schema spells it
# `"contentMediaType": "application/pdf"`.
PDF = {"contentMediaType": "application/pdf"}

SchemaResolver = Callable[[str], "dict[str, Any] | None"]
Missing = list[tuple[str, tuple[str, ...]]]  # (type name, key path) of each name nothing defines (yet)
# Ours too: `quote(grounded): string` is a field copied from the input however long, so grounding looks
# for it even when it reads like text the model wrote; JSON Schema spells it `"x-grounded": true`.
GROUNDED_MARK = "x-grounded"
_GROUNDED_KIND = "grounded"


def to_json_schema(schema: Any, resolve: SchemaResolver, known: Callable[[], list[str]] = list) -> Any:
    """Convert a Picoschema value (or pass a JSON Schema through)."""
    return convert(schema, resolve, known)[0]


def convert(schema: Any, resolve: SchemaResolver, known: Callable[[], list[str]] = list,
            missing: Missing | None = None) -> tuple[Any, list[Any]]:
    """The JSON Schema, and the JSON Schema fragments that were written by hand (passed through).

    Everything else is built here from checked pieces and is valid by construction, so a caller
    only needs to validate the hand-written fragments against the meta-schema (the slow part).

    With a `missing` list, a type name that nothing defines and that is no near miss of a known
    name (`strng` is a typo of `string`: always an error) is added to it and stands for any value:
    it names a schema the application defines in code."""
    converter = _Converter(resolve, known, missing)
    return converter.value(schema, ()), converter.passthrough


class _Converter:
    def __init__(self, resolve: SchemaResolver, known: Callable[[], list[str]], missing: Missing | None) -> None:
        self.resolve = resolve
        self.known = known
        self.missing = missing
        self.passthrough: list[Any] = []

    def value(self, schema: Any, path: tuple[str, ...]) -> Any:
        if schema is None:
            return None
        if isinstance(schema, str):
            return self.type_name(schema, path)
        if not isinstance(schema, Mapping):
            raise PicoschemaError(f"a schema must be a type name or a mapping, got {_describe(schema)}", path)
        if schema.get("type") in _JSON_SCHEMA_TYPES:
            self.passthrough.append(schema)
            return dict(schema)
        if isinstance(schema.get("properties"), Mapping):
            out = {**schema, "type": "object"}
            self.passthrough.append(out)
            return out
        return self.object(schema, path)

    def type_name(self, text: str, path: tuple[str, ...]) -> dict[str, Any]:
        name, _, description = text.partition(",")
        name, description = name.strip(), description.strip()
        if name in SCALARS:
            out: dict[str, Any] = {} if name == "any" else {"type": name}
        else:
            named = self.resolve(name)
            if named is None:
                known = [*SCALARS, *self.known()]
                if self.missing is None or near_miss(name, known):
                    raise PicoschemaError(f"unknown type {name!r}", path,
                                          did_you_mean(name, known) or f"known types: {', '.join(known)}")
                self.missing.append((name, path))
                named = {}
            out = dict(named)
        if description:
            out["description"] = description
        return out

    def object(self, schema: Mapping[str, Any], path: tuple[str, ...]) -> dict[str, Any]:
        out: dict[str, Any] = {"type": "object", "properties": {}}
        required: list[str] = []
        additional: Any = False
        for key, value in schema.items():
            key = str(key)
            here = (*path, key)
            if key == "(*)":
                additional = self.value(value, here)
                continue
            name, optional, prop = self.field(key, value, here)
            out["properties"][name] = prop
            if not optional:
                required.append(name)
        if required:
            out["required"] = required
        out["additionalProperties"] = additional
        return out

    def field(self, key: str, value: Any, path: tuple[str, ...]) -> tuple[str, bool, dict[str, Any]]:
        match = _FIELD.match(key)
        if match is None:
            raise PicoschemaError(f"cannot read field {key!r}", path, "write `name`, `name?` or `name(array, description)`")
        name, optional = match["name"].strip(), bool(match["optional"])
        kind, description = (match["kind"] or "").strip(), match["desc"]
        if kind == _GROUNDED_KIND:
            prop = self.grounded(value, path)
            if description:
                prop["description"] = description.strip()
            return name, optional, _nullable(prop) if optional else prop
        if kind and kind not in _KINDS and (near := did_you_mean(kind, (_GROUNDED_KIND,))):
            raise PicoschemaError(f"unknown field kind {kind!r} in {key!r}", path, near)
        if match["kind"] is None:
            if not isinstance(value, (str, Mapping)):
                raise PicoschemaError(f"field {name!r}: expected a type name or a mapping, got {_describe(value)}", path)
            prop = self.value(value, path)
            return name, optional, _nullable(prop) if optional else prop
        if kind not in _KINDS:
            raise PicoschemaError(f"unknown field kind {kind!r} in {key!r}", path,
                                  did_you_mean(kind, _KINDS) or "use (array), (object), (enum), (derived) or (pdf)")
        build = {"array": self.array, "enum": self.enum, "object": self.object_, "derived": self.derived,
                 "pdf": self.pdf}[kind]
        prop = build(value, path)
        if optional:
            prop = _nullable(prop)
        if description:
            prop["description"] = description.strip()
        return name, optional, prop

    def array(self, value: Any, path: tuple[str, ...]) -> dict[str, Any]:
        return {"type": "array", "items": self.value(value, path)}

    def enum(self, value: Any, path: tuple[str, ...]) -> dict[str, Any]:
        if not isinstance(value, list):
            raise PicoschemaError(f"an (enum) field takes a list of values, got {_describe(value)}", path)
        return {"enum": list(value)}

    def derived(self, value: Any, path: tuple[str, ...]) -> dict[str, Any]:
        if not isinstance(value, (str, Mapping)):
            raise PicoschemaError(f"a (derived) field takes a type name or a mapping, got {_describe(value)}", path)
        return {**self.value(value, path), DERIVED: True}

    def pdf(self, value: Any, path: tuple[str, ...]) -> dict[str, Any]:
        prop = self.value(value, path) if isinstance(value, str) else {}
        if prop.get("type") != "string":
            raise PicoschemaError(f"a (pdf) field is a string (a path, bytes or data: URL read into text), "
                                  f"got {_describe(value)}", path, "write `name(pdf): string, its description`")
        return {**prop, **PDF}

    def object_(self, value: Any, path: tuple[str, ...]) -> dict[str, Any]:
        if not isinstance(value, Mapping):
            raise PicoschemaError(f"an (object) field takes a mapping of fields, got {_describe(value)}", path)
        return self.object(value, path)

    def grounded(self, value: Any, path: tuple[str, ...]) -> dict[str, Any]:
        if not isinstance(value, (str, Mapping)):
            raise PicoschemaError(f"a (grounded) field takes a type name or a mapping, got {_describe(value)}", path)
        return {**self.value(value, path), GROUNDED_MARK: True}


def _nullable(prop: dict[str, Any]) -> dict[str, Any]:
    prop = dict(prop)
    if "enum" in prop:
        if None not in prop["enum"]:
            prop["enum"] = [*prop["enum"], None]
        return prop
    kind = prop.get("type")
    if isinstance(kind, str):
        prop["type"] = [kind, "null"]
    elif isinstance(kind, list) and "null" not in kind:
        prop["type"] = [*kind, "null"]
    return prop


def _describe(value: Any) -> str:
    return {bool: "true/false", int: "a number", float: "a number", list: "a list"}.get(type(value), type(value).__name__)
