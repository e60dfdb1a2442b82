"""`dotprompt eval`: score prompts field by field on gold datasets; exit 0, 1 (a gate failed) or 2 (bad files)."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..errors import DatasetError, PromptFileError
from ..settings import github_step_summary, in_ci
from .common import DIR_HELP, EXIT_FAILED, EXIT_OK, EXIT_USAGE, CommandLineError, add_engine_flag, prepare_outputs
from .test import find_test_files

if TYPE_CHECKING:  # the eval machinery loads when an eval runs, not with every command (`dotprompt check`)
    from ..evals.config import EvalSpec
    from ..evals.datasets import GoldRow
    from ..evals.gates import Baseline
    from ..evals.report import Verdict
    from ..evals.run import Arm, ArmResult
    from ..prompts.library import PromptLibrary

__all__ = ["add_parser", "collect", "evaluate", "judge", "report", "rows_of", "run"]


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
    if args.max_regression is not None and not 0 <= args.max_regression <= 1:
        raise CommandLineError("--max-regression must be between 0 and 1")
    from ..evals.gates import load_baseline, save_baseline
    from ..evals.run import arms_of
    from ..prompts.loader import project_library, prompts_dir

    folder = prompts_dir(args.dir)
    specs, errors = collect(args, folder)
    for error in errors:
        print(str(error), file=sys.stderr)
    if not specs:
        if not errors:
            where = ", ".join(args.paths) or str(folder)
            print(f"dotprompt: error: no evals found: no test file in {where} has an `eval:` section "
                  "(or pass --dataset FILE --prompt NAME)", file=sys.stderr)
        return EXIT_USAGE
    arms = arms_of(args.variant, args.model)
    if args.save_baseline and len(arms) > 1:
        raise CommandLineError("--save-baseline saves one variant on one model; give at most one --variant and --model")
    prepare_outputs({"--junit": args.junit, "--json": args.json, "--markdown": args.markdown,
                     "--save-baseline": args.save_baseline})
    try:
        baseline = load_baseline(args.baseline) if args.baseline else None
        results = evaluate(project_library(folder, engine=args.template_engine), specs, arms, args)
    except DatasetError as exc:
        print(str(exc), file=sys.stderr)
        return EXIT_USAGE
    verdicts = judge(results, baseline, args.max_regression)
    report(verdicts, args)
    if args.save_baseline:
        save_baseline(args.save_baseline, {r.spec.name: r.scores for r in results},
                      {r.spec.name: r.grounding for r in results})
    return EXIT_OK if all(v.passed for v in verdicts) else EXIT_FAILED


def collect(args: argparse.Namespace, folder: Path) -> tuple[list[EvalSpec], list[PromptFileError]]:
    from ..evals.config import EvalSpec, load_eval
    from ..settings import project_root

    if args.prompt:
        if not args.dataset or args.paths:
            raise CommandLineError("--prompt evaluates a dataset without a test file: give --dataset FILE and no paths")
        return [EvalSpec(str(folder / f"{args.prompt}.test.yaml"), 1, args.prompt, dataset=args.dataset,
                         root=project_root(folder))], []
    try:
        files = find_test_files(args.paths, folder)
    except FileNotFoundError as exc:
        raise CommandLineError(str(exc)) from None
    specs, errors = [], []
    for file in files:
        try:
            spec = load_eval(file, folder)
        except PromptFileError as exc:
            errors.append(exc)
            continue
        if spec is not None:
            spec.dataset = args.dataset or spec.dataset
            specs.append(spec)
    return specs, errors


def evaluate(library: PromptLibrary, specs: Sequence[EvalSpec], arms: Sequence[Arm],
             args: argparse.Namespace) -> list[ArmResult]:
    import asyncio

    from ..evals.run import EvalRun

    runner = EvalRun(library, args.mode or "replay", max(1, args.concurrency))
    datasets = [(spec, rows_of(spec)) for spec in specs]
    fancy = sys.stderr.isatty() and not in_ci()
    try:
        if not fancy:
            return [r for spec, rows in datasets for r in asyncio.run(runner.run(spec, arms, rows))]
        from rich.console import Console
        from rich.progress import Progress

        total = sum(len(rows) for _, rows in datasets) * len(arms)
        with Progress(console=Console(stderr=True), transient=True) as progress:
            task = progress.add_task(f"eval: {total} rows ({runner.mode})", total=total)
            runner.on_row = lambda _result: progress.advance(task)
            return [r for spec, rows in datasets for r in asyncio.run(runner.run(spec, arms, rows))]
    finally:
        runner.save()  # what was recorded is kept even when a later row or eval fails


def rows_of(spec: EvalSpec) -> list[GoldRow]:
    from ..evals.datasets import read_dataset

    if spec.dataset is None:
        raise DatasetError(f"{spec.file}:{spec.line}: the eval names no dataset; add `dataset: FILE` or pass --dataset")
    return read_dataset(spec.dataset)


def judge(results: Sequence[ArmResult], baseline: Baseline | None, max_regression: float | None) -> list[Verdict]:
    from collections import Counter

    from ..evals.gates import deltas, regressions, threshold_misses
    from ..evals.report import Verdict

    legacy_names = Counter(spec.legacy_name for spec in {id(r.spec): r.spec for r in results}.values())
    verdicts = []
    for result in results:
        misses = threshold_misses(result.spec, result.scores, result.grounding)
        found, notes = None, []
        if baseline is not None:
            saved, note = baseline.lookup(result.spec, legacy_names)
            notes += [note] if note else []
            if saved is not None:
                found = deltas(saved, result.scores, result.grounding)
                tolerance = max_regression if max_regression is not None else result.spec.max_regression
                misses += regressions(found, tolerance, result.scores, result.grounding)
        verdicts.append(Verdict(result, misses, found, notes))
    return verdicts


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
