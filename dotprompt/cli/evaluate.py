"""`dotprompt eval`: score prompts field by field on gold datasets; exit 0, 1 (a gate failed) or 2 (bad files).

The run itself is `evals/suite.py` (`run_evals`); this module reads the options, shows progress and prints."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..errors import DatasetError, UsageError
from ..settings import github_step_summary, in_ci
from .common import DIR_HELP, EXIT_FAILED, EXIT_OK, EXIT_USAGE, CommandLineError, add_engine_flag, prepare_outputs

if TYPE_CHECKING:  # the eval machinery loads when an eval runs, not with every command (`dotprompt check`)
    from ..evals.report import Verdict
    from ..evals.suite import EvalOptions, EvalOutcome
    from ..prompts.library import PromptLibrary

__all__ = ["add_parser", "options_of", "report", "run"]


def add_parser(subparsers: Any) -> argparse.ArgumentParser:
    parser = subparsers.add_parser("eval", help="score prompts field by field on gold datasets (replayed from recordings)")
    parser.add_argument("paths", nargs="*", help="test files with an `eval:` section, or folders (default: the prompt folder)")
    parser.add_argument("--dataset", type=Path, help="gold rows (.jsonl or .csv) instead of the test file's `dataset`")
    parser.add_argument("--prompt", help="with --dataset and no test file: the prompt to evaluate")
    parser.add_argument("--variant", action="append", default=[], metavar="V",
                        help="evaluate this variant (repeat to compare side by side; `-` is the prompt without one)")
    parser.add_argument("--model", action="append", default=[], metavar="M",
                        help="evaluate on this model (repeat to compare side by side)")
    modes = parser.add_mutually_exclusive_group()
    modes.add_argument("--record", dest="mode", action="store_const", const="record", help="call the model, write recordings")
    modes.add_argument("--replay", dest="mode", action="store_const", const="replay",
                       help="never touch the network (the default)")
    modes.add_argument("--auto", dest="mode", action="store_const", const="auto", help="replay what exists, record the rest")
    parser.add_argument("--baseline", type=Path, help="compare with these saved scores; fail on a regression")
    parser.add_argument("--save-baseline", type=Path, metavar="FILE", help="write the scores here")
    parser.add_argument("--max-regression", type=float,
                        help="with --baseline: the largest drop allowed (default: the test file's max_regression, else 0)")
    parser.add_argument("--concurrency", type=int, default=4, help="rows run at once")
    parser.add_argument("--junit", type=Path, help="write JUnit XML here")
    parser.add_argument("--json", type=Path, help="write the scores and every wrong field as JSON here")
    parser.add_argument("--markdown", type=Path, help="write a Markdown summary here ($GITHUB_STEP_SUMMARY gets one too)")
    parser.add_argument("--dir", help=DIR_HELP)
    add_engine_flag(parser)
    return parser


def run(args: argparse.Namespace) -> int:
    from ..prompts.loader import project_library, prompts_dir

    options = options_of(args)
    folder = prompts_dir(args.dir)
    prepare_outputs({"--junit": args.junit, "--json": args.json, "--markdown": args.markdown,
                     "--save-baseline": args.save_baseline})
    try:
        outcome = _evaluate(project_library(folder, engine=args.template_engine), options)
    except DatasetError as exc:
        print(str(exc), file=sys.stderr)
        return EXIT_USAGE
    for error in outcome.file_errors:
        print(str(error), file=sys.stderr)
    if not outcome.verdicts:
        if not outcome.file_errors:
            where = ", ".join(args.paths) or str(folder)
            print(f"dotprompt: error: no evals found: no test file in {where} has an `eval:` section "
                  "(or pass --dataset FILE --prompt NAME)", file=sys.stderr)
        return EXIT_USAGE
    report(outcome.verdicts, args)
    return EXIT_OK if all(v.passed for v in outcome.verdicts) else EXIT_FAILED


def options_of(args: argparse.Namespace) -> EvalOptions:
    """The command line's options, checked: a CommandLineError for options that do not go together."""
    from ..evals.suite import EvalOptions, check_options

    options = EvalOptions(paths=args.paths, dataset=args.dataset, prompt=args.prompt, variants=args.variant,
                          models=args.model, mode=args.mode or "replay", baseline=args.baseline,
                          max_regression=args.max_regression, save_baseline=args.save_baseline,
                          concurrency=args.concurrency)
    try:
        check_options(options)
    except UsageError as exc:
        raise CommandLineError(str(exc)) from None
    return options


def _evaluate(library: PromptLibrary, options: EvalOptions) -> EvalOutcome:
    """`run_evals`, with a progress bar on a terminal (not in CI)."""
    from ..evals.suite import run_evals

    try:
        if not (sys.stderr.isatty() and not in_ci()):
            return run_evals(library, options)
        from rich.console import Console
        from rich.progress import Progress, TaskID

        with Progress(console=Console(stderr=True), transient=True) as progress:
            task: list[TaskID] = []

            def start(total: int, mode: str) -> None:
                task.append(progress.add_task(f"eval: {total} rows ({mode})", total=total))

            return run_evals(library, options, on_start=start, on_row=lambda _result: progress.advance(task[0]))
    except FileNotFoundError as exc:  # a path given on the command line
        raise CommandLineError(str(exc)) from None


def report(verdicts: Sequence[Verdict], args: argparse.Namespace) -> None:
    from ..evals.report import print_report, write_json, write_junit, write_markdown

    print_report(verdicts, sys.stdout, fancy=sys.stdout.isatty() and not in_ci())
    if args.junit:
        write_junit(verdicts, args.junit)
    if args.json:
        write_json(verdicts, args.json)
    if args.markdown:
        write_markdown(verdicts, args.markdown)
    summary = github_step_summary()
    if summary is not None:
        write_markdown(verdicts, summary, append=True)
