"""`dotprompt check` runs no project code unless told (`--import-code`): on a pull request the modules
`[tool.dotprompt]` names are anyone's code, with CI's tokens in reach. It reads them instead (Python's
`ast`, nothing executed) for the names they define: tools, schemas, helpers. A name no module is seen
to define stays a warning; a near miss of a known name is a typo, an error, for tools as for schemas."""

from __future__ import annotations

import json

import pytest

from tests.cli_inprocess import cli

PYPROJECT = ('[tool.dotprompt]\ntools = ["mytools.py"]\nschemas = ["myapp.schemas"]\nhelpers = ["myapp/helpers.py"]\n')
RAN = "open(__import__('os').path.join({folder!r}, 'ran-' + __name__.rsplit('_', 1)[-1].rsplit('.', 1)[-1]), 'w').close()\n"
TOOLS = '''from dotprompt import tool


@tool
def lookup_order(order_id: str) -> dict:
    """Look up an order."""
    return {"order_id": order_id}


@tool(name="refund-order")
def refund(order_id: str) -> str:
    """Refund it."""
    return "ok"


cancel = tool(lambda order_id: "ok", name="cancel_order", description="Cancel it.", input_schema={"order_id": str})
'''
SCHEMAS = '''from pydantic import BaseModel


class Order(BaseModel):
    id: str


Address = {"type": "object", "properties": {"city": {"type": "string"}}}
'''
HELPERS = '''def shout(text):
    return text.upper()
'''
PROMPT = ("---\nmodel: echo\ninput:\n  schema:\n    who: string\noutput:\n  schema: Order\n"
          "tools: [lookup_order, refund-order, cancel_order]\n---\n{{ shout(who) }}")


def _project(tmp_path, prompt: str = PROMPT):
    (tmp_path / "pyproject.toml").write_text(PYPROJECT, encoding="utf-8")
    ran = RAN.format(folder=str(tmp_path))
    (tmp_path / "mytools.py").write_text(ran + TOOLS, encoding="utf-8")
    (tmp_path / "myapp").mkdir()
    (tmp_path / "myapp" / "__init__.py").write_text("", encoding="utf-8")
    (tmp_path / "myapp" / "schemas.py").write_text(ran + SCHEMAS, encoding="utf-8")
    (tmp_path / "myapp" / "helpers.py").write_text(ran + HELPERS, encoding="utf-8")
    (tmp_path / "prompts").mkdir()
    (tmp_path / "prompts" / "orders.prompt").write_text(prompt, encoding="utf-8")


def _ran(tmp_path) -> list[str]:
    return sorted(p.name for p in tmp_path.glob("ran-*"))


@pytest.mark.parametrize("style", ["text", "sarif", "github"])
def test_check_imports_no_project_code_and_still_knows_the_names_it_defines(tmp_path, cli_env, style):
    _project(tmp_path)
    done = cli("check", "--format", style, cwd=tmp_path, env=cli_env)
    assert done.returncode == 0, done.stdout + done.stderr
    assert _ran(tmp_path) == []
    if style == "sarif":
        assert json.loads(done.stdout)["runs"][0]["results"] == []
    else:
        assert done.stdout == ""


def test_import_code_imports_them_as_before(tmp_path, cli_env):
    _project(tmp_path)
    done = cli("check", "--import-code", cwd=tmp_path, env=cli_env)
    assert done.returncode == 0 and done.stdout == "", done.stdout + done.stderr
    assert _ran(tmp_path) == ["ran-helpers", "ran-mytools", "ran-schemas"]


@pytest.mark.parametrize("flags", [(), ("--import-code",)])
def test_a_tool_name_one_letter_off_is_an_error_as_a_schema_typo_is(tmp_path, cli_env, flags):
    _project(tmp_path, "---\nmodel: echo\noutput:\n  schema: Ordr\ntools: [lookup_ordr, ghost]\n---\nhi")
    done = cli("check", *flags, cwd=tmp_path, env=cli_env)
    assert done.returncode == 1, done.stdout + done.stderr
    where = "prompts/orders.prompt"
    lines = done.stdout.splitlines()
    assert [line.split(": ")[:2] for line in lines] == [[f"{where}:4:3", "error"], [f"{where}:5:9", "error"],
                                                       [f"{where}:5:22", "warning"]], lines
    assert "Ordr" in lines[0] and "output.schema" in lines[0] and "did you mean `Order`?" in lines[0]
    assert "tool `lookup_ordr`" in lines[1] and "did you mean `lookup_order`?" in lines[1]
    assert "tool `ghost`" in lines[2] and "`[tool.dotprompt] tools`" in lines[2]


def test_a_code_tool_whose_parameters_have_no_schema_is_an_error_with_import_code(tmp_path, cli_env):
    # `@tool` builds its schemas on first use: importing the module succeeds, and `check --import-code`
    # builds them for each prompt that lists the tool, as a run would, reporting at the `tools:` line.
    _project(tmp_path, "---\nmodel: echo\ntools: [lookup_order, ship]\n---\nhi")
    with open(tmp_path / "mytools.py", "a", encoding="utf-8") as tools:
        tools.write("\n\nclass Parcel:\n    pass\n\n\n@tool\ndef ship(parcel: Parcel) -> str:\n"
                    "    \"\"\"Ship it.\"\"\"\n    return 'sent'\n")
    done = cli("check", "--import-code", cwd=tmp_path, env=cli_env)
    assert done.returncode == 1, done.stdout + done.stderr
    lines = done.stdout.splitlines()
    assert len(lines) == 1 and lines[0].startswith("prompts/orders.prompt:3:23: error: tool 'ship' ("), lines
    assert "mytools.py:" in lines[0] and "cannot be described as JSON Schema" in lines[0]
    assert lines[0].endswith("[invalid-tool]")
    assert cli("check", cwd=tmp_path, env=cli_env).stdout == ""  # read, not run: the name is known, nothing built


def test_a_name_check_cannot_see_says_how_to_let_it_look(tmp_path, cli_env):
    """A tool built in a loop is found only by importing: the warning says so."""
    _project(tmp_path, "---\nmodel: echo\ntools: [made_in_a_loop]\n---\nhi")
    with open(tmp_path / "mytools.py", "a", encoding="utf-8") as tools:
        tools.write("for _name in ['made_in_a_loop']:\n    globals()[_name] = tool(name=_name, interrupt=True)\n")
    done = cli("check", cwd=tmp_path, env=cli_env)
    assert done.returncode == 0 and "tool `made_in_a_loop`" in done.stdout
    assert "--import-code" in done.stderr
    assert cli("check", "--import-code", cwd=tmp_path, env=cli_env).stdout == ""


def test_help_says_what_runs(cli_env):
    done = cli("check", "--help", env=cli_env)
    assert "--import-code" in done.stdout and "untrusted" in done.stdout
