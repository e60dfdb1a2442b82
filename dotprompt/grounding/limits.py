"""The bounds of one grounding run: the defaults of `grounding.Limits` and the fixed thresholds. Past one,
the result says what it left out (`Grounding.skipped`, a value's `reason`) instead of taking longer."""

from __future__ import annotations

from typing import Final

__all__ = [
    "GROUNDING_FREE_TEXT_WORDS",
    "GROUNDING_FUZZY_THRESHOLD",
    "GROUNDING_MAX_DEPTH",
    "GROUNDING_MAX_FUZZY",
    "GROUNDING_MAX_INPUT_CHARS",
    "GROUNDING_MAX_SOURCES",
    "GROUNDING_MAX_SPANS",
    "GROUNDING_MAX_TRIES",
    "GROUNDING_MAX_VALUES",
    "GROUNDING_MAX_VALUE_CHARS",
]

GROUNDING_MAX_INPUT_CHARS: Final = 5_000_000
"""The largest input (all variables together, in characters) grounded; a larger one is not grounded at all."""

GROUNDING_MAX_VALUES: Final = 10_000
"""Leaves of one output grounded; the rest are named skipped."""

GROUNDING_MAX_DEPTH: Final = 64
"""How deep grounding walks an output; values nested deeper are named skipped."""

GROUNDING_MAX_SPANS: Final = 5
"""Spans reported per value found in several places."""

GROUNDING_MAX_TRIES: Final = 1_000
"""Candidate places in the input checked per value and step: what bounds the work per value."""

GROUNDING_MAX_FUZZY: Final = 2_000
"""Values of one run that may go on to the fuzzy (token alignment) step."""

GROUNDING_MAX_VALUE_CHARS: Final = 20_000
"""The longest text value looked for; a longer one is ungrounded, saying so."""

GROUNDING_FUZZY_THRESHOLD: Final = 2 / 3
"""The share of a value's words a window of the input must hold for a fuzzy match: one word in three
may differ ("blue widgets, large" ~ "large blue widget")."""

GROUNDING_FREE_TEXT_WORDS: Final = 6
"""A string of this many words or more, most of them in lower case, is text the model wrote (a summary,
an answer, a reason), not a value it copied: when the input does not hold it, it is `not_applicable`
("generated text") rather than ungrounded, unless its schema says `x-grounded: true`."""

GROUNDING_MAX_SOURCES: Final = 10_000
"""Input variables (nested values counted one by one) grounding reads from one input."""
