"""The little JSON Schema handling formats need: type tests, JSON written as Genkit writes it.

(Local `$ref`s are followed by `schema.refs.resolve`.)
"""

from __future__ import annotations

import json
import math
from decimal import Decimal
from typing import Any

__all__ = ["has_type", "js_json", "js_number", "js_string", "with_definitions"]


def has_type(node: Any, name: str) -> bool:
    """True when the schema's `type` is `name` or a list containing it (a nullable type)."""
    kind = node.get("type") if isinstance(node, dict) else None
    return kind == name or (isinstance(kind, list) and name in kind)


def with_definitions(root: dict[str, Any], node: dict[str, Any]) -> dict[str, Any]:
    """`node` carrying the root's `$defs`/`definitions`, so a sub-schema shown alone keeps its refs."""
    extra: dict[str, Any] = {key: root[key] for key in ("$defs", "definitions") if key in root and key not in node}
    return {**node, **extra}


def js_json(value: Any) -> str:
    """`value` as JavaScript's `JSON.stringify` writes it (compact, keys in order, non-ASCII kept,
    `2.0` as `2`), so format instructions are the very text Genkit sends. Iterative: a schema nested
    thousands deep is written, not a RecursionError."""
    if not _holds_float(value):  # the usual schema: Python's encoder writes what JSON.stringify does
        try:
            return json.dumps(value, ensure_ascii=False, separators=(",", ":"))
        except RecursionError:
            pass
    out: list[str] = []
    stack: list[Any] = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, _Text):
            out.append(item)
        elif isinstance(item, dict):
            stack.append(_Text("}"))
            for position, (key, member) in enumerate(reversed(item.items())):
                stack += [member, _Text(json.dumps(str(key), ensure_ascii=False) + ":")]
                if position < len(item) - 1:
                    stack.append(_Text(","))
            stack.append(_Text("{"))
        elif isinstance(item, (list, tuple)):
            stack.append(_Text("]"))
            for position, member in enumerate(reversed(item)):
                stack.append(member)
                if position < len(item) - 1:
                    stack.append(_Text(","))
            stack.append(_Text("["))
        else:
            out.append(js_number(item) if isinstance(item, float) else json.dumps(item, ensure_ascii=False))
    return "".join(out)


def _holds_float(value: Any) -> bool:
    """Whether a float (which JavaScript writes its own way: `2.0` as `2`, `1e-7`) or a value JSON does not
    know sits anywhere in `value`. Iterative, like js_json."""
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, dict):
            if not all(type(key) is str for key in item):
                return True  # non-string keys: the slow path writes them as JSON.stringify would
            stack.extend(item.values())
        elif isinstance(item, (list, tuple)):
            stack.extend(item)
        elif not (item is None or type(item) in (str, int, bool)):
            return True
    return False


class _Text(str):
    """Already written JSON text on js_json's stack (as opposed to a string value still to write)."""


def js_number(value: float) -> str:
    """A float as JavaScript's `Number.prototype.toString` writes it (ECMAScript's Number::toString)."""
    if not math.isfinite(value):
        return "null"  # what JSON.stringify writes for NaN and the infinities
    if value == 0:
        return "0"
    sign = "-" if value < 0 else ""
    digits_tuple, exponent = Decimal(repr(abs(value))).normalize().as_tuple()[1:]
    digits = "".join(map(str, digits_tuple))
    k, n = len(digits), len(digits) + int(exponent)
    if k <= n <= 21:
        return sign + digits + "0" * (n - k)
    if 0 < n <= 21:
        return sign + digits[:n] + "." + digits[n:]
    if -6 < n <= 0:
        return sign + "0." + "0" * -n + digits
    mantissa = digits[0] + ("." + digits[1:] if k > 1 else "")
    return f"{sign}{mantissa}e{'+' if n - 1 >= 0 else '-'}{abs(n - 1)}"


def js_string(value: Any) -> str:
    """A scalar as JavaScript's `String(value)` writes it (`true`, `2`, `1.5`)."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        return js_number(value)
    if isinstance(value, str):
        return value
    return js_json(value)
