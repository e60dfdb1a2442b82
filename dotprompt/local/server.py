"""The llama-server process behind `local/...` models: started on first use, stopped at exit.

One server per process and folder (`shared_server`), started under a lock so concurrent first
requests start it once. It dies with this process however this process ends: `stop_all` runs at
exit (and on SIGTERM where `shutdown.exit_on_sigterm` was called, as the CLI does), and on Linux the kernel
kills the server when this process is killed outright (SIGKILL, an unhandled SIGTERM, a crash);
see `death_signal_hook`. Elsewhere a killed parent leaves its server running until it is stopped
by hand: there is no portable parent-death signal, and llama-server watches no pipe.

It listens on a free loopback port and answers only requests carrying a
random key made for this process, so other local users and web pages cannot drive it. Its output
goes to a log file under `<local dir>/logs/`, kept when the server fails and removed after a clean stop.
"""

from __future__ import annotations

import atexit
import concurrent.futures
import contextlib
import ctypes
import os
import queue
import secrets
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import IO, Any, Final, Literal, TypeVar

import httpx

from .. import settings
from ..errors import ModelError
from .paths import LocalPaths
from .setup import cpu_count, log_tail

__all__ = ["LOCAL_LOGS_KEPT", "LlamaServer", "death_signal_hook", "default_threads", "free_port", "in_spawner_thread",
           "prune_logs", "shared_server", "stop_all"]

LOCAL_LOGS_KEPT: Final = 20
"""llama-server logs kept under `<local dir>/logs/` from servers that did not stop cleanly (failed, or
their process was killed); older ones are removed when a server starts."""

CONTEXT = 4096
PORT_ATTEMPTS = 3
PR_SET_PDEATHSIG = 1  # from <linux/prctl.h>
T = TypeVar("T")


def default_threads() -> int:
    """$DOTPROMPT_LOCAL_THREADS, else every core this process may use but one (at least one)."""
    return settings.local_threads(cpu_count())


def free_port(host: str = "127.0.0.1") -> int:
    """A port nobody listens on right now (the OS picks it; another process may still take it first)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind((host, 0))
        return int(sock.getsockname()[1])


class LlamaServer:
    """One llama-server process serving the local model on 127.0.0.1."""

    def __init__(self, paths: LocalPaths, *, threads: int | None = None, context: int = CONTEXT,
                 startup_timeout: float = 60.0, extra_args: Sequence[str] = ()) -> None:
        self.paths = paths
        self.extra_args = list(extra_args)
        self.threads = threads or default_threads()
        self.context = context
        self.startup_timeout = startup_timeout
        self.api_key = secrets.token_urlsafe(24)
        self.port: int | None = None
        self.log_path: Path | None = None
        self.process: subprocess.Popen[bytes] | None = None
        self._log: IO[bytes] | None = None
        self._stopped = False
        self._owner = os.getpid()
        self.death_reported = False

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    def command(self, port: int) -> list[str]:
        return [str(self.paths.server), "-m", str(self.paths.model), "--alias", self.paths.spec.name, "--host", "127.0.0.1",
                "--port", str(port), "-c", str(self.context), "-t", str(self.threads), "--jinja",
                "--chat-template-file", str(self.paths.template), "--no-webui", *self.extra_args]

    def alive(self) -> bool:
        # A forked child sees its parent's Popen object; that process is not the child's to use.
        return self.process is not None and self._owner == os.getpid() and self.process.poll() is None

    def start(self) -> LlamaServer:
        """Start the process and wait until /health answers; a failure is a ModelError naming the log."""
        for attempt in range(1, PORT_ATTEMPTS + 1):
            self._spawn(free_port())
            outcome = self._wait_healthy()
            if outcome == "healthy":
                _running.add(self)
                return self
            # The port we picked can be taken between our check and the server's bind: try another.
            if outcome == "exited" and attempt < PORT_ATTEMPTS and "couldn't bind" in log_tail(self.log_path or Path(), 5):
                continue
            self._close_log()
            raise self._start_failure(outcome)
        raise AssertionError("unreachable")

    def _spawn(self, port: int) -> None:
        self.port = port
        self.paths.logs.mkdir(parents=True, exist_ok=True)
        prune_logs(self.paths.logs, LOCAL_LOGS_KEPT)
        self.log_path = self.paths.logs / f"llama-server-{os.getpid()}-{port}.log"
        self._close_log()
        self._log = self.log_path.open("wb")
        # Our arguments must win: drop llama.cpp's own LLAMA_ARG_* settings a user may have exported.
        env = {k: v for k, v in settings.environment().items() if not k.startswith(("LLAMA_ARG_", "LLAMA_API_KEY"))}
        env["LLAMA_API_KEY"] = self.api_key  # in the environment, not argv: argv is visible to every user
        try:
            # A session of its own: Ctrl-C in a terminal or notebook interrupts Python, not the server.
            command, log, hook = self.command(port), self._log, death_signal_hook()
            self.process = in_spawner_thread(lambda: subprocess.Popen(
                command, stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT, env=env,
                start_new_session=True, preexec_fn=hook))
        except OSError as exc:
            raise ModelError(f"cannot start the local llama-server {self.paths.server}: {exc.strerror} "
                             "(run `dotprompt local setup` to rebuild it)", provider="local") from exc

    def _wait_healthy(self) -> Literal["healthy", "exited", "timeout"]:
        deadline = time.monotonic() + self.startup_timeout
        with httpx.Client(timeout=2.0) as client:
            while time.monotonic() < deadline:
                if not self.alive():
                    return "exited"
                with contextlib.suppress(httpx.HTTPError):  # not listening yet, or 503 while loading the model
                    if client.get(f"http://127.0.0.1:{self.port}/health").status_code == 200:
                        return "healthy"
                time.sleep(0.05)
        self._terminate()
        return "timeout"

    def _start_failure(self, outcome: str) -> ModelError:
        code = self.process.poll() if self.process is not None else None
        how = (f"did not answer /health within {self.startup_timeout:g} s" if outcome == "timeout"
               else f"exited with {_exit_text(code)}")
        return ModelError(f"the local llama-server {how} while starting; its log is {self.log_path}\n"
                          f"{log_tail(self.log_path or Path())}", provider="local")

    def death_error(self, during: str, *, partial: object = None) -> ModelError:
        """The error for a server that has died; once it has been raised, `shared_server` replaces it quietly."""
        self.death_reported = True
        code = self.process.poll() if self.process is not None else None
        return ModelError(f"the local llama-server (pid {self.process.pid if self.process else '?'}) died {during} "
                          f"({_exit_text(code)}); its log is {self.log_path}\n{log_tail(self.log_path or Path())}",
                          provider="local", retryable=True, partial=partial)

    def wait_exit(self, timeout: float) -> bool:
        """True when the process has exited within `timeout` seconds."""
        if self.process is None:
            return True
        try:
            self.process.wait(timeout)
        except subprocess.TimeoutExpired:
            return False
        return True

    def stop(self) -> None:
        """Terminate (then kill) the process; the log is removed if the server was healthy until now."""
        if self._stopped:
            return
        self._stopped = True
        _running.discard(self)
        clean = self.alive()
        self._terminate()
        self._close_log()
        if clean and self.log_path is not None:
            self.log_path.unlink(missing_ok=True)

    def _terminate(self) -> None:
        if not self.alive():
            return
        assert self.process is not None
        self.process.terminate()
        if not self.wait_exit(5.0):
            self.process.kill()
            self.process.wait()

    def _close_log(self) -> None:
        if self._log is not None:
            self._log.close()
            self._log = None


def _exit_text(code: int | None) -> str:
    if code is None:
        return "still running"
    if code < 0:
        with contextlib.suppress(ValueError):
            return f"signal {signal.Signals(-code).name}"
    return f"exit status {code}"


# -- dying with this process ------------------------------------------------------------------------

def death_signal_hook() -> Callable[[], None] | None:
    """On Linux, a `preexec_fn` that makes the kernel SIGKILL the server when this process dies; else None.

    SIGKILL rather than SIGTERM: an orphan has nobody to report to, and it must stop generating now.
    The hook runs in the forked child, where another thread may have held a lock at the fork, so
    everything it calls is looked up here in the parent first."""
    if not sys.platform.startswith("linux"):
        return None
    try:
        prctl = ctypes.CDLL(None, use_errno=True).prctl
    except (OSError, AttributeError):
        return None
    # int prctl(int option, unsigned long arg2, ...): a variadic call, so give the widths explicitly.
    prctl.argtypes = [ctypes.c_int, *[ctypes.c_ulong] * 4]
    prctl.restype = ctypes.c_int
    parent = os.getpid()
    kill = int(signal.SIGKILL)
    failed = b"dotprompt: prctl(PR_SET_PDEATHSIG) failed; this server will outlive a killed parent\n"

    def hook() -> None:
        if prctl(PR_SET_PDEATHSIG, kill, 0, 0, 0) != 0:
            os.write(2, failed)  # stderr is the server's log by now
        # The parent may have died between fork and prctl: the signal is then never sent, so go now.
        if os.getppid() != parent:
            os._exit(1)

    return hook


def in_spawner_thread(start: Callable[[], T]) -> T:
    """`start()` run on this process's spawner thread, a daemon that lives as long as the process.

    Linux sends the parent-death signal when the *thread* that forked the child ends, not the
    process: a server forked from a worker (asyncio.to_thread, a thread pool) would be killed as soon
    as that worker retires. A daemon thread is never joined at exit, so the servers are still alive
    when `stop_all` stops them cleanly."""
    global _spawn_jobs
    with _spawn_lock:
        if _spawn_jobs is None:
            _spawn_jobs = queue.SimpleQueue()
            threading.Thread(target=_serve_spawns, args=(_spawn_jobs,), name="dotprompt-llama-spawner",
                             daemon=True).start()
        jobs = _spawn_jobs
    done: concurrent.futures.Future[T] = concurrent.futures.Future()
    jobs.put((start, done))
    return done.result()


def _serve_spawns(jobs: queue.SimpleQueue[tuple[Callable[[], object], concurrent.futures.Future[object]]]) -> None:
    while True:
        start, done = jobs.get()
        try:
            done.set_result(start())
        except BaseException as exc:  # handed to the caller; this thread must live on
            done.set_exception(exc)


def prune_logs(folder: Path, keep: int) -> None:
    """Remove server logs beyond the newest `keep` whose process is gone.

    A clean stop removes its log; a server whose parent was killed cannot, and one that failed keeps
    its log on purpose. Logs of running processes (named `llama-server-PID-PORT.log`) stay."""
    logs = sorted(folder.glob("llama-server-*.log"), key=_mtime, reverse=True)
    for log in logs[keep:]:
        owner = log.name.split("-")[2]
        if owner.isdigit() and not _running_pid(int(owner)):
            log.unlink(missing_ok=True)


def _mtime(path: Path) -> float:
    try:
        return path.stat().st_mtime
    except OSError:  # removed by another process meanwhile
        return 0.0


def _running_pid(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # someone else's process
        return True
    return True


_spawn_lock = threading.Lock()
_spawn_jobs: queue.SimpleQueue[tuple[Callable[[], Any], concurrent.futures.Future[Any]]] | None = None


# -- the shared server -------------------------------------------------------------------------------

_running: set[LlamaServer] = set()
_shared: dict[tuple[Path, str], LlamaServer] = {}
_shared_lock = threading.Lock()


def shared_server(paths: LocalPaths) -> LlamaServer:
    """This process's server for `paths`, started on first use. A server that died unnoticed is a
    ModelError naming its log (retryable: the next call starts a fresh server)."""
    key = (paths.root, paths.spec.name)
    with _shared_lock:
        server = _shared.get(key)
        if server is not None and server.alive():
            return server
        if server is not None:
            del _shared[key]
            server.stop()
            if not server.death_reported:
                raise server.death_error("after the last request")
        server = LlamaServer(paths).start()
        _shared[key] = server
        return server


@atexit.register
def stop_all() -> None:
    """Stop every server this process started (at interpreter exit, and for tests)."""
    with _shared_lock:
        _shared.clear()
    for server in list(_running):
        server.stop()


def _forget_parent_servers() -> None:
    # A forked child starts its own server when it needs one, and must not stop its parent's at exit.
    global _shared_lock, _spawn_lock, _spawn_jobs
    _shared_lock = threading.Lock()  # the parent may have held it while forking
    _spawn_lock = threading.Lock()
    _spawn_jobs = None  # the spawner thread was not forked with us
    _shared.clear()
    _running.clear()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_forget_parent_servers)
