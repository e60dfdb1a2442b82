"""Analyses off the server's event loop: one worker thread, the newest text of each file wins.

An edit that arrives while its file is being analysed stops that analysis (it is stale) and queues
the new text; edits arriving faster than analysis coalesce, each file analysed once for its newest
version. The debounce holds back only an edit that follows another of its file closely (a burst of
keystrokes, a paste in pieces): the first edit after a quiet spell is analysed at once, so a lone
change is not kept waiting. An analysis that runs past its time limit is stopped and reported; the server stays up.
Stopping is an exception raised inside the worker thread (`PyThreadState_SetAsyncExc`): it lands
at the next Python instruction the analysis runs, and derives from BaseException so that no
`except Exception` of the analysed code swallows it. The library an analysis was stopped inside is
dropped (`on_stop`), since the stop may have come half-way through filling one of its caches.
"""

from __future__ import annotations

import ctypes
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

__all__ = ["Analyser", "Job", "Stopped", "Superseded", "TimedOut", "call_with_limit"]


class Stopped(BaseException):  # BaseException: no `except Exception` of the analysed code swallows it
    """An analysis stopped from outside its thread."""


class Superseded(Stopped):
    """A newer text of the file arrived."""


class TimedOut(Stopped):
    """The analysis ran past its time limit."""


@dataclass
class Job:
    key: str
    version: int | None
    text: str | None
    queued: float = field(default_factory=time.monotonic)
    ready: float = 0.0  # when it may start: set by `Analyser.submit` (the debounce)


class Analyser:
    """Runs `analyse(job)` for each submitted job on one worker thread; `publish(job, result)` gets what
    it returned, `report(job, seconds)` hears of one that ran past `timeout` seconds."""

    def __init__(self, analyse: Callable[[Job], Any], publish: Callable[[Job, Any], None],
                 report: Callable[[Job, float], None], *, timeout: float = 5.0, debounce: float = 0.0,
                 on_stop: Callable[[], None] = lambda: None) -> None:
        self._analyse, self._publish, self._report, self._on_stop = analyse, publish, report, on_stop
        self.timeout, self.debounce = timeout, debounce
        self._pending: dict[str, Job] = {}
        self._last_edit: dict[str, float] = {}  # per file, when its last job was submitted
        self._running: Job | None = None
        self._lock = threading.Condition()
        self._closed = False
        self._started = 0.0
        self._thread = threading.Thread(target=self._work, name="dotprompt-lsp-analysis", daemon=True)
        self._thread.start()
        threading.Thread(target=self._watch, name="dotprompt-lsp-watchdog", daemon=True).start()

    def submit(self, job: Job) -> None:
        """Queue `job`, replacing a queued older one of its file and stopping a running one."""
        with self._lock:
            now = time.monotonic()
            follows_closely = now - self._last_edit.get(job.key, now - self.debounce) < self.debounce
            self._last_edit[job.key] = now
            job.ready = job.queued + self.debounce if follows_closely else job.queued
            self._pending.pop(job.key, None)
            self._pending[job.key] = job  # to the back of the queue
            if self._running is not None and self._running.key == job.key:
                self._interrupt(Superseded)
            self._lock.notify_all()

    def close(self) -> None:
        with self._lock:
            self._closed = True
            self._lock.notify_all()

    def idle(self) -> bool:
        with self._lock:
            return not self._pending and self._running is None

    def _next(self) -> Job | None:
        with self._lock:
            while not self._closed:
                if self._pending:
                    key = min(self._pending, key=lambda k: self._pending[k].ready)  # a held file holds no other
                    wait = self._pending[key].ready - time.monotonic()
                    if wait <= 0:
                        self._running = self._pending.pop(key)
                        self._started = time.monotonic()
                        self._lock.notify_all()  # the watchdog times the new analysis
                        return self._running
                    self._lock.wait(wait)
                else:
                    self._lock.wait()
            return None

    def _work(self) -> None:
        while True:
            try:
                job = self._next()
                if job is None:
                    return
                self._run(job)
            except Stopped:  # landed between two analyses: nothing to stop any more
                continue

    def _run(self, job: Job) -> None:
        try:
            result = self._analyse(job)
            with self._lock:
                self._running = None
            self._publish(job, result)
        except TimedOut:
            self._stopped()
            self._report(job, time.monotonic() - self._started)
        except Superseded:
            self._stopped()
        finally:
            with self._lock:
                self._running = None

    def _stopped(self) -> None:
        with self._lock:
            self._running = None
        self._on_stop()

    def _watch(self) -> None:
        """The watchdog: stops the running analysis once it is `timeout` seconds old."""
        with self._lock:
            while not self._closed:
                job = self._running
                if job is None:
                    self._lock.wait()
                    continue
                left = self._started + self.timeout - time.monotonic()
                if left > 0:
                    self._lock.wait(left)
                elif self._running is job:
                    self._interrupt(TimedOut)

    def _interrupt(self, kind: type[Stopped]) -> None:
        """Raise `kind` inside the worker thread (called holding the lock, while it runs an analysis)."""
        ident = self._thread.ident
        if ident is not None:
            ctypes.pythonapi.PyThreadState_SetAsyncExc(ctypes.c_ulong(ident), ctypes.py_object(kind))
            self._running = None  # stopped once: a second edit does not stop the next analysis


def call_with_limit(function: Callable[[], Any], seconds: float) -> Any:
    """`function()` on a thread of its own, stopped (TimedOut raised inside it) after `seconds`; then
    TimeoutError here. For a request that may compile a hostile file (the render preview)."""
    outcome: dict[str, Any] = {}

    def run() -> None:
        try:
            outcome["value"] = function()
        except TimedOut:
            outcome["stopped"] = True
        except BaseException as exc:  # handed to the caller, raised there
            outcome["error"] = exc

    worker = threading.Thread(target=run, name="dotprompt-lsp-request", daemon=True)
    worker.start()
    worker.join(seconds)
    if worker.is_alive() and worker.ident is not None:
        ctypes.pythonapi.PyThreadState_SetAsyncExc(ctypes.c_ulong(worker.ident), ctypes.py_object(TimedOut))
        worker.join(1.0)
    if "value" in outcome:
        return outcome["value"]
    if "error" in outcome:
        raise outcome["error"]
    raise TimeoutError(f"stopped after {seconds:g} s")
