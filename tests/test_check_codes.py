"""Every diagnostic of `dotprompt check` has a code from one table (dotprompt/lint/codes.py), shown in
every channel, documented on docs/check-diagnostics.md, and a warning's code can be ignored for the
project (`[tool.dotprompt] ignore`) or a file (`# dotprompt: ignore[code]` before the frontmatter)."""

from __future__ import annotations

import ast
import re
from pathlib import Path
from typing import get_args

import pytest

from dotprompt.document.unresolved import Kind
from dotprompt.lint.check import Diagnostic
from dotprompt.lint.codes import CODES
from tests.cli_inprocess import cli

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = ROOT / "dotprompt"
DOCS = ROOT / "docs" / "check-diagnostics.md"


def _diagnostic_calls() -> list[tuple[Path, ast.Call]]:
    calls = []
    for path in sorted(PACKAGE.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "Diagnostic":
                calls.append((path, node))
    return calls


def test_every_diagnostic_made_in_the_package_names_a_code_of_its_level():
    calls = _diagnostic_calls()
    assert len(calls) >= 25  # the walk sees them: lint/, cli/check.py, lsp/
    for path, call in calls:
        where = f"{path.relative_to(ROOT)}:{call.lineno}"
        code = next((k.value for k in call.keywords if k.arg == "code"), None)
        assert code is not None, f"{where}: Diagnostic(...) without code="
        level = call.args[3] if len(call.args) > 3 else None
        if isinstance(code, ast.Constant):
            assert code.value in CODES, f"{where}: {code.value!r} is not in lint/codes.py's CODES"
            if isinstance(level, ast.Constant):
                assert CODES[code.value].level == level.value, f"{where}: {code.value!r} is not a {level.value} code"
    # the codes made from a name's kind (`unknown-{kind}`, `misspelled-{kind}`) exist for every kind
    for kind in get_args(Kind):
        assert CODES[f"unknown-{kind}"].level == "warning" and CODES[f"misspelled-{kind}"].level == "error"


def test_every_mcp_tool_problem_names_a_code_of_its_level():
    tree = ast.parse((PACKAGE / "lint" / "mcp_tools.py").read_text(encoding="utf-8"))
    returned = [n.value for n in ast.walk(tree) if isinstance(n, ast.Return) and isinstance(n.value, ast.Tuple)]
    assert len(returned) == 5
    for found in returned:
        level, code = (e.value for e in found.elts[:2])  # type: ignore[attr-defined]
        assert CODES[code].level == level


def test_a_diagnostic_without_a_known_code_of_its_level_is_refused():
    with pytest.raises(TypeError):
        Diagnostic("p.prompt", 1, 1, "warning", "m")  # type: ignore[call-arg]
    with pytest.raises(ValueError, match="not a warning code"):
        Diagnostic("p.prompt", 1, 1, "warning", "m", code="no-such-code")
    with pytest.raises(ValueError, match="not a warning code"):
        Diagnostic("p.prompt", 1, 1, "warning", "m", code="undeclared-variable")  # an error's code


def _documented() -> list[tuple[str, str, str]]:
    """(code, level, summary) of each `### \\`code\\`` heading of the docs page, in order."""
    text = DOCS.read_text(encoding="utf-8")
    return re.findall(r"^### `([a-z-]+)`\n\n\*\*(error|warning)\*\*: (.+)$", text, re.MULTILINE)


def test_the_docs_page_lists_the_table_in_order_with_each_level_and_summary():
    assert [(c, level, summary) for c, level, summary in _documented()] == [
        (name, code.level, code.summary) for name, code in CODES.items()]
    assert "check-diagnostics.md" in (ROOT / "mkdocs.yml").read_text(encoding="utf-8")


def _project(tmp_path: Path, files: dict[str, str], pyproject: str | None = None) -> Path:
    prompts = tmp_path / "prompts"
    prompts.mkdir(exist_ok=True)
    for name, text in files.items():
        (prompts / name).write_text(text, encoding="utf-8")
    if pyproject is not None:
        (tmp_path / "pyproject.toml").write_text(pyproject, encoding="utf-8")
    return prompts


def test_the_text_line_ends_with_the_code_and_github_titles_it(tmp_path, cli_env):
    _project(tmp_path, {"p.prompt": "---\nfoo: 1\n---\nhi"})
    done = cli("check", "prompts", cwd=tmp_path, env=cli_env)
    assert done.stdout == ("prompts/p.prompt:2:1: warning: unknown key `foo` (extensions use a dotted key such "
                           "as `myapp.key`)  [unknown-key]\n")
    done = cli("check", "prompts", "--format", "github", cwd=tmp_path, env=cli_env)
    assert done.stdout.startswith("::warning file=prompts/p.prompt,line=2,col=1,title=unknown-key::unknown key")


def test_a_projects_ignore_silences_a_warning_code_even_with_strict(tmp_path, cli_env):
    files = {"p.prompt": "---\nfoo: 1\noutput:\n  format: jsn\n---\nhi"}
    _project(tmp_path, files, '[tool.dotprompt]\nignore = ["unknown-key"]\n')
    done = cli("check", "prompts", "--strict", cwd=tmp_path, env=cli_env)
    assert done.returncode == 1 and "[unknown-key]" not in done.stdout  # the other warning still fails --strict
    assert done.stdout.endswith("[unknown-output-format]\n") and "0 error(s), 1 warning(s)" in done.stderr
    (tmp_path / "pyproject.toml").write_text('[tool.dotprompt]\nignore = ["unknown-key", "unknown-output-format"]\n')
    done = cli("check", "prompts", "--strict", cwd=tmp_path, env=cli_env)
    assert (done.returncode, done.stdout) == (0, "")


def test_a_files_ignore_line_before_the_frontmatter_silences_it_there_only(tmp_path, cli_env):
    _project(tmp_path, {
        "quiet.prompt": "# Copyright line\n#  dotprompt: ignore[ unknown-key , handlebars-syntax ]\n\n---\nfoo: 1\n---\nhi",
        "loud.prompt": "---\nfoo: 1\n---\nhi",
        # without frontmatter the `#` line is template text: it ignores nothing
        "plain.prompt": "# dotprompt: ignore[unknown-helper]\n{{ shout name }}\n"})
    done = cli("check", "prompts", cwd=tmp_path, env=cli_env)
    assert "quiet.prompt" not in done.stdout
    assert "loud.prompt:2:1: warning: unknown key `foo`" in done.stdout
    assert "plain.prompt:2: warning: no registered module defines helper `shout`" in done.stdout


def test_an_error_code_or_an_unknown_code_in_an_ignore_is_reported_and_ignores_nothing(tmp_path, cli_env):
    _project(tmp_path, {"p.prompt": "# dotprompt: ignore[undeclared-variable, unknown-kye]\n---\ninput:\n  schema:\n"
                                    "    name: string\n---\n{{ nmae }}"},
             '[tool.dotprompt]\nignore = ["invalid-prompt-file", "stale-typs"]\n')
    done = cli("check", "prompts", cwd=tmp_path, env=cli_env)
    assert done.returncode == 1
    out = done.stdout.splitlines()
    assert f"{tmp_path / 'pyproject.toml'}: warning: [tool.dotprompt] ignore: `invalid-prompt-file` is an error's " \
           "code, and errors cannot be ignored" in out[0]
    assert out[1].startswith(f"{tmp_path / 'pyproject.toml'}: warning: [tool.dotprompt] ignore: unknown code "
                             "`stale-typs` (did you mean `stale-types`?)")
    assert out[2].startswith("prompts/p.prompt:1:21: warning: # dotprompt: ignore: `undeclared-variable` is an "
                             "error's code") and out[2].endswith("[invalid-ignore]")
    assert out[3].startswith("prompts/p.prompt:1:21: warning: # dotprompt: ignore: unknown code `unknown-kye` "
                             "(did you mean `unknown-key`?)")
    assert out[4].startswith("prompts/p.prompt:7: error: template variable `nmae`")  # still reported
    assert len(out) == 5


def test_an_ignore_that_is_not_a_list_of_codes_is_a_usage_error_naming_the_setting(tmp_path, cli_env):
    _project(tmp_path, {"p.prompt": "hi"}, '[tool.dotprompt]\nignore = "unknown-key"\n')
    done = cli("check", "prompts", cwd=tmp_path, env=cli_env)
    assert done.returncode == 1 and done.stdout == "" and "Traceback" not in done.stderr  # as a bad `engine` is
    assert "[tool.dotprompt] ignore must be a list of warning codes" in done.stderr
    assert str(tmp_path / "pyproject.toml") in done.stderr
