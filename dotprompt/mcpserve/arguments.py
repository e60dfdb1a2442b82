"""A prompt's input schema as MCP prompt arguments, and the arguments (strings) back into its input.

MCP prompt arguments are strings. A property whose schema admits a string (`type: string`, a list of
types with `string`, an enum with a string value, or no type at all) takes the argument as it is;
any other is JSON-decoded (`"3"` -> 3, `"true"` -> true, `'["a", "b"]'` -> a list), and an argument
that is not JSON is an error naming it and the type its schema wants. The input schema then checks
the whole input, as a run would. A schema that is no object (`input: {schema: string}`) is one
argument, `input`.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

__all__ = ["WHOLE_INPUT", "ArgumentError", "admits_string", "decode_arguments", "input_schema", "prompt_arguments"]

WHOLE_INPUT = "input"  # the one argument of a prompt whose input is no object


class ArgumentError(ValueError):
    """An argument that cannot become the prompt's input: the message names it and the fix."""


def input_schema(meta: Mapping[str, Any]) -> dict[str, Any] | None:
    """The JSON Schema of a compiled prompt's input, or None when it declares none."""
    block = meta.get("input") or {}
    schema = block.get("schema") if isinstance(block, Mapping) else None
    return schema if isinstance(schema, dict) else None


def _is_object(schema: Mapping[str, Any]) -> bool:
    return schema.get("type") == "object" or "properties" in schema


def _defaults(meta: Mapping[str, Any]) -> Mapping[str, Any]:
    block = meta.get("input") or {}
    default = block.get("default") if isinstance(block, Mapping) else None
    return default if isinstance(default, Mapping) else {}


def prompt_arguments(meta: Mapping[str, Any]) -> list[tuple[str, str | None, bool]]:
    """(name, description, required) per argument: the input schema's properties, in their order."""
    schema = input_schema(meta)
    if schema is None:
        return []
    if not _is_object(schema):
        return [(WHOLE_INPUT, _described(schema), WHOLE_INPUT not in _defaults(meta))]
    required, defaults = set(schema.get("required") or ()), _defaults(meta)
    properties = schema.get("properties") or {}
    return [(name, _described(prop if isinstance(prop, dict) else {}), name in required and name not in defaults)
            for name, prop in properties.items()]


def _described(schema: Mapping[str, Any]) -> str | None:
    """The property's description, with the JSON it takes when it is no string."""
    text = schema.get("description") if isinstance(schema.get("description"), str) else None
    if admits_string(schema):
        return text
    kind = schema.get("type") or "value"
    hint = f"JSON {kind if isinstance(kind, str) else ' or '.join(map(str, kind))}"
    return f"{text} ({hint})" if text else f"({hint})"


def admits_string(schema: Any) -> bool:
    """Whether a string is a valid value for `schema` as far as its type says (then it is not decoded)."""
    if not isinstance(schema, Mapping):
        return True
    kind = schema.get("type")
    if isinstance(kind, str):
        return kind == "string"
    if isinstance(kind, list):
        return "string" in kind
    if "enum" in schema:
        return any(isinstance(value, str) for value in schema.get("enum") or ())
    if "const" in schema:
        return isinstance(schema["const"], str)
    branches = [*(schema.get("anyOf") or ()), *(schema.get("oneOf") or ())]
    return any(admits_string(branch) for branch in branches) if branches else True


def decode_arguments(meta: Mapping[str, Any], arguments: Mapping[str, str] | None, label: str) -> Any:
    """The prompt's input from its MCP arguments (see the module's docstring)."""
    arguments = dict(arguments or {})
    schema = input_schema(meta)
    if schema is None:
        return arguments
    if not _is_object(schema):
        return _decoded(WHOLE_INPUT, arguments[WHOLE_INPUT], schema, label) if WHOLE_INPUT in arguments else None
    properties = schema.get("properties") or {}
    return {name: _decoded(name, value, properties.get(name), label) for name, value in arguments.items()}


def _decoded(name: str, value: str, schema: Any, label: str) -> Any:
    if admits_string(schema):
        return value
    try:
        return json.loads(value)
    except ValueError:
        kind = schema.get("type", "JSON value") if isinstance(schema, Mapping) else "JSON value"
        shown = value if len(value) <= 40 else value[:40] + "..."
        raise ArgumentError(f"prompt {label!r}: argument {name!r} is {shown!r}, not JSON; its schema wants "
                            f"{kind}: give it as JSON (a number as 3, a boolean as true, a list as [\"a\"])") from None
