"""The child-process harness the hostile-input tests rely on: hangs and blow-ups are caught."""

from __future__ import annotations

import time

import pytest

from tests.isolation import assert_finishes, run_limited
from tests.isolation_procs import gone


@pytest.mark.slow
def test_a_hang_is_reported_as_timed_out():
    outcome = run_limited("while True: pass", timeout=2)
    assert outcome.timed_out


def test_a_memory_blow_up_fails_in_the_child():
    outcome = run_limited("x = bytearray(2 * 1024 ** 3)", memory_mb=512)
    assert not outcome.timed_out and outcome.returncode != 0 and "MemoryError" in outcome.stderr


def test_the_package_is_importable_and_json_comes_back():
    outcome = assert_finishes("import json, dotprompt; print(json.dumps({'ok': hasattr(dotprompt, 'load_prompt')}))")
    assert outcome.json() == {"ok": True}


@pytest.mark.slow
def test_what_the_child_started_dies_with_it_on_a_timeout(tmp_path):
    # A hostile-input test whose child started a server (an MCP server, a model server) and then hung
    # must not leave that server running after CI, nor wait on the pipes it holds open.
    pid_file = tmp_path / "grandchild.pid"
    outcome = run_limited(f"""
        import subprocess, sys, pathlib
        server = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(300)"],
                                  stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        pathlib.Path({str(pid_file)!r}).write_text(str(server.pid))
        while True: pass
    """, timeout=3)
    assert outcome.timed_out
    assert _gone_soon(int(pid_file.read_text()))


def test_what_the_child_left_running_is_stopped_when_it_exits(tmp_path):
    pid_file = tmp_path / "grandchild.pid"
    outcome = run_limited(f"""
        import subprocess, sys, pathlib
        server = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(300)"],
                                  stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        pathlib.Path({str(pid_file)!r}).write_text(str(server.pid))
    """, timeout=20)
    assert not outcome.timed_out and outcome.returncode == 0
    assert _gone_soon(int(pid_file.read_text()))


def _gone_soon(pid: int) -> bool:
    """SIGKILL is not instant: give the process a moment to die."""
    deadline = time.monotonic() + 5
    while not gone(pid) and time.monotonic() < deadline:
        time.sleep(0.02)
    return gone(pid)
