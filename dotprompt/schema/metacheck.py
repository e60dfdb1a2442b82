"""The common hand-written schema vouched for without jsonschema's meta-schema check.

Importing jsonschema and checking a schema against the Draft 2020-12 meta-schema costs ~120 ms of a
`dotprompt check` start-up, for fragments such as `{type: string, enum: [a, b]}`. This module says
"surely valid" for a small subset of keywords whose meta-schema rules are plain; anything else (a
`$schema`, a `$ref`, an unknown keyword, a value it is unsure of) answers "not sure" and
jsonschema decides and writes the message, as before. It never says an invalid schema is valid: a
differential test holds it to jsonschema's verdict (tests/test_metacheck.py).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from typing import Any

__all__ = ["surely_valid"]

_TYPE_NAMES = frozenset({"null", "boolean", "integer", "number", "string", "array", "object"})


def _any(value: Any) -> bool:
    return True


def _string(value: Any) -> bool:
    return isinstance(value, str)


def _number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _count(value: Any) -> bool:  # the meta-schema's nonNegativeInteger (a float like 1.0 is left to jsonschema)
    return isinstance(value, int) and not isinstance(value, bool) and value >= 0


def _regex(value: Any) -> bool:  # `pattern`: jsonschema's "regex" format is `re.compile` succeeding
    if not isinstance(value, str):
        return False
    try:
        re.compile(value)
    except (re.error, RecursionError, OverflowError):
        return False
    return True


def _type(value: Any) -> bool:
    if isinstance(value, str):
        return value in _TYPE_NAMES
    return (isinstance(value, list) and len(value) > 0 and all(isinstance(v, str) and v in _TYPE_NAMES for v in value)
            and len(set(value)) == len(value))


def _names(value: Any) -> bool:  # `required`: unique strings
    return isinstance(value, list) and all(isinstance(v, str) for v in value) and len(set(value)) == len(value)


def _subschemas(value: Any) -> bool:
    return isinstance(value, Mapping) and all(isinstance(k, str) and surely_valid(v) for k, v in value.items())


def _list(value: Any) -> bool:
    return isinstance(value, list)


# Keyword -> the test its value passes in the Draft 2020-12 meta-schema (subschemas recursively).
_KEYWORDS: dict[str, Callable[[Any], bool]] = {
    "type": _type, "enum": _list, "const": _any, "default": _any, "examples": _list,
    "title": _string, "description": _string, "$comment": _string, "format": _string,
    "pattern": _regex,
    "properties": _subschemas, "required": _names,
    "items": lambda v: surely_valid(v), "additionalProperties": lambda v: surely_valid(v),
    "minimum": _number, "maximum": _number, "exclusiveMinimum": _number, "exclusiveMaximum": _number,
    "minLength": _count, "maxLength": _count, "minItems": _count, "maxItems": _count,
}


def surely_valid(schema: Any) -> bool:
    """True when `schema` is valid Draft 2020-12 JSON Schema for sure; False: not sure (ask jsonschema)."""
    if isinstance(schema, bool):
        return True
    if not isinstance(schema, Mapping):
        return False
    for key, value in schema.items():
        test = _KEYWORDS.get(key) if isinstance(key, str) else None
        if test is None or not test(value):
            return False
    return True
