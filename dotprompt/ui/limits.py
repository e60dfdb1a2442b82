"""The workbench's bounds: what one request, stream or view may hold, and how many runs it keeps."""

from __future__ import annotations

from typing import Final

__all__ = [
    "UI_CHANGES_POLL_SECONDS",
    "UI_HEARTBEAT_SECONDS",
    "UI_KEEP_RUNS",
    "UI_MAX_ACTIVE_RUNS",
    "UI_MAX_BODY",
    "UI_MAX_DEPTH",
    "UI_MAX_ITEMS",
    "UI_MAX_LIMIT",
    "UI_MAX_REPORT_BYTES",
    "UI_MAX_STRING",
    "UI_ORPHAN_GRACE_SECONDS",
]

UI_MAX_BODY: Final = 10_000_000
"""Bytes a workbench POST may send (inputs are JSON typed into a page)."""

UI_CHANGES_POLL_SECONDS: Final = 1.0
"""How often the workbench looks for changed prompt files."""

UI_MAX_REPORT_BYTES: Final = 50_000_000
"""An eval report larger than this is not opened in the workbench."""

UI_KEEP_RUNS: Final = 64
"""Live runs the workbench keeps for their streams; older ones are forgotten (the run log keeps them)."""

UI_MAX_ACTIVE_RUNS: Final = 8
"""Live runs the workbench streams at once; one more is refused (429) until one ends or is cancelled."""

UI_ORPHAN_GRACE_SECONDS: Final = 10.0
"""A live run no page has followed for this long (its tab closed) is cancelled, its provider stream closed."""

UI_HEARTBEAT_SECONDS: Final = 15.0
"""Seconds between keep-alive events on a quiet workbench stream."""

UI_MAX_LIMIT: Final = 1000
"""The most run-log entries one workbench request lists."""

UI_MAX_DEPTH: Final = 40
"""How deep a value the workbench sends is shown; deeper levels are cut, saying so."""

UI_MAX_STRING: Final = 200_000
"""The longest string the workbench sends whole; the rest is cut, saying how much."""

UI_MAX_ITEMS: Final = 5_000
"""Keys or items of one container the workbench sends; the rest are cut, saying how many."""
