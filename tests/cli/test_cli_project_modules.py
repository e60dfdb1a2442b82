"""`[tool.dotprompt] tools / schemas / helpers` as the `dotprompt` command imports them: the project's
folder (pyproject.toml's) is importable, as it is under pytest or `python -m`; a module that cannot be
loaded is one line naming pyproject.toml, the setting and the two ways to write an entry; a `.py` path
outside the project folder is refused.

The first test runs the command as its console script does (a real process with `python -P`: the
working folder is not on sys.path), which is what the in-process runner cannot show: it puts the
working folder first, as `python -m` does."""

from __future__ import annotations

import sys

import pytest

from tests.cli_inprocess import cli
from tests.cli_process import run

TOOLS = '''from dotprompt import tool


@tool
def lookup(query: str) -> str:
    """Look it up."""
    return query
'''


def _project(tmp_path, entry: str):
    (tmp_path / "pyproject.toml").write_text(f'[tool.dotprompt]\ntools = ["{entry}"]\n', encoding="utf-8")
    (tmp_path / "myapp").mkdir()
    (tmp_path / "myapp" / "__init__.py").write_text("", encoding="utf-8")
    (tmp_path / "myapp" / "tools.py").write_text(TOOLS, encoding="utf-8")
    (tmp_path / "prompts").mkdir()
    (tmp_path / "prompts" / "hi.prompt").write_text("---\ntools: [lookup]\n---\nhi", encoding="utf-8")


@pytest.mark.slow  # a real process: only one shows the console script's import path
def test_a_dotted_module_beside_pyproject_loads_from_the_console_script(tmp_path, cli_env):
    _project(tmp_path, "myapp.tools")
    done = run([sys.executable, "-P", "-m", "dotprompt.cli"], "render", "hi", "--json", cwd=tmp_path, env=cli_env)
    assert done.returncode == 0, done.stderr
    assert '"lookup"' in done.stdout


def test_a_module_that_is_not_there_names_the_file_the_setting_and_the_path_form(tmp_path, cli_env):
    _project(tmp_path, "myap.tools")
    done = cli("render", "hi", cwd=tmp_path, env=cli_env)
    assert done.returncode == 1 and "Traceback" not in done.stderr
    line = done.stderr.strip()
    assert line.startswith(f"{tmp_path / 'pyproject.toml'}: [tool.dotprompt] tools: cannot import 'myap.tools'")
    assert "No module named 'myap'" in line and str(tmp_path) in line
    assert "a .py path relative to pyproject.toml, such as 'myap/tools.py'" in line


def test_a_path_written_without_py_is_told_how_to_write_it(tmp_path, cli_env):
    _project(tmp_path, "myapp/tools")
    for command in (("render", "hi"), ("check",)):  # imported, or read without running it
        done = cli(*command, cwd=tmp_path, env=cli_env)
        assert done.returncode == 1 and "write it as 'myapp/tools.py'" in done.stderr, done.stderr


def test_a_module_that_raises_while_importing_is_one_line(tmp_path, cli_env):
    _project(tmp_path, "myapp.tools")
    (tmp_path / "myapp" / "tools.py").write_text("raise RuntimeError('no database')\n", encoding="utf-8")
    done = cli("render", "hi", cwd=tmp_path, env=cli_env)
    assert done.returncode == 1 and "Traceback" not in done.stderr
    assert "[tool.dotprompt] tools: importing 'myapp.tools' raised RuntimeError: no database" in done.stderr


@pytest.mark.parametrize("entry", ["../outside.py", "{outside}"])
def test_a_py_path_outside_the_project_folder_is_refused(tmp_path, cli_env, entry):
    project = tmp_path / "project"
    project.mkdir()
    marker = tmp_path / "ran"
    outside = tmp_path / "outside.py"
    outside.write_text(f"open({str(marker)!r}, 'w').close()\n", encoding="utf-8")
    _project(project, entry.format(outside=outside))
    for command in (("render", "hi"), ("check", "--import-code"), ("check",)):
        done = cli(*command, cwd=project, env=cli_env)
        assert done.returncode == 1, (command, done.stdout, done.stderr)
        shown = done.stdout + done.stderr
        assert "is outside the project folder" in shown and "pyproject.toml" in shown and "Traceback" not in shown
    assert not marker.exists()
