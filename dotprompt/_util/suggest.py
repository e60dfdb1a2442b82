"""The known names nearest to a misspelt one: every "did you mean" in the package asks here."""

from __future__ import annotations

import difflib
from collections.abc import Iterable

__all__ = ["TYPO_CUTOFF", "close_matches", "did_you_mean", "near_miss"]

# difflib's similarity ratio a name must reach to be suggested (difflib's own default is 0.6).
CUTOFF = 0.6
TYPO_CUTOFF = 0.75  # `jsno`/`json` is 0.75, `strng`/`string` 0.91; an application's `bullets`/`unless` is 0.62


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


def did_you_mean(word: str, choices: Iterable[str]) -> str | None:
    """`did you mean `x`?` for the choice nearest `word`, or None."""
    close = close_matches(word, choices)
    return f"did you mean `{close[0]}`?" if close else None


def near_miss(name: str, known: Iterable[str]) -> str | None:
    """`did you mean `x`?` when `name` is a typo of a known name (close enough to be no other name)."""
    close = close_matches(name, known, cutoff=TYPO_CUTOFF)
    return f"did you mean `{close[0]}`?" if close else None


def _fold(name: str) -> str:
    return name.lower().replace("_", "")
