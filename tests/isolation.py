"""Run hostile input in a child process with a time and memory limit.

A hang or a runaway allocation in the code under test then fails the test that caused it instead
of stalling CI or taking the machine down. The child runs `code` with the package importable;
whatever it prints to stdout comes back, and its last stdout line may be JSON for the test to read.
"""

from __future__ import annotations

import contextlib
import json
import os
import resource
import signal
import subprocess
import sys
import textwrap
from dataclasses import dataclass
from typing import Any

from tests.conftest import ROOT


@dataclass
class Outcome:
    returncode: int
    stdout: str
    stderr: str
    timed_out: bool

    def json(self) -> Any:
        """The last stdout line, parsed as JSON."""
        lines = [line for line in self.stdout.splitlines() if line.strip()]
        assert lines, f"the child printed nothing; stderr:\n{self.stderr[-3000:]}"
        return json.loads(lines[-1])


def run_limited(code: str, *, timeout: float = 20.0, memory_mb: int = 1024, cwd: str | os.PathLike[str] | None = None,
                env: dict[str, str] | None = None) -> Outcome:
    """Run `code` (Python source, dedented) in a fresh interpreter; never raises on a hang or a crash."""

    def limit() -> None:  # runs in the child before exec
        cap = memory_mb * 1024 * 1024
        resource.setrlimit(resource.RLIMIT_AS, (cap, cap))

    child_env = {**os.environ, **(env or {}), "PYTHONPATH": str(ROOT)}
    # Its own process group, killed whole: what the child started (an MCP server, a model server) would
    # otherwise outlive a timeout, and, holding the output pipes open, keep this call from returning.
    child = subprocess.Popen([sys.executable, "-c", textwrap.dedent(code)], stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, text=True, preexec_fn=limit, cwd=cwd, env=child_env,
                             start_new_session=True)
    try:
        stdout, stderr = child.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        _kill_group(child.pid)
        stdout, stderr = child.communicate()
        return Outcome(-1, stdout, stderr, True)
    _kill_group(child.pid)  # whatever the child left running when it exited
    return Outcome(child.returncode, stdout, stderr, False)


def _kill_group(pid: int) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pid, signal.SIGKILL)


def assert_finishes(code: str, *, timeout: float = 20.0, memory_mb: int = 1024, **kwargs: Any) -> Outcome:
    """`run_limited`, failing the test on a hang, a crash or a memory blow-up (stderr shown)."""
    outcome = run_limited(code, timeout=timeout, memory_mb=memory_mb, **kwargs)
    assert not outcome.timed_out, f"did not finish within {timeout} s; stderr:\n{outcome.stderr[-3000:]}"
    assert outcome.returncode == 0, f"child exited {outcome.returncode}; stderr:\n{outcome.stderr[-3000:]}"
    return outcome

