"""Print the results that the benchmarks wrote with --json as one table; exit 1 on a MISS with --strict."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from _common import Result


def load(paths: list[Path]) -> list[Result]:
    """Each file holds one result (report) or a list of them (report_all)."""
    results = []
    for path in paths:
        data = json.loads(path.read_text(encoding="utf-8"))
        results += [Result(**item) for item in (data if isinstance(data, list) else [data])]
    return results


def table(results: list[Result]) -> str:
    rows = [("benchmark", "measured", "target", "verdict")]
    rows += [(r.name, r.figure, r.target, r.verdict) for r in results]
    widths = [max(len(row[i]) for row in rows) for i in range(4)]
    lines = ["  ".join(cell.ljust(width) for cell, width in zip(row, widths, strict=True)).rstrip() for row in rows]
    lines.insert(1, "  ".join("-" * width for width in widths))
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("results", nargs="+", type=Path)
    parser.add_argument("--strict", action="store_true", help="exit 1 when any target is missed")
    args = parser.parse_args()
    results = load(args.results)
    print(table(results))
    if args.strict and not all(r.passed or r.informational for r in results):
        sys.exit(1)


if __name__ == "__main__":
    main()
