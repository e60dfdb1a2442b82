"""A fast yes/no check for the JSON Schema subset prompt schemas use, beside jsonschema.

jsonschema takes ~50 µs to accept a small object, more than the rest of a render. Prompt
schemas (Picoschema output) use a handful of keywords, so we compile those into plain
closures once. The closure only answers "valid?"; when the answer is no, or the schema uses
any keyword outside the subset, jsonschema does the work and writes the error messages.
A differential test holds the two to the same answers.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from typing import Any

__all__ = ["UnsupportedSchemaError", "compile_check"]

Check = Callable[[Any], bool]

_ANNOTATIONS = frozenset({"title", "description", "default", "examples", "$comment", "$schema", "deprecated",
                          "readOnly", "writeOnly"})


class UnsupportedSchemaError(Exception):
    """The schema uses a keyword outside the subset: validate with jsonschema only."""


def compile_check(schema: Any) -> Check | None:
    """A predicate equivalent to jsonschema's `is_valid` for `schema`, or None outside the subset."""
    try:
        return _compile(schema)
    except UnsupportedSchemaError:
        return None


def _is_integer(x: Any) -> bool:
    return (isinstance(x, int) and not isinstance(x, bool)) or (isinstance(x, float) and x.is_integer())


def _is_number(x: Any) -> bool:
    return isinstance(x, (int, float)) and not isinstance(x, bool)


_TYPES: dict[str, Check] = {
    "null": lambda x: x is None,
    "boolean": lambda x: isinstance(x, bool),
    "integer": _is_integer,
    "number": _is_number,
    "string": lambda x: isinstance(x, str),
    "array": lambda x: isinstance(x, list),
    "object": lambda x: isinstance(x, dict),
}


def _compile(schema: Any) -> Check:
    if schema is True or schema == {}:
        return lambda x: True
    if schema is False:
        return lambda x: False
    if not isinstance(schema, Mapping):
        raise UnsupportedSchemaError
    checks: list[Check] = []
    for key, value in schema.items():
        if key in _ANNOTATIONS or (key in ("additionalProperties", "required") and "properties" in schema):
            continue  # annotations assert nothing; the last two are checked together with `properties`
        build = _KEYWORDS.get(key)
        if build is None:
            raise UnsupportedSchemaError
        checks.append(build(value, schema))
    if len(checks) == 1:
        return checks[0]
    return lambda x: all(check(x) for check in checks)


def _type(value: Any, schema: Mapping[str, Any]) -> Check:
    names = [value] if isinstance(value, str) else list(value)
    if not all(n in _TYPES for n in names):
        raise UnsupportedSchemaError
    tests = [_TYPES[n] for n in names]
    if len(tests) == 1:
        return tests[0]
    return lambda x: any(t(x) for t in tests)


def _properties(value: Any, schema: Mapping[str, Any]) -> Check:
    props = {name: _compile(sub) for name, sub in value.items()}
    required = tuple(schema.get("required", ()))
    additional = schema.get("additionalProperties", True)
    extra: Check | None = None if additional is True else _compile(additional)

    def check(x: Any) -> bool:
        if not isinstance(x, dict):
            return True
        for name in required:
            if name not in x:
                return False
        for name, item in x.items():
            sub = props.get(name)
            if sub is not None:
                if not sub(item):
                    return False
            elif extra is not None and not extra(item):
                return False
        return True

    return check


def _required(value: Any, schema: Mapping[str, Any]) -> Check:
    names = tuple(value)
    return lambda x: not isinstance(x, dict) or all(n in x for n in names)


def _additional(value: Any, schema: Mapping[str, Any]) -> Check:
    extra = _compile(value)  # no `properties` beside it: every key is additional
    return lambda x: not isinstance(x, dict) or all(extra(v) for v in x.values())


def _items(value: Any, schema: Mapping[str, Any]) -> Check:
    if not isinstance(value, (Mapping, bool)):
        raise UnsupportedSchemaError  # tuple-form `items` of older drafts
    item = _compile(value)
    return lambda x: not isinstance(x, list) or all(item(v) for v in x)


def _enum(value: Any, schema: Mapping[str, Any]) -> Check:
    options = list(value)
    return lambda x: any(_equal(x, option) for option in options)


def _const(value: Any, schema: Mapping[str, Any]) -> Check:
    return lambda x: _equal(x, value)


def _equal(a: Any, b: Any) -> bool:
    """JSON equality: true and 1 differ, 1 and 1.0 do not."""
    if isinstance(a, bool) or isinstance(b, bool):
        return isinstance(a, bool) and isinstance(b, bool) and a == b
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(_equal(a[k], b[k]) for k in a)
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(_equal(x, y) for x, y in zip(a, b, strict=True))
    if _is_number(a) and _is_number(b):
        return a == b
    return type(a) is type(b) and a == b


def _bound(test: Callable[[Any, Any], bool], applies: Check) -> Callable[[Any, Mapping[str, Any]], Check]:
    def build(value: Any, schema: Mapping[str, Any]) -> Check:
        if not _is_number(value):
            raise UnsupportedSchemaError
        return lambda x: not applies(x) or test(x, value)

    return build


def _pattern(value: Any, schema: Mapping[str, Any]) -> Check:
    try:
        compiled = re.compile(value)
    except re.error:
        raise UnsupportedSchemaError from None
    return lambda x: not isinstance(x, str) or compiled.search(x) is not None


_is_str: Check = lambda x: isinstance(x, str)  # noqa: E731
_is_list: Check = lambda x: isinstance(x, list)  # noqa: E731

_KEYWORDS: dict[str, Callable[[Any, Mapping[str, Any]], Check]] = {
    "type": _type,
    "properties": _properties,
    "required": _required,
    "additionalProperties": _additional,
    "items": _items,
    "enum": _enum,
    "const": _const,
    "pattern": _pattern,
    "minimum": _bound(lambda x, v: x >= v, _is_number),
    "maximum": _bound(lambda x, v: x <= v, _is_number),
    "exclusiveMinimum": _bound(lambda x, v: x > v, _is_number),
    "exclusiveMaximum": _bound(lambda x, v: x < v, _is_number),
    "minLength": _bound(lambda x, v: len(x) >= v, _is_str),
    "maxLength": _bound(lambda x, v: len(x) <= v, _is_str),
    "minItems": _bound(lambda x, v: len(x) >= v, _is_list),
    "maxItems": _bound(lambda x, v: len(x) <= v, _is_list),
}
