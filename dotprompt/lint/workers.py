"""Slices of work run in worker processes: forked where the platform can, the parent's heap frozen.

Forked workers start with everything the parent imported and built, so they can work on one object
of the parent's as it is (`shared`, read back with `inherited()`): for `dotprompt check`, the library
with whatever the application defined in code. A fork is safe only while no other thread runs
(`forkable`): one could hold a lock that the workers' copies would keep forever. While the workers
run, what the parent holds is frozen for their garbage collector (`gc.freeze`): their full
collections skip it (one took ~30 ms of a worker's half-second) and leave its memory pages shared,
not copied. Where there is no fork, each worker starts afresh and `inherited()` is None: the work
rebuilds its state from what its slice carries.
"""

from __future__ import annotations

import gc
import threading
from collections.abc import Callable, Sequence
from typing import Any, TypeVar

__all__ = ["can_fork", "forkable", "inherited", "map_in_workers"]

Slice = TypeVar("Slice")
Result = TypeVar("Result")

# The object forked workers work on: set in the parent just before they start, so they inherit it.
_SHARED: Any = None


def can_fork() -> bool:
    import multiprocessing  # with concurrent.futures: only work large enough to split loads them

    return "fork" in multiprocessing.get_all_start_methods()


def forkable() -> bool:
    """Workers forked now would see the parent as it is, safely: no other thread runs."""
    return threading.active_count() == 1 and can_fork()


def inherited() -> Any:
    """In a forked worker, the `shared` object of `map_in_workers`; None anywhere else."""
    return _SHARED


def map_in_workers(work: Callable[[Slice], Result], slices: Sequence[Slice], *, jobs: int,
                   shared: Any = None) -> list[Result]:
    """`[work(s) for s in slices]`, each call in one of `jobs` worker processes, results in order.
    `work` is a module-level function (a spawned worker imports it by name)."""
    global _SHARED
    import concurrent.futures
    import multiprocessing

    method = "fork" if can_fork() else None
    _SHARED = shared if method == "fork" else None
    # Not when the application froze objects itself: unfreezing afterwards would undo its freeze.
    freeze = method == "fork" and gc.get_freeze_count() == 0
    if freeze:
        gc.freeze()
    try:
        with concurrent.futures.ProcessPoolExecutor(jobs, mp_context=multiprocessing.get_context(method)) as pool:
            return list(pool.map(work, slices))
    finally:
        _SHARED = None
        if freeze:
            gc.unfreeze()  # the parent's own collector sees its objects again
