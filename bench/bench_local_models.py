"""Field accuracy and seconds per invoice of each local model on the invoice gold set.

    .venv/bin/python bench/bench_local_models.py --model local/smollm2 --model local/gemma3-270m
    .venv/bin/python bench/bench_local_models.py --model local/smollm2 --tuning off --limit 6

Runs prompts/extract.prompt over examples/gold/invoices.jsonl on each model (set up first with
`dotprompt local setup --model NAME`), then scores the fields: micro precision/recall/F1 over
every expected leaf (line items aligned to the expected ones first, order-free), and the mean
seconds per invoice (the server is warmed up before the clock starts). `--tuning` picks the local
defaults to compare: `off` sends the prompt's request as is; `cap` (token cap), `items` (+ maxItems),
`chars` (+ maxLength on strings) add one default each; `dry` is `items` with llama.cpp's DRY penalty
(tried, not shipped); `all` is the shipped defaults. `--example` adds a worked example to the
prompt. The scorer is small on purpose: `dotprompt eval` is the full one.
"""

from __future__ import annotations

import argparse
import asyncio
import datetime
import json
import re
import shutil
import tempfile
import time
import unicodedata
from collections import Counter
from pathlib import Path
from typing import Any

from dotprompt.errors import DotpromptError
from dotprompt.local.model import LocalModel, LocalTuning
from dotprompt.prompts.library import PromptLibrary

ROOT = Path(__file__).resolve().parent.parent
GOLD = ROOT / "examples" / "gold" / "invoices.jsonl"
SCALARS = ("invoice_number", "issue_date", "vendor.name", "vendor.vat_id", "currency", "total")
ITEM_FIELDS = ("description", "quantity", "unit_price")
EXAMPLE_REPLY = {"invoice_number": "NW-778", "issue_date": "2025-02-03",
                 "vendor": {"name": "Nordwind Textil GmbH", "vat_id": "DE811223344"}, "currency": "EUR",
                 "line_items": [{"description": "Tischdecke", "quantity": 2, "unit_price": 19.9}], "total": 39.8}
EXAMPLE = f"""
Example. Invoice:
Nordwind Textil GmbH, USt-IdNr. DE811223344
Rechnung Nr. NW-778 vom 03.02.2025
2 x Tischdecke à 19,90 EUR
Gesamt: 39,80 EUR
Reply:
{json.dumps(EXAMPLE_REPLY, ensure_ascii=False)}
"""


def tuning(name: str) -> LocalTuning:
    off = LocalTuning.off()
    full = LocalTuning()
    return {
        "off": off,
        "cap": LocalTuning(max_items=None, max_chars=None, cap_tokens=True, sampling={}),
        "items": LocalTuning(max_items=full.max_items, max_chars=None, cap_tokens=True, sampling={}),
        "chars": LocalTuning(max_items=full.max_items, max_chars=full.max_chars, cap_tokens=True, sampling={}),
        "dry": LocalTuning(max_items=full.max_items, max_chars=None, cap_tokens=True, sampling={"dry_multiplier": 0.8}),
        "all": full,
    }[name]


# -- scoring ---------------------------------------------------------------------------------------

def norm(value: Any) -> Any:
    if isinstance(value, bool) or value is None:
        return value
    if isinstance(value, (int, float)):
        return round(float(value), 2)
    text = unicodedata.normalize("NFKC", str(value)).casefold()
    text = re.sub(r"\s+", " ", text).strip()
    try:
        return datetime.date.fromisoformat(text).isoformat()
    except ValueError:
        return text


def get(obj: Any, path: str) -> Any:
    for part in path.split("."):
        obj = obj.get(part) if isinstance(obj, dict) else None
    return obj


def score_value(expected: Any, got: Any, field: str, tally: Counter[str]) -> None:
    """One leaf: a right answer is a true positive; a wrong one is both a false positive and a miss."""
    if expected is None and got is None:
        return
    if expected is not None and got is not None and norm(expected) == norm(got):
        tally[f"{field}:tp"] += 1
        return
    if got is not None:
        tally[f"{field}:fp"] += 1
    if expected is not None:
        tally[f"{field}:fn"] += 1


def align(expected: list[dict], got: list[dict]) -> list[tuple[dict | None, dict | None]]:
    """Pair items greedily by how many fields agree (best pairs first); leftovers pair with None."""
    scored = sorted(((sum(norm(e.get(f)) == norm(g.get(f)) for f in ITEM_FIELDS), i, j)
                     for i, e in enumerate(expected) for j, g in enumerate(got)), reverse=True)
    used_e: set[int] = set()
    used_g: set[int] = set()
    pairs: list[tuple[dict | None, dict | None]] = []
    for hits, i, j in scored:
        if hits and i not in used_e and j not in used_g:
            used_e.add(i)
            used_g.add(j)
            pairs.append((expected[i], got[j]))
    pairs += [(e, None) for i, e in enumerate(expected) if i not in used_e]
    pairs += [(None, g) for j, g in enumerate(got) if j not in used_g]
    return pairs


def score(expected: dict, got: Any, tally: Counter[str]) -> None:
    got = got if isinstance(got, dict) else {}
    for field in SCALARS:
        score_value(get(expected, field), get(got, field), field, tally)
    items = [g for g in got.get("line_items") or [] if isinstance(g, dict)]
    for e, g in align(expected["line_items"], items):
        for field in ITEM_FIELDS:
            score_value((e or {}).get(field), (g or {}).get(field), f"line_items.{field}", tally)


def f1(tally: Counter[str], prefix: str = "") -> tuple[float, float, float]:
    tp, fp, fn = (sum(n for k, n in tally.items() if k.startswith(prefix) and k.endswith(s)) for s in (":tp", ":fp", ":fn"))
    precision = tp / (tp + fp) if tp + fp else 0.0
    recall = tp / (tp + fn) if tp + fn else 0.0
    return precision, recall, 2 * precision * recall / (precision + recall) if precision + recall else 0.0


# -- running ---------------------------------------------------------------------------------------

def prompt_dir(example: bool) -> Path:
    folder = Path(tempfile.mkdtemp(prefix="bench-local-"))
    shutil.copytree(ROOT / "prompts", folder, dirs_exist_ok=True)
    if example:
        source = (folder / "extract.prompt").read_text(encoding="utf-8")
        marker = '{% include "json_only" %}\n'
        (folder / "extract.prompt").write_text(source.replace(marker, marker + EXAMPLE), encoding="utf-8")
    return folder


async def run_model(name: str, tune: LocalTuning, rows: list[dict], folder: Path, timeout: float,
                    verbose: bool = False) -> dict[str, Any]:
    model = LocalModel(name, tuning=tune, timeout=timeout)
    extract = PromptLibrary(folder).load("extract")
    started = time.monotonic()
    await asyncio.to_thread(model.connect)  # starts the server, not timed
    if verbose:
        print(f"  server up in {time.monotonic() - started:.1f} s", flush=True)
    tally: Counter[str] = Counter()
    seconds, failures, lengths, tokens = [], Counter(), [], []
    for row in rows:
        started = time.monotonic()
        try:
            reply = await extract.generate(row["input"], model=model)
            output = reply.output
            lengths.append(reply.finish_reason)
            tokens.append(reply.usage.output_tokens if reply.usage and reply.usage.output_tokens else 0)
        except DotpromptError as exc:
            output = None
            failures[type(exc).__name__] += 1
        seconds.append(time.monotonic() - started)
        score(row["expected"], output, tally)
        if verbose:
            print(f"  {row['id']}: {seconds[-1]:.1f} s {json.dumps(output, ensure_ascii=False)[:300]}", flush=True)
    return {"tally": tally, "seconds": seconds, "failures": failures, "finish": Counter(lengths), "tokens": tokens}


def report(name: str, variant: str, result: dict[str, Any]) -> None:
    tally, seconds = result["tally"], result["seconds"]
    p, r, f = f1(tally)
    per_field = "  ".join(f"{field.split('.')[-1]}={f1(tally, field + ':')[2]:.2f}"
                          for field in (*SCALARS, *(f"line_items.{x}" for x in ITEM_FIELDS)))
    print(f"{name} [{variant}] n={len(seconds)}  F1 {f:.3f} (P {p:.3f} R {r:.3f})  "
          f"{sum(seconds) / len(seconds):.1f} s/invoice (max {max(seconds):.1f})  "
          f"failed {dict(result['failures']) or 0}  finish {dict(result['finish'])}  "
          f"output tokens/invoice {sum(result['tokens']) / max(len(result['tokens']), 1):.0f}")
    print(f"    {per_field}", flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", action="append", required=True, help="a local model, e.g. local/smollm2 (repeat)")
    parser.add_argument("--tuning", action="append", choices=("off", "cap", "items", "chars", "dry", "all"),
                        help="local defaults to apply (repeat to compare; default: all)")
    parser.add_argument("--example", action="store_true", help="add a worked example to the prompt")
    parser.add_argument("--limit", type=int, default=0, help="only the first N invoices")
    parser.add_argument("--timeout", type=float, default=120.0, help="seconds per call")
    parser.add_argument("--verbose", action="store_true", help="print each invoice's time and reply")
    args = parser.parse_args()
    rows = [json.loads(line) for line in GOLD.read_text(encoding="utf-8").splitlines() if line.strip()]
    rows = rows[: args.limit] if args.limit else rows
    folder = prompt_dir(args.example)
    try:
        for name in args.model:
            for variant in args.tuning or ["all"]:
                result = asyncio.run(run_model(name, tuning(variant), rows, folder, args.timeout, args.verbose))
                report(name, variant + ("+example" if args.example else ""), result)
    finally:
        shutil.rmtree(folder, ignore_errors=True)


if __name__ == "__main__":
    main()
