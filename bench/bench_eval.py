"""Eval scoring cost: aligning line items (pure-Python Hungarian method) and scoring whole documents.

    .venv/bin/python bench/bench_eval.py

Prints milliseconds per alignment of n x n items (each pair compared on three fields, as invoice
line items are) and documents scored per second for the invoice gold set against itself. Not in
run_all.sh: it has no peer to compare with; it backs the README's "milliseconds" claim.
"""

from __future__ import annotations

import json
import random
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from dotprompt.evals.compare import Comparer  # noqa: E402
from dotprompt.evals.config import FieldRule  # noqa: E402

RULES = {"total": FieldRule("total", "number", {"tolerance": 0.01}),
         "line_items[*].description": FieldRule("line_items[*].description", "text")}


def items(n: int, rng: random.Random) -> list[dict]:
    return [{"description": f"item {i}", "quantity": rng.randint(1, 9), "unit_price": round(rng.random() * 100, 2)}
            for i in range(n)]


def best_of(repeats: int, action) -> float:
    times = []
    for _ in range(repeats):
        started = time.perf_counter()
        action()
        times.append(time.perf_counter() - started)
    return min(times)


def main() -> None:
    rng = random.Random(7)
    comparer = Comparer(RULES)
    for n in (5, 20, 50, 100, 200):
        gold = {"line_items": items(n, rng)}
        shuffled = {"line_items": rng.sample(gold["line_items"], n)}
        seconds = best_of(3 if n >= 100 else 10, lambda g=gold, s=shuffled: comparer.compare(g, s))
        print(f"align+score {n:>3} x {n:<3} line items: {seconds * 1000:8.1f} ms")
    rows = [json.loads(line) for line in (ROOT / "examples" / "gold" / "invoices.jsonl").read_text().splitlines()]
    seconds = best_of(5, lambda: [comparer.compare(r["expected"], r["expected"]) for r in rows])
    print(f"invoice gold set: {len(rows)} documents in {seconds * 1000:.1f} ms ({len(rows) / seconds:,.0f} documents/s)")


if __name__ == "__main__":
    main()
