"""JSONPath-style paths for assertions: `$.a.b`, `$.items[0]`, `$.items[*].sku`, `$['odd key']`.

A small, strict subset: what prompt tests need, with errors that say what is wrong in the path.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

__all__ = ["PathError", "evaluate", "parse_path", "schema_problem"]

_TOKEN = re.compile(r"\.(?P<name>[A-Za-z_][\w-]*)|\[(?P<index>-?\d+)\]|\[\*\]|\[(?P<quote>['\"])(?P<key>.*?)(?P=quote)\]")

Step = str | int | None  # None is the [*] wildcard


class PathError(ValueError):
    pass


def parse_path(path: str) -> list[Step]:
    text = path.strip()
    if not text.startswith("$"):
        text = "$." + text  # `total` and `items[0]` are accepted as shorthand for `$.total`, `$.items[0]`
    steps: list[Step] = []
    position = 1
    while position < len(text):
        match = _TOKEN.match(text, position)
        if match is None:
            raise PathError(f"cannot read path {path!r} at {text[position:]!r} (write $.a.b, $.a[0], $.a[*].b)")
        if match["name"] is not None:
            steps.append(match["name"])
        elif match["index"] is not None:
            steps.append(int(match["index"]))
        elif match["key"] is not None:
            steps.append(match["key"])
        else:
            steps.append(None)
        position = match.end()
    return steps


_MISSING = object()


def evaluate(value: Any, steps: list[Step]) -> tuple[bool, Any]:
    """(found, value). A wildcard gives the list of matches (found if at least one path exists)."""
    if not steps:
        return True, value
    step, rest = steps[0], steps[1:]
    if step is None:
        if not isinstance(value, list):
            return False, None
        results = [evaluate(item, rest) for item in value]
        return True, [v for found, v in results if found]
    child = _child(value, step)
    if child is _MISSING:
        return False, None
    return evaluate(child, rest)


def _child(value: Any, step: str | int) -> Any:
    if isinstance(step, int):
        if isinstance(value, list) and -len(value) <= step < len(value):
            return value[step]
        return _MISSING
    if isinstance(value, Mapping) and step in value:
        return value[step]
    return _MISSING


def schema_problem(schema: Any, steps: list[Step]) -> str | None:
    """Why `steps` cannot exist in outputs of `schema`, or None when it can (or the schema does not say)."""
    node: Any = schema
    for step in steps:
        if not isinstance(node, Mapping):
            return None
        node = _resolve_nullable(node)
        kinds = _types(node)
        if isinstance(step, str):
            if kinds and "object" not in kinds:
                return f"field {step!r} asked of a value of type {'/'.join(kinds)}"
            props = node.get("properties") or {}
            if step in props:
                node = props[step]
                continue
            extra = node.get("additionalProperties", True)
            if extra is False:
                return f"no field {step!r} (the schema has {', '.join(props) or 'no fields'})"
            node = extra if isinstance(extra, Mapping) else {}
        else:
            if kinds and "array" not in kinds:
                return f"{'[*]' if step is None else f'[{step}]'} asked of a value of type {'/'.join(kinds)}"
            node = node.get("items", {})
    return None


def _types(node: Mapping[str, Any]) -> list[str]:
    kind = node.get("type")
    names = [kind] if isinstance(kind, str) else list(kind) if isinstance(kind, list) else []
    return [n for n in names if n != "null"]


def _resolve_nullable(node: Mapping[str, Any]) -> Mapping[str, Any]:
    for key in ("anyOf", "oneOf"):
        options = node.get(key)
        if isinstance(options, list):
            real = [o for o in options if isinstance(o, Mapping) and o.get("type") != "null"]
            if len(real) == 1:
                return real[0]
    return node
