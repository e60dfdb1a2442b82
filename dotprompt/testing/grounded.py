"""The `grounded` assertion of a test case: `grounded: all`, or `grounded: [$.total, $.vendor]`.

Every listed value (a path covers what is under it; `[*]` any item of a list) must be found in the
case's input by grounding (dotprompt/grounding); `all` means every value that can be looked for
(booleans, enum labels and derived fields are not). A listed path that names no value of the output
fails too, so a renamed field cannot pass silently.
"""

from __future__ import annotations

import re
from typing import Any, Literal

__all__ = ["Grounded", "grounded_problems", "read_grounded"]

Grounded = list[str] | Literal["all"]


def read_grounded(raw: Any) -> Grounded:
    """The assertion as written in a test file; ValueError saying what to write instead."""
    if raw == "all":
        return "all"
    paths = [raw] if isinstance(raw, str) else raw
    if not isinstance(paths, list) or not paths or not all(isinstance(p, str) and p.startswith("$") for p in paths):
        raise ValueError("`grounded` takes `all` or a list of JSON paths such as [$.total, $.line_items[*].amount]")
    return list(paths)


def grounded_problems(expected: Grounded | None, grounding: Any) -> list[str]:
    """Why the run's grounding breaks the assertion (nothing when it holds)."""
    if expected is None:
        return []
    if grounding is None:
        return ["grounded: the output was not grounded (output.grounding is off, the output is not JSON with a "
                "schema, or the case has no input text)"]
    fields = list(grounding.values())
    chosen = fields if expected == "all" else [f for f in fields if any(_covers(p, f.path) for p in expected)]
    problems = [f"grounded: {f.path} = {_short(f.value)} is not in the input" for f in chosen if f.status == "ungrounded"]
    if expected != "all":
        problems += [f"grounded: {p} names no value of the output" for p in expected
                     if not any(_covers(p, f.path) for f in fields)]
    if grounding.skipped:
        problems.append(f"grounded: not every value was checked: {grounding.skipped}")
    return problems


def _covers(listed: str, path: str) -> bool:
    """`listed` is `path` or above it, piece by piece, where `[*]` stands for any index."""
    want, have = _pieces(listed), _pieces(path)
    return len(want) <= len(have) and all(w == h or (w == "[*]" and h.startswith("["))
                                          for w, h in zip(want, have, strict=False))


def _pieces(path: str) -> list[str]:
    return re.findall(r"\[[^\]]*\]|\.[^.\[]+", path[1:])


def _short(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."
