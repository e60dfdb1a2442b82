"""What `dotprompt run` and `dotprompt test --record` show on a terminal while the model works, and
that none of it reaches stdout or a non-terminal stderr (the real CLI, a slow model on loopback)."""

from __future__ import annotations

import json
import re
import subprocess
import sys

import pytest

from tests.cli.terminal import REPLY, project, run_on_terminal, slow_server

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="pseudo-terminals are POSIX")
ELAPSED = re.compile(r"\d:\d\d:\d\d")


@pytest.mark.slow
def test_run_shows_elapsed_time_on_a_terminal_and_prints_the_output_once(tmp_path, cli_env):
    with slow_server() as port:
        env = project(tmp_path, port, cli_env)
        code, screen, stdout = run_on_terminal("run", "ask", "--input", '{"q": "hi"}', cwd=tmp_path, env=env)
    assert code == 0, screen
    assert "running ask" in screen and ELAPSED.search(screen), screen
    assert json.loads(stdout) == json.loads(REPLY) and "running" not in stdout


@pytest.mark.slow
def test_run_off_a_terminal_shows_no_status(tmp_path, cli_env):
    with slow_server() as port:
        env = project(tmp_path, port, cli_env)
        done = subprocess.run([sys.executable, "-m", "dotprompt.cli", "run", "ask", "--input", '{"q": "hi"}'],
                              cwd=tmp_path, env=env, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.stderr == "" and json.loads(done.stdout) == json.loads(REPLY)


@pytest.mark.slow
def test_stream_on_a_terminal_shows_the_stream_then_the_json_once(tmp_path, cli_env):
    with slow_server() as port:
        env = project(tmp_path, port, cli_env)
        code, screen, _ = run_on_terminal("run", "ask", "--stream", "--input", '{"q": "hi"}', cwd=tmp_path, env=env,
                                          both=True)
    assert code == 0, screen
    assert "streaming ask" in screen and '{"answer": "ye' in screen  # the reply while it arrived
    # The live view is erased (rich clears its lines) before the final output is printed, once.
    assert "\x1b[2K" in screen
    after = screen.rsplit("\x1b[2K", 1)[1]
    assert after.count('"answer": "yes"') == 1 and "streaming" not in after


@pytest.mark.slow
def test_stream_off_a_terminal_keeps_stdout_to_the_output(tmp_path, cli_env):
    with slow_server() as port:
        env = project(tmp_path, port, cli_env)
        done = subprocess.run([sys.executable, "-m", "dotprompt.cli", "run", "ask", "--stream", "--input",
                               '{"q": "hi"}'], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout) == json.loads(REPLY)
    assert done.stderr == REPLY + "\n"  # the raw stream, for logs; no escape codes


@pytest.mark.slow
def test_test_record_shows_case_progress_on_a_terminal(tmp_path, cli_env):
    with slow_server() as port:
        env = project(tmp_path, port, cli_env)
        code, screen, stdout = run_on_terminal("test", "--record", cwd=tmp_path, env=env)
    assert code == 0, screen + stdout
    assert "1 cases (record)" in screen and "0/1" in screen and ELAPSED.search(screen), screen
    assert "1 cases (record)" not in stdout and "PASS" in stdout
    assert (tmp_path / "prompts" / "__recordings__" / "ask.jsonl").is_file()
