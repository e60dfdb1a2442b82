"""`dotprompt run` shows ungrounded values on stderr and, with `--grounding`, every span; `render` is unchanged."""

from __future__ import annotations

import json

import pytest

from tests.cli_process import dotprompt

TOOLS = '''
from dotprompt import define_model
from dotprompt.doubles import ScriptedModel

define_model(ScriptedModel([{reply!r}] * 5), name="scripted")
'''
PROMPT = ("---\nmodel: scripted\ninput:\n  schema:\n    text: string\noutput:\n{policy}  schema:\n"
          "    invoice: string\n    total: number\n    currency: string\n---\nExtract: {{{{ text }}}}\n")
INVOICE = "Invoice INV-7\nTotal: 42,50 EUR"


def project(tmp_path, reply: dict, policy: str = ""):
    (tmp_path / "pyproject.toml").write_text('[tool.dotprompt]\ntools = ["project_tools.py"]\n')
    (tmp_path / "project_tools.py").write_text(TOOLS.format(reply=json.dumps(reply)))
    (tmp_path / "prompts").mkdir()
    (tmp_path / "prompts" / "invoice.prompt").write_text(PROMPT.format(policy=policy))
    (tmp_path / "in.json").write_text(json.dumps({"text": INVOICE}))


@pytest.mark.slow  # the command line as a child process
def test_run_marks_ungrounded_values_plainly_when_not_a_terminal(tmp_path, cli_env):
    project(tmp_path, {"invoice": "INV-7", "total": 42.5, "currency": "USD"})
    done = dotprompt("run", "invoice", "--input", "@in.json", cwd=tmp_path, env=cli_env)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["currency"] == "USD"
    assert done.stderr.splitlines() == ["grounding: 1 of 3 value(s) not found in the input:",
                                        '  $.currency = "USD"  ungrounded  not in the input']
    assert "\033[" not in done.stderr


@pytest.mark.slow  # the command line as a child process
def test_grounding_flag_prints_every_span(tmp_path, cli_env):
    project(tmp_path, {"invoice": "INV-7", "total": 42.5, "currency": "EUR"})
    done = dotprompt("run", "invoice", "--input", "@in.json", "--grounding", cwd=tmp_path, env=cli_env)
    assert done.returncode == 0, done.stderr
    assert done.stderr.splitlines() == ['  $.invoice = "INV-7"  exact  text[8:13] "INV-7"',
                                        '  $.total = 42.5  normalised  text[21:26] "42,50"',
                                        '  $.currency = "EUR"  exact  text[27:30] "EUR"']
    assert INVOICE[21:26] == "42,50"


@pytest.mark.slow  # the command line as a child process
def test_require_fails_the_run_naming_the_path(tmp_path, cli_env):
    project(tmp_path, {"invoice": "INV-7", "total": 99, "currency": "EUR"}, policy="  grounding: require\n")
    done = dotprompt("run", "invoice", "--input", "@in.json", cwd=tmp_path, env=cli_env)
    assert done.returncode != 0 and "$.total: 99 is not in the input" in done.stderr
    assert "the input says near `text`: 'Invoice INV-7 Total: 42,50 EUR'" in done.stderr


def test_render_is_unchanged(tmp_path, cli_env):
    project(tmp_path, {"invoice": "x", "total": 1, "currency": "x"}, policy="  grounding: require\n")
    done = dotprompt("render", "invoice", "--input", "@in.json", cwd=tmp_path, env=cli_env)
    assert done.returncode == 0 and "grounding" not in done.stdout + done.stderr


def test_colour_on_a_terminal_unless_no_color(monkeypatch):
    import io

    from dotprompt.cli.grounding_view import show_grounding
    from dotprompt.grounding import ground

    class Terminal(io.StringIO):
        def isatty(self):
            return True

    grounding = ground({"a": "USD"}, {"text": "EUR"})
    monkeypatch.delenv("NO_COLOR", raising=False)
    shown = Terminal()
    show_grounding(grounding, shown, spans=False)
    assert "\033[1;31mungrounded\033[0m" in shown.getvalue()
    monkeypatch.setenv("NO_COLOR", "1")
    plain = Terminal()
    show_grounding(grounding, plain, spans=False)
    assert "\033[" not in plain.getvalue() and "ungrounded" in plain.getvalue()
