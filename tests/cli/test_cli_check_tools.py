"""`[tool.dotprompt] tools`: `check` reports a prompt naming a tool no registered module defines, and the
run's unknown-tool error names that setting (the real CLI in a project folder)."""

from __future__ import annotations

from tests.cli_inprocess import cli

PYPROJECT = '[tool.dotprompt]\nprompts_dir = "prompts"\ntools = ["mytools.py"]\n'
TOOLS = '''from dotprompt import tool


@tool
def lookup_order(order_id: str) -> dict:
    """Look up an order."""
    return {"order_id": order_id}
'''
PROMPT = "---\nmodel: echo\ntools:\n  - lookup_order\n  - lookup_ordr\n  - ghost\ntoolDefs:\n  - name: inline_one\n" \
         "    description: described here\n    inputSchema: {type: object}\n---\nhi"


def _project(tmp_path, prompt: str = PROMPT):
    (tmp_path / "pyproject.toml").write_text(PYPROJECT)
    (tmp_path / "mytools.py").write_text(TOOLS)
    (tmp_path / "prompts").mkdir()
    (tmp_path / "prompts" / "helpdesk.prompt").write_text(prompt)


def test_check_reports_tools_no_registered_module_defines(tmp_path, cli_env):
    _project(tmp_path)
    for flags in ((), ("--import-code",)):  # the tools module read without running it, or imported
        done = cli("check", *flags, cwd=tmp_path, env=cli_env)
        assert done.returncode == 1, done.stdout + done.stderr  # a near miss of a known tool is a typo: an error
        lines = done.stdout.splitlines()
        where = tmp_path / "prompts" / "helpdesk.prompt"
        assert [line.split(": ", 2)[:2] for line in lines] == [[f"{where}:5:5", "error"], [f"{where}:6:5", "warning"]]
        assert "no registered module defines tool `lookup_ordr` (did you mean `lookup_order`?)" in lines[0]
        # a name nothing defines is a warning: tools given in code are out of check's sight
        assert "no registered module defines tool `ghost`" in lines[1] and "`[tool.dotprompt] tools`" in lines[1]


def test_check_is_quiet_when_every_tool_is_registered(tmp_path, cli_env):
    _project(tmp_path, "---\nmodel: echo\ntools: [lookup_order]\n---\nhi")
    done = cli("check", cwd=tmp_path, env=cli_env)
    assert done.returncode == 0 and done.stdout == ""


def test_unknown_tool_at_run_time_names_the_setting(tmp_path, cli_env):
    _project(tmp_path, "---\nmodel: echo\ntools: [ghost]\n---\nhi")
    done = cli("run", "helpdesk", cwd=tmp_path, env=cli_env)
    assert done.returncode == 1
    assert "unknown tool 'ghost'" in done.stderr and "`[tool.dotprompt] tools` in pyproject.toml" in done.stderr
    assert "known: lookup_order" in done.stderr and "Traceback" not in done.stderr
