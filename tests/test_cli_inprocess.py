"""The in-process CLI runner (tests/cli_inprocess.py) leaks nothing between a command and the tests."""

from __future__ import annotations

import logging
import os
import signal
import sys

import dotprompt.cli
from dotprompt.doubles import ScriptedModel
from dotprompt.providers import registry
from tests.cli_inprocess import cli

PROMPT = "---\nmodel: myco/small\n---\nhello\n"
TOOL_MODULE = '''from dotprompt import tool


@tool
def probe() -> str:
    """A probe."""
    return "x"
'''


def test_the_test_process_gets_its_environment_folder_path_streams_and_handlers_back(tmp_path, monkeypatch):
    monkeypatch.setenv("DOTPROMPT_RUNNER_PROBE", "kept")
    before = (dict(os.environ), os.getcwd(), list(sys.path), sys.stdout, sys.stderr, signal.getsignal(signal.SIGTERM),
              logging.getLogger().handlers[:])
    done = cli("--version", cwd=tmp_path, env={"PATH": os.environ["PATH"]})
    assert done.returncode == 0 and done.stdout.startswith("dotprompt ")
    after = (dict(os.environ), os.getcwd(), list(sys.path), sys.stdout, sys.stderr, signal.getsignal(signal.SIGTERM),
             logging.getLogger().handlers[:])
    assert after == before


def test_a_provider_configured_in_one_project_is_unknown_in_the_next(tmp_path, cli_env):
    configured, bare = tmp_path / "configured", tmp_path / "bare"
    for folder in (configured, bare):
        (folder / "prompts").mkdir(parents=True)
        (folder / "prompts" / "p.prompt").write_text(PROMPT)
    (configured / "pyproject.toml").write_text('[tool.dotprompt.providers.myco]\nbase_url = "http://127.0.0.1:9/v1"\n')
    first = cli("run", "p", "--dir", "prompts", cwd=configured, env=cli_env)
    assert "unknown model" not in first.stderr  # it got as far as calling the (absent) server
    assert "myco" not in registry._providers and "myco/small" not in registry._models  # the test process: untouched
    second = cli("run", "p", "--dir", "prompts", cwd=bare, env=cli_env)
    assert second.returncode == 1 and "unknown model 'myco/small'" in second.stderr


def test_a_model_the_test_defined_is_unknown_to_the_command(tmp_path, cli_env, monkeypatch):
    monkeypatch.setitem(registry._models, "myco/small", ScriptedModel("from the test", name="myco/small"))
    (tmp_path / "p.prompt").write_text(PROMPT)
    done = cli("run", "p", "--dir", str(tmp_path), env=cli_env)
    assert done.returncode == 1 and "unknown model 'myco/small'" in done.stderr
    assert "myco/small" in registry._models  # and the test's own definition is back


def test_a_project_module_is_imported_afresh_by_each_command(tmp_path, cli_env):
    (tmp_path / "prompts").mkdir()
    (tmp_path / "prompts" / "p.prompt").write_text("---\nmodel: echo\ntools: [probe]\n---\nhi\n")
    (tmp_path / "pyproject.toml").write_text('[tool.dotprompt]\ntools = ["probe_tools"]\n')
    (tmp_path / "probe_tools.py").write_text("from dotprompt import tool\n")
    without = cli("check", "--strict", cwd=tmp_path, env=cli_env)
    assert without.returncode == 1 and "probe" in without.stdout, without.stdout + without.stderr
    assert "probe_tools" not in sys.modules and str(tmp_path) not in sys.path
    (tmp_path / "probe_tools.py").write_text(TOOL_MODULE)
    done = cli("check", "--strict", cwd=tmp_path, env=cli_env)
    assert done.returncode == 0, done.stdout + done.stderr


def test_an_uncaught_exception_is_a_traceback_and_exit_1(monkeypatch):
    def broken(argv):
        raise RuntimeError("boom")

    monkeypatch.setattr(dotprompt.cli, "main", broken)
    done = cli("render", "x")
    assert done.returncode == 1 and "Traceback" in done.stderr and "RuntimeError: boom" in done.stderr


def test_a_usage_error_from_argparse_is_exit_2_on_stderr():
    done = cli("render", "x", "--no-such-flag")
    assert done.returncode == 2 and "unrecognized arguments" in done.stderr and done.stdout == ""


def test_a_warning_or_a_log_record_reaches_stderr_as_in_a_new_process(monkeypatch):
    def noisy(argv):
        import warnings

        warnings.warn("careful", UserWarning, stacklevel=1)
        logging.getLogger("dotprompt.probe").warning("the run log is locked")
        return 0

    monkeypatch.setattr(dotprompt.cli, "main", noisy)
    done = cli("render", "x")
    assert done.returncode == 0
    assert "UserWarning: careful" in done.stderr and "the run log is locked" in done.stderr
