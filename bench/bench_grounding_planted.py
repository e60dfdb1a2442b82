"""Grounding as a gate on the planted set (tests/grounding/planted.py): made-up values flagged, copied
values found, spans exactly where the values were planted; and, per class, what went wrong if any.

    .venv/bin/python bench/bench_grounding_planted.py --per-class 200 --seeds 10

Targets: made-up values flagged 100 %, copied values found >= 99 %, spans exact 100 %.
"""

from __future__ import annotations

import sys
from collections import Counter
from pathlib import Path

from _common import Result, arg_parser, report_all

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from dotprompt.grounding import ground
from tests.grounding import planted


def outcome(case: planted.Case) -> str:
    field = ground({"v": case.value}, {"text": case.document})["$.v"]
    if case.made_up:
        return "flagged" if field.status == "ungrounded" else "grounded"
    if not field.grounded:
        return "missed"
    return "found" if (field.spans[0].start, field.spans[0].end) == case.span else "wrong span"


def main() -> None:
    parser = arg_parser(__doc__.splitlines()[0])
    parser.add_argument("--per-class", type=int, default=60)
    parser.add_argument("--seeds", type=int, default=5)
    args = parser.parse_args()
    counts: Counter[str] = Counter()
    misses: Counter[tuple[str, str]] = Counter()
    for seed in range(1, args.seeds + 1):
        for case in planted.cases(seed, args.per_class):
            result = outcome(case)
            counts[result] += 1
            if result not in ("flagged", "found"):
                misses[case.kind, result] += 1
    made_up, copied = counts["flagged"] + counts["grounded"], counts["found"] + counts["wrong span"] + counts["missed"]
    found = counts["found"] + counts["wrong span"]
    print(f"{made_up + copied} cases; misses by class: {dict(misses) or 'none'}")
    report_all([Result("planted: made-up values flagged", f"{counts['flagged']}/{made_up}", "100 %",
                       counts["flagged"] == made_up),
                Result("planted: copied values found", f"{found}/{copied}", ">= 99 %", found >= 0.99 * copied),
                Result("planted: spans exact", f"{counts['found']}/{found}", "100 %", counts["found"] == found)],
               args.json)


if __name__ == "__main__":
    main()
