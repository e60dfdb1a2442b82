"""Running `dotprompt` in the test process: `dotprompt.cli.main(argv)` as a fresh process would see it.

A subprocess costs ~0.4 s (a new interpreter importing the package); this costs milliseconds. What a
new process would give the command is set up around each call and put back afterwards, so neither
the command nor the test sees the other's state:

- the environment (exactly `env`, as `subprocess.run(env=...)` gives it), the working folder, and
  `sys.path` led by that folder and $PYTHONPATH, as `python -m dotprompt.cli` has it;
- stdin empty, stdout and stderr captured as UTF-8 and read back with universal newlines (what
  `subprocess.run(text=True)` returns); neither is a terminal, as with a pipe;
- the package's process-wide state as a new interpreter has it: the settings and default-library
  caches, the model, format, scorer and assertion registries, remembered secrets, the price
  memos, open run logs and local servers (`PROCESS_STATE`); what the command leaves there is
  thrown away, and the test's own state comes back;
- modules the command imported from outside the package and the installed libraries (a project's
  tools or checks) are forgotten, so the next call imports its own;
- logging, warnings, the SIGTERM handler and the thread / unraisable-exception hooks as Python's
  defaults (pytest replaces them in the test process): a warning goes to stderr as it would;
- at the end what interpreter exit does for the package: the run logs are flushed and closed, the
  local servers stopped.

An exception escaping `main` is printed as Python would (a traceback on stderr, exit 1); SystemExit
gives its code. Hostile input that needs a time or memory limit still runs in a child process
(tests/isolation.py), and tests/cli_process.py keeps a few true end-to-end runs of the command.
"""

from __future__ import annotations

import contextlib
import copy
import importlib
import io
import logging
import os
import signal
import sys
import sysconfig
import threading
import traceback
import warnings
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import dotprompt.cli
from tests.conftest import ROOT

# Process-wide state of the package: (module, name). A dict or set is emptied to its contents at the
# start of the session (built-ins registered on import stay), anything else set back to that value.
PROCESS_STATE: tuple[tuple[str, str], ...] = (
    ("dotprompt.settings", "_PARSED"),                 # pyproject.toml tables by file
    ("dotprompt.settings", "_WARNED"),                 # pyproject.toml files of other users, warned about
    ("dotprompt.prompts.loader", "_libraries"),        # the default library per folder
    ("dotprompt.providers.registry", "_models"),       # models made or defined by name
    ("dotprompt.providers.registry", "_providers"),    # provider factories (configured ones added on use)
    ("dotprompt.providers.registry", "_built_ins_loaded"),
    ("dotprompt.formats.registry", "_FORMATS"),
    ("dotprompt.evals.scorers", "SCORERS"),
    ("dotprompt.testing.assertions", "PATH_ASSERTIONS"),
    ("dotprompt._util.redact", "_secrets"),            # keys remembered for redaction
    ("dotprompt.observe.cost", "_unpriced"),           # why a (model, endpoint) has no price
    ("dotprompt.observe.cost", "_priced"),
    ("dotprompt.observe.spans", "_cached"),            # the tracer of the last tracer provider
    ("dotprompt.observe.runlog", "_logs"),             # open run logs (each with its writer thread)
    ("dotprompt.local.server", "_shared"),             # this process's llama-servers
    ("dotprompt.local.server", "_running"),
)
# functools caches whose answers depend on files or the environment; the others memoise pure functions.
PROCESS_CACHES: tuple[tuple[str, str], ...] = (
    ("dotprompt.settings", "_candidates"),             # the folders above a start folder
    ("dotprompt._http.client", "_ssl_context"),        # reads SSL_CERT_FILE / SSL_CERT_DIR
)


@dataclass
class CliResult:
    """What `subprocess.run(..., capture_output=True, text=True)` returns, for the in-process command."""

    args: list[str]
    returncode: int
    stdout: str
    stderr: str


def cli(*args: str, cwd: str | os.PathLike[str] | None = None, env: Mapping[str, str] | None = None) -> CliResult:
    """`dotprompt ARGS` in this process, in `cwd` (default: the repository) with exactly `env`
    (default: this process's environment), as tests/cli_process.py runs it in a subprocess."""
    take_pristine_state()  # normally done already, when pytest started
    stdout, stderr = _capture(errors="strict"), _capture(errors="backslashreplace")
    with _fresh_process(Path(cwd or ROOT), env, stdout, stderr):
        code = _run_main(list(args))
        _exit_handlers()
    return CliResult(["dotprompt", *args], code, _read(stdout), _read(stderr))


def _run_main(argv: list[str]) -> int:
    try:
        return dotprompt.cli.main(argv)
    except SystemExit as exc:  # argparse (usage errors, --help, --version), sys.exit in a command
        if exc.code is None:
            return 0
        if isinstance(exc.code, int):
            return exc.code
        print(exc.code, file=sys.stderr)
        return 1
    except Exception:  # what the interpreter does with an uncaught exception
        traceback.print_exc()
        return 1


def _exit_handlers() -> None:
    """The package's atexit handlers, which a subprocess runs as it ends."""
    runlog = sys.modules.get("dotprompt.observe.runlog")
    if runlog is not None:
        runlog._flush_all()
    server = sys.modules.get("dotprompt.local.server")
    if server is not None:
        server.stop_all()


# -- the process around the call -----------------------------------------------------------------

def _capture(errors: str) -> io.TextIOWrapper:
    return io.TextIOWrapper(io.BytesIO(), encoding="utf-8", errors=errors, write_through=True)


def _read(stream: io.TextIOWrapper) -> str:
    stream.flush()
    text = stream.buffer.getvalue().decode("utf-8", errors="replace")  # type: ignore[attr-defined]
    return text.replace("\r\n", "\n").replace("\r", "\n")  # universal newlines, as text=True reads a pipe


@contextlib.contextmanager
def _fresh_process(cwd: Path, env: Mapping[str, str] | None, stdout: io.TextIOWrapper,
                   stderr: io.TextIOWrapper) -> Iterator[None]:
    saved_env = dict(os.environ)
    saved_cwd = os.getcwd()
    saved_path = list(sys.path)
    saved_modules = set(sys.modules)
    saved_streams = sys.stdin, sys.stdout, sys.stderr
    saved_sigterm = signal.getsignal(signal.SIGTERM)
    saved_hooks = threading.excepthook, sys.unraisablehook
    try:
        if env is not None:
            os.environ.clear()
            os.environ.update(env)
        os.chdir(cwd)
        extra = [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p]
        sys.path[:0] = [os.getcwd(), *extra]  # `python -m` puts the working folder first
        sys.stdin = io.TextIOWrapper(io.BytesIO(b""), encoding="utf-8")
        sys.stdout, sys.stderr = stdout, stderr
        signal.signal(signal.SIGTERM, signal.SIG_DFL)
        threading.excepthook, sys.unraisablehook = threading.__excepthook__, sys.__unraisablehook__
        with _default_logging(), _default_warnings(), _process_state():
            yield
    finally:
        sys.stdin, sys.stdout, sys.stderr = saved_streams
        signal.signal(signal.SIGTERM, saved_sigterm)
        threading.excepthook, sys.unraisablehook = saved_hooks
        sys.path[:] = saved_path
        os.chdir(saved_cwd)
        os.environ.clear()
        os.environ.update(saved_env)
        _forget_imported(saved_modules)


def _forget_imported(before: set[str]) -> None:
    """Drop the modules the command imported from a project (not the package, not installed libraries)."""
    # Installed libraries are wherever site-packages folders are on sys.path: a venv may also reach
    # another's through a .pth file (the worktrees share one), and a library forgotten and imported
    # again would make new exception classes that the copy others hold does not catch.
    installed = [p for p in sys.path if Path(p).name in ("site-packages", "dist-packages")]
    kept = [str(Path(p).resolve()) for p in {*sysconfig.get_paths().values(), sys.prefix, sys.base_prefix, *installed}]
    kept.append(str(ROOT / "dotprompt"))
    for name in set(sys.modules) - before:
        module = sys.modules[name]
        where = getattr(module, "__file__", None) or next(iter(getattr(module, "__path__", None) or ()), None)
        if where is None:
            continue  # built into the interpreter
        where = str(Path(where).resolve())
        if not any(where == root or where.startswith(root + os.sep) for root in kept):
            del sys.modules[name]


@contextlib.contextmanager
def _default_logging() -> Iterator[None]:
    """No handler anywhere, the root at WARNING: a record reaches stderr through logging.lastResort."""
    root = logging.getLogger()
    loggers = [root, *(logging.getLogger(n) for n in list(logging.Logger.manager.loggerDict)
                       if n == "dotprompt" or n.startswith("dotprompt."))]
    saved = [(lg, lg.handlers[:], lg.level, lg.propagate, lg.disabled) for lg in loggers]
    saved_disable = logging.root.manager.disable
    try:
        logging.disable(logging.NOTSET)
        for lg in loggers:
            lg.handlers.clear()
            lg.setLevel(logging.WARNING if lg is root else logging.NOTSET)
            lg.propagate, lg.disabled = True, False
        yield
    finally:
        for lg, handlers, level, propagate, disabled in saved:
            lg.handlers[:] = handlers
            lg.setLevel(level)
            lg.propagate, lg.disabled = propagate, disabled
        logging.disable(saved_disable)


# Python's own warning filters (no -W, no PYTHONWARNINGS): pytest records warnings instead of printing them.
_PYTHON_FILTERS = (("default", DeprecationWarning, "__main__"), ("ignore", DeprecationWarning, None),
                   ("ignore", PendingDeprecationWarning, None), ("ignore", ImportWarning, None),
                   ("ignore", ResourceWarning, None))


@contextlib.contextmanager
def _default_warnings() -> Iterator[None]:
    with warnings.catch_warnings():
        warnings.resetwarnings()
        for action, category, module in reversed(_PYTHON_FILTERS):
            if module is None:
                warnings.simplefilter(action, category)  # type: ignore[arg-type]
            else:
                warnings.filterwarnings(action, category=category, module=module)  # type: ignore[arg-type]
        warnings.showwarning = _show_on_stderr
        yield


def _show_on_stderr(message: Any, category: Any, filename: str, lineno: int, file: Any = None, line: Any = None) -> None:
    sys.stderr.write(warnings.formatwarning(message, category, filename, lineno, line))


@contextlib.contextmanager
def _process_state() -> Iterator[None]:
    """The package's process-wide state as the session started, then the test's back. Dicts and sets
    change in place: other modules hold them by name (`from .scorers import SCORERS`)."""
    saved = {key: _copy(_get(key)) for key in PROCESS_STATE}
    for key in PROCESS_STATE:
        _put(key, _PRISTINE[key])
    for module_name, name in PROCESS_CACHES:
        getattr(importlib.import_module(module_name), name).cache_clear()
    importlib.invalidate_caches()  # a project's module written a moment ago is found
    try:
        yield
    finally:
        for key, value in saved.items():
            _put(key, value)
        for module_name, name in PROCESS_CACHES:
            getattr(sys.modules[module_name], name).cache_clear()


def _get(key: tuple[str, str]) -> Any:
    return getattr(importlib.import_module(key[0]), key[1])


def _put(key: tuple[str, str], value: Any) -> None:
    current = _get(key)
    if isinstance(current, (dict, set)):
        current.clear()
        current.update(value)
    else:
        setattr(sys.modules[key[0]], key[1], value)


def _copy(value: Any) -> Any:
    return copy.copy(value) if isinstance(value, (dict, set)) else value


_PRISTINE: dict[tuple[str, str], Any] = {}


def take_pristine_state() -> None:
    """Note the package's process-wide state as a new process has it. tests/conftest.py calls this when
    pytest starts, before any test module is imported (one may register a format or a scorer)."""
    if not _PRISTINE:
        _PRISTINE.update({key: _copy(_get(key)) for key in PROCESS_STATE})
