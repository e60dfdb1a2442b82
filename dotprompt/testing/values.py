"""Plain-data helpers the assertions share: JSON type names, subset comparison, short quotes."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

__all__ = ["JSON_TYPES", "json_type", "plain", "short", "subset_problems"]

JSON_TYPES = ("object", "array", "string", "number", "integer", "boolean", "null")


def json_type(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    return {float: "number", str: "string", list: "array", dict: "object"}.get(type(value), type(value).__name__)


def subset_problems(expected: Any, actual: Any, where: str) -> list[str]:
    """Where `expected` is not contained in `actual`: mappings by key, lists item by item."""
    if isinstance(expected, Mapping):
        if not isinstance(actual, Mapping):
            return [f"{where}: expected an object, got {short(actual)}"]
        out: list[str] = []
        for key, value in expected.items():
            if key not in actual:
                out.append(f"{where}.{key}: missing")
            else:
                out += subset_problems(value, actual[key], f"{where}.{key}")
        return out
    if isinstance(expected, list):
        if not isinstance(actual, list) or len(actual) != len(expected):
            return [f"{where}: expected {len(expected)} items, got {short(actual)}"]
        return [p for i, (e, a) in enumerate(zip(expected, actual, strict=True)) for p in subset_problems(e, a, f"{where}[{i}]")]
    return [] if expected == actual else [f"{where}: expected {short(expected)}, got {short(actual)}"]


def plain(value: Any) -> Any:
    """A pydantic output as JSON data; anything else as it is."""
    dump = getattr(value, "model_dump", None)
    if callable(dump):
        return dump(mode="json")
    return value


def short(value: Any, limit: int = 160) -> str:
    """`value` as JSON, cut to `limit` characters, for failure messages."""
    text = json.dumps(plain(value), ensure_ascii=False, default=str)
    return text if len(text) <= limit else text[: limit - 1] + "…"
