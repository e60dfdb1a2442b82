"""How well "ungrounded" flags a wrong value, on every reply of an eval arm that parses as JSON.

    .venv/bin/python bench/bench_grounding_flag.py                      # prompts/extract.test.yaml, base arm
    .venv/bin/python bench/bench_grounding_flag.py --variant tight --dataset examples/gold/invoices.heldout.jsonl

`dotprompt eval` grounds a row only when its output passed the output schema, as a run does: a reply
cut at the token cap or missing a required field has no grounding, so an arm whose replies all fail
the schema has no flag figures there. This replays the arm (never calling a model) and grounds every
reply that parses, valid or not, against its row's input with the eval's own counting
(`dotprompt.evals.grounding_stats`): per field, the grounded rate and the flag's precision (ungrounded
values that are wrong) and recall (wrong values that are ungrounded). Not in run_all.sh: no peer.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from dotprompt.evals.config import load_eval  # noqa: E402
from dotprompt.evals.datasets import read_dataset  # noqa: E402
from dotprompt.evals.grounding_stats import OVERALL, grounding_counts  # noqa: E402
from dotprompt.evals.run import Arm, EvalRun  # noqa: E402
from dotprompt.grounding import ground, input_sources  # noqa: E402
from dotprompt.prompts.library import PromptLibrary  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("test_file", nargs="?", default="prompts/extract.test.yaml")
    parser.add_argument("--variant", default="-", help="the variant (`-`: the prompt without one)")
    parser.add_argument("--dataset", type=Path, help="gold rows instead of the test file's")
    parser.add_argument("--dir", type=Path, default=ROOT / "prompts", help="the prompt folder")
    args = parser.parse_args()
    library = PromptLibrary(args.dir)
    spec = load_eval(Path(args.test_file), args.dir)
    if spec is None:
        raise SystemExit(f"{args.test_file} has no eval: section")
    dataset = args.dataset or spec.dataset
    if dataset is None:
        raise SystemExit(f"{args.test_file}: the eval names no dataset; pass --dataset")
    rows = read_dataset(dataset)
    variant = "" if args.variant == "-" else args.variant
    result = asyncio.run(EvalRun(library, "replay").run(spec, [Arm(variant)], rows))[0]
    schema = library.load(spec.prompt, variant or None).metadata["output"]["schema"]
    grounded = [(r.row.id, r.comparison,
                 ground(r.output, input_sources(r.row.input), schema) if r.output is not None else None)
                for r in result.rows]
    counts = grounding_counts(grounded)
    valid = sum(not r.problems for r in result.rows)
    parsed = sum(g is not None for _, _, g in grounded)
    print(f"{spec.prompt} on {dataset.name} [{result.arm.label}]: {len(rows)} rows, {parsed} parse as JSON, "
          f"{valid} pass the schema")
    print(f"{'field':<27} {'looked':>6} {'grounded':>8} {'wrong':>5} {'flagged':>7} {'false':>5} {'flag P':>6} {'flag R':>6}")
    for name in [OVERALL, *sorted(k for k in counts if k != OVERALL)]:
        c = counts[name]
        wrong = c.flagged_wrong + c.unflagged_wrong
        flagged = c.flagged_wrong + c.flagged_right
        print(f"{name:<27} {c.looked:>6} {c.rate:>8.3f} {wrong:>5} {flagged:>7} {c.flagged_right:>5} "
              f"{c.flag_precision:>6.2f} {c.flag_recall:>6.2f}")


if __name__ == "__main__":
    main()
