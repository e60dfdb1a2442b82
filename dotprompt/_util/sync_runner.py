"""Sync code's way into the async core: one event loop per thread, kept from call to call.

`asyncio.run` per call made a new loop each time, and the HTTP clients pooled per loop with it: every
sync call opened a new connection (a TCP and TLS handshake against a provider). Here each thread keeps
an `asyncio.Runner` (its loop) for all its calls, so its connections stay open between them (httpx's
`Client` beside `AsyncClient`). What `asyncio.run` gave is kept: the call runs in a copy of the
caller's context, Ctrl-C cancels it, and tasks it left behind are cancelled when it returns.

Inside a running loop (Jupyter, or a sync tool inside a sync call) a loop cannot be run in the same
thread: the call goes to one helper thread, which keeps its loop too. A call made in that helper thread
itself (nested) gets a fresh thread and loop, as before. After a fork the child starts with no loops:
the parent's, and their connections, are never used across processes.
"""

from __future__ import annotations

import asyncio
import atexit
import concurrent.futures
import contextvars
import os
import threading
from collections.abc import Coroutine
from typing import Any, TypeVar

__all__ = ["run_sync"]

T = TypeVar("T")


class _Kept:
    """A thread's runner; closed when the thread's locals go (the thread ended) or at exit."""

    def __init__(self) -> None:
        self.runner = asyncio.Runner()
        self.loop = self.runner.get_loop()
        self.pid = os.getpid()

    def close(self) -> None:
        if os.getpid() != self.pid:
            # A forked child's copy: its selector is the parent's (epoll), whose registrations closing would remove.
            return
        try:
            self.runner.close()  # ends async generators and the loop's executor, then closes the loop
        except RuntimeError:  # closed from a thread whose own loop is running: close the loop alone
            if not self.loop.is_running():
                self.loop.close()

    def __del__(self) -> None:
        self.close()


class _Loops(threading.local):
    kept: _Kept | None = None


_loops = _Loops()
_helper_lock = threading.Lock()
_helper: concurrent.futures.ThreadPoolExecutor | None = None
_HELPER_NAME = "dotprompt-sync"


def run_sync(coro: Coroutine[Any, Any, T]) -> T:
    """Run a coroutine to completion from sync code, even inside a running event loop (Jupyter)."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return _run_here(coro, contextvars.copy_context())
    context = contextvars.copy_context()
    if threading.current_thread().name.startswith(_HELPER_NAME):  # nested in the helper: it is busy with our caller
        with concurrent.futures.ThreadPoolExecutor(1, thread_name_prefix="dotprompt-sync-nested") as pool:
            return pool.submit(asyncio.run, _in_context(coro, context)).result()
    return _helper_pool().submit(_run_here, coro, context).result()


def _run_here(coro: Coroutine[Any, Any, T], context: contextvars.Context) -> T:
    # The context is always given: without it the Runner would reuse the one it copied when made.
    kept = _loops.kept
    if kept is None:
        kept = _loops.kept = _Kept()
        if threading.current_thread() is threading.main_thread():
            atexit.register(_close_at_exit, kept)
    try:
        return kept.runner.run(coro, context=context)
    finally:
        _cancel_leftovers(kept.loop)


def _cancel_leftovers(loop: asyncio.AbstractEventLoop) -> None:
    """Cancel (and wait for) the tasks a call left running, as `asyncio.run` does when it ends."""
    tasks = asyncio.all_tasks(loop)
    if not tasks:
        return
    for task in tasks:
        task.cancel()
    loop.run_until_complete(asyncio.gather(*tasks, return_exceptions=True))
    for task in tasks:
        if not task.cancelled() and task.exception() is not None:
            loop.call_exception_handler({"message": "unhandled exception in a task left by a sync call",
                                         "exception": task.exception(), "task": task})


def _close_at_exit(kept: _Kept) -> None:
    if _loops.kept is kept:
        _loops.kept = None
    kept.close()


async def _in_context(coro: Coroutine[Any, Any, T], context: contextvars.Context) -> T:
    return await asyncio.get_running_loop().create_task(coro, context=context)


def _helper_pool() -> concurrent.futures.ThreadPoolExecutor:
    # One worker: its thread keeps one loop, so the calls of a notebook share their connections.
    global _helper
    with _helper_lock:
        if _helper is None:
            _helper = concurrent.futures.ThreadPoolExecutor(1, thread_name_prefix=_HELPER_NAME)
        return _helper


def _forget_after_fork() -> None:
    """In a forked child: the parent's loops (their selectors, their open connections) are not ours to use,
    nor to close (`_Kept.close` leaves them)."""
    global _helper, _loops, _helper_lock
    _loops = _Loops()
    _helper, _helper_lock = None, threading.Lock()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_forget_after_fork)
