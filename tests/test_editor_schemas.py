"""The editor schemas: built from the readers' tables, shipped equal to what is built, and they accept
every example file and reject what the readers reject."""

from __future__ import annotations

import json
import re
from pathlib import Path

import jsonschema
import pytest
import yaml

from dotprompt.lint.editor_schemas import SCHEMA_FILES, build_schema, shipped_schema
from dotprompt.prompts.library import PromptLibrary
from tests.conftest import ROOT

SCHEMA_LINE = re.compile(r"^# yaml-language-server: \$schema=(\S+)$")


@pytest.mark.parametrize("kind", list(SCHEMA_FILES))
def test_shipped_schema_is_what_the_tables_build(kind):
    # Fails when a reader learns a key and the shipped file was not rebuilt:
    # run `python -m dotprompt.lint.editor_schemas --write`.
    assert shipped_schema(kind) == build_schema(kind)
    jsonschema.Draft7Validator.check_schema(shipped_schema(kind))


def test_every_example_test_file_points_at_the_schema_and_fits_it():
    validator = jsonschema.Draft7Validator(shipped_schema("test-file"))
    files = sorted((ROOT / "prompts").rglob("*.test.yaml"))
    assert files
    for path in files:
        first = path.read_text(encoding="utf-8").splitlines()[0]
        match = SCHEMA_LINE.match(first)
        assert match, f"{path} lacks the yaml-language-server line"
        assert (path.parent / match.group(1)).resolve() == ROOT / "dotprompt" / "data" / "test-file.schema.json"
        assert not list(validator.iter_errors(yaml.safe_load(path.read_text(encoding="utf-8")))), path


def test_every_example_prompt_frontmatter_fits():
    validator = jsonschema.Draft7Validator(shipped_schema("frontmatter"))
    infos = PromptLibrary(ROOT / "prompts").prompts()
    assert len(infos) >= 5
    for info in infos:
        text = Path(info.path).read_text(encoding="utf-8")
        head = text.split("\n---\n")[0].split("---\n", 1)[-1]
        assert not list(validator.iter_errors(yaml.safe_load(head) or {})), info


def _errors(kind, document) -> list[str]:
    return [e.message for e in jsonschema.Draft7Validator(shipped_schema(kind)).iter_errors(document)]


def test_test_file_schema_rejects_what_the_reader_rejects():
    good = {"cases": [{"name": "a", "input": {"text": "x"}, "expect": {"paths": [{"path": "$.total", "gte": 1}]}}]}
    assert _errors("test-file", good) == []
    assert _errors("test-file", {"cases": [{"name": "a", "expect": {"outputt": 1}}]})  # unknown assertion
    assert _errors("test-file", {"cases": [{"name": "a", "expect": {"paths": [{"path": "$.x"}]}}]})  # no check
    assert _errors("test-file", {"cases": [{"name": "a", "expect": {"paths": [{"path": "$.x", "gte": 1,
                                                                               "lte": 2}]}}]})  # two checks
    assert _errors("test-file", {"casez": []})


def test_frontmatter_schema_knows_keys_and_extensions():
    assert _errors("frontmatter", {"model": "openai/x", "toolChoice": "auto", "acme.team": "search"}) == []
    assert _errors("frontmatter", {"toolChoice": "sometimes"})
    assert _errors("frontmatter", {"maxTurns": 0})
    assert _errors("frontmatter", {"modle": "x"})
    assert _errors("frontmatter", {"output": {"fromat": "json"}})


def test_schema_command_prints_the_shipped_schemas(cli_env):
    from tests.cli_inprocess import cli

    for flag, kind in (("--frontmatter", "frontmatter"), ("--test-file", "test-file")):
        done = cli("schema", flag, env=cli_env)
        assert done.returncode == 0, done.stderr
        assert json.loads(done.stdout) == shipped_schema(kind)
    done = cli("schema", "extract", "--test-file", env=cli_env)
    assert done.returncode == 2 and "drop the prompt name" in done.stderr
    done = cli("schema", env=cli_env)
    assert done.returncode == 2 and "--frontmatter or --test-file" in done.stderr
