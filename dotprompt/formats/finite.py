"""NaN and infinities in a parsed reply become null, each reported as a `non_finite_number` Repair.

A reply `{"total": NaN}` or `{"total": 1e999}` reads in Python as a float that is not a JSON value
and that every comparison lets through. Replaced by null and reported, it fails a `number` schema
(the re-ask and the error say why) and can forbid itself in CI like every other repair.
"""

from __future__ import annotations

import math
from typing import Any

from .._util.finite import may_hold_non_finite
from .base import ParsedOutput, Repair

__all__ = ["finite_output"]


def finite_output(parsed: ParsedOutput, text: str) -> ParsedOutput:
    """`parsed` with every non-finite number replaced by None and a Repair per replacement."""
    if not may_hold_non_finite(text):  # a scan in C: clean replies are never walked
        return parsed
    found: list[str] = []
    value = _replaced(parsed.value, "$", found)
    if not found:
        return parsed
    repairs = [Repair("non_finite_number", f"replaced the non-finite number at {path} with null (JSON has no "
                                           "NaN or Infinity)") for path in found]
    return ParsedOutput(value, [*parsed.repairs, *repairs])


def _replaced(value: Any, path: str, found: list[str]) -> Any:
    if isinstance(value, float) and not math.isfinite(value):
        found.append(path)
        return None
    if isinstance(value, dict):
        return {key: _replaced(item, f"{path}.{key}", found) for key, item in value.items()}
    if isinstance(value, list):
        return [_replaced(item, f"{path}[{index}]", found) for index, item in enumerate(value)]
    return value
