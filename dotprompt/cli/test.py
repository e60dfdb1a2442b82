"""`dotprompt test`: find test files, run their cases, report, and exit 0 / 1 (a case failed) / 2 (file errors)."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO

from .._util.escape import terminal
from ..errors import PromptFileError
from ..settings import in_ci
from .common import DIR_HELP, EXIT_FAILED, EXIT_OK, EXIT_USAGE, CommandLineError, add_engine_flag, prepare_outputs

if TYPE_CHECKING:  # the test machinery loads when a test runs, not with every command (`dotprompt check`)
    from ..testing.cases import TestCase
    from ..testing.recording import Mode
    from ..testing.runner import CaseResult, CaseSummary, TestRun

__all__ = ["TestOptions", "add_parser", "collect", "default_mode", "run", "run_tests"]


@dataclass
class TestOptions:
    __test__ = False  # not a pytest test class
    paths: Sequence[str]
    prompts_dir: Path
    mode: Mode
    keyword: str | None = None
    model: str | None = None
    repeat: int = 1
    min_pass_rate: float = 1.0
    concurrency: int = 4
    junit: Path | None = None
    json: Path | None = None
    log: bool = True  # cases that call a model (record, auto, live) go to the run log; replays never do
    engine: str | None = None  # --engine (None: [tool.dotprompt] engine, else auto)


def default_mode() -> Mode:
    """Replay in CI (never touch the network there), else replay what exists and record what is missing."""
    return "replay" if in_ci() else "auto"


def collect(files: Sequence[Path], prompts_dir: Path, keyword: str | None) -> tuple[list[TestCase], list[PromptFileError]]:
    from ..testing.cases import load_test_file

    cases: list[TestCase] = []
    errors: list[PromptFileError] = []
    for file in files:
        try:
            cases += load_test_file(file, prompts_dir)
        except PromptFileError as exc:
            errors.append(exc)
    if keyword:
        cases = [c for c in cases if keyword.lower() in c.id.lower()]
    return cases, errors


def run_tests(options: TestOptions, out: TextIO | None = None) -> int:
    from ..prompts.loader import project_library
    from ..testing.cases import find_test_files
    from ..testing.report import nothing_collected, print_summary, write_json, write_junit
    from ..testing.runner import TestRun

    out = sys.stdout if out is None else out  # looked up per call: a redirected sys.stdout is followed
    prepare_outputs({"--junit": options.junit, "--json": options.json})
    try:
        files = find_test_files(options.paths, options.prompts_dir)
    except FileNotFoundError as exc:
        raise CommandLineError(str(exc)) from None
    cases, errors = collect(files, options.prompts_dir, options.keyword)
    for error in errors:
        print(str(error), file=sys.stderr)
    if not cases:
        searched: Sequence[str | Path] = options.paths or [options.prompts_dir]
        print(f"dotprompt: error: {nothing_collected(searched, files, errors, options.keyword)}", file=sys.stderr)
    fancy = sys.stdout.isatty() and not in_ci()
    log = None if options.log and options.mode != "replay" else False
    run = TestRun(project_library(options.prompts_dir, log=log, log_default=True, engine=options.engine),
                  options.mode, options.model, options.concurrency)
    summaries = _execute(run, cases, options, fancy)
    run.save()
    print_summary(summaries, out, fancy=fancy, repeated=options.repeat > 1)
    if options.junit:
        write_junit(summaries, options.junit)
    if options.json:
        write_json(summaries, options.json)
    if errors or not cases:
        return EXIT_USAGE
    return EXIT_OK if all(s.passed for s in summaries) else EXIT_FAILED


def _execute(run: TestRun, cases: list[TestCase], options: TestOptions, fancy: bool) -> list[CaseSummary]:
    import asyncio

    from .progress import case_progress

    runs = options.repeat if options.mode != "replay" else 1
    with case_progress(len(cases) * runs, f"{len(cases)} cases ({options.mode})") as advance:
        log = _log_line if not fancy else None

        def on_result(result: CaseResult) -> None:
            advance(result)
            if log is not None:
                log(result)

        run.on_result = on_result
        return asyncio.run(run.run(cases, repeat=options.repeat, min_pass_rate=options.min_pass_rate))


def _log_line(result: CaseResult) -> None:
    verdict = "PASS" if result.passed else "FAIL"
    print(f"{verdict} {terminal(result.case.id, lines=False)} ({result.turns} calls, {result.latency_ms:.0f} ms)", flush=True)


def add_parser(subparsers: Any) -> argparse.ArgumentParser:
    parser = subparsers.add_parser("test", help="run the prompts' test cases (replayed from recordings in CI)")
    parser.add_argument("paths", nargs="*", help="test files or folders (default: the prompt folder)")
    parser.add_argument("-k", dest="keyword", help="only cases whose file::name contains this")
    parser.add_argument("--model", help="run every case on this model")
    modes = parser.add_mutually_exclusive_group()
    modes.add_argument("--record", dest="mode", action="store_const", const="record", help="call the model, write recordings")
    modes.add_argument("--replay", dest="mode", action="store_const", const="replay", help="never touch the network")
    modes.add_argument("--live", dest="mode", action="store_const", const="live", help="call the model, record nothing")
    modes.add_argument("--auto", dest="mode", action="store_const", const="auto", help="replay what exists, record the rest")
    parser.add_argument("--repeat", type=int, default=1, help="run live cases N times")
    parser.add_argument("--min-pass-rate", type=float, default=1.0, help="with --repeat: share of runs that must pass")
    parser.add_argument("--concurrency", type=int, default=4, help="cases run at once (default: 4)")
    parser.add_argument("--junit", type=Path, help="write JUnit XML here")
    parser.add_argument("--json", type=Path, help="write results as JSON here")
    parser.add_argument("--no-log", action="store_true", help="do not add the cases' runs to the run log")
    parser.add_argument("--dir", help=DIR_HELP)
    add_engine_flag(parser)
    return parser


def run(args: argparse.Namespace) -> int:
    if args.repeat < 1 or not 0 <= args.min_pass_rate <= 1:
        raise CommandLineError("--repeat must be at least 1 and --min-pass-rate between 0 and 1")
    from ..prompts.loader import prompts_dir

    folder = prompts_dir(args.dir)
    options = TestOptions(paths=args.paths, prompts_dir=folder, mode=args.mode or default_mode(), keyword=args.keyword,
                          model=args.model, repeat=args.repeat, min_pass_rate=args.min_pass_rate,
                          concurrency=args.concurrency, junit=args.junit, json=args.json, log=not args.no_log,
                          engine=args.template_engine)
    return run_tests(options)
