"""`read_declared`: the names the project's modules define, read with `ast` and never run."""

from __future__ import annotations

import pytest

from dotprompt.errors import UsageError
from dotprompt.lint.declared import read_declared

MODULE = '''import dotprompt
from dotprompt import define_tool, tool
from helpers_elsewhere import imported_helper  # not defined here: not one of its helpers

raise SystemExit("reading must never run this")


@dotprompt.tool
async def fetch(url: str) -> str:
    """Fetch it."""


@tool(description="x", name="send-mail")
def send(to: str) -> str:
    """Send it."""


try:
    ask = tool(name="ask_user", description="Ask.", interrupt=True)
except ImportError:
    pass

if True:
    class Invoice:
        pass

    Address = {"type": "object", "properties": {}}
    NOT_A_SCHEMA = {"colour": "blue"}
    _Private = {"type": "string"}


def shout(text):
    return text.upper()


def _hidden(text):
    return text


class _Internal:
    pass
'''


def test_the_names_a_module_defines_are_read_without_running_it(tmp_path):
    (tmp_path / "app.py").write_text(MODULE, encoding="utf-8")
    settings = {"tools": ["app.py"], "helpers": ["app"]}
    found = read_declared(settings, tmp_path)
    assert found.modules == 2
    assert found.of("tool") == {"fetch", "send-mail", "ask_user"}
    assert found.of("schema") == {"Invoice", "Address"}
    assert found.of("helper") == {"shout"}


def test_a_module_that_does_not_parse_names_its_file_and_line(tmp_path):
    (tmp_path / "app.py").write_text("def broken(:\n", encoding="utf-8")
    with pytest.raises(UsageError, match=r"pyproject.toml: \[tool.dotprompt\] tools: .*app.py:1: "):
        read_declared({"tools": ["app.py"]}, tmp_path)


def test_a_link_out_of_the_project_is_refused(tmp_path):
    project = tmp_path / "project"
    project.mkdir()
    (tmp_path / "outside.py").write_text("x = 1\n", encoding="utf-8")
    (project / "inside.py").symlink_to(tmp_path / "outside.py")
    with pytest.raises(UsageError, match=r"'inside\.py' is outside the project folder"):
        read_declared({"schemas": ["inside.py"]}, project)


TOOL_FORMS = '''from dotprompt import define_tool, tool


def refund(input):
    return "ok"


def lookup(input):
    return "found"


@define_tool
def cancel(order_id: str) -> str:
    return "cancelled"


explicit = tool(refund, name="issue_refund", input_schema={"type": "object"})
by_function = tool(lookup, input_schema={"type": "object"})
asked = define_tool(tool(name="approve", description="Ask a human.", interrupt=True))
old = define_tool("old_style", "Old.", {"type": "object"}, refund)
'''


def test_every_form_of_tool_and_define_tool_is_read(tmp_path):
    (tmp_path / "tools.py").write_text(TOOL_FORMS, encoding="utf-8")
    found = read_declared({"tools": ["tools.py"]}, tmp_path)
    assert found.of("tool") == {"cancel", "issue_refund", "lookup", "approve", "old_style"}
