"""Seconds per invoice of the extract variants on the local model, timed side by side.

    .venv/bin/python bench/bench_extract_timing.py --variant - --variant tight --variant fewshot --limit 4

The recordings of the invoice eval keep each call's latency, but they were made one variant after
another on a shared machine whose load changed tenfold between them. This times the variants
interleaved (row 1 on every variant, then row 2, ...), so a change in load hits them alike, with the
eval's own settings (`maxOutputTokens: 256`, temperature 0). Nothing is recorded or scored: the eval
does that (`dotprompt eval prompts/extract.test.yaml --variant ...`). Prints, per variant, the best
and median seconds, output tokens per second and how many replies hit the cap, with the load average
before and after. Not in run_all.sh: it needs the local model and takes minutes.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from dotprompt.errors import DotpromptError  # noqa: E402
from dotprompt.local.model import LocalModel  # noqa: E402
from dotprompt.prompts.library import PromptLibrary  # noqa: E402

GOLD = ROOT / "examples" / "gold" / "invoices.heldout.jsonl"  # the few-shot examples are not timed either
CONFIG = {"maxOutputTokens": 256}


def load() -> str:
    return " ".join(f"{x:.2f}" for x in os.getloadavg())


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--variant", action="append", required=True, help="an extract variant (`-`: none; repeat)")
    parser.add_argument("--limit", type=int, default=4, help="the first N held-out invoices")
    parser.add_argument("--timeout", type=float, default=600.0, help="seconds per call")
    args = parser.parse_args()
    rows = [json.loads(line) for line in GOLD.read_text(encoding="utf-8").splitlines() if line.strip()][: args.limit]
    library = PromptLibrary(ROOT / "prompts")
    prompts = {v: library.load("extract", None if v == "-" else v) for v in args.variant}
    model = LocalModel("local/smollm2", timeout=args.timeout)
    await asyncio.to_thread(model.connect)  # the server's start is not timed
    print(f"load before: {load()}")
    seconds: dict[str, list[float]] = {v: [] for v in prompts}
    tokens: dict[str, list[int]] = {v: [] for v in prompts}
    capped = dict.fromkeys(prompts, 0)
    for row in rows:
        for variant, prompt in prompts.items():
            started = time.monotonic()
            try:
                reply = await prompt.generate(row["input"], model=model, options={"config": CONFIG})
            except DotpromptError as exc:  # a reply that failed its schema (cut at the cap) still took its time
                response = getattr(exc, "response", None)
                usage, finish = getattr(response, "usage", None), getattr(response, "finish_reason", "error")
            else:
                usage, finish = reply.usage, reply.finish_reason
            seconds[variant].append(time.monotonic() - started)
            tokens[variant].append((usage.output_tokens or 0) if usage else 0)
            capped[variant] += finish == "length"
            print(f"  {row['id']} [{variant}]: {seconds[variant][-1]:.1f} s, {tokens[variant][-1]} tokens, {finish}",
                  flush=True)
    print(f"load after: {load()}")
    for variant in prompts:
        s, t = seconds[variant], tokens[variant]
        print(f"{variant:<14} best {min(s):6.1f} s  median {statistics.median(s):6.1f} s  "
              f"{sum(t) / sum(s):5.1f} tokens/s  cut at the cap {capped[variant]}/{len(s)}")


if __name__ == "__main__":
    asyncio.run(main())
