"""What fails an eval: a threshold of the test file missed, or a regression against a baseline.

Each failure names the field, the metric, the figures and the rows that failed the field, so the
CI log says what to look at. Thresholds cover the scores and, when the output was grounded, the
grounding figures (grounded rate, flag precision and recall). Baselines are JSON files written by
`--save-baseline`, each eval under its name (EvalSpec.name, unique in a project); `grounding` is there
when the eval was grounded (older baselines lack it):

    {"dotprompt_eval_baseline": 2, "evals": {"extract on examples/gold/invoices.jsonl": {<scores>, "grounding": {...}}}}

Format 1 named an eval by its dataset's file name only (`extract on invoices.jsonl`), which two evals
could share: such an entry is read as an eval's only when no other eval of the run has that old name.

A regression is a drop in F1, in the exact-match rate or in the grounded rate. Flag precision and
recall are not compared with the baseline: they measure grounding as a detector of the model's
mistakes, so a model that makes fewer of them can lower them (one fewer wrong value caught moves
recall by a large step); an absolute `min:` gates them instead.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..errors import DatasetError
from .config import GROUNDING_METRICS, EvalSpec
from .grounding_stats import OVERALL, GroundingCounts
from .metrics import Counts, Scores, stored_metrics

__all__ = ["Baseline", "Delta", "FailedRows", "Miss", "deltas", "failed_rows", "load_baseline", "regressions", "save_baseline",
           "threshold_misses"]

BASELINE_FORMAT = 2
READ_FORMATS = (1, 2)
ROWS_SHOWN = 10
SAVED_PRECISION = 1e-6  # baselines keep six decimals: a difference below this is rounding, not a regression
Grounded = Mapping[str, GroundingCounts]  # an eval arm's grounding figures by field (and OVERALL)
ROWS_LABEL = {"grounded": "rows with an ungrounded value", "flag_precision": "rows where a right value was flagged",
              "flag_recall": "rows where a wrong value was found in the input"}
NOT_GROUNDED = {OVERALL: " (no value was grounded: grounding needs JSON output with a schema, input text, and "
                         "output.grounding not `off`)"}
FIELD_NOT_GROUNDED = (" (grounding looked for no value of this field: check its path; booleans, nulls, enum labels "
                      "and derived fields are not looked for)")
NO_FIELD = " (no row's gold data or output has this field: check its path)"


@dataclass(frozen=True)
class Miss:
    field: str  # "(overall)" for the whole eval
    metric: str
    wanted: float
    got: float | None  # None: nothing to measure it on (shown `-`; the note says why)
    rows: tuple[str, ...] = ()
    regression: bool = False  # against a baseline, rather than a threshold of the test file
    note: str = ""

    @property
    def grounding(self) -> bool:
        """A miss of a grounding figure (reported on the field's `(grounding)` row), not of its scores."""
        return self.metric in GROUNDING_METRICS

    def message(self) -> str:
        what = "regressed" if self.regression else "below threshold"
        got = f"{self.got:.3f}" if self.got is not None else "-"
        compare = (f"{got}, baseline {self.wanted:.3f} ({(self.got or 0.0) - self.wanted:+.3f})" if self.regression
                   else f"{got} < {self.wanted:.3f}")
        label = f"{self.field} (grounding)" if self.grounding else self.field
        text = f"{label}: {self.metric} {what}: {compare}{self.note}"
        if self.rows:
            shown = ", ".join(self.rows[:ROWS_SHOWN])
            more = f" and {len(self.rows) - ROWS_SHOWN} more" if len(self.rows) > ROWS_SHOWN else ""
            text += f"; {ROWS_LABEL.get(self.metric, 'rows')}: {shown}{more}"
        return text


def threshold_misses(spec: EvalSpec, scores: Scores, grounding: Grounded | None = None) -> list[Miss]:
    """Every `min:` of the eval the figures miss; a figure that cannot be measured (a field no row has,
    grounding that never ran) counts as 0, so a gate never passes on nothing."""
    wanted = [(OVERALL, metric, value) for metric, value in spec.overall_min.items()]
    wanted += [(name, metric, value) for name, metrics in spec.field_min.items() for metric, value in metrics.items()]
    misses = []
    for name, metric, value in wanted:
        got, rows, note = _measured(scores, grounding or {}, name, metric)
        if got is None or got < value - 1e-9:
            misses.append(Miss(name, metric, value, got, rows, note=note))
    return misses


def _measured(scores: Scores, grounding: Grounded, name: str, metric: str) -> tuple[float | None, tuple[str, ...], str]:
    """(figure, rows behind it, note when it could not be measured) of one field's (or OVERALL's) metric;
    the figure is None when it is undefined (a flag figure with nothing flagged, or nothing wrong)."""
    if metric in GROUNDING_METRICS:
        found = grounding.get(name)
        if found is None:
            return 0.0, (), NOT_GROUNDED.get(name, FIELD_NOT_GROUNDED)
        figure = found.metric(metric)
        note = f" ({found.why_undefined(metric)})" if figure is None else ""
        return figure, tuple(found.rows_behind(metric)), note
    counts = scores.overall if name == OVERALL else scores.fields.get(name)
    rows = tuple(scores.failing.get(name, ())) if name != OVERALL else ()
    empty = _measured_from_nothing(metric, counts, scores)
    if empty is not None:
        if scores.failed:
            empty += f": {len(scores.failed)} rows failed to run"
        elif counts is None:
            return 0.0, rows, NO_FIELD
        return 0.0, rows, f" ({empty})"
    if name == OVERALL:
        return scores.metric(metric), rows, ""
    return (counts.metric(metric) if counts is not None else 0.0), rows, ""


def _measured_from_nothing(metric: str, counts: Counts | None, scores: Scores) -> str | None:
    """Why the figure has nothing behind it (precision with no predicted value, recall with no gold value,
    exact match with no row scored), or None when it was measured: a gate never passes on a vacuous 1.0."""
    predicted = counts.predicted if counts is not None else 0
    support = counts.support if counts is not None else 0
    if metric == "exact_match":
        return "no row was scored" if scores.rows == 0 else None
    if metric == "precision" and predicted == 0:
        return "no value was predicted"
    if metric == "recall" and support == 0:
        return "no gold value was scored"
    if predicted == 0 and support == 0:
        return "nothing was scored"
    return None


@dataclass(frozen=True)
class FailedRows:
    """Rows whose run failed (an HTTP 500, a prompt that does not render, a missing recording): not scored,
    and failing the eval when they are more than its `max_failure_rate` allows, or when they are all its rows."""

    rows: tuple[str, ...]
    total: int
    max_rate: float

    @property
    def allowed(self) -> int:
        return math.floor(self.max_rate * self.total + 1e-9)

    @property
    def nothing_scored(self) -> bool:
        """Every row failed to run: there is no figure to judge, so the eval fails whatever the rate allows."""
        return len(self.rows) >= self.total

    @property
    def passed(self) -> bool:
        return len(self.rows) <= self.allowed and not self.nothing_scored

    def message(self) -> str:
        shown = ", ".join(self.rows[:ROWS_SHOWN])
        more = f" and {len(self.rows) - ROWS_SHOWN} more" if len(self.rows) > ROWS_SHOWN else ""
        if self.nothing_scored:
            return (f"nothing was scored: {len(self.rows)} of {self.total} rows failed to run (whatever "
                    f"max_failure_rate allows): {shown}{more}")
        return (f"{len(self.rows)} of {self.total} rows failed to run (max_failure_rate {self.max_rate:g} allows "
                f"{self.allowed}): {shown}{more}")


def failed_rows(spec: EvalSpec, scores: Scores) -> FailedRows | None:
    """The rows of an arm that failed to run, None when every row ran."""
    if not scores.failed:
        return None
    return FailedRows(tuple(scores.failed), scores.rows + len(scores.failed), spec.max_failure_rate)


def save_baseline(path: Path, results: Mapping[str, Scores], grounding: Mapping[str, Grounded] | None = None) -> None:
    """The scores of each eval (and its grounding figures, when it was grounded) as a baseline file."""
    evals: dict[str, Any] = {}
    for name, scores in sorted(results.items()):
        evals[name] = scores.to_dict()
        found = (grounding or {}).get(name)
        if found:
            evals[name]["grounding"] = {field: counts.to_dict() for field, counts in sorted(found.items())}
    data = {"dotprompt_eval_baseline": BASELINE_FORMAT, "evals": evals}
    path.write_text(json.dumps(data, indent=2, ensure_ascii=False, sort_keys=True) + "\n", encoding="utf-8")


@dataclass(frozen=True)
class Baseline:
    """A baseline file read: `evals` is {eval name: {field: {metric: value}}} (the grounded rate as metric
    `grounded`, when the baseline has one)."""

    path: Path
    format: int
    evals: Mapping[str, Mapping[str, Mapping[str, float]]]

    def lookup(self, spec: EvalSpec, legacy_names: Mapping[str, int]) -> tuple[Mapping[str, Mapping[str, float]] | None, str]:
        """(the eval's saved figures or None, a note for the report: why not compared, or how they were found).
        `legacy_names` counts the evals of this run by their format-1 name."""
        found = self.evals.get(spec.name)
        if found is not None:
            return found, ""
        old = spec.legacy_name
        if self.format == 1 and old in self.evals:
            if legacy_names.get(old, 0) > 1:
                return None, (f"not compared with a baseline: {self.path} was saved by an older version under the "
                              f"name {old!r}, which {legacy_names[old]} evals of this run share; re-save it with "
                              "--save-baseline")
            return self.evals[old], (f"{self.path} was saved by an older version: its scores for {old!r} are read as "
                                     "this eval's; re-save it with --save-baseline")
        return None, f"not compared with a baseline: {self.path} has no scores for {spec.name!r}; save them with --save-baseline"


def load_baseline(path: Path) -> Baseline:
    """The baseline file at `path`; a DatasetError naming the file when it is not a baseline."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise DatasetError(f"{path}: cannot read the baseline: {exc.strerror or exc}") from None
    except (ValueError, RecursionError) as exc:
        raise DatasetError(f"{path}: the baseline is not JSON ({exc}); write one with --save-baseline") from None
    version = data.get("dotprompt_eval_baseline") if isinstance(data, dict) else None
    if isinstance(version, int) and not isinstance(version, bool) and version > BASELINE_FORMAT:
        raise DatasetError(f"{path}: a baseline of format {version}, written by a newer version of dotprompt; "
                           "upgrade, or write one with --save-baseline")
    if version not in READ_FORMATS or not isinstance(data.get("evals"), dict):
        raise DatasetError(f"{path}: not a dotprompt eval baseline (format {BASELINE_FORMAT}); "
                           "write one with --save-baseline")
    evals = {str(name): _stored(scores) for name, scores in data["evals"].items() if isinstance(scores, dict)}
    return Baseline(path, version, evals)


def _stored(scores: Mapping[str, Any]) -> dict[str, dict[str, float]]:
    out = stored_metrics(scores)
    grounding = scores.get("grounding")
    for name, figures in (grounding.items() if isinstance(grounding, Mapping) else ()):
        rate = figures.get("grounded_rate") if isinstance(figures, Mapping) else None
        if isinstance(rate, (int, float)) and not isinstance(rate, bool) and math.isfinite(rate):
            out.setdefault(str(name), {})["grounded"] = float(rate)
    return out


@dataclass(frozen=True)
class Delta:
    field: str
    metric: str
    baseline: float | None
    now: float | None

    @property
    def change(self) -> float | None:
        return None if self.baseline is None or self.now is None else self.now - self.baseline


def deltas(baseline: Mapping[str, Mapping[str, float]], scores: Scores, grounding: Grounded | None = None) -> list[Delta]:
    """F1 now against the baseline for the whole eval, then every field either side has; then the
    grounded rate the same way, when the baseline has one."""
    now = {OVERALL: scores.overall.f1, **{name: counts.f1 for name, counts in scores.fields.items()}}
    out = _compared(baseline, now, "f1")
    base_exact = baseline.get(OVERALL, {}).get("exact_match")
    out.insert(1, Delta(OVERALL, "exact_match", base_exact, scores.exact_match))
    if any("grounded" in metrics for metrics in baseline.values()):
        out += _compared(baseline, {name: counts.rate for name, counts in (grounding or {}).items()}, "grounded")
    return out


def _compared(baseline: Mapping[str, Mapping[str, float]], now: Mapping[str, float], metric: str) -> list[Delta]:
    had = {name for name, metrics in baseline.items() if metric in metrics}
    names = [OVERALL, *sorted((set(now) | had) - {OVERALL})]
    return [Delta(name, metric, baseline.get(name, {}).get(metric), now.get(name)) for name in names]


def regressions(found: list[Delta], tolerance: float, scores: Scores, grounding: Grounded | None = None) -> list[Miss]:
    """Every metric that dropped more than `tolerance` below its baseline (a field gone entirely, or no
    longer grounded, counts as 0). Rows that never ran are not compared: with no row scored nothing
    regressed, and a field only they had is not "gone" (they fail the eval on their own)."""
    out = []
    for delta in found:
        if delta.baseline is None or scores.rows == 0:
            continue
        if delta.now is None and scores.failed and delta.metric != "grounded":
            continue
        now = delta.now if delta.now is not None else 0.0
        if now < delta.baseline - tolerance - SAVED_PRECISION:
            out.append(Miss(delta.field, delta.metric, delta.baseline, now, _rows(delta, scores, grounding or {}),
                            regression=True, note=" (not grounded in this run)" if delta.now is None and
                            delta.metric == "grounded" else ""))
    return out


def _rows(delta: Delta, scores: Scores, grounding: Grounded) -> tuple[str, ...]:
    if delta.metric == "grounded":
        counts = grounding.get(delta.field)
        return tuple(counts.ungrounded_rows) if counts is not None else ()
    return tuple(scores.failing.get(delta.field, ()))
