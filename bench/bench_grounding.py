"""Grounding 100 extracted values against a 100 KB input (and 1 MB, to show it is linear), CPU time, best of 5.

The input is invoice-like text (words, amounts written `1.234,50`, dates, a few non-ASCII words);
the values are a quarter each strings found after normalisation, numbers, dates and values the
input does not hold (these go through every step, the fuzzy one included: the slowest path).
"""

from __future__ import annotations

import random
import sys
import time
from pathlib import Path

from _common import Result, arg_parser, report_all

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from dotprompt.grounding import ground

TARGET_MS = 50.0
WORDS = ("invoice", "total", "amount", "shipping", "widget", "blue", "large", "service", "consulting", "march",
         "april", "acme", "gmbh", "vat", "net", "gross", "due", "paid", "order", "customer")


def document(size: int, rng: random.Random) -> str:
    parts, length = [], 0
    while length < size:
        roll = rng.random()
        word = (f"{rng.randint(1, 9999)},{rng.randint(10, 99)}" if roll < .15 else
                f"{rng.randint(1, 28)}.{rng.randint(1, 12)}.2026" if roll < .17 else
                "Müller\u00a0Straße" if roll < .18 else rng.choice(WORDS))
        parts.append(word)
        length += len(word) + 1
    return " ".join(parts)


def values(rng: random.Random) -> dict[str, object]:
    out: dict[str, object] = {}
    for i in range(100):
        kind = i % 4
        out[f"v{i}"] = (" ".join(rng.sample(WORDS, 2)).upper() if kind == 0 else
                        rng.randint(1, 9999) + rng.randint(10, 99) / 100 if kind == 1 else
                        "2026-03-14" if kind == 2 else f"not in the text {i} zzq")
    return out


def best_ms(text: str, output: dict[str, object], runs: int = 5) -> float:
    best = float("inf")
    for _ in range(runs):
        start = time.process_time()
        ground(output, {"text": text})
        best = min(best, time.process_time() - start)
    return best * 1000


def main() -> None:
    args = arg_parser(__doc__.splitlines()[0]).parse_args()
    rng = random.Random(7)
    output = values(rng)
    small, large = best_ms(document(100_000, rng), output), best_ms(document(1_000_000, rng), output)
    report_all([Result("grounding: 100 values, 100 KB input", f"{small:.1f} ms", f"< {TARGET_MS:g} ms",
                       small < TARGET_MS),
                Result("grounding: 100 values, 1 MB input", f"{large:.0f} ms ({large / small:.1f}x the 100 KB time)",
                       "about 10x (linear)", True, informational=True)], args.json)


if __name__ == "__main__":
    main()
