"""A synthetic invoice-like text of a given size: words, amounts with a decimal comma, dotted dates and a
name with a no-break space. The work tests and bench/bench_grounding.py ground values in it."""

from __future__ import annotations

import random
from collections.abc import Sequence

__all__ = ["document"]


def document(size: int, rng: random.Random, words: Sequence[str]) -> str:
    """About `size` characters drawn by `rng`: 15 % amounts, 2 % dates, 1 % the name, the rest from `words`."""
    parts, length = [], 0
    while length < size:
        roll = rng.random()
        word = (f"{rng.randint(1, 9999)},{rng.randint(10, 99)}" if roll < .15 else
                f"{rng.randint(1, 28)}.{rng.randint(1, 12)}.2026" if roll < .17 else
                "Müller\u00a0Straße" if roll < .18 else rng.choice(words))
        parts.append(word)
        length += len(word) + 1
    return " ".join(parts)
