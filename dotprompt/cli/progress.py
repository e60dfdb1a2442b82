"""What a command shows on a terminal while the model works: a spinner with the elapsed time, a case
counter, or the reply as it streams. All of it goes to stderr and only when stderr is a terminal,
and all of it is erased when the work ends: stdout keeps only the result, and CI logs stay plain.
"""

from __future__ import annotations

import contextlib
import sys
import time
from collections.abc import Callable, Iterator
from typing import Any

from .._util.escape import terminal
from .._util.redact import known_secrets, redact, unsafe_tail

__all__ = ["StreamView", "case_progress", "elapsed_status", "on_terminal"]


def on_terminal() -> bool:
    return sys.stderr.isatty()


def _console() -> Any:
    from rich.console import Console

    return Console(file=sys.stderr)


@contextlib.contextmanager
def elapsed_status(label: str) -> Iterator[None]:
    """`⠋ running extract  0:00:07` on stderr while the block runs, when stderr is a terminal."""
    if not on_terminal():
        yield
        return
    from rich.progress import Progress, SpinnerColumn, TextColumn, TimeElapsedColumn

    # Not redirected: rich would otherwise print what goes to stdout on stderr, above its view.
    with Progress(SpinnerColumn(), TextColumn("{task.description}"), TimeElapsedColumn(), console=_console(),
                  transient=True, redirect_stdout=False, redirect_stderr=False) as progress:
        progress.add_task(label, total=None)
        yield


@contextlib.contextmanager
def case_progress(total: int, label: str) -> Iterator[Callable[[Any], None]]:
    """A bar `label ━━━━ 3/8 0:00:41` on a terminal; yields the function to call as each case ends."""
    if not on_terminal():
        yield lambda result: None
        return
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, SpinnerColumn, TextColumn, TimeElapsedColumn

    with Progress(SpinnerColumn(), TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(),
                  TimeElapsedColumn(), console=_console(), transient=True, redirect_stdout=False,
                  redirect_stderr=False) as progress:
        task = progress.add_task(label, total=total)
        yield lambda result: progress.advance(task)


class StreamView:
    """The reply as it streams. On a terminal: a live region on stderr (the text so far, under a line
    with the elapsed time), erased at the end so the final output is printed once. Elsewhere: the
    raw text on stderr, beside the final output on stdout. Known secrets are masked as the text
    accumulates, and an end that could begin one is held back until the next piece shows what it is:
    a key the model repeats never shows, even split across two chunks (as in the workbench)."""

    def __init__(self, label: str) -> None:
        self.label = label
        self._secrets: list[str] | None = None  # read at the first piece: the model remembers its key when built
        self._held = ""  # redacted text that could still be the start of a secret
        self._pieces: list[str] = []  # joined only when drawn (8 times a second), not once per chunk
        self._length = 0
        self.started = time.monotonic()
        self.live: Any = None

    @property
    def text(self) -> str:
        """The text so far (escaped for the terminal)."""
        if len(self._pieces) > 1:
            self._pieces[:] = ["".join(self._pieces)]
        return self._pieces[0] if self._pieces else ""

    def __enter__(self) -> StreamView:
        if on_terminal():
            from rich.live import Live

            # stdout is left alone: it is where the result goes, not a line above the live view.
            self.live = Live(self._view(), console=_console(), transient=True, auto_refresh=True,
                             refresh_per_second=8, get_renderable=self._view, redirect_stdout=False,
                             redirect_stderr=False)
            self.live.__enter__()
        return self

    def __exit__(self, *exc: object) -> None:
        if self._held:
            self._show(self._held)
            self._held = ""
        if self.live is not None:
            self.live.__exit__(None, None, None)
        elif self._length:
            print(file=sys.stderr)

    def add(self, text: str) -> None:
        if self._secrets is None:
            self._secrets = known_secrets()
        text = redact(self._held + text, self._secrets)
        cut = unsafe_tail(text, self._secrets)
        self._held = text[len(text) - cut:]
        if cut < len(text):
            self._show(text[:len(text) - cut])

    def _show(self, text: str) -> None:
        text = terminal(text)  # model text: an escape sequence in it must not reach the terminal
        pieces = self._pieces
        pieces.append(text)
        self._length += len(text)
        if len(pieces) > 32:  # merged as they come: each character is copied O(log n) times, not once per chunk
            pieces[-16:] = ["".join(pieces[-16:])]
            while len(pieces) > 1 and len(pieces[-1]) >= len(pieces[-2]):
                last = pieces.pop()
                pieces[-1] += last
        if self.live is None:
            print(text, end="", file=sys.stderr, flush=True)

    def _view(self) -> Any:
        from rich.text import Text

        seconds = time.monotonic() - self.started
        head = Text(f"{self.label} ({seconds:.0f} s, {self._length} characters)\n", style="dim")
        return head + Text(self.text)
