"""Checking a case's expectations against what the run produced. Each failure says which and why."""

from __future__ import annotations

from dataclasses import dataclass
from decimal import Decimal
from typing import Any

from ..cost import Cost
from .assertions import PATH_ASSERTIONS
from .cases import Expectations, PathCheck, ToolCheck
from .paths import evaluate, parse_path
from .values import plain, short, subset_problems


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
    cost: Cost | None = None  # the case's model calls, priced (None: not computed)


def check(expect: Expectations, seen: Observed, *, timed: bool) -> list[str]:
    """Every failed expectation, as a sentence. `timed` is False when latency is not meaningful."""
    failures: list[str] = []
    output = plain(seen.output)
    if expect.has_output() and output != plain(expect.output):
        failures.append(f"output differs: expected {short(expect.output)}, got {short(output)}")
    if expect.has_subset():
        failures += [f"output_subset: {p}" for p in subset_problems(plain(expect.output_subset), output, "$")]
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
    if expect.max_cost is not None:
        failures += [p for p in [cost_problem(expect.max_cost, seen.cost)] if p]
    return failures


def cost_problem(budget: float, cost: Cost | None) -> str | None:
    """Why the case's cost breaks `max_cost`; a cost that cannot be known fails too (the budget is unchecked)."""
    if cost is None or cost.usd is None:
        reason = cost.reason if cost is not None else "no model call was priced"
        return f"max_cost {budget:g} USD cannot be checked: {reason}"
    if cost.usd > Decimal(str(budget)):
        return f"cost {cost} is over the max_cost budget of ${budget:g}"
    return None


def path_problem(c: PathCheck, output: Any) -> str | None:
    found, value = evaluate(output, parse_path(c.path))
    if not found:
        return f"{c.path}: not found in the output"
    ok = PATH_ASSERTIONS[c.op].test(value, c.value)
    return None if ok else f"{c.path}: expected {c.op} {short(c.value)}, got {short(value)}"


def tool_problem(c: ToolCheck, calls: list[tuple[str, Any]]) -> str | None:
    named = [args for name, args in calls if name == c.name]
    if not named:
        made = ", ".join(sorted({name for name, _ in calls})) or "none"
        return f"tool {c.name!r} was not called (called: {made})"
    if c.input is not None and all(subset_problems(plain(c.input), args, "$") for args in named):
        return f"tool {c.name!r} was called, but never with input containing {short(c.input)} (got {short(named)})"
    return None
