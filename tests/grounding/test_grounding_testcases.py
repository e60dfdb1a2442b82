"""The `grounded` assertion of prompt test cases, through the real test runner and the command line."""

from __future__ import annotations

import asyncio
import json

import pytest

from dotprompt import PromptLibrary
from dotprompt.doubles import ScriptedModel
from dotprompt.errors import TestFileError
from dotprompt.providers import define_model
from dotprompt.testing import TestRun, load_test_file
from tests.cli_process import dotprompt

PROMPT = ("---\nmodel: scripted-grounded\ninput:\n  schema:\n    text: string\noutput:\n  schema:\n    number: string\n"
          "    currency: string\n    paid: boolean\n    items(array):\n      sku: string\n      qty: integer\n"
          "---\n{{ text }}\n")
TEXT = "Invoice INV-7, 2 x A1 and 1 x B2, in EUR"
GOOD = {"number": "INV-7", "currency": "EUR", "paid": True, "items": [{"sku": "A1", "qty": 2}, {"sku": "B2", "qty": 1}]}
BAD = {**GOOD, "currency": "USD", "items": [{"sku": "A1", "qty": 2}, {"sku": "C3", "qty": 1}]}


def write(folder, grounded: str):
    (folder / "inv.prompt").write_text(PROMPT)
    (folder / "inv.test.yaml").write_text(f"cases:\n  - name: one\n    input: {{text: {TEXT!r}}}\n"
                                          f"    expect:\n      grounded: {grounded}\n")


def failures(folder, reply, grounded):
    write(folder, grounded)
    define_model(ScriptedModel([json.dumps(reply)], name="scripted-grounded"))
    test_run = TestRun(PromptLibrary(folder), "record")
    summary, = asyncio.run(test_run.run(load_test_file(folder / "inv.test.yaml", folder)))
    return summary.last.failures


def test_all_passes_when_every_value_is_in_the_input(tmp_path):
    assert failures(tmp_path, GOOD, "all") == []


def test_all_names_each_ungrounded_value(tmp_path):
    assert failures(tmp_path, BAD, "all") == ["grounded: $.currency = 'USD' is not in the input",
                                              "grounded: $.items[1].sku = 'C3' is not in the input"]


@pytest.mark.parametrize(("paths", "expected"), [
    ("[$.number]", []),
    ("[$.currency]", ["grounded: $.currency = 'USD' is not in the input"]),
    ("['$.items[*].sku']", ["grounded: $.items[1].sku = 'C3' is not in the input"]),
    ("['$.items[0]']", []),
    ("[$.items]", ["grounded: $.items[1].sku = 'C3' is not in the input"]),
    ("[$.vendor]", ["grounded: $.vendor names no value of the output"]),
])
def test_listed_paths_cover_what_is_under_them(tmp_path, paths, expected):
    assert failures(tmp_path, BAD, paths) == expected


@pytest.mark.parametrize("bad", ["yes", "[total]", "[]", "3"])
def test_a_bad_grounded_value_is_a_test_file_error(tmp_path, bad):
    write(tmp_path, bad)
    with pytest.raises(TestFileError, match=r"inv.test.yaml:5.*`grounded` takes `all` or a list of JSON paths"):
        load_test_file(tmp_path / "inv.test.yaml", tmp_path)


@pytest.mark.slow  # the command line as a child process
def test_dotprompt_test_reports_the_failure(tmp_path, cli_env):
    (tmp_path / "pyproject.toml").write_text('[tool.dotprompt]\ntools = ["project_tools.py"]\n')
    (tmp_path / "project_tools.py").write_text(
        "from dotprompt import define_model\nfrom dotprompt.doubles import ScriptedModel\n"
        f"define_model(ScriptedModel([{json.dumps(json.dumps(BAD))}] * 3, name='scripted-grounded'))\n")
    (tmp_path / "prompts").mkdir()
    write(tmp_path / "prompts", "all")
    done = dotprompt("test", "prompts/inv.test.yaml", "--record", cwd=tmp_path, env=cli_env)
    assert done.returncode == 1 and "grounded: $.currency = 'USD' is not in the input" in done.stdout + done.stderr
