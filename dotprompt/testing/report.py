"""Reporting test runs: a summary table, JUnit XML for CI systems, and JSON."""

from __future__ import annotations

import os
import xml.etree.ElementTree as ET
from collections.abc import Sequence
from pathlib import Path
from typing import TextIO

from .._util.escape import json_dumps, terminal, xml_text
from .._util.redact import redact
from ..errors import PromptFileError
from ..settings import project_settings
from .runner import CaseSummary

__all__ = ["nothing_collected", "print_summary", "project_path", "rows", "write_json", "write_junit"]

COLUMNS = ("case", "result", "turns", "repairs", "tokens", "latency", "cost")


def rows(summaries: Sequence[CaseSummary], repeated: bool) -> list[tuple[str, ...]]:
    out: list[tuple[str, ...]] = []
    for s in summaries:
        r = s.last
        verdict = "pass" if s.passed else "FAIL"
        if repeated:
            verdict += f" ({s.pass_rate:.0%} of {len(s.runs)})"
        source = " (replayed)" if r.replayed else ""
        if r.fixtures:
            source += f" ({r.fixtures} hand-written fixture{'s' if r.fixtures > 1 else ''})"
        cost = str(r.cost) if r.cost is not None and r.cost.usd is not None else "-"
        name = terminal(s.case.id, lines=False)  # from the test file: one line, no escape sequence
        out.append((name, verdict, str(r.turns), str(r.repairs), str(r.tokens), f"{r.latency_ms:.0f} ms{source}", cost))
    return out


def print_summary(summaries: Sequence[CaseSummary], out: TextIO, *, fancy: bool, repeated: bool = False) -> None:
    table = rows(summaries, repeated)
    if not table:
        pass  # nothing ran: no empty table; `nothing_collected` says why
    elif fancy:
        _rich_table(table, out)
    else:
        widths = [max(len(c), *(len(row[i]) for row in table)) for i, c in enumerate(COLUMNS)]
        for row in [COLUMNS, *table]:
            print("  ".join(cell.ljust(w) for cell, w in zip(row, widths, strict=True)).rstrip(), file=out)
    for s in summaries:
        if not s.passed:
            print(f"\n{s.case.file}:{s.case.line}: {terminal(s.case.name, lines=False)}: FAILED", file=out)
            for failure in _failures(s):
                print(f"  - {terminal(failure, lines=False)}", file=out)
    failed = sum(not s.passed for s in summaries)
    print(f"\n{len(summaries) - failed} passed, {failed} failed", file=out)


def nothing_collected(searched: Sequence[str | Path], files: Sequence[Path], errors: Sequence[PromptFileError],
                      keyword: str | None = None) -> str:
    """Why a run collected no case, naming the folders searched or the files found.

    `files` are the test files found in `searched`, `errors` those of them that could not be read
    (already reported, each naming its file and line)."""
    if not files:
        return f"no test cases collected: no *.test.yaml files in {_names(searched)}"
    unreadable = {str(e.path) for e in errors}
    readable = [f for f in files if str(f) not in unreadable]
    reasons = []
    if unreadable:
        reasons.append(f"{len(unreadable)} test file{'s' if len(unreadable) > 1 else ''} could not be read (see above)")
    if readable and keyword:
        reasons.append(f"no case in {_names(readable)} matches -k {keyword!r}")
    elif readable:
        reasons.append(f"no cases in {_names(readable)}")
    return "no test cases collected: " + "; ".join(reasons)


def _names(files: Sequence[str | Path]) -> str:
    return ", ".join(str(f) for f in files)


def _rich_table(table: list[tuple[str, ...]], out: TextIO) -> None:
    from rich.console import Console
    from rich.table import Table
    from rich.text import Text

    view = Table(*COLUMNS)
    for row in table:
        style = None if row[1].startswith("pass") else "red"
        view.add_row(*(Text(cell) for cell in row), style=style)  # as text: a case name is no markup
    Console(file=out).print(view)


def write_junit(summaries: Sequence[CaseSummary], path: Path) -> None:
    """JUnit XML in the common (Jenkins/GitLab/GitHub) shape: testsuites > testsuite per file > testcase."""
    root = ET.Element("testsuites", name="dotprompt")
    by_file: dict[str, list[CaseSummary]] = {}
    for s in summaries:
        by_file.setdefault(s.case.file, []).append(s)
    total = failures = 0
    total_time = 0.0
    for test_file, group in by_file.items():
        file = project_path(test_file)
        suite = ET.SubElement(root, "testsuite", name=xml_text(file), tests=str(len(group)),
                              failures=str(sum(not s.passed for s in group)), errors="0", skipped="0",
                              time=f"{sum(s.last.latency_ms for s in group) / 1000:.3f}")
        for s in group:
            case = ET.SubElement(suite, "testcase", classname=xml_text(Path(file).name.removesuffix(".test.yaml")),
                                 name=xml_text(s.case.name), file=xml_text(file), line=str(s.case.line),
                                 time=f"{s.last.latency_ms / 1000:.3f}")
            if not s.passed:
                reasons = _failures(s)
                failure = ET.SubElement(case, "failure", message=xml_text(reasons[0]) if reasons else "failed",
                                        type="AssertionError")
                failure.text = xml_text("\n".join(reasons))
        total += len(group)
        failures += sum(not s.passed for s in group)
        total_time += sum(s.last.latency_ms for s in group) / 1000
    root.set("tests", str(total))
    root.set("failures", str(failures))
    root.set("errors", "0")
    root.set("time", f"{total_time:.3f}")
    ET.ElementTree(root).write(path, encoding="utf-8", xml_declaration=True)


def project_path(file: str | Path) -> str:
    """A test file as CI reports name it: from its project's folder (the nearest pyproject.toml's, else
    the working folder), the same on every machine and from any working folder; as given when it is
    outside that folder."""
    path = Path(file).resolve()
    root = (project_settings(path.parent)[1] or Path.cwd()).resolve()
    relative = os.path.relpath(path, root) if path.is_relative_to(root) else None
    return Path(relative).as_posix() if relative else str(file)


def _failures(summary: CaseSummary) -> list[str]:
    """Each distinct failure of a case's runs, redacted: a failure may quote a provider's error body."""
    return list(dict.fromkeys(redact(f) for run in summary.runs for f in run.failures))


def write_json(summaries: Sequence[CaseSummary], path: Path) -> None:
    data = [{"file": s.case.file, "line": s.case.line, "case": s.case.name, "prompt": s.case.prompt,
             "passed": s.passed, "pass_rate": s.pass_rate, "runs": len(s.runs),
             "failures": _failures(s),
             "turns": s.last.turns, "repairs": s.last.repairs, "tokens": s.last.tokens,
             "latency_ms": s.last.latency_ms, "replayed": s.last.replayed,
             "cost_usd": float(s.last.cost.usd) if s.last.cost is not None and s.last.cost.usd is not None else None}
            for s in summaries]
    path.write_text(json_dumps(data, indent=2, default=str) + "\n", encoding="utf-8")
