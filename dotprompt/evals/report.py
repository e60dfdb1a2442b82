"""Eval reports: a field table on the terminal, JUnit XML, JSON, and Markdown for a pull-request comment.

Several arms (variants, models) of one eval sit side by side, one F1 column each; with a baseline each
column shows its change. Every failure names the field, the figures and the rows.
"""

from __future__ import annotations

import xml.etree.ElementTree as ET
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TextIO

from .._util.escape import json_dumps, terminal, xml_text
from .._util.escape import markdown as md
from .._util.redact import redact
from ..grounding import cited_sources
from ..testing.report import project_path
from .gates import Delta, FailedRows, Miss, failed_rows
from .grounding_stats import OVERALL, GroundingCounts
from .limits import EVAL_MAX_ALIGN_WORK
from .run import ArmResult

__all__ = ["Verdict", "bounded_note", "fixture_note", "markdown", "print_report", "table", "to_json", "write_json", "write_junit",
           "write_markdown"]


@dataclass
class Verdict:
    """One arm of one eval with what gates it: thresholds missed, regressions, recordings that could not replay,
    rows that failed to run; `notes` say what did not fail it but must be seen (a baseline without this eval)."""

    result: ArmResult
    misses: list[Miss]
    deltas: list[Delta] | None = None
    notes: list[str] = field(default_factory=list)

    @property
    def failed_rows(self) -> FailedRows | None:
        return failed_rows(self.result.spec, self.result.scores)

    @property
    def passed(self) -> bool:
        failed = self.failed_rows
        return not self.misses and not self.result.errors and (failed is None or failed.passed)

    @property
    def title(self) -> str:
        return f"{self.result.spec.name} [{self.result.arm.label}]"

    def failures(self) -> list[str]:
        failed = self.failed_rows
        rows = self.failed_row_lines() if failed is not None and not failed.passed else []
        return [*self.result.errors, *rows, *(m.message() for m in self.misses)]

    def all_notes(self) -> list[str]:
        failed = self.failed_rows
        rows = self.failed_row_lines() if failed is not None and failed.passed else []
        return [*self.notes, *rows]

    def failed_row_lines(self) -> list[str]:
        """How many rows failed to run, then each one's error (a missing recording is already among the errors)."""
        failed = self.failed_rows
        if failed is None:
            return []
        return [failed.message(), *(f"row {r.row.id}: failed to run: {r.error}" for r in self.result.failed_rows
                                    if not r.recording_problems)]


def _groups(verdicts: Sequence[Verdict]) -> dict[str, list[Verdict]]:
    out: dict[str, list[Verdict]] = {}
    for verdict in verdicts:
        out.setdefault(verdict.result.spec.name, []).append(verdict)
    return out


def table(group: Sequence[Verdict]) -> tuple[list[str], list[list[str]]]:
    """(header, rows) of one eval: a row per field, a column per arm (F1, with the change against the baseline)."""
    names = sorted({name for v in group for name in v.result.scores.fields})
    header = ["field", "support", *(v.result.arm.label for v in group)]
    rows = [["(overall F1)", str(group[0].result.scores.overall.support), *(_cell(v, "(overall)", None) for v in group)],
            ["(exact match)", str(group[0].result.scores.rows), *(_exact_cell(v) for v in group)]]
    for name in names:
        support = group[0].result.scores.fields.get(name)
        rows.append([name, str(support.support if support else 0), *(_cell(v, name, name) for v in group)])
    for name in sorted({n for v in group for n in v.result.scores.lists}):
        rows.append([f"{name} (items)", "", *(_items_cell(v, name) for v in group)])
    for name in sorted({n for v in group for n in v.result.grounding}, key=lambda n: (n != OVERALL, n)):
        # Only schema-valid replies are grounded, so arms may look at different numbers of values:
        # one number in the support column only when they agree, else each cell says its own.
        looked = {counts.looked for v in group if (counts := v.result.grounding.get(name)) is not None}
        shown = str(next(iter(looked))) if len(looked) == 1 else "per arm"
        rows.append([f"{name} (grounding)", shown, *(_grounding_cell(v, name, len(looked) > 1) for v in group)])
    return header, rows


def _grounding_cell(verdict: Verdict, name: str, own_support: bool = False) -> str:
    """Grounded rate, and how well "ungrounded" flags a wrong value (precision / recall against gold)."""
    counts = verdict.result.grounding.get(name)
    if counts is None:
        return "-"
    of = f" of {counts.looked}" if own_support else ""
    return (f"{counts.rate:.3f} grounded{of}{_change(verdict, name, 'grounded')}, "
            f"flag P {_figure(counts.flag_precision, 2)} R {_figure(counts.flag_recall, 2)}")


def _figure(value: float | None, places: int) -> str:
    """A figure, or `-` when there is nothing to measure it on (never a vacuous 1.0)."""
    return f"{value:.{places}f}" if value is not None else "-"


def _cell(verdict: Verdict, key: str, name: str | None) -> str:
    scores = verdict.result.scores
    counts = scores.overall if name is None else scores.fields.get(name)
    if counts is None or not (counts.support or counts.predicted):
        return "-"  # nothing scored: no vacuous 1.000
    text = f"{counts.f1:.3f}"
    if name is not None and (counts.wrong or counts.missing or counts.extra):
        text += f" ({counts.wrong}w {counts.missing}m {counts.extra}x)"
    return text + _change(verdict, key, "f1")


def _exact_cell(verdict: Verdict) -> str:
    if not verdict.result.scores.rows:
        return "-"
    return f"{verdict.result.scores.exact_match:.3f}" + _change(verdict, "(overall)", "exact_match")


def _items_cell(verdict: Verdict, name: str) -> str:
    items = verdict.result.scores.lists.get(name)
    return "-" if items is None else f"{items.matched} matched, {items.missing} missing, {items.extra} extra"


def _change(verdict: Verdict, key: str, metric: str) -> str:
    for delta in verdict.deltas or ():
        if delta.field == key and delta.metric == metric and delta.change is not None:
            return f" {delta.change:+.3f}" if abs(delta.change) >= 0.0005 else " ±0"
    return ""


def print_report(verdicts: Sequence[Verdict], out: TextIO, *, fancy: bool) -> None:
    """The tables and failures on a terminal (or a CI log): names, ids and field names come from the
    dataset, so each is shown on one line with its controls escaped."""
    for name, group in _groups(verdicts).items():
        header, rows = table(group)
        header, rows = _one_line(header), [_one_line(row) for row in rows]
        print(f"\n{_line(name)}: {_rows_line(group[0].result)} (w = wrong, m = missing, x = extra)", file=out)
        if fancy:
            _rich(header, rows, out)
        else:
            widths = [max(len(r[i]) for r in [header, *rows]) for i in range(len(header))]
            for row in [header, *rows]:
                print("  ".join(cell.ljust(w) for cell, w in zip(row, widths, strict=True)).rstrip(), file=out)
    for verdict in verdicts:
        if verdict.result.fixture_rows:
            print(f"NOTE {_line(verdict.title)}: {fixture_note(verdict)}", file=out)
        if verdict.result.bounded_rows:
            print(f"NOTE {_line(verdict.title)}: {_line(bounded_note(verdict))}", file=out)
        for note in verdict.all_notes():
            print(f"NOTE {_line(verdict.title)}: {_line(redact(note))}", file=out)
        for failure in verdict.failures():
            print(f"FAIL {_line(verdict.title)}: {_line(redact(failure))}", file=out)
    failed = sum(not v.passed for v in verdicts)
    print(f"\n{len(verdicts) - failed} eval(s) passed, {failed} failed", file=out)


def _rows_line(result: ArmResult) -> str:
    failed = len(result.scores.failed)
    return f"{result.scores.rows + failed} rows" + (f" ({failed} failed to run, not scored)" if failed else "")


def _line(text: str) -> str:
    return terminal(text, lines=False)


def _one_line(cells: list[str]) -> list[str]:
    return [_line(cell) for cell in cells]


def fixture_note(verdict: Verdict) -> str:
    result = verdict.result
    return (f"{result.fixture_rows} of {len(result.rows)} rows replayed hand-written fixture replies, not a model's: "
            "the scores measure the fixtures; record the model with --record")


def bounded_note(verdict: Verdict, rows_shown: int = 5, lists_shown: int = 3) -> str:
    """Which rows had lists paired by position because aligning them would take too long, and which lists."""
    result = verdict.result
    bounded = result.bounded_rows
    named = []
    for row in bounded[:rows_shown]:
        lists = row.comparison.bounded
        more = f" (+{len(lists) - lists_shown} more)" if len(lists) > lists_shown else ""
        named.append(f"row {row.row.id}: {', '.join(lists[:lists_shown])}{more}")
    if len(bounded) > rows_shown:
        named.append(f"+{len(bounded) - rows_shown} more rows")
    return (f"{len(bounded)} of {len(result.rows)} rows nest lists that would take more than {EVAL_MAX_ALIGN_WORK:,} "
            "steps to align (EVAL_MAX_ALIGN_WORK): those lists were paired by position, not by best match, so "
            f"their items may score lower than they should ({'; '.join(named)})")


def _rich(header: list[str], rows: list[list[str]], out: TextIO) -> None:
    from rich.console import Console
    from rich.table import Table
    from rich.text import Text

    view = Table(*header)
    for row in rows:
        view.add_row(*(Text(cell) for cell in row))  # as text: `[...]` in a field name is no markup
    Console(file=out).print(view)


def markdown(verdicts: Sequence[Verdict]) -> str:
    """A summary fit for `$GITHUB_STEP_SUMMARY` or a pull-request comment."""
    lines = ["## dotprompt eval", ""]
    for name, group in _groups(verdicts).items():
        verdict_text = "passed" if all(v.passed for v in group) else "**failed**"
        lines += [f"### {md(name)}: {verdict_text}", ""]
        header, rows = table(group)
        lines.append("| " + " | ".join(md(cell) for cell in header) + " |")
        lines.append("|" + "---|" * len(header))
        lines += ["| " + " | ".join(md(cell) for cell in row) + " |" for row in rows]
        lines.append("")
        for verdict in group:
            label = md(verdict.result.arm.label)
            if verdict.result.fixture_rows:
                lines.append(f"- {label}: note: {md(fixture_note(verdict))}")
            if verdict.result.bounded_rows:
                lines.append(f"- {label}: note: {md(bounded_note(verdict))}")
            lines += [f"- {label}: note: {md(redact(n))}" for n in verdict.all_notes()]
            lines += [f"- {label}: {md(redact(f))}" for f in verdict.failures()]
        lines.append("")
    return "\n".join(lines)


def write_markdown(verdicts: Sequence[Verdict], path: Path, *, append: bool = False) -> None:
    with path.open("a" if append else "w", encoding="utf-8") as out:
        out.write(markdown(verdicts) + "\n")


def to_json(verdicts: Sequence[Verdict]) -> dict[str, Any]:
    return {"evals": [_with_grounding_sources(_verdict_json(v), v) for v in verdicts]}


def _with_grounding_sources(shown: dict[str, Any], verdict: Verdict) -> dict[str, Any]:
    """Each grounded row with the input texts its spans point into (`grounding_sources`): what the
    workbench marks the spans in."""
    for row, result in zip(shown["rows"], verdict.result.rows, strict=True):
        if "grounding" in row:
            row["grounding_sources"] = cited_sources(row["grounding"], result.row.input)
    return shown


def _verdict_json(verdict: Verdict) -> dict[str, Any]:
    result = verdict.result
    return {"eval": result.spec.name, "file": result.spec.file, "prompt": result.spec.prompt, "arm": result.arm.label,
            "variant": result.arm.variant_for(result.spec), "model": result.arm.model, "passed": verdict.passed,
            "prompt_identity": result.identity.to_dict() if result.identity is not None else None,
            "fixture_rows": result.fixture_rows, "scores": result.scores.to_dict(),
            "grounding": {name: counts.to_dict() for name, counts in result.grounding.items()},
            "failures": [redact(f) for f in verdict.failures()], "notes": [redact(n) for n in verdict.all_notes()],
            "deltas": [{"field": d.field, "metric": d.metric, "baseline": d.baseline, "now": d.now}
                       for d in verdict.deltas or ()],
            "rows": [{"id": r.row.id, "exact": r.comparison.exact if r.error is None else None,
                      "error": redact(r.error) if r.error is not None else None,
                      "problems": [redact(p) for p in r.problems],
                      "bounded": r.comparison.bounded,
                      "fields": [{"field": f.field, "where": f.where, "outcome": f.outcome, "expected": f.expected,
                                  "predicted": f.predicted} for f in r.comparison.fields if f.outcome != "correct"],
                      **_row_grounding(r)}
                     for r in result.rows]}


def _row_grounding(row: Any) -> dict[str, Any]:
    """Where the row's output values are in its input (pages and boxes in a PDF input), when grounded."""
    grounding = getattr(row, "grounding", None)
    return {"grounding": grounding.to_dict()} if grounding is not None and hasattr(grounding, "to_dict") else {}


def write_json(verdicts: Sequence[Verdict], path: Path) -> None:
    path.write_text(json_dumps(to_json(verdicts), indent=2, default=str) + "\n", encoding="utf-8")


def write_junit(verdicts: Sequence[Verdict], path: Path) -> None:
    """A test suite per eval arm; a test case per field (failing when a threshold or the baseline fails
    it), and per field's grounding (its figures as properties and in `system-out`)."""
    root = ET.Element("testsuites", name="dotprompt eval")
    total = failed = 0
    for verdict in verdicts:
        cases = _junit_cases(verdict)
        suite = ET.SubElement(root, "testsuite", name=xml_text(verdict.title), tests=str(len(cases)), errors="0",
                              skipped="0")
        suite_failures = 0
        for case in cases:
            suite_failures += _junit_case(suite, verdict, case)
        suite.set("failures", str(suite_failures))
        total += len(cases)
        failed += suite_failures
    root.set("tests", str(total))
    root.set("failures", str(failed))
    root.set("errors", "0")
    ET.ElementTree(root).write(path, encoding="utf-8", xml_declaration=True)


@dataclass
class _Case:
    name: str
    reasons: list[str]
    grounding: GroundingCounts | None = None
    out: str | None = None  # what the case's `system-out` says


def _junit_cases(verdict: Verdict) -> list[_Case]:
    """The overall scores, the recordings, each field, then each field's grounding: every field a gate
    names has its case, even one no row had (so a failed gate is never missing from the report)."""
    result, misses = verdict.result, verdict.misses
    scored = [m for m in misses if not m.grounding]
    grounded = [m for m in misses if m.grounding]
    fields = sorted((set(result.scores.fields) | {m.field for m in scored}) - {OVERALL})
    cases = [_Case(OVERALL, [m.message() for m in scored if m.field == OVERALL]), _Case("(recordings)", result.errors)]
    if verdict.failed_rows is not None:
        failed = verdict.failed_rows
        cases.append(_Case("(failed rows)", verdict.failed_row_lines() if not failed.passed else [],
                           out=None if not failed.passed else "\n".join(verdict.failed_row_lines())))
    cases += [_Case(name, [m.message() for m in scored if m.field == name]) for name in fields]
    names = sorted(set(result.grounding) | {m.field for m in grounded}, key=lambda n: (n != OVERALL, n))
    cases += [_Case(f"{name} (grounding)", [m.message() for m in grounded if m.field == name],
                    result.grounding.get(name)) for name in names]
    return cases


def _junit_case(suite: ET.Element, verdict: Verdict, case: _Case) -> int:
    """One test case in the suite; 1 when it failed."""
    element = ET.SubElement(suite, "testcase", classname=xml_text(verdict.result.spec.name), name=xml_text(case.name),
                            file=xml_text(project_path(verdict.result.spec.file)))
    if case.grounding is not None:
        properties = ET.SubElement(element, "properties")
        for key, value in case.grounding.to_dict().items():
            ET.SubElement(properties, "property", name=key, value=str(value) if value is not None else "-")
    if case.reasons:
        failure = ET.SubElement(element, "failure", message=xml_text(redact(case.reasons[0])), type="EvalFailure")
        failure.text = xml_text(redact("\n".join(case.reasons)))
    if case.grounding is not None:
        ET.SubElement(element, "system-out").text = _grounding_summary(case.grounding)
    elif case.out is not None:
        ET.SubElement(element, "system-out").text = xml_text(redact(case.out))
    return 1 if case.reasons else 0


def _grounding_summary(counts: GroundingCounts) -> str:
    flagged = counts.flagged_wrong + counts.flagged_right
    wrong = counts.flagged_wrong + counts.unflagged_wrong
    return (f"grounded {counts.rate:.3f} ({counts.grounded} of {counts.looked} values found in the input); "
            f"flag precision {_figure(counts.flag_precision, 3)} ({counts.flagged_wrong} of {flagged} ungrounded values "
            f"wrong); flag recall {_figure(counts.flag_recall, 3)} ({counts.flagged_wrong} of {wrong} wrong values "
            "ungrounded)")
