"""The pytest plugin: plain `pytest` collects and replays prompt tests; the `prompt_library` fixture."""

from __future__ import annotations

import subprocess
import sys

import pytest

from tests.cli_process import dotprompt
from tests.echo_project import TESTS, project


@pytest.mark.slow
def test_plain_pytest_collects_and_replays_prompt_tests(tmp_path, cli_env):
    prompts = project(tmp_path)
    dotprompt("test", "--record", cwd=tmp_path, env=cli_env)
    run = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", str(prompts)]
    done = subprocess.run(run, cwd=tmp_path, capture_output=True, text=True, env=cli_env, timeout=120)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "2 passed" in done.stdout
    (prompts / "yesno.test.yaml").write_text(TESTS.replace('output: {answer: "yes"}', 'output: {answer: "YES"}'))
    done = subprocess.run(run, cwd=tmp_path, capture_output=True, text=True, env=cli_env, timeout=120)
    assert done.returncode == 1
    assert "case 'says yes' failed" in done.stdout and 'expected {"answer": "YES"}' in done.stdout


@pytest.mark.slow
def test_prompt_library_fixture_in_a_users_test(tmp_path, cli_env):
    project(tmp_path)
    (tmp_path / "test_mine.py").write_text(
        "def test_uses_fixture(prompt_library):\n"
        "    assert [i.name for i in prompt_library.list()] == ['yesno']\n"
        "    assert prompt_library.load('yesno').render({'answer': 'y'}).messages[0].text.startswith('{')\n")
    done = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "test_mine.py"], cwd=tmp_path,
                          capture_output=True, text=True, env=cli_env, timeout=120)
    assert done.returncode == 0, done.stdout + done.stderr
