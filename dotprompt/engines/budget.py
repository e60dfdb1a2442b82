"""The render budget while a render runs: a meter both template engines charge text and time to.

One job: `metering(budget)` makes a meter current for one render (a context variable, so threads
and tasks rendering at once each have their own); the engines call `spend`, `tick` and `check_size`
from their loops, calls and output, and `BudgetExceededError` stops the render where it is. `Prompt.render`
turns it into a RenderError naming the file and the template line. Nothing here knows either engine.
"""

from __future__ import annotations

import time
from contextvars import ContextVar

from ..settings import RENDER_MAX_CHARS, RenderBudget
from .limits import RENDER_MAX_INT_BITS

__all__ = ["TICK_EVERY", "BudgetExceededError", "Meter", "check_int_bits", "check_size", "current", "max_chars", "metering"]

HINT = ("a template may produce at most max_chars characters in max_seconds seconds; if this prompt really "
        "needs more, raise them: PromptLibrary(render_budget={...}), [tool.dotprompt] render_max_chars / "
        "render_max_seconds, or $DOTPROMPT_RENDER_MAX_CHARS / $DOTPROMPT_RENDER_MAX_SECONDS")


class BudgetExceededError(Exception):
    """A render went past its budget; `line` is the template line when the engine knows it."""

    def __init__(self, message: str, line: int | None = None) -> None:
        super().__init__(message)
        self.line = line


TICK_EVERY = 128  # steps (loop items, output pieces) between two looks at the clock


class Meter:
    """Text produced and the deadline of one render."""

    __slots__ = ("budget", "chars", "deadline", "max_chars", "steps")

    def __init__(self, budget: RenderBudget) -> None:
        self.budget = budget
        self.max_chars = budget.max_chars
        self.chars = 0
        self.steps = TICK_EVERY
        self.deadline = time.monotonic() + budget.max_seconds

    def step(self) -> None:
        """One step of work (a loop item, a piece of output): every TICK_EVERY steps, the clock."""
        self.steps -= 1
        if self.steps <= 0:
            self.steps = TICK_EVERY
            self.tick()

    def tick(self) -> None:
        """Past the deadline raises."""
        if time.monotonic() > self.deadline:
            raise BudgetExceededError(f"render budget exceeded: the render took more than {self.budget.max_seconds:g} "
                                 f"seconds (max_seconds)")

    def spend(self, chars: int) -> None:
        """Count `chars` of output; past the budget (size or time) raises."""
        self.chars += chars
        if self.chars > self.max_chars:
            raise BudgetExceededError(f"render budget exceeded: the output is over {self.max_chars:,} characters "
                                      f"(max_chars)")
        self.steps -= 1
        if self.steps <= 0:
            self.steps = TICK_EVERY
            self.tick()

    def check_size(self, size: int, what: str = "text") -> None:
        """A text or list the template is about to build (or just built) of `size` items."""
        if size > self.budget.max_chars:
            raise BudgetExceededError(_too_big(what, size, self.max_chars))


_CURRENT: ContextVar[Meter | None] = ContextVar("dotprompt_render_meter", default=None)


def current() -> Meter | None:
    return _CURRENT.get()


def max_chars() -> int:
    """The size limit in force: the current render's, else the default (rendering outside a Prompt)."""
    meter = _CURRENT.get()
    return meter.budget.max_chars if meter is not None else RENDER_MAX_CHARS


def check_size(size: int, what: str = "text") -> None:
    """`Meter.check_size` of the current render, or against the default limit outside one."""
    meter = _CURRENT.get()
    if meter is not None:
        meter.check_size(size, what)
    elif size > RENDER_MAX_CHARS:
        raise BudgetExceededError(_too_big(what, size, RENDER_MAX_CHARS))


def _too_big(what: str, size: int, limit: int) -> str:
    unit = "items" if what == "a list" else "characters"
    return f"render budget exceeded: this would build {what} of {size:,} {unit}, over {limit:,} (max_chars)"


def check_int_bits(bits: float) -> None:
    if bits > RENDER_MAX_INT_BITS:
        raise BudgetExceededError(f"render budget exceeded: this would compute a number of about {int(bits * 0.30103):,} "
                             f"digits; templates may compute numbers of up to {int(RENDER_MAX_INT_BITS * 0.30103):,}")


class metering:  # noqa: N801 - used like a function: `with metering(budget):`
    """Make a fresh meter for `budget` current for the duration of one render.

    A class rather than a generator-based context manager: it runs on every render, and costs a
    third as much."""

    __slots__ = ("meter", "token")

    def __init__(self, budget: RenderBudget) -> None:
        self.meter = Meter(budget)

    def __enter__(self) -> Meter:
        self.token = _CURRENT.set(self.meter)
        return self.meter

    def __exit__(self, *exc: object) -> None:
        _CURRENT.reset(self.token)
