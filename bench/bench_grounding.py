"""Grounding 100 extracted values against a 100 KB input (and 1 MB, to show it is linear), CPU time.

The input is invoice-like text (words, amounts written `1.234,50`, dates, a few non-ASCII words);
the values are a quarter each strings found after normalisation, numbers, dates and values the
input does not hold (these go through every step, the fuzzy one included: the slowest path).

Each timed run grounds a document it has not seen (the same kind of text from another seed): what
grounding a new model reply against a new document costs, with nothing left over from the run
before (the parsed forms of its numbers, the indexes). Prints the best and the median of the runs,
and how much longer 10x the input takes (linear: about 10x).
"""

from __future__ import annotations

import random
import statistics
import sys
import time
from pathlib import Path

from _common import Result, arg_parser, report_all

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from dotprompt.grounding import ground
from tests.grounding import synthetic  # the same text the grounding work tests use

TARGET_MS = 50.0
WORDS = ("invoice", "total", "amount", "shipping", "widget", "blue", "large", "service", "consulting", "march",
         "april", "acme", "gmbh", "vat", "net", "gross", "due", "paid", "order", "customer")


def document(size: int, rng: random.Random) -> str:
    return synthetic.document(size, rng, WORDS)


def values(rng: random.Random) -> dict[str, object]:
    out: dict[str, object] = {}
    for i in range(100):
        kind = i % 4
        out[f"v{i}"] = (" ".join(rng.sample(WORDS, 2)).upper() if kind == 0 else
                        rng.randint(1, 9999) + rng.randint(10, 99) / 100 if kind == 1 else
                        "2026-03-14" if kind == 2 else f"not in the text {i} zzq")
    return out


def timings_ms(size: int, output: dict[str, object], runs: int) -> list[float]:
    """CPU milliseconds of grounding `output` in each of `runs` new documents of `size` characters."""
    out = []
    for seed in range(runs):
        text = document(size, random.Random(1000 * size + seed))
        start = time.process_time()
        ground(output, {"text": text})
        out.append((time.process_time() - start) * 1000)
    return out


def main() -> None:
    args = arg_parser(__doc__.splitlines()[0]).parse_args()
    output = values(random.Random(7))
    ground(output, {"text": document(10_000, random.Random(1))})  # imports and compiled patterns, not timed
    small, large = timings_ms(100_000, output, 9), timings_ms(1_000_000, output, 5)
    best, median = min(small), statistics.median(small)
    ratio = statistics.median(large) / median
    report_all([Result("grounding: 100 values, 100 KB input", f"{best:.1f} ms best, {median:.1f} ms median",
                       f"< {TARGET_MS:g} ms", median < TARGET_MS),
                Result("grounding: 100 values, 1 MB input",
                       f"{min(large):.0f} ms best, {statistics.median(large):.0f} ms median: 10x the input, "
                       f"{ratio:.1f}x the time", "about 10x (linear)", True, informational=True)], args.json)


if __name__ == "__main__":
    main()
