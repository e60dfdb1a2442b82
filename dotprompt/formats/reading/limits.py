"""Limits on what the output parsers accept from a model: untrusted text must not exhaust the stack."""

from __future__ import annotations

from typing import Any

from ...settings import MAX_NESTING_DEPTH, MAX_REPORTED_REPAIRS

__all__ = ["MAX_NESTING_DEPTH", "MAX_REPORTED_REPAIRS", "TooDeepError", "deeper_than_limit"]  # the limits: in settings


class TooDeepError(Exception):
    """Nesting past MAX_NESTING_DEPTH at `offset`; the caller turns it into its own typed error."""

    def __init__(self, offset: int | None = None) -> None:
        self.offset = offset
        super().__init__(f"arrays and objects nested deeper than {MAX_NESTING_DEPTH} levels (MAX_NESTING_DEPTH)")


def deeper_than_limit(value: Any) -> bool:
    """True when `value` nests containers past MAX_NESTING_DEPTH; iterative, so any depth is safe."""
    pending = [(value, 1)]
    while pending:
        item, depth = pending.pop()
        if depth > MAX_NESTING_DEPTH:
            return True
        children = item.values() if type(item) is dict else item
        pending.extend((child, depth + 1) for child in children if type(child) in (list, dict))
    return False
