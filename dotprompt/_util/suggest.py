"""The known names nearest to a misspelt one: every "did you mean" in the package asks here."""

from __future__ import annotations

import difflib
from collections.abc import Iterable

__all__ = ["close_matches"]

# difflib's similarity ratio a name must reach to be suggested (difflib's own default is 0.6).
CUTOFF = 0.6


def close_matches(word: str, choices: Iterable[str], n: int = 1, *, cutoff: float = CUTOFF) -> list[str]:
    """Up to `n` of `choices` nearest to `word`, best first, as the choices spell them.

    A stricter `cutoff` is for callers where a near miss means "typo" rather than "suggestion".

    Case and underscores are ignored, so `JSONL` finds `jsonl` and `maxTokens` finds `max_tokens`.
    """
    by_folded: dict[str, list[str]] = {}
    for choice in choices:
        by_folded.setdefault(_fold(choice), []).append(choice)
    found = difflib.get_close_matches(_fold(word), list(by_folded), n=n, cutoff=cutoff)
    return [choice for folded in found for choice in by_folded[folded]][:n]


def _fold(name: str) -> str:
    return name.lower().replace("_", "")
