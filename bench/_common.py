"""What the benchmarks share: paths, and the result record that run_all.sh tabulates."""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import time
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from pathlib import Path

BENCH_DIR = Path(__file__).resolve().parent
PEERS_BIN = BENCH_DIR / ".peers" / "bin"


@dataclass(frozen=True)
class Result:
    """One benchmark's headline figure against its target. An informational figure has no target to miss."""

    name: str
    figure: str
    target: str
    passed: bool
    informational: bool = False

    @property
    def verdict(self) -> str:
        return "info" if self.informational else "PASS" if self.passed else "MISS"


def arg_parser(description: str) -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("--json", type=Path, help="also write the headline result to this file")
    return parser


def report(result: Result, json_path: Path | None) -> None:
    print(f"{result.name}: {result.figure} (target {result.target}) -> {result.verdict}")
    if json_path is not None:
        json_path.write_text(json.dumps(asdict(result)), encoding="utf-8")


def report_all(results: Sequence[Result], json_path: Path | None) -> None:
    """Several results of one benchmark; the --json file then holds a list of them."""
    for result in results:
        print(f"{result.name}: {result.figure} (target {result.target}) -> {result.verdict}")
    if json_path is not None:
        json_path.write_text(json.dumps([asdict(r) for r in results]), encoding="utf-8")


def wall_seconds(argv: Sequence[str], cwd: Path | None = None) -> float:
    """Wall time of one subprocess run; exits with its stderr if it fails."""
    start = time.perf_counter()
    done = subprocess.run(argv, cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    seconds = time.perf_counter() - start
    if done.returncode != 0:
        raise SystemExit(f"{' '.join(argv)} failed (exit {done.returncode}):\n{done.stderr.strip()}")
    return seconds


def best_and_median(samples: Sequence[float]) -> tuple[float, float]:
    return min(samples), statistics.median(samples)
