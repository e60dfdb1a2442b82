"""The run log for the page: the list (filtered, searched) and one run whole, from `observe/runlog.py`.

The log stores its text redacted already; the answers are cleaned again on the way out (safejson), so
a key configured after a run was logged is hidden too.
"""

from __future__ import annotations

import datetime
import json
from pathlib import Path
from typing import Any

from ..errors import UsageError
from ..grounding import cited_sources
from ..observe.runlog import LogQuery, get_run, list_runs, search_runs
from ..settings import project_root
from .limits import UI_MAX_LIMIT as MAX_LIMIT

__all__ = ["FILTERS", "MAX_LIMIT", "SUMMARY", "run", "runs"]

SUMMARY = ("id", "started", "source", "prompt", "variant", "model", "status", "error_type", "finish_reason",
           "input_tokens", "output_tokens", "cost", "latency_ms", "project")
FILTERS = ("prompt", "model", "status", "source")


def runs(path: Path | None, params: dict[str, str]) -> dict[str, Any]:
    if path is None:
        return {"log": None, "runs": [], "indexed": False}
    try:
        limit = max(1, min(int(params.get("limit") or 100), MAX_LIMIT))  # -1 would be SQLite's "no limit"
    except ValueError:
        raise UsageError(f"limit: not a whole number {params['limit'][:40]!r}") from None
    filters = {k: params.get(k) or None for k in FILTERS}
    # This project's runs, as `dotprompt logs` lists them; `all=1` for every project's (and the older runs without one).
    project = None if params.get("all") not in (None, "", "0", "false") else str(project_root())
    query = LogQuery(prompt=filters["prompt"], model=filters["model"], status=filters["status"], source=filters["source"],
                     project=project, since=_date(params.get("since")), limit=limit)
    text = (params.get("q") or "").strip()
    found, indexed = search_runs(path, text, query) if text else (list_runs(path, query), True)
    return {"log": path.name, "indexed": indexed, "project": project, "runs": [_summary(r) for r in found]}


def run(path: Path | None, run_id: int) -> dict[str, Any] | None:
    try:
        found = get_run(path, run_id) if path is not None else None
    except RecursionError:  # a logged value nested past what the JSON decoder follows
        raise UsageError(f"run {run_id} holds a value nested too deeply to show") from None
    if found is None:
        return None
    response = found.get("response")
    if isinstance(response, dict) and isinstance(response.get("grounding"), dict):
        # The texts the grounding's spans point into, for the page to highlight them in.
        found["grounding_sources"] = cited_sources(response["grounding"], found.get("input"))
    return found


def _summary(row: dict[str, Any]) -> dict[str, Any]:
    out = {k: row.get(k) for k in SUMMARY}
    output = row.get("output")
    if output is not None:
        out["preview"] = (output if isinstance(output, str) else json.dumps(output, ensure_ascii=False, default=str))[:200]
    if row.get("error"):
        out["error"] = str(row["error"]).splitlines()[0][:300]
    return out


def _date(value: str | None) -> float | None:
    if not value:
        return None
    try:
        return datetime.datetime.fromisoformat(value).timestamp()
    except ValueError:
        raise UsageError(f"since: not a date {value[:40]!r} (YYYY-MM-DD)") from None
