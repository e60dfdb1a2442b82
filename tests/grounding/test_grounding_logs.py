"""`dotprompt logs ID` shows a run's grounding: each value's status and where it is in the input."""

from __future__ import annotations

import json

from tests.cli_inprocess import cli

TOOLS = '''
from dotprompt import define_model
from dotprompt.doubles import ScriptedModel

define_model(ScriptedModel([{reply!r}] * 5), name="scripted")
'''
PROMPT = ("---\nmodel: scripted\ninput:\n  schema:\n    text: string\noutput:\n  schema:\n"
          "    invoice: string\n    total: number\n    currency: string\n    note: string\n---\nExtract: {{ text }}\n")
INVOICE = "Invoice INV-7\nTotal: 42,50 EUR\n\x1b[31mred"
REPLY = {"invoice": "INV-7", "total": 42.5, "currency": "USD\x1b[2J",
         "note": "the customer wants the invoice sent again by email"}


def project(tmp_path, cli_env):
    (tmp_path / "pyproject.toml").write_text('[tool.dotprompt]\ntools = ["project_tools.py"]\n')
    (tmp_path / "project_tools.py").write_text(TOOLS.format(reply=json.dumps(REPLY)))
    (tmp_path / "prompts").mkdir()
    (tmp_path / "prompts" / "invoice.prompt").write_text(PROMPT)
    (tmp_path / "in.json").write_text(json.dumps({"text": INVOICE}))
    return {**cli_env, "XDG_DATA_HOME": str(tmp_path / "data")}


def test_logs_shows_the_grounding_of_a_run(tmp_path, cli_env):
    env = project(tmp_path, cli_env)
    done = cli("run", "invoice", "--input", "@in.json", cwd=tmp_path, env=env)
    assert done.returncode == 0, done.stderr
    shown = cli("logs", "1", cwd=tmp_path, env=env)
    assert shown.returncode == 0, shown.stderr
    lines = shown.stdout.splitlines()
    at = lines.index("--- grounding ---")
    assert lines[at + 1:at + 6] == [
        "grounding: 1 of 4 value(s) not found in the input:",
        '  $.invoice = "INV-7"  exact  text[8:13] "INV-7"',
        '  $.total = 42.5  normalised  text[21:26] "42,50"',
        '  $.currency = "USD\\u001b[2J"  ungrounded  not in the input',  # the model's text: shown, never run
        '  $.note = "the customer wants the invoice sent again by email"  not applicable  generated text',
    ]
    assert "\x1b" not in shown.stdout


def test_a_run_without_grounding_says_so(tmp_path, cli_env):
    env = project(tmp_path, cli_env)
    (tmp_path / "prompts" / "invoice.prompt").write_text(PROMPT.replace("output:\n", "output:\n  grounding: off\n"))
    assert cli("run", "invoice", "--input", "@in.json", cwd=tmp_path, env=env).returncode == 0
    shown = cli("logs", "1", cwd=tmp_path, env=env)
    assert "--- grounding ---" not in shown.stdout
