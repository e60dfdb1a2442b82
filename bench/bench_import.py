"""Cold import, in fresh subprocesses: `import dotprompt` against `import genkit`, same interpreter.

Both run with bench/.peers/bin/python (which has our package editable, and genkit), from an
empty working directory. Figures are whole-process wall times, interpreter start-up included;
`python -c pass` is printed beside them for reference.
"""

from __future__ import annotations

import argparse
import re
import subprocess
import sys
import tempfile
from collections import Counter
from pathlib import Path

from _common import PEERS_BIN, Result, arg_parser, best_and_median, report, wall_seconds

TARGET_RATIO = 0.25  # issue 24 (was 1 / 3, issue 8)
STATEMENTS = {"baseline": "pass", "ours": "import dotprompt", "genkit": "import genkit"}
_IMPORTTIME = re.compile(r"import time:\s+(\d+) \|\s+\d+ \|\s*(\S+)")


def sample(python: str, runs: int, cwd: Path) -> dict[str, list[float]]:
    """`runs` wall times per statement, after one warm-up run each; runs alternate statements."""
    for statement in STATEMENTS.values():
        wall_seconds([python, "-c", statement], cwd)
    samples: dict[str, list[float]] = {key: [] for key in STATEMENTS}
    for _ in range(runs):
        for key, statement in STATEMENTS.items():
            samples[key].append(wall_seconds([python, "-c", statement], cwd))
    return samples


def self_time_by_package(python: str, statement: str, cwd: Path) -> Counter[str]:
    """`-X importtime` self times (µs), summed per top-level package."""
    done = subprocess.run([python, "-X", "importtime", "-c", statement], cwd=cwd, check=True,
                          capture_output=True, text=True)
    totals: Counter[str] = Counter()
    for match in _IMPORTTIME.finditer(done.stderr):
        totals[match.group(2).split(".")[0]] += int(match.group(1))
    return totals


def print_offenders(totals: Counter[str], top: int) -> None:
    print(f"-X importtime, `import dotprompt`, self time per top-level package "
          f"(total {sum(totals.values()) / 1000:.0f} ms, inflated by the tracing):")
    for package, micros in totals.most_common(top):
        print(f"  {package:28} {micros / 1000:6.1f} ms")


def main() -> None:
    parser = arg_parser(__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=10, help="runs per statement (default 10)")
    parser.add_argument("--python", default=str(PEERS_BIN / "python"), help="interpreter (default: bench/.peers)")
    parser.add_argument("--importtime", action=argparse.BooleanOptionalAction, default=True,
                        help="also list our slowest imports (default on)")
    args = parser.parse_args()
    if not Path(args.python).exists():
        sys.exit(f"{args.python} not found: run bench/setup_peers.sh first")

    with tempfile.TemporaryDirectory() as empty:
        samples = sample(args.python, args.runs, Path(empty))
        offenders = self_time_by_package(args.python, STATEMENTS["ours"], Path(empty)) if args.importtime else None
    stats = {key: best_and_median(values) for key, values in samples.items()}
    for key, statement in STATEMENTS.items():
        best, median = stats[key]
        print(f"python -c {statement!r:20} best {best * 1000:7.1f} ms   median {median * 1000:7.1f} ms")
    ratio = stats["ours"][0] / stats["genkit"][0]
    print(f"ratio ours/genkit: best {ratio:.3f}, median {stats['ours'][1] / stats['genkit'][1]:.3f}")
    if offenders is not None:
        print_offenders(offenders, top=10)
    figure = f"{stats['ours'][0] * 1000:.0f} ms vs {stats['genkit'][0] * 1000:.0f} ms = {ratio:.3f}"
    report(Result("import ours/genkit (best)", figure, f"<= {TARGET_RATIO:.3f}", ratio <= TARGET_RATIO), args.json)


if __name__ == "__main__":
    main()
