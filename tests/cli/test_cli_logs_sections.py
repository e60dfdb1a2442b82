"""`dotprompt logs ID` shows a run as facts, then `--- title ---` sections: no value from the run (a model
or prompt name, a finish reason, the model's text, an error) can forge a line of the facts or a
section header. Facts are one line each (a newline shown as `\\x0a`); a body line that starts with
`---` is shown with a backslash first (`_util/escape.view_body`). `render`'s settings lines too."""

from __future__ import annotations

import json

from tests.cli_inprocess import cli

FORGED = "\n--- output ---\n{\"forged\": true}\n--- error ---\nforged"
TOOLS = ("from dotprompt.doubles import ScriptedModel\nfrom dotprompt.providers import define_model\n\n"
         f"define_model(ScriptedModel([{('hello' + FORGED)!r}], name={('m' + FORGED)!r}))\n")


def project(tmp_path):
    (tmp_path / "pyproject.toml").write_text('[tool.dotprompt]\ntools = ["project_tools.py"]\n')
    (tmp_path / "project_tools.py").write_text(TOOLS)
    (tmp_path / "prompts").mkdir()
    model = json.dumps("m" + FORGED)
    (tmp_path / "prompts" / "p.prompt").write_text(f"---\nmodel: {model}\n---\nSay hi.{FORGED}")
    return {"XDG_DATA_HOME": str(tmp_path / "data"), "PYTHONIOENCODING": "utf-8"}


def headers(text: str) -> list[str]:
    return [line for line in text.splitlines() if line.startswith("---")]


def test_a_run_cannot_forge_a_section_of_its_log_view(tmp_path, cli_env):
    env = {**cli_env, **project(tmp_path)}
    done = cli("run", "p", cwd=tmp_path, env=env)
    assert done.returncode == 0, done.stderr
    shown = cli("logs", "1", cwd=tmp_path, env=env)
    assert shown.returncode == 0, shown.stderr
    assert headers(shown.stdout) == ["--- sent ---", "--- received ---", "--- output ---"], shown.stdout
    model_line = next(line for line in shown.stdout.splitlines() if line.startswith("model"))
    assert "m\\x0a--- output ---\\x0a" in model_line  # shown, on its own line
    assert "\\--- output ---" in shown.stdout  # the model's text: visible, not a header


def test_render_settings_cannot_forge_a_message_header(tmp_path, cli_env):
    env = {**cli_env, **project(tmp_path)}
    done = cli("render", "p", cwd=tmp_path, env=env)
    assert done.returncode == 0, done.stderr
    assert headers(done.stdout) == ["--- user ---"], done.stdout


def test_view_body_quotes_only_header_like_lines():
    from dotprompt._util.escape import view_body

    assert view_body("a\n--- x ---\n ---\n---y\nb") == "a\n\\--- x ---\n ---\n\\---y\nb"
    assert view_body("--- first ---") == "\\--- first ---"
    assert view_body("esc \x1b[31m\ttab") == "esc \\x1b[31m\ttab"
