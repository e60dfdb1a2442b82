"""What fails an eval: a threshold of the test file missed, or a regression against a baseline.

Each failure names the field, the metric, the figures and the rows that failed the field, so the
CI log says what to look at. Baselines are JSON files written by `--save-baseline`:

    {"dotprompt_eval_baseline": 1, "evals": {"extract on invoices.jsonl": {<scores>}}}
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from ..errors import DatasetError
from .config import EvalSpec
from .metrics import Scores, stored_metrics

__all__ = ["Delta", "Miss", "deltas", "load_baseline", "regressions", "save_baseline", "threshold_misses"]

BASELINE_FORMAT = 1
ROWS_SHOWN = 10
SAVED_PRECISION = 1e-6  # baselines keep six decimals: a difference below this is rounding, not a regression


@dataclass(frozen=True)
class Miss:
    field: str  # "(overall)" for the whole eval
    metric: str
    wanted: float
    got: float
    rows: tuple[str, ...] = ()
    regression: bool = False  # against a baseline, rather than a threshold of the test file
    note: str = ""

    def message(self) -> str:
        what = "regressed" if self.regression else "below threshold"
        compare = (f"{self.got:.3f}, baseline {self.wanted:.3f} ({self.got - self.wanted:+.3f})" if self.regression
                   else f"{self.got:.3f} < {self.wanted:.3f}")
        text = f"{self.field}: {self.metric} {what}: {compare}{self.note}"
        if self.rows:
            shown = ", ".join(self.rows[:ROWS_SHOWN])
            more = f" and {len(self.rows) - ROWS_SHOWN} more" if len(self.rows) > ROWS_SHOWN else ""
            text += f"; rows: {shown}{more}"
        return text


def threshold_misses(spec: EvalSpec, scores: Scores) -> list[Miss]:
    misses = [Miss("(overall)", metric, wanted, scores.metric(metric))
              for metric, wanted in spec.overall_min.items() if scores.metric(metric) < wanted - 1e-9]
    for name, wanted_metrics in spec.field_min.items():
        counts = scores.fields.get(name)
        rows = tuple(scores.failing.get(name, ()))
        for metric, wanted in wanted_metrics.items():
            got = counts.metric(metric) if counts is not None else 0.0
            if got < wanted - 1e-9:
                note = " (no row's gold data or output has this field: check its path)" if counts is None else ""
                misses.append(Miss(name, metric, wanted, got, rows, note=note))
    return misses


def save_baseline(path: Path, results: Mapping[str, Scores]) -> None:
    data = {"dotprompt_eval_baseline": BASELINE_FORMAT,
            "evals": {name: scores.to_dict() for name, scores in sorted(results.items())}}
    path.write_text(json.dumps(data, indent=2, ensure_ascii=False, sort_keys=True) + "\n", encoding="utf-8")


def load_baseline(path: Path) -> dict[str, dict[str, dict[str, float]]]:
    """{eval name: {field: {metric: value}}}; a DatasetError naming the file when it is not a baseline."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise DatasetError(f"{path}: cannot read the baseline: {exc.strerror or exc}") from None
    except (ValueError, RecursionError) as exc:
        raise DatasetError(f"{path}: the baseline is not JSON ({exc}); write one with --save-baseline") from None
    if not isinstance(data, dict) or data.get("dotprompt_eval_baseline") != BASELINE_FORMAT \
            or not isinstance(data.get("evals"), dict):
        raise DatasetError(f"{path}: not a dotprompt eval baseline (format {BASELINE_FORMAT}); "
                           "write one with --save-baseline")
    return {str(name): stored_metrics(scores) for name, scores in data["evals"].items() if isinstance(scores, dict)}


@dataclass(frozen=True)
class Delta:
    field: str
    metric: str
    baseline: float | None
    now: float | None

    @property
    def change(self) -> float | None:
        return None if self.baseline is None or self.now is None else self.now - self.baseline


def deltas(baseline: Mapping[str, Mapping[str, float]], scores: Scores) -> list[Delta]:
    """F1 now against the baseline for the whole eval, then every field either side has."""
    now = {"(overall)": scores.overall.f1, **{name: counts.f1 for name, counts in scores.fields.items()}}
    names = ["(overall)", *sorted((set(now) | set(baseline)) - {"(overall)"})]
    out = [Delta(name, "f1", baseline.get(name, {}).get("f1"), now.get(name)) for name in names]
    base_exact = baseline.get("(overall)", {}).get("exact_match")
    out.insert(1, Delta("(overall)", "exact_match", base_exact, scores.exact_match))
    return out


def regressions(found: list[Delta], tolerance: float, scores: Scores) -> list[Miss]:
    """Every metric that dropped more than `tolerance` below its baseline (a field gone entirely counts as 0)."""
    out = []
    for delta in found:
        if delta.baseline is None:
            continue
        now = delta.now if delta.now is not None else 0.0
        if now < delta.baseline - tolerance - SAVED_PRECISION:
            rows = tuple(scores.failing.get(delta.field, ()))
            out.append(Miss(delta.field, delta.metric, delta.baseline, now, rows, regression=True))
    return out
