"""Limits on what the output parsers accept from a model: untrusted text must not exhaust the stack."""

from __future__ import annotations

from typing import Any, Final

__all__ = ["MAX_NESTING_DEPTH", "MAX_REPORTED_REPAIRS", "TooDeepError", "deeper_than_limit"]

# Arrays and objects nested deeper than this are refused: an OutputParseError for a whole reply
# (an OutputValidationError from `generate()`), and the stream parser stops reading there. Far
# above anything a schema asks for, and well below the interpreter's recursion limit (about 1000
# frames), which json.loads, partial-json-parser and schema validation all recurse against.
MAX_NESTING_DEPTH: Final = 512


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

# Repairs reported one by one on a parse result (`ParsedOutput.repairs`), in the order they were
# made. Past this many, each further kind of repair is one summary Repair carrying its count and
# where the first of them was: a hostile reply with 250,000 trailing commas costs a counter, not
# 250,000 messages. Human-sized replies never come near it.
MAX_REPORTED_REPAIRS: Final = 100
