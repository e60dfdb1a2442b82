"""Hostile schema `$ref`s: nothing is fetched, every bad reference is a located error at load.

Each case runs in a child process (time and memory limits) while a loopback HTTP server in this
process counts the requests it receives: a `$ref` must never reach it.
"""

from __future__ import annotations

import json

import pytest

from tests.isolation import assert_finishes
from tests.providers.mock_server import Loopback

# The child loads/validates and prints {"error": type, "message": ...} or {"ok": ...} as its last line.
CHILD = """
import json, sys
from dotprompt import PromptLibrary
from dotprompt.schema.compiled import compile_validator
def report(fn):
    try:
        out = fn()
    except Exception as exc:
        print(json.dumps({"error": type(exc).__name__, "message": str(exc)}))
    else:
        print(json.dumps({"ok": out}))
"""


@pytest.fixture
def server():
    """A loopback HTTP server that serves a schema and remembers every request (`seen`)."""
    with Loopback(lambda request: {"type": "string"}) as loopback:
        yield loopback.url, loopback.requests


def prompt_with(section: str, ref: str) -> str:
    schema = {"type": "object", "properties": {"a": {"$ref": ref}}}
    block = f"{section}:\n  schema: {json.dumps(schema)}\n"
    return f"---\nmodel: echo\n{block}---\nhello {{{{ a }}}}\n"


def load_and_use(tmp_path, text: str) -> dict:
    (tmp_path / "p.prompt").write_text(text, encoding="utf-8")
    code = CHILD + f"""
lib = PromptLibrary({str(tmp_path)!r})
def go():
    prompt = lib.load("p")
    prompt.render({{"a": "x"}})
    response = prompt.generate_sync({{"a": "x"}})
    return str(response.output)
report(go)
"""
    return assert_finishes(code).json()


@pytest.mark.parametrize("section", ["input", "output"])
def test_http_ref_in_a_prompt_file_is_refused_at_load_without_a_request(tmp_path, server, section):
    url, seen = server
    result = load_and_use(tmp_path, prompt_with(section, f"{url}/x.json"))
    assert seen == []
    assert result.get("error") == "PromptFileError", result
    assert "p.prompt:4" in result["message"] and "$ref" in result["message"]


@pytest.mark.parametrize("ref", ["file:///etc/passwd", "#/$defs/missing", "other.json#/a", "#bad-anchor"])
def test_unresolvable_refs_are_located_errors_not_referencing_tracebacks(tmp_path, ref):
    result = load_and_use(tmp_path, prompt_with("input", ref))
    assert result.get("error") == "PromptFileError", result
    assert "p.prompt:4" in result["message"] and ref in result["message"]


def test_local_refs_keep_working(tmp_path):
    schema = {"type": "object", "properties": {"a": {"$ref": "#/$defs/word"}}, "required": ["a"],
              "$defs": {"word": {"type": "string", "minLength": 2}}}
    (tmp_path / "p.prompt").write_text(f"---\ninput:\n  schema: {json.dumps(schema)}\n---\n{{{{ a }}}}\n")
    code = CHILD + f"""
lib = PromptLibrary({str(tmp_path)!r})
def go():
    prompt = lib.load("p")
    text = prompt.render({{"a": "ok"}}).messages[0].content[0].text
    try:
        prompt.render({{"a": "x"}})
    except Exception as exc:
        return [text, type(exc).__name__]
    return [text, None]
report(go)
"""
    assert assert_finishes(code).json() == {"ok": ["ok", "InputValidationError"]}


def test_code_schemas_with_remote_refs_are_schema_errors_without_a_request(server):
    url, seen = server
    schema = {"type": "object", "properties": {"a": {"$ref": f"{url}/y.json"}}}
    code = CHILD + f"""
schema = {schema!r}
results = []
for fn in (lambda: PromptLibrary(None).define_schema("Remote", schema), lambda: compile_validator(schema).is_valid({{"a": 1}})):
    try:
        fn()
        results.append("accepted")
    except Exception as exc:
        results.append(type(exc).__name__)
print(json.dumps(results))
"""
    assert assert_finishes(code).json() == ["SchemaError", "SchemaError"]
    assert seen == []


def test_remote_ref_in_render_options_output_schema_is_refused(server):
    url, seen = server
    schema = {"type": "object", "properties": {"a": {"$ref": f"{url}/z.json"}}}
    code = CHILD + f"""
lib = PromptLibrary(None)
def go():
    prompt = lib.from_source("---\\nmodel: echo\\n---\\nhi")
    return str(prompt(options={{"output": {{"schema": {schema!r}}}}}).output)
report(go)
"""
    result = assert_finishes(code).json()
    assert seen == []
    assert result.get("error") == "SchemaError", result
