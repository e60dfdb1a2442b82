"""The `dotprompt` command's start-up: `--version`, `check` and `render` beside `python -c pass`, in one run.

Each command is a fresh process of the console script beside the interpreter that runs this script
(`--dotprompt` to choose another), from the repository's root, so `check` reads the example project:
the 11 prompts of `prompts/` (their test files, recordings and `eval:` sections included) and the
`[tool.dotprompt]` table of pyproject.toml. `render` renders `summarize` (its input defaults). Runs
alternate between the commands (after one warm-up run each), so the machine's load hits all alike;
the best run of each is measured against the interpreter's best (a quiet machine's figure; the median
is printed beside it), with the CPU time (user + system) of the best run beside the wall time, which
the machine's load moves less. Targets (issue 35): `--version` <= interpreter + 60 ms, `check` <= + 250 ms,
`render` <= + 200 ms.

Byte code is written and used (PYTHONDONTWRITEBYTECODE is dropped for the runs), as an installed
package has it: compiling the package's source on every start would be timed otherwise. `--before DIR`
also runs the commands with another checkout's `dotprompt` package first on PYTHONPATH (e.g. a
`git archive` of main), alternating with this one, for before/after figures from one run.
"""

from __future__ import annotations

import os
import resource
import subprocess
import sys
import time
from collections.abc import Mapping
from pathlib import Path

from _common import BENCH_DIR, Result, arg_parser, report_all

ROOT = BENCH_DIR.parent
TARGETS_MS = {"--version": 60.0, "check": 250.0, "render": 200.0}


def commands(python: str, dotprompt: str, before: Path | None) -> dict[str, tuple[list[str], dict[str, str]]]:
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    argvs = {"--version": [dotprompt, "--version"], "check": [dotprompt, "check"],
             "render": [dotprompt, "render", "summarize"]}
    runs = {"python -c pass": ([python, "-c", "pass"], env)}
    for name, argv in argvs.items():
        if before is not None:
            runs[f"{name} (before)"] = (argv, {**env, "PYTHONPATH": str(before)})
        runs[name] = (argv, env)
    return runs


def timed(argv: list[str], env: Mapping[str, str]) -> tuple[float, float]:
    """Wall and CPU (user + system) seconds of one run; exits with its stderr if it fails."""
    used = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    done = subprocess.run(argv, cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode != 0:
        raise SystemExit(f"{' '.join(argv)} failed (exit {done.returncode}):\n{done.stderr.strip()}")
    return wall, (after.ru_utime - used.ru_utime) + (after.ru_stime - used.ru_stime)


def sample(runs: dict[str, tuple[list[str], dict[str, str]]], rounds: int) -> dict[str, list[tuple[float, float]]]:
    for argv, env in runs.values():  # warm-up: writes the byte code, fills the page cache
        timed(argv, env)
    samples: dict[str, list[tuple[float, float]]] = {name: [] for name in runs}
    for _ in range(rounds):
        for name, (argv, env) in runs.items():
            samples[name].append(timed(argv, env))
    return samples


def main() -> None:
    parser = arg_parser(__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=15, help="runs per command (default 15)")
    parser.add_argument("--dotprompt", default=str(Path(sys.executable).parent / "dotprompt"),
                        help="the dotprompt command (default: beside this interpreter)")
    parser.add_argument("--before", type=Path, help="a folder holding another checkout's dotprompt package, "
                                                     "run alternately for before/after figures")
    args = parser.parse_args()
    load = ", ".join(f"{x:.2f}" for x in os.getloadavg())
    samples = sample(commands(sys.executable, args.dotprompt, args.before), args.runs)
    best = {name: min(times) for name, times in samples.items()}  # the run with the best wall time
    median = {name: sorted(t[0] for t in times)[len(times) // 2] for name, times in samples.items()}
    base_wall, base_cpu = best["python -c pass"]
    print(f"load average {load} (before); {args.runs} alternating runs each, whole process")
    for name, (wall, cpu) in best.items():
        extra = "" if name == "python -c pass" else (f"   +{(wall - base_wall) * 1000:5.0f} ms wall, "
                                                      f"+{(cpu - base_cpu) * 1000:5.0f} ms CPU")
        print(f"  {name:20} best {wall * 1000:6.0f} ms (CPU {cpu * 1000:4.0f})   median {median[name] * 1000:6.0f} ms"
              f"{extra}")
    results = []
    for name, target in TARGETS_MS.items():
        over = (best[name][0] - base_wall) * 1000
        results.append(Result(f"dotprompt {name} start-up", f"+{over:.0f} ms over the interpreter",
                              f"<= +{target:.0f} ms", over <= target))
    report_all(results, args.json)


if __name__ == "__main__":
    main()
