"""An eval suite run start to finish: the evals found, every arm run over its gold rows, each result judged
by its thresholds and a baseline, the scores saved as a baseline when asked. What `dotprompt eval` does,
callable from Python:

    from dotprompt import PromptLibrary
    from dotprompt.evals import EvalOptions, run_evals

    outcome = run_evals(PromptLibrary("prompts"), EvalOptions(variants=["-", "tight"], baseline=Path("base.json")))
    assert outcome.passed, [line for verdict in outcome.verdicts for line in verdict.failures()]

Printing and the report files are the caller's (`evals/report.py` writes them from `outcome.verdicts`).
"""

from __future__ import annotations

import asyncio
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..errors import DatasetError, PromptFileError, UsageError
from ..prompts.library import PromptLibrary
from ..settings import project_root
from ..testing.cases import find_test_files
from ..testing.recording import Mode
from .config import EvalSpec, load_eval
from .datasets import GoldRow, read_dataset
from .gates import Baseline, deltas, load_baseline, regressions, save_baseline, threshold_misses
from .report import Verdict
from .run import Arm, ArmResult, EvalRun, arms_of

__all__ = ["EvalOptions", "EvalOutcome", "check_options", "find_evals", "judge", "rows_of", "run_evals"]


@dataclass(frozen=True)
class EvalOptions:
    """What to evaluate and how; each field is the `dotprompt eval` option of the same name."""

    paths: Sequence[str | Path] = ()  # test files with an `eval:` section, or folders (default: the prompt folder)
    dataset: Path | None = None  # gold rows instead of each test file's `dataset`
    prompt: str | None = None  # with `dataset` and no `paths`: the prompt to evaluate, without a test file
    variants: Sequence[str] = ()  # several compare side by side; "-" is the prompt without a variant
    models: Sequence[str] = ()
    mode: Mode = "replay"  # "record", "auto": call the model and write recordings
    baseline: Path | None = None  # compare with these saved scores; a regression fails
    max_regression: float | None = None  # default: each eval's max_regression, else 0
    save_baseline: Path | None = None  # write the scores here (one variant on one model)
    concurrency: int = 4  # rows run at once


@dataclass
class EvalOutcome:
    """Every arm's result and verdict, and the test files that could not be read (the others ran)."""

    results: list[ArmResult] = field(default_factory=list)
    verdicts: list[Verdict] = field(default_factory=list)
    file_errors: list[PromptFileError] = field(default_factory=list)

    @property
    def passed(self) -> bool:
        """Whether at least one eval ran, every one passed, and every test file could be read."""
        return bool(self.verdicts) and not self.file_errors and all(v.passed for v in self.verdicts)


def check_options(options: EvalOptions) -> None:
    """A UsageError for options that do not go together, before anything is read or run (worded as the
    command's options: each field of EvalOptions is the option of the same name)."""
    if options.max_regression is not None and not 0 <= options.max_regression <= 1:
        raise UsageError("--max-regression must be between 0 and 1")
    if options.prompt and (not options.dataset or options.paths):
        raise UsageError("--prompt evaluates a dataset without a test file: give --dataset FILE and no paths")
    if options.save_baseline and len(arms_of(options.variants, options.models)) > 1:
        raise UsageError("--save-baseline saves one variant on one model; give at most one --variant and --model")


def run_evals(library: PromptLibrary, options: EvalOptions | None = None, *,
              on_start: Callable[[int, str], Any] | None = None,
              on_row: Callable[[Any], Any] | None = None) -> EvalOutcome:
    """Run the evals of `library`'s folder (or `options.paths`) and judge them. `on_start(rows, mode)` is told
    how many rows will run, `on_row(result)` about each finished one (progress).

    Raises UsageError (options that do not go together, a library without a folder), FileNotFoundError (a
    path that does not exist), DatasetError (a dataset or baseline that cannot be read). Recordings made
    are saved even when a later row fails."""
    options = options or EvalOptions()
    check_options(options)
    if library.directory is None:
        raise UsageError("run_evals needs a library with a folder: PromptLibrary(\"prompts\")")
    specs, errors = find_evals(options, library.directory)
    outcome = EvalOutcome(file_errors=errors)
    if not specs:
        return outcome
    baseline = load_baseline(options.baseline) if options.baseline else None
    outcome.results = _run(library, specs, arms_of(options.variants, options.models), options, on_start, on_row)
    outcome.verdicts = judge(outcome.results, baseline, options.max_regression)
    if options.save_baseline:
        save_baseline(options.save_baseline, {r.spec.name: r.scores for r in outcome.results},
                      {r.spec.name: r.grounding for r in outcome.results})
    return outcome


def find_evals(options: EvalOptions, folder: Path) -> tuple[list[EvalSpec], list[PromptFileError]]:
    """The evals to run: one per test file with an `eval:` section (`options.dataset` replacing its dataset),
    or the one `options.prompt` names; and the test files that could not be read."""
    if options.prompt:
        return [EvalSpec(str(folder / f"{options.prompt}.test.yaml"), 1, options.prompt, dataset=options.dataset,
                         root=project_root(folder))], []
    specs, errors = [], []
    for file in find_test_files([str(path) for path in options.paths], folder):
        try:
            spec = load_eval(file, folder)
        except PromptFileError as exc:
            errors.append(exc)
            continue
        if spec is not None:
            spec.dataset = options.dataset or spec.dataset
            specs.append(spec)
    return specs, errors


def _run(library: PromptLibrary, specs: Sequence[EvalSpec], arms: Sequence[Arm], options: EvalOptions,
         on_start: Callable[[int, str], Any] | None, on_row: Callable[[Any], Any] | None) -> list[ArmResult]:
    runner = EvalRun(library, options.mode, max(1, options.concurrency), on_row)
    try:
        datasets = [(spec, rows_of(spec)) for spec in specs]
        if on_start is not None:
            on_start(sum(len(rows) for _, rows in datasets) * len(arms), runner.mode)
        return [result for spec, rows in datasets for result in asyncio.run(runner.run(spec, arms, rows))]
    finally:
        runner.save()  # what was recorded is kept even when a later row or eval fails


def rows_of(spec: EvalSpec) -> list[GoldRow]:
    """The eval's gold rows; a DatasetError naming the test file when it names no dataset."""
    if spec.dataset is None:
        raise DatasetError(f"{spec.file}:{spec.line}: the eval names no dataset; add `dataset: FILE` or pass --dataset")
    return read_dataset(spec.dataset)


def judge(results: Sequence[ArmResult], baseline: Baseline | None, max_regression: float | None) -> list[Verdict]:
    """Each result's verdict: its thresholds, and its regressions against `baseline` (when given)."""
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
