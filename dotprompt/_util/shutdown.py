"""How a dotprompt process ends on SIGTERM: like `sys.exit`, so cleanup runs.

Python's default on SIGTERM (what `timeout`, `kill`, systemd and CI runners send) is to die at once,
skipping atexit handlers and `finally` blocks; the local llama-server's clean stop (local/server.py)
is such a handler. The kernel still kills that server on Linux, but its log then stays behind.
"""

from __future__ import annotations

import signal
import threading

__all__ = ["exit_on_sigterm"]


def exit_on_sigterm() -> bool:
    """Make SIGTERM end this process as `sys.exit(143)` would. True when installed.

    Only from the main thread, and only when nobody else handles SIGTERM: a library must not take over
    an application's signals, so the CLI calls this, not the first request to a model."""
    if threading.current_thread() is not threading.main_thread():
        return False
    if signal.getsignal(signal.SIGTERM) is not signal.SIG_DFL:
        return False
    signal.signal(signal.SIGTERM, _exit_on_signal)
    return True


def _exit_on_signal(signum: int, frame: object) -> None:
    # A second SIGTERM during the cleanup then kills at once (the kernel still stops the server).
    signal.signal(signum, signal.SIG_DFL)
    raise SystemExit(128 + signum)
