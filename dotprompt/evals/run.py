"""Running an eval: every gold row through the prompt (replayed or recorded), then scored.

Each row is run as a prompt test case named `eval:ID` (`eval:ID@MODEL` when `--model` picks the
model), so its model calls are recorded beside the prompt's other recordings and replayed the same
way: deterministic and offline in CI. An arm is one variant on one model; several arms compare side
by side in one run.
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from ..errors import DatasetError, DotpromptError, OutputParseError
from ..formats import extract_json
from ..identity import PromptIdentity
from ..prompts.library import PromptLibrary
from ..testing.cases import TestCase
from ..testing.functions import FunctionSpecError, load_function
from ..testing.recording import Mode
from ..testing.runner import CaseResult, TestRun
from .compare import Comparer, Comparison, ScorerFailedError
from .config import EvalSpec
from .datasets import GoldRow, read_dataset
from .grounding_stats import GroundingCounts, grounding_counts
from .metrics import Scores, score_rows
from .scorers import SCORERS

__all__ = ["Arm", "ArmResult", "EvalRun", "RowResult", "arms_of", "record_hint", "row_case_name", "user_scorers"]


@dataclass(frozen=True)
class Arm:
    variant: str | None = None  # None: the eval's own variant; "": the prompt without a variant
    model: str | None = None  # None: the eval's (or prompt's) model

    @property
    def label(self) -> str:
        variant = "base" if self.variant == "" else self.variant or ""
        return (variant + (f"@{self.model}" if self.model else "")) or "default"

    def variant_for(self, spec: EvalSpec) -> str | None:
        return spec.variant if self.variant is None else (self.variant or None)


@dataclass
class RowResult:
    row: GoldRow
    output: Any
    comparison: Comparison
    problems: list[str] = field(default_factory=list)  # the run's failures (schema, provider, ...)
    recording_problems: list[str] = field(default_factory=list)
    fixture: bool = False  # replayed from a hand-written reply (`"source": "fixture"`), not a model's
    grounding: Any = None  # where the output's values are in the row's input, when grounded
    error: str | None = None  # the run failed before there was an output: the row is not scored


@dataclass
class ArmResult:
    spec: EvalSpec
    arm: Arm
    rows: list[RowResult]
    scores: Scores
    identity: PromptIdentity | None = None  # the exact prompt text the scores came from
    grounding: dict[str, GroundingCounts] = field(default_factory=dict)  # per field; empty when not grounded

    @property
    def errors(self) -> list[str]:
        """Rows that could not be replayed: the eval is incomplete, whatever its scores. Rows with no
        recording are one line per recordings file, the command that records them said once."""
        hint = record_hint(self.spec, self.arm)
        suffix = f": {hint}"
        lines: list[str] = []
        missing: dict[str, list[str]] = {}  # recordings file -> the rows it has no reply for
        for row in self.rows:
            for problem in row.recording_problems:
                found = _MISSING.fullmatch(problem.removesuffix(suffix)) if problem.endswith(suffix) else None
                if found is None:
                    lines.append(f"row {row.row.id}: {problem}")
                elif row.row.id not in missing.setdefault(found["file"], []):
                    missing[found["file"]].append(row.row.id)
        for file, ids in missing.items():
            shown = ", ".join(ids[:ROWS_SHOWN]) + (f" and {len(ids) - ROWS_SHOWN} more" if len(ids) > ROWS_SHOWN else "")
            lines.append(f"no recording for row{'s' if len(ids) > 1 else ''} {shown} ({file}){suffix}")
        return lines

    @property
    def failed_rows(self) -> list[RowResult]:
        return [r for r in self.rows if r.error is not None]

    @property
    def fixture_rows(self) -> int:
        return sum(r.fixture for r in self.rows)

    @property
    def bounded_rows(self) -> list[RowResult]:
        """Rows whose lists were paired by position: their alignment work ran out (EVAL_MAX_ALIGN_WORK)."""
        return [r for r in self.rows if r.comparison.bounded]


_MISSING = re.compile(r"no recording for case .*, model call \d+ \((?P<file>[^()]*)\)")
ROWS_SHOWN = 10


def row_case_name(row: GoldRow, arm: Arm) -> str:
    return f"eval:{row.id}" + (f"@{arm.model}" if arm.model else "")


def record_hint(spec: EvalSpec, arm: Arm) -> str:
    """The command that records an eval's missing rows (`--auto`: only those), for a row that has none."""
    words = ["dotprompt", "eval", "--auto", spec.file]
    if arm.variant is not None:
        words += ["--variant", arm.variant or "-"]
    if arm.model is not None:
        words += ["--model", arm.model]
    return f"record the missing rows with `{shlex.join(words)}`"


def user_scorers(spec: EvalSpec) -> dict[str, Callable[[Any, Any], Any]]:
    """The `module:function` scorers of the eval, loaded; a DatasetError naming the test file line."""
    out = {}
    for rule in spec.rules.values():
        if rule.scorer is not None and rule.scorer not in SCORERS and rule.scorer not in out:
            try:
                out[rule.scorer] = load_function(rule.scorer)
            except FunctionSpecError as exc:
                raise DatasetError(f"{spec.file}:{rule.line}: eval.fields.{rule.field}: {exc}") from None
    return out


class EvalRun:
    """Runs evals on one library in one mode; `on_row` is told about each finished row (progress)."""

    def __init__(self, library: PromptLibrary, mode: Mode = "replay", concurrency: int = 4,
                 on_row: Callable[[CaseResult], Any] | None = None) -> None:
        self.library = library
        self.mode = mode
        self.concurrency = concurrency
        self.on_row = on_row
        self.runs: list[TestRun] = []

    async def run(self, spec: EvalSpec, arms: Sequence[Arm], rows: Sequence[GoldRow] | None = None) -> list[ArmResult]:
        if rows is None:
            if spec.dataset is None:
                raise DatasetError(f"{spec.file}:{spec.line}: the eval names no dataset; add `dataset: FILE` "
                                   "or pass --dataset")
            rows = read_dataset(spec.dataset)
        comparer = Comparer(spec.rules, user_scorers(spec), strict=spec.strict)
        return [await self.run_arm(spec, arm, rows, comparer) for arm in arms]

    async def run_arm(self, spec: EvalSpec, arm: Arm, rows: Sequence[GoldRow], comparer: Comparer) -> ArmResult:
        test_run = TestRun(self.library, self.mode, arm.model, self.concurrency, self.on_row)
        self.runs.append(test_run)
        hint = record_hint(spec, arm)
        cases = [TestCase(name=row_case_name(row, arm), prompt=spec.prompt, variant=arm.variant_for(spec),
                          input=row.input, file=spec.file, line=row.line, model=spec.model, config=spec.config,
                          record_hint=hint)
                 for row in rows]
        summaries = await test_run.run(cases)
        results = [self.scored(row, summary.last, comparer) for row, summary in zip(rows, summaries, strict=True)]
        # A row whose run failed has no prediction to score: it is counted apart (gates.failed_rows), never as
        # the model leaving every field out, which would hide the failure inside a recall figure.
        ran = [r for r in results if r.error is None]
        scores = score_rows((r.row.id, r.comparison) for r in ran)
        scores.failed = [r.row.id for r in results if r.error is not None]
        grounding = grounding_counts((r.row.id, r.comparison, r.grounding) for r in ran)
        return ArmResult(spec, arm, results, scores, self.identity(spec.prompt, arm.variant_for(spec)), grounding)

    def identity(self, name: str, variant: str | None) -> PromptIdentity | None:
        try:
            return self.library.load(name, variant).identity
        except DotpromptError:  # a prompt that does not load: its rows already say why
            return None

    @staticmethod
    def scored(row: GoldRow, result: CaseResult, comparer: Comparer) -> RowResult:
        output = _as_data(result.output)
        problems = list(result.failures)
        try:
            comparison = comparer.compare(row.expected, output)
        except ScorerFailedError as exc:
            raise DatasetError(f"row {row.id}: {exc}") from None
        return RowResult(row, output, comparison, problems, list(result.recording_problems), result.fixtures > 0,
                         result.grounding, result.error)

    def save(self) -> None:
        for test_run in self.runs:
            test_run.save()


def _as_data(output: Any) -> Any:
    """The model's output as data: a reply that failed its schema is still scored on the JSON it holds."""
    dump = getattr(output, "model_dump", None)
    if callable(dump):
        return dump(mode="json")
    if isinstance(output, str):
        try:
            return extract_json(output).value
        except OutputParseError:
            return None
    return output


def arms_of(variants: Sequence[str], models: Sequence[str]) -> list[Arm]:
    """Every variant on every model (`-` is the prompt without a variant); one default arm when none are given."""
    chosen_variants: list[str | None] = list(dict.fromkeys("" if v == "-" else v for v in variants)) or [None]
    chosen_models: list[str | None] = list(dict.fromkeys(models)) or [None]
    return [Arm(v, m) for v in chosen_variants for m in chosen_models]
