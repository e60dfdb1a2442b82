"""JSON's numbers are finite: NaN, Infinity and overflowing literals (`1e999`) are not JSON values.

Python's json module reads `NaN`, `Infinity` and `-Infinity` and turns `1e999` into infinity,
and every comparison with NaN is false: a NaN amount passes `amount > total` checks and a
`number` schema alike. Whatever enters from outside (model output, tool arguments, datasets,
recordings) is read or checked here; writers use `escape.json_dumps`, which never writes them.
It imports nothing of ours, so any module can use it.
"""

from __future__ import annotations

import json
import math
import re
from typing import Any, Final

__all__ = ["NonFiniteNumberError", "loads", "may_hold_non_finite", "non_finite_path"]

# What a text must hold for json.loads to return a non-finite float: one of the words, an exponent of
# three digits or more, or a run of 309 digits (past float's range). Checked in C before any walk.
_SUSPECT: Final = re.compile(r"NaN|Infinity|[eE][+]?\d{3}|\d{309}")


class NonFiniteNumberError(ValueError):
    """A NaN or an infinity where a JSON value was read."""


def _refuse_constant(word: str) -> Any:
    raise NonFiniteNumberError(f"{word} is not a JSON number (JSON has no NaN or Infinity)")


def _finite_float(literal: str) -> float:
    value = float(literal)
    if not math.isfinite(value):
        shown = literal if len(literal) <= 40 else literal[:37] + "..."
        raise NonFiniteNumberError(f"{shown} is too large for a number (it would be read as infinity)")
    return value


def loads(text: str | bytes) -> Any:
    """`json.loads` that refuses NaN, ±Infinity and overflowing numbers (NonFiniteNumberError, a ValueError)."""
    return json.loads(text, parse_constant=_refuse_constant, parse_float=_finite_float)


def may_hold_non_finite(text: str) -> bool:
    return _SUSPECT.search(text) is not None


def non_finite_path(value: Any, path: str = "$") -> str | None:
    """The JSON path of the first NaN or infinity in `value`, or None when there is none."""
    if isinstance(value, float):
        return None if math.isfinite(value) else path
    if isinstance(value, dict):
        for key, item in value.items():
            found = non_finite_path(item, f"{path}.{key}")
            if found is not None:
                return found
    elif isinstance(value, list | tuple):
        for index, item in enumerate(value):
            found = non_finite_path(item, f"{path}[{index}]")
            if found is not None:
                return found
    return None
