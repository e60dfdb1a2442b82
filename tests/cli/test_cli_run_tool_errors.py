"""`dotprompt run` shows every tool error on stderr, and `--tool-errors raise` stops the run on the first.

The model is a scripted one defined by the project's tools module ([tool.dotprompt] tools), as a user would.
"""

from __future__ import annotations

from tests.cli_inprocess import cli

TOOLS = '''
from dotprompt import define_model, tool
from dotprompt.doubles import ScriptedModel
from dotprompt.doubles import tool_call


@tool
def lookup(city: str) -> str:
    """Weather for a city."""
    raise ValueError(f"no weather station in {city}")


@tool
def fine(x: int) -> int:
    """Doubles."""
    return 2 * x


define_model(ScriptedModel([[tool_call("lookup", {"city": "Atlantis"}, ref="r1"), tool_call("fine", {"x": 2})],
                            "Sunny, probably."]), name="scripted")
'''
PROMPT = "---\nmodel: scripted\ntools: [lookup, fine]\n---\nWeather in Atlantis?"


def project(tmp_path):
    (tmp_path / "pyproject.toml").write_text('[tool.dotprompt]\ntools = ["project_tools.py"]\n')
    (tmp_path / "project_tools.py").write_text(TOOLS)
    (tmp_path / "prompts").mkdir()
    (tmp_path / "prompts" / "weather.prompt").write_text(PROMPT)


def test_a_tool_error_is_shown_and_the_run_goes_on(tmp_path, cli_env):
    project(tmp_path)
    done = cli("run", "weather", cwd=tmp_path, env=cli_env)
    assert done.returncode == 0, done.stderr
    assert done.stdout == "Sunny, probably.\n"
    assert done.stderr.splitlines() == [
        "tool error: lookup (ref r1) raised ValueError: no weather station in Atlantis (the model was told and went on)"]


def test_tool_errors_are_shown_when_streaming_too(tmp_path, cli_env):
    project(tmp_path)
    done = cli("run", "weather", "--stream", cwd=tmp_path, env=cli_env)
    assert done.returncode == 0, done.stderr
    assert done.stdout == "Sunny, probably.\n"
    assert ("tool error: lookup (ref r1) raised ValueError: no weather station in Atlantis "
            "(the model was told and went on)") in done.stderr.splitlines()


def test_tool_errors_raise_exits_1_with_one_line(tmp_path, cli_env):
    project(tmp_path)
    done = cli("run", "weather", "--tool-errors", "raise", cwd=tmp_path, env=cli_env)
    assert done.returncode == 1
    assert done.stdout == ""
    assert done.stderr == "tool lookup(r1) raised ValueError: no weather station in Atlantis\n"


def test_tool_errors_takes_return_or_raise(tmp_path, cli_env):
    project(tmp_path)
    done = cli("run", "weather", "--tool-errors", "ignore", cwd=tmp_path, env=cli_env)
    assert done.returncode == 2 and "invalid choice: 'ignore'" in done.stderr
    done = cli("run", "weather", "--tool-errors", "return", cwd=tmp_path, env=cli_env)
    assert done.returncode == 0 and "tool error: lookup (ref r1)" in done.stderr
