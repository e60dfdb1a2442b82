"""A run log file that is corrupt, cut off, locked or not a file never fails the run that logs: one warning, go on.

Through the real command line (a subprocess per run, with a timeout), and the Python API in a child
process with time and memory limits.
"""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
import time

import pytest

from tests.cli_process import dotprompt
from tests.echo_project import project
from tests.isolation import assert_finishes

ANSWER = '{\n  "answer": "yes"\n}\n'


def env_for(cli_env, path):
    return {**cli_env, "DOTPROMPT_LOG_PATH": str(path)}


def warnings_in(stderr):
    return [line for line in stderr.splitlines() if "the run log" in line]


@pytest.mark.slow
def test_a_corrupt_log_file_warns_once_and_every_run_goes_on(tmp_path, cli_env):
    project(tmp_path)
    path = tmp_path / "logs.db"
    junk = os.urandom(4096) + b"not a database" * 500
    path.write_bytes(junk)
    env = env_for(cli_env, path)
    done = dotprompt("run", "yesno", "--input", '{"answer": "yes"}', cwd=tmp_path, env=env)
    assert done.returncode == 0 and done.stdout == ANSWER
    (warning,) = warnings_in(done.stderr)
    assert str(path) in warning and "cannot be used" in warning and "DOTPROMPT_LOG=0" in warning
    (tmp_path / "rows.jsonl").write_text("".join(f'{{"answer": "a{n}"}}\n' for n in range(30)))
    batch = dotprompt("run", "yesno", "--input-file", "rows.jsonl", "--output", "out.jsonl", "--concurrency", "16",
                      cwd=tmp_path, env=env)
    assert batch.returncode == 0 and "30 succeeded" in batch.stderr
    assert len(warnings_in(batch.stderr)) == 1 and "Traceback" not in batch.stderr
    assert path.read_bytes() == junk  # the user's file is never overwritten
    shown = dotprompt("logs", cwd=tmp_path, env=env)
    assert shown.returncode == 1 and "Traceback" not in shown.stderr
    assert shown.stderr.strip().startswith(f"{path}: cannot read the run log")


@pytest.mark.slow
def test_a_log_cut_off_mid_file_does_not_fail_runs(tmp_path, cli_env):
    project(tmp_path)
    path = tmp_path / "logs.db"
    env = env_for(cli_env, path)
    (tmp_path / "rows.jsonl").write_text("".join(f'{{"answer": "{n}{"x" * 3000}"}}\n' for n in range(40)))
    assert dotprompt("run", "yesno", "--input-file", "rows.jsonl", "--output", "out.jsonl", cwd=tmp_path,
                     env=env).returncode == 0
    assert not list(path.parent.glob("logs.db-*"))  # closed at exit: everything is in the one file
    data = path.read_bytes()
    path.write_bytes(data[: len(data) // 2])
    done = dotprompt("run", "yesno", "--input", '{"answer": "yes"}', cwd=tmp_path, env=env)
    assert done.returncode == 0 and done.stdout == ANSWER and "Traceback" not in done.stderr
    (warning,) = warnings_in(done.stderr)
    assert "malformed" in warning
    shown = dotprompt("logs", "-n", "50", cwd=tmp_path, env=env)
    assert shown.returncode == 1 and "Traceback" not in shown.stderr
    assert "cannot read the run log" in shown.stderr and "malformed" in shown.stderr


@pytest.mark.slow
def test_a_locked_log_warns_and_the_run_ends_promptly(tmp_path, cli_env):
    project(tmp_path)
    path = tmp_path / "logs.db"
    env = env_for(cli_env, path)
    assert dotprompt("run", "yesno", "--input", '{"answer": "first"}', cwd=tmp_path, env=env).returncode == 0
    holder = subprocess.Popen([sys.executable, "-c", textwrap.dedent(f"""
        import sqlite3, sys, time
        db = sqlite3.connect({str(path)!r}, isolation_level=None)
        db.execute("BEGIN EXCLUSIVE")
        print("locked", flush=True)
        sys.stdin.read()
    """)], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline().strip() == "locked"
        started = time.monotonic()
        done = dotprompt("run", "yesno", "--input", '{"answer": "yes"}', cwd=tmp_path, env=env)
        elapsed = time.monotonic() - started
        assert done.returncode == 0 and done.stdout == ANSWER
        (warning,) = warnings_in(done.stderr)
        assert "is locked by another process" in warning
        assert elapsed < 30, elapsed
    finally:
        holder.communicate("", timeout=10)
    after = dotprompt("run", "yesno", "--input", '{"answer": "third"}', cwd=tmp_path, env=env)
    assert after.returncode == 0 and warnings_in(after.stderr) == []
    listed = dotprompt("logs", "--json", cwd=tmp_path, env=env)
    answers = [line for line in listed.stdout.splitlines() if '"answer"' in line]
    assert len(answers) == 2 and '"third"' in answers[0] and '"first"' in answers[1]


@pytest.mark.slow
def test_a_folder_where_the_log_file_should_be(tmp_path, cli_env):
    project(tmp_path)
    path = tmp_path / "logs.db"
    path.mkdir()
    done = dotprompt("run", "yesno", "--input", '{"answer": "yes"}', cwd=tmp_path, env=env_for(cli_env, path))
    assert done.returncode == 0 and done.stdout == ANSWER and len(warnings_in(done.stderr)) == 1


@pytest.mark.slow
def test_the_api_with_a_corrupt_log_runs_every_prompt_and_warns_once(tmp_path):
    path = tmp_path / "logs.db"
    path.write_bytes(b"\x00garbage" * 1000)
    outcome = assert_finishes(f"""
        import asyncio, logging
        from dotprompt import PromptLibrary
        from dotprompt.doubles import ScriptedModel
        lib = PromptLibrary(None, log={str(path)!r})
        prompt = lib.from_source("---\\nmodel: echo\\n---\\nhi {{{{ n }}}}", name="p")

        async def main():
            return await asyncio.gather(*(prompt.generate({{"n": n}}) for n in range(200)))

        texts = [r.text for r in asyncio.run(main())]
        lib.run_log.flush()
        print(len(set(texts)))
    """, timeout=60, memory_mb=1024)
    assert outcome.stdout.split()[-1] == "200"
    assert len([line for line in outcome.stderr.splitlines() if "the run log" in line]) == 1
