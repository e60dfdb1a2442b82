"""Checking a case's expectations against what the run produced. Each failure says which and why."""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from .cases import Expectations, PathCheck, ToolCheck
from .paths import evaluate, parse_path


@dataclass(frozen=True)
class Observed:
    """What a case's run produced, in plain data."""

    output: Any
    text: str
    tool_calls: list[tuple[str, Any]]
    turns: int
    repairs: list[str]
    latency_ms: float
    tokens: int


def check(expect: Expectations, seen: Observed, *, timed: bool) -> list[str]:
    """Every failed expectation, as a sentence. `timed` is False when latency is not meaningful."""
    failures: list[str] = []
    output = _plain(seen.output)
    if expect.has_output() and output != _plain(expect.output):
        failures.append(f"output differs: expected {_short(expect.output)}, got {_short(output)}")
    if expect.has_subset():
        failures += [f"output_subset: {p}" for p in subset_problems(_plain(expect.output_subset), output, "$")]
    failures += [p for c in expect.paths if (p := path_problem(c, output))]
    failures += [f"text does not contain {t!r}" for t in expect.text_contains if t not in seen.text]
    failures += [p for c in expect.tool_called if (p := tool_problem(c, seen.tool_calls))]
    if expect.max_turns_used is not None and seen.turns > expect.max_turns_used:
        failures.append(f"used {seen.turns} model calls, more than max_turns_used {expect.max_turns_used}")
    if expect.no_repairs and seen.repairs:
        failures.append(f"the output needed repairs: {'; '.join(seen.repairs)}")
    if expect.latency_ms is not None and timed and seen.latency_ms > expect.latency_ms:
        failures.append(f"model latency {seen.latency_ms:.0f} ms is over the {expect.latency_ms:g} ms budget")
    if expect.max_tokens is not None and seen.tokens > expect.max_tokens:
        failures.append(f"used {seen.tokens} tokens, over the max_tokens budget of {expect.max_tokens}")
    return failures


def path_problem(c: PathCheck, output: Any) -> str | None:
    found, value = evaluate(output, parse_path(c.path))
    if not found:
        return f"{c.path}: not found in the output"
    ok = _OPS[c.op](value, c.value)
    return None if ok else f"{c.path}: expected {c.op} {_short(c.value)}, got {_short(value)}"


def _contains(value: Any, wanted: Any) -> bool:
    if isinstance(value, str):
        return str(wanted) in value
    if isinstance(value, list):
        return any(not subset_problems(wanted, item, "$") for item in value)
    if isinstance(value, Mapping):
        return wanted in value
    return False


def _number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def json_type(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    return {float: "number", str: "string", list: "array", dict: "object"}.get(type(value), type(value).__name__)


def _is_type(value: Any, wanted: str) -> bool:
    kind = json_type(value)
    return kind == wanted or (wanted == "number" and kind == "integer")


_OPS = {
    "equals": lambda v, w: v == w,
    "contains": _contains,
    "matches": lambda v, w: isinstance(v, str) and re.search(str(w), v) is not None,
    "length": lambda v, w: hasattr(v, "__len__") and len(v) == w,
    "gte": lambda v, w: _number(v) and v >= w,
    "lte": lambda v, w: _number(v) and v <= w,
    "type": _is_type,
    "one_of": lambda v, w: v in w,
}


def subset_problems(expected: Any, actual: Any, where: str) -> list[str]:
    """Where `expected` is not contained in `actual`: mappings by key, lists item by item."""
    if isinstance(expected, Mapping):
        if not isinstance(actual, Mapping):
            return [f"{where}: expected an object, got {_short(actual)}"]
        out: list[str] = []
        for key, value in expected.items():
            if key not in actual:
                out.append(f"{where}.{key}: missing")
            else:
                out += subset_problems(value, actual[key], f"{where}.{key}")
        return out
    if isinstance(expected, list):
        if not isinstance(actual, list) or len(actual) != len(expected):
            return [f"{where}: expected {len(expected)} items, got {_short(actual)}"]
        return [p for i, (e, a) in enumerate(zip(expected, actual, strict=True)) for p in subset_problems(e, a, f"{where}[{i}]")]
    return [] if expected == actual else [f"{where}: expected {_short(expected)}, got {_short(actual)}"]


def tool_problem(c: ToolCheck, calls: list[tuple[str, Any]]) -> str | None:
    named = [args for name, args in calls if name == c.name]
    if not named:
        made = ", ".join(sorted({name for name, _ in calls})) or "none"
        return f"tool {c.name!r} was not called (called: {made})"
    if c.input is not None and all(subset_problems(_plain(c.input), args, "$") for args in named):
        return f"tool {c.name!r} was called, but never with input containing {_short(c.input)} (got {_short(named)})"
    return None


def _plain(value: Any) -> Any:
    dump = getattr(value, "model_dump", None)
    if callable(dump):
        return dump(mode="json")
    return value


def _short(value: Any, limit: int = 160) -> str:
    text = json.dumps(_plain(value), ensure_ascii=False, default=str)
    return text if len(text) <= limit else text[: limit - 1] + "…"
