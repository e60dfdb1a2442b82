"""The pytest plugin: opt-in per project; then plain `pytest` collects and replays prompt tests; the
`prompt_library` fixture."""

from __future__ import annotations

import subprocess
import sys

import pytest

from tests.cli_process import dotprompt
from tests.echo_project import TESTS, project

OPT_IN = "[tool.dotprompt]\npytest = true\n"


def pytest_in(tmp_path, cli_env, *args: str) -> subprocess.CompletedProcess[str]:
    run = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", *args]
    return subprocess.run(run, cwd=tmp_path, capture_output=True, text=True, env=cli_env, timeout=120)


@pytest.mark.slow
def test_plain_pytest_collects_and_replays_prompt_tests(tmp_path, cli_env):
    prompts = project(tmp_path)
    (tmp_path / "pyproject.toml").write_text(OPT_IN)
    dotprompt("test", "--record", cwd=tmp_path, env=cli_env)
    done = pytest_in(tmp_path, cli_env, str(prompts))
    assert done.returncode == 0, done.stdout + done.stderr
    assert "2 passed" in done.stdout
    (prompts / "yesno.test.yaml").write_text(TESTS.replace('output: {answer: "yes"}', 'output: {answer: "YES"}'))
    done = pytest_in(tmp_path, cli_env, str(prompts))
    assert done.returncode == 1
    assert "case 'says yes' failed" in done.stdout and 'expected {"answer": "YES"}' in done.stdout


@pytest.mark.slow
def test_a_project_that_does_not_opt_in_collects_nothing_from_its_test_files(tmp_path, cli_env):
    prompts = project(tmp_path)
    (tmp_path / "pyproject.toml").write_text('[tool.dotprompt]\nprompts_dir = "prompts"\n')
    done = pytest_in(tmp_path, cli_env, "--collect-only", str(prompts))
    assert done.returncode == 5, done.stdout + done.stderr  # pytest's "no tests collected"
    assert "yesno" not in done.stdout
    done = pytest_in(tmp_path, cli_env, "--dotprompt-mode", "replay", str(prompts))
    assert done.returncode == 4 and "--dotprompt-mode" in done.stderr  # not even the plugin's option


@pytest.mark.slow
def test_the_switch_or_an_explicit_p_collects(tmp_path, cli_env):
    prompts = project(tmp_path)
    explicit = pytest_in(tmp_path, cli_env, "--collect-only", "-p", "dotprompt.testing.pytest_plugin", str(prompts))
    assert explicit.returncode == 0, explicit.stdout + explicit.stderr
    assert "2 tests collected" in explicit.stdout
    (tmp_path / "pyproject.toml").write_text(OPT_IN)
    for args in ((), ("-p", "dotprompt.testing.pytest_plugin")):  # both at once: loaded once
        done = pytest_in(tmp_path, cli_env, "--collect-only", "--dotprompt-mode", "replay", *args, str(prompts))
        assert done.returncode == 0, done.stdout + done.stderr
        assert "2 tests collected" in done.stdout


@pytest.mark.slow
def test_a_switch_that_is_not_a_boolean_is_refused_naming_the_file_and_key(tmp_path, cli_env):
    prompts = project(tmp_path)
    (tmp_path / "pyproject.toml").write_text('[tool.dotprompt]\npytest = "yes"\n')
    done = pytest_in(tmp_path, cli_env, "--collect-only", str(prompts))
    assert done.returncode == 4, done.stdout + done.stderr
    assert f"{tmp_path / 'pyproject.toml'}: [tool.dotprompt] pytest must be true or false, got 'yes'" in done.stderr


@pytest.mark.slow
def test_prompt_library_fixture_in_a_users_test(tmp_path, cli_env):
    project(tmp_path)
    (tmp_path / "pyproject.toml").write_text(OPT_IN)
    (tmp_path / "test_mine.py").write_text(
        "def test_uses_fixture(prompt_library):\n"
        "    assert [i.name for i in prompt_library.prompts()] == ['yesno']\n"
        "    assert prompt_library.load('yesno').render({'answer': 'y'}).messages[0].text.startswith('{')\n")
    done = pytest_in(tmp_path, cli_env, "test_mine.py")
    assert done.returncode == 0, done.stdout + done.stderr
