"""What `dotprompt run` says about grounding on stderr: each ungrounded value always, every span with
`--grounding`. Coloured on a terminal (unless NO_COLOR is set), plain otherwise (CI logs, pipes)."""

from __future__ import annotations

import json
import os
from typing import Any, TextIO

__all__ = ["show_grounding"]

_STYLES = {"ungrounded": "\033[1;31m", "fuzzy": "\033[33m", "normalised": "\033[36m", "exact": "\033[32m",
           "not_applicable": "\033[2m"}
_RESET = "\033[0m"
_SHOWN = 60  # characters of a value or a span's text shown


def show_grounding(grounding: Any, stream: TextIO, *, spans: bool) -> None:
    """One line per ungrounded value (and, with `spans`, per value: its status and where it is)."""
    if grounding is None:
        if spans:
            print("grounding: off for this run (output.grounding, or an output that is not JSON with a schema)",
                  file=stream)
        return
    colour = stream.isatty() and not os.environ.get("NO_COLOR")
    missing = grounding.ungrounded
    if missing:
        print(f"grounding: {len(missing)} of {len(grounding)} value(s) not found in the input:", file=stream)
    for field in grounding.values() if spans else missing:
        print("  " + _line(field, colour), file=stream)
    if grounding.skipped:
        print(f"grounding: {grounding.skipped}", file=stream)


def _line(field: Any, colour: bool) -> str:
    status = field.status.replace("_", " ")
    if colour:
        status = f"{_STYLES[field.status]}{status}{_RESET}"
    where = ", ".join(f"{s.variable}[{s.start}:{s.end}] {_short(s.text)}" for s in field.spans)
    detail = where or field.reason or ("not in the input" if field.status == "ungrounded" else "")
    score = f" (score {field.score})" if field.score is not None else ""
    return f"{field.path} = {_short(field.value)}  {status}{score}" + (f"  {detail}" if detail else "")


def _short(value: Any) -> str:
    text = json.dumps(value, ensure_ascii=False)
    return text if len(text) <= _SHOWN else text[:_SHOWN - 3] + "..."
