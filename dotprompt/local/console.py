"""What the terminal shows about the local model: `dotprompt local status` and setup's progress.

Setup progress is drawn from the `SetupEvent`s that `setup()` reports: on a terminal, one redrawn
line with a ticking clock; in a CI log, plain lines. The build itself (`setup.py`) knows
nothing of terminals: it calls whatever progress callback it is given.
"""

from __future__ import annotations

import re
import sys
import threading
import time
from typing import TextIO

from .catalog import CATALOG
from .paths import LocalPaths, local_paths
from .setup import SetupEvent

__all__ = ["ConsoleProgress", "clock", "human_size", "status_lines"]


# -- status ----------------------------------------------------------------------------------------

def status_lines(paths: LocalPaths | None = None) -> list[str]:
    """What `dotprompt local status` prints: ready or not, then each file with its size."""
    paths = paths or local_paths()
    missing = set(paths.missing())
    head = "ready" if not missing else "not set up: run `dotprompt local setup`"
    lines = [f"local model {paths.spec.model_name}: {head}", f"folder: {paths.root}"]
    for label, path in (("server", paths.server), ("model", paths.model), ("template", paths.template)):
        size = "missing" if path in missing else human_size(path.stat().st_size)
        lines.append(f"{label}: {path} ({size})")
    if paths.server_stamp.is_file():
        lines.append(f"built from: {paths.server_stamp.read_text(encoding='utf-8').strip()}")
    for spec in CATALOG.values():
        other = paths.root / "model" / spec.file
        if spec.name != paths.spec.name and other.is_file():
            lines.append(f"also fetched: {spec.model_name}: {other} ({human_size(other.stat().st_size)})")
    return lines


def human_size(size: float) -> str:
    for unit in ("B", "KB", "MB", "GB"):
        if size < 1000 or unit == "GB":
            return f"{size:.0f} {unit}" if unit == "B" else f"{size:.1f} {unit}"
        size /= 1000
    raise AssertionError("unreachable")


# -- setup progress ---------------------------------------------------------------------------------

class ConsoleProgress:
    """Renders setup events: one redrawn line with a ticking clock on a terminal, plain lines in CI logs."""

    def __init__(self, stream: TextIO | None = None, *, live: bool | None = None, quiet_every: float = 30.0) -> None:
        self.stream = stream or sys.stderr
        self.live = self.stream.isatty() if live is None else live
        self.quiet_every = quiet_every  # how often a plain log gets a "still working" line
        self._event: SetupEvent | None = None
        self._since = 0.0
        self._last_plain = 0.0
        self._last_phase = ""
        self._stop = threading.Event()
        self._lock = threading.Lock()
        self._ticker: threading.Thread | None = None
        self.durations: list[tuple[str, float | None]] = []

    def __enter__(self) -> ConsoleProgress:
        # A terminal's line ticks every second; a log gets a line whenever a step has been quiet for
        # `quiet_every` seconds (pip building its build dependencies prints nothing for minutes).
        self._ticker = threading.Thread(target=self._tick, name="dotprompt-setup-progress", daemon=True)
        self._ticker.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        if self._ticker is not None:
            self._ticker.join()
        with self._lock:
            if self.live and self._event is not None and self._event.state in ("start", "update"):
                self.stream.write("\n")  # leave the interrupted step's line visible
            self.stream.flush()

    def __call__(self, event: SetupEvent) -> None:
        with self._lock:
            self._event, self._since = event, time.monotonic() - event.elapsed
            if event.state in ("done", "skip"):
                self.durations.append((event.title, event.elapsed if event.state == "done" else None))
            if self.live:
                self._draw(event.elapsed, final=event.state in ("done", "skip"))
            else:
                self._plain(event)

    def _tick(self) -> None:
        while not self._stop.wait(1.0 if self.live else min(self.quiet_every, 1.0)):
            with self._lock:
                if self._event is None or self._event.state not in ("start", "update"):
                    continue
                elapsed = time.monotonic() - self._since
                if self.live:
                    self._draw(elapsed, final=False)
                elif time.monotonic() - self._last_plain >= self.quiet_every:
                    self._last_plain = time.monotonic()
                    self.stream.write(self._line(self._event, elapsed, still=True) + "\n")
                    self.stream.flush()

    def summary(self) -> str:
        """Each step's duration, for the closing line: `build llama-server 21 min 03 s, ...`."""
        return ", ".join(f"{title} {clock(seconds) if seconds is not None else 'already done'}"
                         for title, seconds in self.durations)

    def _draw(self, elapsed: float, *, final: bool) -> None:
        assert self._event is not None
        self.stream.write(f"\r\033[K{self._line(self._event, elapsed)}" + ("\n" if final else ""))
        self.stream.flush()

    def _plain(self, event: SetupEvent) -> None:
        # A CI log gets each new phase, and a "still working" line at most every `quiet_every` seconds.
        now, phase = time.monotonic(), re.sub(r"\d+", "#", event.detail)
        if event.state == "update" and phase == self._last_phase and now - self._last_plain < self.quiet_every:
            return
        self._last_plain, self._last_phase = now, phase
        self.stream.write(self._line(event, event.elapsed) + "\n")
        self.stream.flush()

    @staticmethod
    def _line(event: SetupEvent, elapsed: float, *, still: bool = False) -> str:
        # Times are how long the step has run so far, never a time of day.
        head = f"[{event.index}/{event.total}] {event.title}"
        if event.state == "skip":
            return f"{head}: already done"
        if event.state == "done":
            return f"{head}: done in {clock(elapsed)}"
        detail = event.detail if event.state == "update" and event.detail else "working"
        if event.state == "start" and elapsed < 1:
            return f"{head} ..."
        return f"{head}: {'still ' if still else ''}{detail}, {clock(elapsed)} so far"


def clock(seconds: float) -> str:
    seconds = max(seconds, 0.0)
    if seconds < 60:
        return f"{seconds:.1f} s" if seconds < 10 else f"{seconds:.0f} s"
    minutes, rest = divmod(int(seconds), 60)
    return f"{minutes} min {rest:02d} s"
