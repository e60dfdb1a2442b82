"""The TextMate grammar of `.prompt` files and the JSONPath injection of test files, checked by
`vscode-tmgrammar-test` (the unit files in editors/vscode/tests/grammar/) and
`vscode-tmgrammar-snap` (the snapshots in editors/vscode/tests/snap/), the tools VS Code grammar
authors use; npm runs them, as `npm run test:grammar` does by hand."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from tests.editors.vscode_build import EXTENSION, ensure_node_modules, npm_run

pytestmark = pytest.mark.slow

UNIT_FILES = sorted((EXTENSION / "tests" / "grammar").glob("*.test.*"))
SNAPSHOTS = sorted((EXTENSION / "tests" / "snap").glob("*.snap"))


@pytest.fixture(scope="module", autouse=True)
def _node_modules() -> None:
    ensure_node_modules()


def test_every_grammar_unit_file_and_snapshot_passes():
    done = npm_run("test:grammar")
    output = done.stdout + done.stderr
    assert done.returncode == 0, output
    assert len(UNIT_FILES) >= 5 and len(SNAPSHOTS) >= 3
    for case in [*UNIT_FILES, *(snap.with_suffix("") for snap in SNAPSHOTS)]:
        assert f"✓ tests/{case.parent.name}/{case.name} run successful" in output, output


def _copy_extension(tmp_path: Path) -> Path:
    copy = tmp_path / "vscode"
    copy.mkdir()
    for name in ("package.json", "language-configuration.json"):
        shutil.copy(EXTENSION / name, copy / name)
    for folder in ("syntaxes", "tests"):
        shutil.copytree(EXTENSION / folder, copy / folder)
    (copy / "node_modules").symlink_to(EXTENSION / "node_modules")
    return copy


def test_a_grammar_regression_fails_the_run(tmp_path):
    copy = _copy_extension(tmp_path)
    grammar_file = copy / "syntaxes" / "dotprompt.tmLanguage.json"
    grammar = json.loads(grammar_file.read_text())
    grammar["repository"]["marker-role"]["captures"]["5"]["name"] = "string.quoted.double.dotprompt"
    grammar_file.write_text(json.dumps(grammar))
    done = npm_run("test:grammar", copy)
    output = done.stdout + done.stderr
    assert done.returncode != 0, output
    assert "missing required scopes: constant.language.role.dotprompt" in output, output


def test_a_changed_tokenization_fails_the_snapshot(tmp_path):
    copy = _copy_extension(tmp_path)
    for unit in (copy / "tests" / "grammar").iterdir():
        unit.unlink()  # the unit files would fail first; this is about the snapshots alone
    (copy / "tests" / "grammar" / "ok.test.prompt").write_text('# SYNTAX TEST "source.dotprompt"\n{{ x }}\n'
                                                               "#  ^ variable.other.dotprompt\n")
    grammar_file = copy / "syntaxes" / "dotprompt.tmLanguage.json"
    grammar = json.loads(grammar_file.read_text())
    grammar["repository"]["handlebars-partial"]["beginCaptures"]["3"]["name"] = "variable.other.dotprompt"
    grammar_file.write_text(json.dumps(grammar))
    done = npm_run("test:grammar", copy)
    output = done.stdout + done.stderr
    assert done.returncode != 0, output
    assert "story.prompt" in output and "entity.name.other.partial.dotprompt" in output, output
