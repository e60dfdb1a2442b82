"""Checking a case's expectations against what the run produced. Each failure says which and why."""

from __future__ import annotations

from dataclasses import dataclass
from decimal import Decimal
from typing import Any

from ..observe.cost import Cost
from .assertions import PATH_ASSERTIONS
from .cases import Expectations, FunctionCheck, PathCheck, ToolCheck
from .functions import FunctionSpecError, load_function
from .grounded import grounded_problems
from .paths import evaluate, parse_path
from .values import plain, short, subset_problems

__all__ = ["Observed", "check", "cost_problem", "function_problems", "path_problem", "tool_problem"]


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
    grounding: Any = None  # where the output's values are in the input (a Grounding), when grounded


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
    failures += grounded_problems(expect.grounded, seen.grounding)
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


def function_problems(checks: list[FunctionCheck], output: Any, case_input: Any) -> list[str]:
    """Each `function:` assertion, called as function(output, input): True passes; False, a reason (text)
    or a list of reasons fails; an AssertionError fails with its message. Anything else is a failure
    that says so, so a function that forgets to return never passes by accident."""
    return [p for c in checks for p in _function_problem(c, plain(output), case_input)]


def _function_problem(check: FunctionCheck, output: Any, case_input: Any) -> list[str]:
    label = f"function {check.spec}"
    try:
        answer = load_function(check.spec)(output, case_input)
    except FunctionSpecError as exc:
        return [f"{label}: {exc}"]
    except AssertionError as exc:
        return [f"{label}: {exc or 'assertion failed'}"]
    except Exception as exc:  # the user's code: its error is this case's failure, not a crash of the run
        return [f"{label} raised {type(exc).__name__}: {exc}"]
    if answer is True:
        return []
    if answer is False:
        return [f"{label} returned False for {short(output)}"]
    if isinstance(answer, str):
        return [f"{label}: {answer}"]
    if isinstance(answer, list) and all(isinstance(a, str) for a in answer):
        return [f"{label}: {a}" for a in answer]
    return [f"{label} returned {short(answer)}; return True, False, or the reasons it failed (text or a list of text)"]
