"""`dotprompt logs`: the runs in the run log — list (filtered), one in full, full-text search, JSON lines."""

from __future__ import annotations

import argparse
import datetime
import io
import json
import re
import shutil
import sys
from pathlib import Path
from typing import Any

from .._util.escape import json_dumps, terminal, view_body
from ..settings import project_root, project_settings, run_log_settings
from .common import EXIT_FAILED, EXIT_OK, CommandLineError
from .grounding_view import show_grounding

__all__ = ["add_parser", "describe", "log_path", "print_table", "run", "when"]

_RELATIVE = re.compile(r"^(\d+)\s*([mhdw])$")
_UNITS = {"m": 60, "h": 3600, "d": 86400, "w": 7 * 86400}
DATE_HELP = "YYYY-MM-DD, YYYY-MM-DDTHH:MM (local time), or an age: 30m, 2h, 7d, 1w"


def add_parser(subparsers: Any) -> argparse.ArgumentParser:
    parser = subparsers.add_parser("logs", help="list, show, search and export the runs in the run log",
                                   description="Runs of `dotprompt run`, batch rows, recorded test cases and "
                                               "libraries made with log=True, of this project (--all: of every "
                                               "project), newest first.")
    parser.add_argument("run_id", nargs="?", type=int, metavar="ID", help="show this run (its ID in the list) in full")
    parser.add_argument("-n", "--limit", type=int, help="at most N runs (default 20; with --json every run)")
    parser.add_argument("-q", "--search", metavar="TEXT", help="only runs whose text holds every word of TEXT")
    parser.add_argument("--prompt", help="only runs of this prompt (its name, e.g. billing/extract)")
    parser.add_argument("--model", help="only runs on this model (its full name, e.g. openai/gpt-4o-mini)")
    parser.add_argument("--status", choices=["ok", "error", "interrupted"],
                        help="only runs that succeeded, failed, or stopped on tool requests waiting for an answer")
    parser.add_argument("--source", choices=["run", "batch", "test", "api", "ui"], help="only runs started this way")
    parser.add_argument("--since", help=f"only runs from then on: {DATE_HELP}")
    parser.add_argument("--until", help=f"only runs before then: {DATE_HELP}")
    parser.add_argument("--all", action="store_true",
                        help="runs of every project sharing the log file, and those logged before runs recorded their "
                             "project (default: only this project's: the folder of the nearest pyproject.toml, else "
                             "this folder)")
    parser.add_argument("--json", action="store_true", help="print each run whole, as one JSON line (export)")
    parser.add_argument("--file", type=Path, help="read this log file (default: $DOTPROMPT_LOG_PATH, "
                                                  "[tool.dotprompt] log_path, $XDG_DATA_HOME/dotprompt/logs.db)")
    return parser


def run(args: argparse.Namespace) -> int:
    from ..observe.runlog import LogQuery, list_runs, search_runs  # sqlite3 loads with this command only

    path = args.file or log_path()
    if args.run_id is not None:
        return _show(path, args.run_id, args.json)
    if args.limit is not None and args.limit < 0:
        raise CommandLineError("--limit must be 0 (no limit) or more")
    limit = args.limit if args.limit is not None else (None if args.json else 20)
    project = None if args.all else str(project_root())
    query = LogQuery(prompt=args.prompt, model=args.model, status=args.status, source=args.source, project=project,
                     since=when(args.since, "--since"), until=when(args.until, "--until"), limit=limit or None)
    if args.search is not None:
        runs, indexed = search_runs(path, args.search, query)
        if not indexed:
            print("note: this Python's SQLite has no FTS5, so the search is a slower LIKE match, newest first",
                  file=sys.stderr)
    else:
        runs = list_runs(path, query)
    if args.json:
        for found in runs:
            print(json_dumps(found))
        return EXIT_OK
    print_table(runs, path, project)
    return EXIT_OK


def log_path() -> Path:
    """The run log file this project writes to (even when logging is turned off now)."""
    settings, root = project_settings()
    found = run_log_settings(True, project=settings, root=root).path
    assert found is not None  # logging asked for: a path always comes back
    return found


def when(value: str | None, flag: str) -> float | None:
    """A --since/--until value as unix seconds."""
    if value is None:
        return None
    relative = _RELATIVE.match(value.strip())
    if relative:
        return datetime.datetime.now().timestamp() - int(relative[1]) * _UNITS[relative[2]]
    try:
        return datetime.datetime.fromisoformat(value.strip()).timestamp()
    except ValueError:
        raise CommandLineError(f"{flag} {value!r}: not a date or an age ({DATE_HELP})") from None


# -- the list -------------------------------------------------------------------------------------

def print_table(runs: list[dict[str, Any]], path: Path, project: str | None = None) -> None:
    """The runs, one line each; `project` is the one they were filtered by (None: every project's, with a
    PROJECT column)."""
    if not runs:
        more = f"; of the project {project} only: `dotprompt logs --all` lists every project's" if project else ""
        print(terminal(f"no runs logged (the log is {path}{more})", lines=False))
        return
    width = max(shutil.get_terminal_size((120, 24)).columns, 80)
    header: tuple[str, ...] = ("ID", "WHEN", "SOURCE", "PROMPT", "MODEL", "STATUS", "TOKENS", "MS", "COST")
    cells = [_columns(found) for found in runs]
    if project is None:
        header += ("PROJECT",)
        cells = [(*row, _folder(found.get("project"))) for row, found in zip(cells, runs, strict=True)]
    rows = [tuple(terminal(cell, lines=False) for cell in row) for row in cells]
    sizes = [max(len(header[i]), *(len(row[i]) for row in rows)) for i in range(len(header))]
    line = "  ".join(h.ljust(s) for h, s in zip(header, sizes, strict=True))
    print(f"{line}  RESULT")
    for found, row in zip(runs, rows, strict=True):
        left = "  ".join(value.rjust(s) if i in (0, 6, 7, 8) else value.ljust(s)
                         for i, (value, s) in enumerate(zip(row, sizes, strict=True)))
        print(f"{left}  {_preview(found, width - len(left) - 2)}")
    scope = f"of the project {project} (--all: every project's)" if project is not None else "of every project"
    print(terminal(f"({len(runs)} run{'s' if len(runs) != 1 else ''}, newest first, from {path}, {scope}; "
                   "`dotprompt logs ID` shows one in full)", lines=False))


def _folder(project: Any) -> str:
    """A project's folder as the list shows it: under the home folder as ~/..., `-` for a run logged before projects."""
    if not isinstance(project, str) or not project:
        return "-"
    home = str(Path.home())
    return "~" + project[len(home):] if project == home or project.startswith(home + "/") else project


_NOT_ERRORS = ("ok", "interrupted")  # statuses shown as they are; an error shows its type


def _columns(found: dict[str, Any]) -> tuple[str, ...]:
    tokens = f"{_count(found.get('input_tokens'))}/{_count(found.get('output_tokens'))}"
    status = found["status"] if found["status"] in _NOT_ERRORS else found.get("error_type") or "error"
    latency = found.get("latency_ms")
    cost = found.get("cost")
    return (str(found["id"]), _local(found["started"]), found["source"], _prompt(found), found.get("model") or "-",
            status, tokens, f"{latency:.0f}" if latency is not None else "-", f"${cost:.4f}" if cost is not None else "-")


def _count(value: Any) -> str:
    return str(value) if value is not None else "-"


def _local(seconds: float) -> str:
    return datetime.datetime.fromtimestamp(seconds).strftime("%Y-%m-%d %H:%M:%S")


def _prompt(found: dict[str, Any]) -> str:
    name = found.get("prompt") or "-"
    if found.get("variant"):
        name += f".{found['variant']}"
    return f"{name}@{found['prompt_hash'][:8]}" if found.get("prompt_hash") else name


def _preview(found: dict[str, Any], width: int) -> str:
    if found["status"] != "ok":
        text = found.get("error") or ""
    else:
        output = found.get("output")
        text = output if isinstance(output, str) else json.dumps(output, ensure_ascii=False)
    text = terminal(" ".join(text.split()), lines=False)  # model text, on one line, no escape sequence run
    width = max(width, 20)
    return text if len(text) <= width else text[: width - 3] + "..."


# -- one run in full -------------------------------------------------------------------------------

def _show(path: Path, number: int, as_json: bool) -> int:
    from ..observe.runlog import get_run

    found = get_run(path, number)
    if found is None:
        print(f"dotprompt: no run {number} in {path} (`dotprompt logs` lists the runs kept)", file=sys.stderr)
        return EXIT_FAILED
    if as_json:
        print(json_dumps(found, indent=2))
        return EXIT_OK
    for line in describe(found):
        print(terminal(line))  # the run's text is the model's: its escape sequences are shown, not run
    return EXIT_OK


def describe(found: dict[str, Any]) -> list[str]:
    """One run as text: its facts, then input, the messages sent, the messages the run added, output, error."""
    status = found["status"] if found["status"] in _NOT_ERRORS else f"error: {found.get('error_type')}"
    partials = found.get("partials") or {}
    lines = [f"run {found['id']}  {_local(found['started'])}  source: {found['source']}"
             + (f"  {_context(found['context'])}" if found.get("context") else ""),
             f"prompt   {_prompt(found)}" + (f"  (hash {found['prompt_hash']})" if found.get("prompt_hash") else ""),
             *(f"         partial {name}@{digest}" for name, digest in sorted(partials.items())),
             f"model    {found.get('model') or '-'}",
             f"project  {found.get('project') or '- (logged before runs recorded their project)'}",
             f"status   {status}  finish: {found.get('finish_reason') or '-'}  repairs: {found.get('repairs') or 0}",
             f"usage    {_count(found.get('input_tokens'))} in / {_count(found.get('output_tokens'))} out  "
             f"latency: {_columns(found)[7]} ms  cost: {_columns(found)[8]}"]
    # One line each, whatever the names hold: a model name with a newline cannot start a line of its own.
    lines = [terminal(line, lines=False) for line in lines]
    lines += _section("input", found.get("input"))
    sent, received = found.get("request"), found.get("response")
    request = sent if isinstance(sent, dict) else {}
    lines += _section("sent", _conversation(request.get("messages") or []))
    response = received if isinstance(received, dict) else {}
    lines += _section("received", _conversation(response.get("messages") or []) or response.get("text"))
    if found["status"] == "ok":
        lines += _section("output", found.get("output"))
    if isinstance(response.get("grounding"), dict):  # where each output value is in the input
        lines += ["--- grounding ---", *(terminal(line, lines=False) for line in _grounding(response["grounding"]))]
    for repair in found.get("repair_details") or []:
        lines.append(terminal(f"repair: {repair}", lines=False))
    if found.get("error"):
        lines += _section("pending" if found["status"] == "interrupted" else "error", found["error"])
    return lines


def _grounding(logged: dict[str, Any]) -> list[str]:
    """A logged grounding as `dotprompt run --grounding` prints it, after a line saying how many values
    were not found (or that none is missing)."""
    from ..grounding import grounding_from_dict

    grounding = grounding_from_dict(logged)
    shown = io.StringIO()
    show_grounding(grounding, shown, spans=True)  # not a terminal: no colour
    lines = shown.getvalue().splitlines()
    return lines if grounding.ungrounded else [f"grounding: no value of {len(grounding)} missing from the input", *lines]


def _context(context: Any) -> str:
    if not isinstance(context, dict):
        return str(context)
    return " ".join(f"{key}={value}" for key, value in context.items())


def _section(title: str, value: Any) -> list[str]:
    if value is None or value == "" or value == []:
        return []
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, indent=2)
    return [f"--- {title} ---", view_body(text)]  # the run's text: no line of it passes for a header


def _conversation(messages: list[Any]) -> str:
    """Messages as `role: text` lines; tool calls and results as JSON."""
    out = []
    for message in messages:
        if not isinstance(message, dict):
            continue
        for part in message.get("content") or []:
            if not isinstance(part, dict):
                continue
            body = part["text"] if isinstance(part.get("text"), str) else json.dumps(
                {k: v for k, v in part.items() if k != "metadata"}, ensure_ascii=False)
            out.append(f"{message.get('role')}: {body}")
    return "\n".join(out)
