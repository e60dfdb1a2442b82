"""Is a variant's F1 gain more than the luck of the rows? A paired bootstrap over an eval's rows.

    dotprompt eval prompts/extract.test.yaml --variant - --variant tight --json r.json
    .venv/bin/python bench/bench_eval_bootstrap.py r.json examples/gold/invoices.jsonl

Reads a `dotprompt eval --json` report of several arms of one eval and its gold rows, and prints each
arm's overall (micro) F1 minus the first arm's, with a 95% interval: the rows are drawn again with
replacement (the same draw for both arms, `--resamples` times, seed fixed) and the difference is
taken on each draw. An interval that holds zero says the rows cannot tell the arms apart. A row's
counts come from the report (its wrong, missing and extra values) and the gold row (every leaf it
has: what is not wrong or missing is correct). Not in run_all.sh: no peer, no timing.
"""

from __future__ import annotations

import argparse
import json
import random
from collections import Counter
from pathlib import Path
from typing import Any

Counts = tuple[int, int, int, int]  # correct, wrong, missing, extra


def leaves(value: Any) -> int:
    if isinstance(value, dict):
        return sum(leaves(v) for v in value.values())
    if isinstance(value, list):
        return sum(leaves(v) for v in value)
    return 0 if value is None else 1


def row_counts(arm: dict[str, Any], gold: dict[str, Any]) -> dict[str, Counts]:
    out = {}
    for row in arm["rows"]:
        seen = Counter(f["outcome"] for f in row["fields"])
        correct = leaves(gold[row["id"]]) - seen["wrong"] - seen["missing"]
        out[row["id"]] = (correct, seen["wrong"], seen["missing"], seen["extra"])
    return out


def micro_f1(rows: list[str], counts: dict[str, Counts]) -> float:
    c = w = m = x = 0
    for row in rows:
        dc, dw, dm, dx = counts[row]
        c, w, m, x = c + dc, w + dw, m + dm, x + dx
    return 2 * c / (2 * c + 2 * w + m + x) if c + w + m + x else 1.0


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("report", type=Path, help="a `dotprompt eval --json` report with two arms or more")
    parser.add_argument("dataset", type=Path, help="the gold rows the report scored (.jsonl)")
    parser.add_argument("--resamples", type=int, default=5000)
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    gold = {r["id"]: r["expected"] for r in map(json.loads, args.dataset.read_text(encoding="utf-8").splitlines())}
    arms = json.loads(args.report.read_text(encoding="utf-8"))["evals"]
    counts = {arm["arm"]: row_counts(arm, gold) for arm in arms}
    first, ids = arms[0]["arm"], [row["id"] for row in arms[0]["rows"]]
    rng = random.Random(args.seed)
    draws = [[rng.choice(ids) for _ in ids] for _ in range(args.resamples)]
    print(f"{len(ids)} rows, {args.resamples} resamples; F1 of each arm minus {first}'s "
          f"({micro_f1(ids, counts[first]):.3f})")
    for arm in arms[1:]:
        name = arm["arm"]
        diffs = sorted(micro_f1(d, counts[name]) - micro_f1(d, counts[first]) for d in draws)
        low, high = diffs[int(0.025 * len(diffs))], diffs[int(0.975 * len(diffs)) - 1]
        delta = micro_f1(ids, counts[name]) - micro_f1(ids, counts[first])
        print(f"{name:<16} F1 {micro_f1(ids, counts[name]):.3f}  {delta:+.3f}  95% [{low:+.3f}, {high:+.3f}]")


if __name__ == "__main__":
    main()
